package input

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"unsafe"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding"
)

// ParquetRows reads a Parquet file row by row straight from its column
// pages: each leaf column's pages are decoded with the library's typed page
// API (levels and values, no parquet.Value per value, no row assembly) and a
// row's values are appended from them to the caller's column buffers
// (ParquetCol, one per leaf column, which hold a batch of rows), so a row
// that spans pages is read like any other and bounded by MaxParquetLine. It
// is the cases reader's fast path (casefile): it reads string, float and
// double leaves only (FastLeaf); the rows are made into cases where the
// buffers go (another goroutine), and the row's text line (ParquetLiner,
// the text path's) gives the text path's meaning to any row the caller does
// not decode itself.
type ParquetRows struct {
	p      *parquetLines // the schema's plan, the file and its name
	file   io.Closer     // closed by Close (Sharded.ShardRows)
	cols   []pqCursor
	groups []parquet.RowGroup
	rg     int    // the row group being read (-1 before the first)
	left   int64  // its rows not read yet
	row    int64  // rows read so far (the current row's number, from 1)
	data   []byte // the arena of Next: the row's string values from rowStart
	// rowStart is where the row's values start in data.
	rowStart int
	into     []ParquetCol // Next's column buffers
	// NextRows's scratch: per row of a run, its arena bytes and line size
	// from the run's start.
	cum, size []int
}

// maxParquetRow caps a row read by ParquetRows (its values' bytes, two a
// level and eight a float): MaxParquetLine, a variable for the tests.
var maxParquetRow = MaxParquetLine

// ParquetField is a top-level column as the text path writes it.
type ParquetField struct {
	Name string
	// Kind: ParquetScalar, ParquetObject, ParquetList or ParquetMap.
	Kind int
	// Obj: a list whose elements are structs of Leaves.
	Obj bool
	// Definition levels: from DField the field is present (not null), from
	// DElem a list has elements, from DItem an element is not null.
	DField, DElem, DItem int
	Leaves               []ParquetLeaf
}

// ParquetLeaf is a leaf column of a field.
type ParquetLeaf struct {
	Name string // the key in an object ("" for a list's scalar elements)
	Col  int    // the leaf column's index (ParquetRows.Col)
	Enc  int    // ParquetString, ParquetFloat, … (how the text path writes it)
	DMax int    // the definition level of a value (not null)
}

// Field kinds and leaf encodings of ParquetField.
const (
	ParquetScalar = fieldScalar
	ParquetObject = fieldObject
	ParquetList   = fieldList
	ParquetMap    = fieldMap

	ParquetString = encString
	ParquetFloat  = encFloat
)

// ParquetCol is one leaf column's levels and values: Next appends each
// row's to it (a batch of rows), and Row views one row's.
type ParquetCol struct {
	Defs []uint8 // a definition level per value slot (repetition levels in reps)
	reps []uint8
	// The non-null values, in order: a string column's bytes are in Data,
	// the arena given to Next, from base to Ends[0], then to Ends[1], …; a
	// float column's are in Floats.
	Data   []byte
	base   uint32
	Ends   []uint32
	Floats []float64
	// Keys, for a column keyed by ParquetRows.KeyDict, is empty or holds a
	// key per string of Ends: the key of a string read from a dictionary,
	// computed once per dictionary entry, or ParquetNoKey for one read from a
	// plain page. Empty when no string of the batch was read from a
	// dictionary.
	Keys []uint64
	rows []ParquetMark // where each row of the batch starts
}

// ParquetNoKey is the key in ParquetCol.Keys of a string that was not read
// from a dictionary.
const ParquetNoKey = ^uint64(0)

// ParquetMark is where a row starts in a ParquetCol's buffers (Defs, Ends,
// Floats) and its strings in the arena (Base).
type ParquetMark struct{ Defs, Ends, Floats, Base uint32 }

// Reset empties the buffers for a new batch of rows.
func (c *ParquetCol) Reset() {
	c.Defs, c.reps, c.Ends, c.Floats, c.rows, c.Keys = c.Defs[:0], c.reps[:0], c.Ends[:0], c.Floats[:0], c.rows[:0], c.Keys[:0]
}

// Row sets v to the i-th row of the batch (a view of c's buffers, its
// strings in data, the arena Next returned), valid until c is next Reset.
func (c *ParquetCol) Row(i int, data []byte, v *ParquetCol) {
	m := c.rows[i]
	e := ParquetMark{uint32(len(c.Defs)), uint32(len(c.Ends)), uint32(len(c.Floats)), 0} //nolint:gosec // G115: a batch's levels fit
	if i+1 < len(c.rows) {
		e = c.rows[i+1]
	}
	v.Defs, v.reps = c.Defs[m.Defs:e.Defs], c.reps[m.Defs:e.Defs]
	v.Ends, v.Floats = c.Ends[m.Ends:e.Ends], c.Floats[m.Floats:e.Floats]
	v.Data, v.base = data, m.Base
}

// Marks is where each row of the batch starts, in order (a batch's, not a
// row view's).
func (c *ParquetCol) Marks() []ParquetMark { return c.rows }

// Str is the i-th non-null string of the column.
func (c *ParquetCol) Str(i int) []byte {
	start := c.base
	if i > 0 {
		start = c.Ends[i-1]
	}
	return c.Data[start:c.Ends[i]]
}

// mark starts a row at the ends of c's buffers, its strings at base in the
// arena.
func (c *ParquetCol) mark(base int) ParquetMark {
	m := ParquetMark{uint32(len(c.Defs)), uint32(len(c.Ends)), uint32(len(c.Floats)), uint32(base)} //nolint:gosec // G115: an arena holds at most a batch and one row (MaxParquetLine)
	c.rows = append(c.rows, m)
	c.base = m.Base
	return m
}

// OpenParquetRows opens the Parquet file f (named name in messages) for
// reading by rows; ErrNotParquet when f is not a regular file starting with
// the magic bytes. The checks of the text path (footer, page sizes, schema)
// are made first.
func OpenParquetRows(ctx context.Context, name string, f *os.File) (*ParquetRows, error) {
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || !isParquetFile(f) {
		return nil, ErrNotParquet
	}
	p, err := openParquet(ctx, name, f, st.Size())
	if err != nil {
		return nil, err
	}
	return newParquetRows(p), nil
}

// newParquetRows reads the rows of the file p opened (and checked), which
// it reads only.
func newParquetRows(p *parquetLines) *ParquetRows {
	r := &ParquetRows{p: p, groups: p.f.RowGroups(), rg: -1}
	r.cols = make([]pqCursor, len(p.cols))
	for c := range r.cols {
		r.cols[c].index = c
	}
	for _, l := range p.f.Root().Columns() {
		setLeafLevels(l, r.cols)
	}
	return r
}

// ErrNotParquet is returned by OpenParquetRows for a file that is not Parquet.
var ErrNotParquet = errNotParquet

func setLeafLevels(c *parquet.Column, cur []pqCursor) {
	if c.Leaf() {
		k := &cur[c.Index()]
		k.maxDef, k.maxRep, k.name, k.kind = c.MaxDefinitionLevel(), c.MaxRepetitionLevel(), pathName(c), c.Type().Kind()
		return
	}
	for _, sc := range c.Columns() {
		setLeafLevels(sc, cur)
	}
}

// IsTREC reports whether the file is read as a TREC run (the text path's
// rule): it has no fields then.
func (r *ParquetRows) IsTREC() bool { return r.p.trec }

// Fields is the plan of the top-level columns, in schema order.
func (r *ParquetRows) Fields() []ParquetField {
	out := make([]ParquetField, len(r.p.plan))
	for i, f := range r.p.plan {
		key := f.key[1 : len(f.key)-2] // "name":
		g := ParquetField{Name: string(key), Kind: f.kind, Obj: f.obj, DField: f.dField, DElem: f.dElem, DItem: f.dItem}
		for j, l := range f.leaves {
			var lk string
			if len(l.key) > 0 {
				lk = string(l.key[1 : len(l.key)-2])
			}
			g.Leaves = append(g.Leaves, ParquetLeaf{Name: lk, Col: f.lo + j, Enc: l.enc, DMax: l.dMax})
		}
		out[i] = g
	}
	return out
}

// FastLeaf reports whether leaf column col is of a type ParquetRows reads:
// a string (BYTE_ARRAY), a FLOAT or a DOUBLE.
func (r *ParquetRows) FastLeaf(col int) bool {
	switch r.cols[col].kind {
	case parquet.ByteArray, parquet.Float, parquet.Double:
		return true
	}
	return false
}

// KeyDict has the strings of string column col that are read from a
// dictionary keyed by keys (called with each dictionary's strings once, on
// the reader's goroutine; the strings are valid during the call only): each
// such string's key is appended to ParquetCol.Keys (see there). A
// dictionary-encoded column of repeated ids (as Spark, DuckDB and pyarrow
// write them) is then keyed once per distinct id of a column chunk instead of
// once per value.
func (r *ParquetRows) KeyDict(col int, keys func(strs []string, keys []uint64)) {
	if r.cols[col].kind == parquet.ByteArray {
		r.cols[col].keyFn = keys
	}
}

// NumCols is the number of leaf columns (of the buffers Next takes).
func (r *ParquetRows) NumCols() int { return len(r.cols) }

// Row is the number of the row Next read last, from 1.
func (r *ParquetRows) Row() int64 { return r.row }

// Next reads the next row: its levels and values are appended to cols (one
// buffer per leaf column, NumCols), its string values to arena; the arena is
// returned, grown if it had to be. io.EOF after the last row. Errors name
// the file and the row; after one, the buffers may hold part of the row.
func (r *ParquetRows) Next(arena []byte, cols []ParquetCol) ([]byte, error) {
	r.data, r.rowStart, r.into = arena, len(arena), cols
	err := r.next()
	r.into = nil
	return r.data, err
}

// NextRows reads up to maxRows rows as Next does, one after another, into
// cols and arena, and stops after the row that brings the arena to maxBytes
// or more: a batch of rows. It returns the arena (grown if it had to be) and
// the number of rows read; 0 rows and io.EOF after the last row. The rows of
// a column that lie within its current page are taken as a run (their
// levels and values appended at once); a row that crosses a page, or one
// past a run's limits, is read by Next's own path, so the errors are Next's
// and name the row. After an error, n whole rows were read before the row
// it names (the buffers may hold part of that row).
func (r *ParquetRows) NextRows(arena []byte, cols []ParquetCol, maxRows, maxBytes int) ([]byte, int, error) {
	r.into = cols
	defer func() { r.into = nil }()
	n := 0
	for n < maxRows && len(arena) < maxBytes {
		k, err := r.bulk(&arena, maxRows-n, maxBytes)
		if err != nil {
			return arena, n, err
		}
		if k > 0 {
			n += k
			continue
		}
		r.data, r.rowStart = arena, len(arena)
		err = r.next()
		arena = r.data
		if err != nil {
			if n > 0 && errors.Is(err, io.EOF) {
				err = nil
			}
			return arena, n, err
		}
		n++
	}
	return arena, n, nil
}

// bulk reads a run of whole rows that every column holds in its current
// page (at most maxRows, and stopping after the row that brings *data to
// maxBytes), or none (0) when a column's next row is not there whole, the
// row group has ended, or the run's first row is longer than MaxParquetLine
// as a line: next reads that row.
func (r *ParquetRows) bulk(data *[]byte, maxRows, maxBytes int) (n int, err error) {
	defer func() {
		if x := recover(); x != nil { // as next's (the pages' checks should leave none)
			n, err = 0, Errorf(r.p.name, int(r.row+1), "not a valid Parquet file: %v", x)
		}
	}()
	if r.left == 0 {
		return 0, nil
	}
	k := int(min(int64(maxRows), r.left))
	for c := range r.cols {
		if k = r.cols[c].run(k); k == 0 {
			return 0, nil
		}
	}
	// The rows' sizes: arena bytes and line size (next's measure) of rows
	// [0, j), summed over the columns.
	r.cum, r.size = grow(r.cum, k+1), grow(r.size, k+1)
	for c := range r.cols {
		r.cols[c].sizes(k, r.cum, r.size)
	}
	for n < k && len(*data)+r.cum[n] < maxBytes && r.size[n+1]-r.size[n] <= maxParquetRow {
		n++
	}
	if n == 0 {
		return 0, nil
	}
	if r.row&0xff == 0 || (r.row+int64(n)-1)>>8 != r.row>>8 { // next's check, once per 256 rows
		if err := r.p.ctx.Err(); err != nil {
			return 0, err
		}
	}
	r.row += int64(n)
	r.left -= int64(n)
	for c := range r.cols {
		r.cols[c].take(data, &r.into[c], n)
	}
	return n, nil
}

// grow returns s with n elements, all 0.
func grow(s []int, n int) []int {
	if cap(s) < n {
		return make([]int, n)
	}
	s = s[:n]
	clear(s)
	return s
}

func (r *ParquetRows) next() (err error) {
	defer func() {
		if x := recover(); x != nil { // the library's panics on a damaged page
			err = Errorf(r.p.name, int(r.row+1), "not a valid Parquet file: %v", x)
		}
	}()
	if r.row&0xff == 0 {
		if err := r.p.ctx.Err(); err != nil {
			return err
		}
	}
	for r.left == 0 {
		if err := r.endGroup(); err != nil {
			return err
		}
		if r.rg+1 == len(r.groups) {
			return io.EOF
		}
		r.rg++
		g := r.groups[r.rg]
		r.left = g.NumRows()
		chunks := g.ColumnChunks()
		for c := range r.cols {
			r.cols[c].start(chunks[c].Pages())
		}
	}
	r.row++
	r.left--
	size := 0
	for c := range r.cols {
		k := &r.cols[c]
		dst := &r.into[c]
		m := dst.mark(len(r.data))
		if err := k.readRow(&r.data, dst, m); err != nil {
			if errors.Is(err, io.EOF) {
				return Errorf(r.p.name, int(r.row), "not a valid Parquet file: column %s has fewer rows than its row group", k.name)
			}
			return Errorf(r.p.name, int(r.row), "not a valid Parquet file: column %s: %v", k.name, err)
		}
		size += 2*(len(dst.Defs)-int(m.Defs)) + 8*(len(dst.Floats)-int(m.Floats))
		if size+len(r.data)-r.rowStart > maxParquetRow {
			return Errorf(r.p.name, int(r.row), "row longer than %d MiB as a line", maxParquetRow>>20)
		}
	}
	return nil
}

// endGroup checks that every column of the row group read ended with its
// rows, and closes its pages.
func (r *ParquetRows) endGroup() error {
	if r.rg < 0 {
		return nil
	}
	var first error
	for c := range r.cols {
		k := &r.cols[c]
		if k.pages == nil {
			continue
		}
		if k.li < k.n {
			first = cmpOr(first, Errorf(r.p.name, int(r.row), "not a valid Parquet file: column %s has more rows than its row group", k.name))
		} else if _, err := k.pages.ReadPage(); !errors.Is(err, io.EOF) && first == nil {
			if err == nil {
				first = Errorf(r.p.name, int(r.row), "not a valid Parquet file: column %s has more rows than its row group", k.name)
			} else {
				first = Errorf(r.p.name, int(r.row), "not a valid Parquet file: column %s: %v", k.name, err)
			}
		}
		k.close()
	}
	return first
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// Close releases the pages being read (and closes the file ShardRows opened).
func (r *ParquetRows) Close() error {
	for c := range r.cols {
		r.cols[c].close()
	}
	if r.file != nil {
		err := r.file.Close()
		r.file = nil
		return err
	}
	return nil
}

// ParquetLiner makes a row's text line (the text path's) from its column
// values; it may be used by any goroutine, apart from the reader's.
type ParquetLiner struct {
	p     parquetLines // the plan and name (its scratch is Line's own)
	kinds []parquet.Kind
	defs  []int // the leaf columns' maximum definition levels
}

// Liner is the liner of r's rows.
func (r *ParquetRows) Liner() *ParquetLiner {
	p := r.p
	l := &ParquetLiner{p: parquetLines{name: p.name, trec: p.trec, plan: p.plan, run: p.run}}
	for c := range r.cols {
		l.kinds = append(l.kinds, r.cols[c].kind)
		l.defs = append(l.defs, r.cols[c].maxDef)
	}
	return l
}

// Line is row row's text line (without its newline), appended to dst, from
// the row's values: cols[c] is leaf column c's (ParquetCol.Row).
func (l *ParquetLiner) Line(dst []byte, row int64, cols []ParquetCol) ([]byte, error) {
	var vals parquet.Row
	for c := range cols {
		k := &cols[c]
		vi, fi := 0, 0
		for i, d := range k.Defs {
			var v parquet.Value
			if int(d) == l.defs[c] {
				switch l.kinds[c] {
				case parquet.ByteArray:
					v = parquet.ByteArrayValue(k.Str(vi))
					vi++
				case parquet.Float:
					v = parquet.FloatValue(float32(k.Floats[fi]))
					fi++
				default:
					v = parquet.DoubleValue(k.Floats[fi])
					fi++
				}
			}
			vals = append(vals, v.Level(int(k.reps[i]), int(d), c))
		}
	}
	p := l.p // Line's own scratch
	p.row = row
	p.cols = make([][]parquet.Value, len(cols))
	var err error
	if p.trec {
		dst, err = p.trecLine(dst, vals)
	} else {
		dst, err = p.jsonLine(dst, vals)
	}
	if err == nil && len(dst) > MaxParquetLine {
		err = Errorf(p.name, int(p.row), "row longer than %d MiB as a line", MaxParquetLine>>20)
	}
	return dst, err
}

// pqCursor reads one leaf column's pages.
type pqCursor struct {
	index          int
	name           string
	kind           parquet.Kind
	maxDef, maxRep int
	pages          parquet.Pages
	page           parquet.Page
	defs, reps     []byte // the page's levels (nil: all 0)
	n, li          int    // levels of the page, the next one
	vi             int    // the next non-null value
	// The page's values (or its dictionary's, indexed by idx).
	data   []byte
	offs   []uint32
	floats []float32
	dbls   []float64
	idx    []int32
	nvals  int // non-null values of the page
	// A run of rows within the page (run, sizes, take): where the j-th row
	// starts among the page's levels (lb[j]) and, from the run's start,
	// among its values (vb[j]) and string bytes (bb[j]).
	lb, vb, bb []int
	// KeyDict's: the function, the dictionary keyed last (held, so that a
	// new dictionary is never at its address) and its strings' keys.
	keyFn    func([]string, []uint64)
	keyDict  parquet.Dictionary
	dictKeys []uint64
	keyStrs  []string
}

// run returns how many whole rows the page holds from the next level, at
// most k (0 when it holds none whole: the page is read, or its last row may
// go on in the next page, or the next level does not start a row), and
// sets lb to their starts.
func (k *pqCursor) run(max int) int {
	if k.li >= k.n {
		return 0
	}
	if k.reps == nil {
		max = min(max, k.n-k.li)
		k.lb = k.lb[:0]
		for j := range max + 1 {
			k.lb = append(k.lb, k.li+j)
		}
		return max
	}
	if k.reps[k.li] != 0 {
		return 0 // readRow's error
	}
	k.lb = append(k.lb[:0], k.li)
	for i := k.li + 1; i < k.n && len(k.lb) <= max; i++ {
		if k.reps[i] == 0 {
			k.lb = append(k.lb, i)
		}
	}
	return len(k.lb) - 1 // the last row is whole when the next starts in this page
}

// sizes sets vb and bb for the first n rows of the run and adds each row's
// arena bytes to cum and line size (two bytes a level, eight a float, its
// strings) to size, both from the run's start.
func (k *pqCursor) sizes(n int, cum, size []int) {
	k.vb, k.bb = grow(k.vb, n+1), grow(k.bb, n+1)
	vi := 0
	for j := 1; j <= n; j++ {
		lo, hi := k.lb[j-1], k.lb[j]
		if k.defs == nil || k.nvals == k.n { // no nulls in the page
			vi += hi - lo
		} else {
			for _, d := range k.defs[lo:hi] {
				if int(d) == k.maxDef {
					vi++
				}
			}
		}
		k.vb[j] = vi
	}
	lv := k.lb[0]
	switch {
	case k.kind != parquet.ByteArray:
		for j := 1; j <= n; j++ {
			size[j] += 2*(k.lb[j]-lv) + 8*k.vb[j]
		}
	case k.idx == nil:
		o := k.offs[k.vi:]
		for j := 1; j <= n; j++ {
			b := int(o[k.vb[j]] - o[0])
			k.bb[j] = b
			cum[j] += b
			size[j] += 2*(k.lb[j]-lv) + b
		}
	default:
		b, x := 0, k.idx[k.vi:]
		for j := 1; j <= n; j++ {
			for _, i := range x[k.vb[j-1]:k.vb[j]] {
				b += int(k.offs[i+1] - k.offs[i])
			}
			k.bb[j] = b
			cum[j] += b
			size[j] += 2*(k.lb[j]-lv) + b
		}
	}
}

// take appends the run's first n rows to dst (readRow's, n at once), their
// strings to *data.
func (k *pqCursor) take(data *[]byte, dst *ParquetCol, n int) {
	lo, hi := k.lb[0], k.lb[n]
	d0, e0, f0, b0 := len(dst.Defs), len(dst.Ends), len(dst.Floats), len(*data)
	str := k.kind == parquet.ByteArray
	for j := range n {
		m := ParquetMark{uint32(d0 + k.lb[j] - lo), uint32(e0), uint32(f0), uint32(b0 + k.bb[j])} //nolint:gosec // G115: a batch's levels fit; an arena holds at most a batch and one row
		if str {
			m.Ends += uint32(k.vb[j]) //nolint:gosec // G115: as above
		} else {
			m.Floats += uint32(k.vb[j]) //nolint:gosec // G115: as above
		}
		dst.rows = append(dst.rows, m)
	}
	dst.base = dst.rows[len(dst.rows)-1].Base
	if k.reps != nil {
		dst.reps = append(dst.reps, k.reps[lo:hi]...)
	} else {
		dst.reps = append(dst.reps, make([]uint8, hi-lo)...)
	}
	if k.defs != nil {
		dst.Defs = append(dst.Defs, k.defs[lo:hi]...)
	} else {
		for range hi - lo {
			dst.Defs = append(dst.Defs, uint8(k.maxDef)) //nolint:gosec // G115: a level is at most the schema's depth
		}
	}
	if k.idx != nil && k.kind == parquet.ByteArray {
		*data = slices.Grow(*data, k.bb[n]+16) // the run's strings (sizes), copied by 16 bytes
	}
	k.values(data, dst, k.vb[n])
	k.li = hi
}

func (k *pqCursor) start(p parquet.Pages) {
	k.close()
	k.pages, k.page, k.n, k.li = p, nil, 0, 0
}

// keyDictionary keys the strings of the dictionary dict, which the cursor's
// values are now (setValues).
func (k *pqCursor) keyDictionary(dict parquet.Dictionary) {
	n := len(k.offs) - 1
	k.keyStrs = k.keyStrs[:0]
	for i := range n {
		s := k.data[k.offs[i]:k.offs[i+1]]
		k.keyStrs = append(k.keyStrs, unsafe.String(unsafe.SliceData(s), len(s))) //nolint:gosec // G103: a view of the dictionary's bytes for the call to keyFn only
	}
	if cap(k.dictKeys) < n {
		k.dictKeys = make([]uint64, n)
	}
	k.dictKeys = k.dictKeys[:n]
	k.keyFn(k.keyStrs, k.dictKeys)
	clear(k.keyStrs) // no view of the dictionary kept
	k.keyDict = dict
}

// padKeys gives the strings of dst that have no key ParquetNoKey.
func (k *pqCursor) padKeys(dst *ParquetCol) {
	for len(dst.Keys) < len(dst.Ends) {
		dst.Keys = append(dst.Keys, ParquetNoKey)
	}
}

func (k *pqCursor) close() {
	if k.page != nil {
		parquet.Release(k.page)
	}
	if k.pages != nil {
		k.pages.Close()
		k.pages = nil
	}
	k.page, k.keyDict, k.dictKeys = nil, nil, k.dictKeys[:0]
	k.n, k.li = 0, 0
}

// nextPage reads the column's next data page.
func (k *pqCursor) nextPage() error {
	for {
		if k.page != nil {
			parquet.Release(k.page) // its values were copied out
			k.page = nil
		}
		pg, err := k.pages.ReadPage()
		if err != nil {
			return err
		}
		n := int(pg.NumValues())
		defs, reps := pg.DefinitionLevels(), pg.RepetitionLevels()
		if k.maxDef > 0 && len(defs) != n || k.maxRep > 0 && len(reps) != n {
			return fmt.Errorf("a page of %d values with %d definition and %d repetition levels", n, len(defs), len(reps))
		}
		if k.maxDef == 0 {
			defs = nil
		}
		if k.maxRep == 0 {
			reps = nil
		}
		nv := n
		if defs != nil {
			nv = 0
			for _, d := range defs {
				if int(d) == k.maxDef {
					nv++
				} else if int(d) > k.maxDef {
					return fmt.Errorf("a definition level of %d, past the column's %d", d, k.maxDef)
				}
			}
		}
		for _, r := range reps {
			if int(r) > k.maxRep {
				return fmt.Errorf("a repetition level of %d, past the column's %d", r, k.maxRep)
			}
		}
		k.data, k.offs, k.floats, k.dbls, k.idx = nil, nil, nil, nil, nil
		data := pg.Data()
		var have int
		if dict := pg.Dictionary(); dict != nil {
			if data.Kind() != encoding.Int32 {
				return fmt.Errorf("a dictionary page's indexes are %s values", data.Kind())
			}
			k.idx = data.Int32()
			have = len(k.idx)
			dv := dict.Page().Data()
			if err := k.setValues(&dv); err != nil {
				return err
			}
			dn := dict.Len()
			for _, i := range k.idx {
				if i < 0 || int(i) >= dn {
					return fmt.Errorf("a dictionary index %d out of [0, %d)", i, dn)
				}
			}
			if k.keyFn != nil && (dict != k.keyDict || len(k.dictKeys) != len(k.offs)-1) {
				k.keyDictionary(dict)
			}
		} else {
			if err := k.setValues(&data); err != nil {
				return err
			}
			switch k.kind {
			case parquet.ByteArray:
				have = len(k.offs) - 1
			case parquet.Float:
				have = len(k.floats)
			default:
				have = len(k.dbls)
			}
		}
		if have != nv {
			return fmt.Errorf("a page of %d values that holds %d", nv, have)
		}
		k.page, k.defs, k.reps, k.n, k.li, k.vi, k.nvals = pg, defs, reps, n, 0, 0, nv
		if n > 0 {
			return nil
		}
	}
}

// setValues sets the cursor's typed values from v, checking a byte array's
// offsets.
func (k *pqCursor) setValues(v *encoding.Values) error {
	switch {
	case k.kind == parquet.ByteArray && v.Kind() == encoding.ByteArray:
		data, offs := v.ByteArray()
		if len(offs) == 0 {
			offs = []uint32{0}
		}
		prev := offs[0]
		for _, o := range offs {
			if o < prev || int(o) > len(data) {
				return fmt.Errorf("a byte array offset %d out of order or past %d bytes", o, len(data))
			}
			prev = o
		}
		k.data, k.offs = data, offs
	case k.kind == parquet.Float && v.Kind() == encoding.Float:
		k.floats = v.Float()
	case k.kind == parquet.Double && v.Kind() == encoding.Double:
		k.dbls = v.Double()
	default:
		return fmt.Errorf("%s values in a %s column", v.Kind(), k.kind)
	}
	return nil
}

// readRow appends the column's values of the next row to dst, the row
// started at m (its strings to *data).
func (k *pqCursor) readRow(data *[]byte, dst *ParquetCol, m ParquetMark) error {
	for first := true; ; first = false {
		if k.li == k.n {
			if !first && k.maxRep == 0 {
				return nil
			}
			if err := k.nextPage(); err != nil {
				if !first && errors.Is(err, io.EOF) {
					return nil
				}
				return err
			}
			if !first && k.reps[0] == 0 {
				return nil // the row ended with the page before
			}
		}
		// The levels of the row in this page: [li, j).
		j := k.li + 1
		if k.reps != nil {
			if first && k.reps[k.li] != 0 {
				return fmt.Errorf("a row that starts with repetition level %d", k.reps[k.li])
			}
			for j < k.n && k.reps[j] != 0 {
				j++
			}
			dst.reps = append(dst.reps, k.reps[k.li:j]...)
		} else {
			for range j - k.li {
				dst.reps = append(dst.reps, 0)
			}
		}
		n := j - k.li // non-null values among them
		if k.defs != nil {
			defs := k.defs[k.li:j]
			dst.Defs = append(dst.Defs, defs...)
			n = 0
			for _, d := range defs {
				if int(d) == k.maxDef {
					n++
				}
			}
		} else {
			for range j - k.li {
				dst.Defs = append(dst.Defs, uint8(k.maxDef)) //nolint:gosec // G115: a level is at most the schema's depth
			}
		}
		k.values(data, dst, n)
		k.li = j
		if len(*data)-int(m.Base) > maxParquetRow || len(dst.Defs)-int(m.Defs) > maxParquetRow/2 {
			return fmt.Errorf("a row longer than %d MiB", maxParquetRow>>20)
		}
		if j < k.n || k.maxRep == 0 {
			return nil
		}
	}
}

// dictStrings appends the dictionary's strings idx to *data, their ends to
// dst (and their keys to dst.Keys when the column is keyed, KeyDict: the
// caller has padded and grown Keys). A string of at most 16 bytes is copied as 16 (no call to memmove):
// the bytes after it are the dictionary's, and those past the arena's length
// are overwritten by what follows or never read.
func (k *pqCursor) dictStrings(data *[]byte, dst *ParquetCol, idx []int32) {
	e0 := len(dst.Ends)
	dst.Ends = slices.Grow(dst.Ends, len(idx))[:e0+len(idx)]
	ends := dst.Ends[e0:]
	d, src, offs := *data, k.data, k.offs
	pos := len(d)
	var keys, dk []uint64
	if k.keyFn != nil {
		dst.Keys = dst.Keys[:e0+len(idx)]
		keys, dk = dst.Keys[e0:], k.dictKeys
	}
	for j, x := range idx {
		if keys != nil {
			keys[j] = dk[x]
		}
		o, e := offs[x], offs[x+1]
		if n := int(e - o); n <= 16 && int(o)+16 <= len(src) && pos+16 <= cap(d) {
			*(*[16]byte)(d[pos : pos+16]) = *(*[16]byte)(src[o : o+16])
			pos += n
		} else {
			d = append(d[:pos], src[o:e]...)
			pos = len(d)
		}
		ends[j] = uint32(pos) //nolint:gosec // G115: at most a batch and MaxParquetLine
	}
	*data = d[:pos]
}

// values copies the page's next m non-null values into dst.
func (k *pqCursor) values(data *[]byte, dst *ParquetCol, m int) {
	if m == 0 {
		return
	}
	i := k.vi
	k.vi += m
	switch k.kind {
	case parquet.ByteArray:
		if k.idx == nil { // the values are contiguous
			off := k.offs[i : i+m+1]
			base := uint32(len(*data)) - off[0] //nolint:gosec // G115: at most a batch and MaxParquetLine
			*data = append(*data, k.data[off[0]:off[m]]...)
			for _, o := range off[1:] {
				dst.Ends = append(dst.Ends, base+o)
			}
		} else {
			if k.keyFn != nil {
				k.padKeys(dst) // a dictionary's after plain strings
				dst.Keys = slices.Grow(dst.Keys, m)
			}
			k.dictStrings(data, dst, k.idx[i:i+m])
			return
		}
		if k.keyFn != nil && len(dst.Keys) > 0 {
			k.padKeys(dst) // plain after a dictionary's strings
		}
	case parquet.Float:
		if k.idx == nil {
			for _, x := range k.floats[i : i+m] {
				dst.Floats = append(dst.Floats, float64(x))
			}
			return
		}
		for _, x := range k.idx[i : i+m] {
			dst.Floats = append(dst.Floats, float64(k.floats[x]))
		}
	default:
		if k.idx == nil {
			dst.Floats = append(dst.Floats, k.dbls[i:i+m]...)
			return
		}
		for _, x := range k.idx[i : i+m] {
			dst.Floats = append(dst.Floats, k.dbls[x])
		}
	}
}
