package input

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

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
}

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
	rows   []pqMark // where each row of the batch starts
}

// pqMark is where a row starts in a ParquetCol's buffers and in the arena.
type pqMark struct{ defs, ends, floats, base uint32 }

// Reset empties the buffers for a new batch of rows.
func (c *ParquetCol) Reset() {
	c.Defs, c.reps, c.Ends, c.Floats, c.rows = c.Defs[:0], c.reps[:0], c.Ends[:0], c.Floats[:0], c.rows[:0]
}

// Row sets v to the i-th row of the batch (a view of c's buffers, its
// strings in data, the arena Next returned), valid until c is next Reset.
func (c *ParquetCol) Row(i int, data []byte, v *ParquetCol) {
	m := c.rows[i]
	e := pqMark{uint32(len(c.Defs)), uint32(len(c.Ends)), uint32(len(c.Floats)), 0} //nolint:gosec // G115: a batch's levels fit
	if i+1 < len(c.rows) {
		e = c.rows[i+1]
	}
	v.Defs, v.reps = c.Defs[m.defs:e.defs], c.reps[m.defs:e.defs]
	v.Ends, v.Floats = c.Ends[m.ends:e.ends], c.Floats[m.floats:e.floats]
	v.Data, v.base = data, m.base
}

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
func (c *ParquetCol) mark(base int) pqMark {
	m := pqMark{uint32(len(c.Defs)), uint32(len(c.Ends)), uint32(len(c.Floats)), uint32(base)} //nolint:gosec // G115: an arena holds at most a batch and one row (MaxParquetLine)
	c.rows = append(c.rows, m)
	c.base = m.base
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
	r := &ParquetRows{p: p, groups: p.f.RowGroups(), rg: -1}
	r.cols = make([]pqCursor, len(p.cols))
	for c := range r.cols {
		r.cols[c].index = c
	}
	for _, l := range p.f.Root().Columns() {
		setLeafLevels(l, r.cols)
	}
	return r, nil
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
		size += 2*(len(dst.Defs)-int(m.defs)) + 8*(len(dst.Floats)-int(m.floats))
		if size+len(r.data)-r.rowStart > MaxParquetLine {
			return Errorf(r.p.name, int(r.row), "row longer than %d MiB as a line", MaxParquetLine>>20)
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
}

func (k *pqCursor) start(p parquet.Pages) {
	k.close()
	k.pages, k.page, k.n, k.li = p, nil, 0, 0
}

func (k *pqCursor) close() {
	if k.page != nil {
		parquet.Release(k.page)
	}
	if k.pages != nil {
		k.pages.Close()
		k.pages = nil
	}
	k.page = nil
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
func (k *pqCursor) readRow(data *[]byte, dst *ParquetCol, m pqMark) error {
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
		if len(*data)-int(m.base) > MaxParquetLine || len(dst.Defs)-int(m.defs) > MaxParquetLine/2 {
			return fmt.Errorf("a row longer than %d MiB", MaxParquetLine>>20)
		}
		if j < k.n || k.maxRep == 0 {
			return nil
		}
	}
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
			return
		}
		for _, x := range k.idx[i : i+m] {
			*data = append(*data, k.data[k.offs[x]:k.offs[x+1]]...)
			dst.Ends = append(dst.Ends, uint32(len(*data))) //nolint:gosec // G115: at most a batch and MaxParquetLine
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
