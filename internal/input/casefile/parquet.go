package casefile

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
)

// The fast path of Parquet cases (issue 35 item 3): MapCasesWith reads the
// rows of Parquet shards straight into Case values (input.ParquetRows: the
// column pages decoded by type, no JSON text, no second parse; the reader
// copies batches of rows' column values, and the worker that scores a
// batch makes its rows into cases) when every
// shard is a Parquet file whose columns are the cases' own: id, locale, type,
// query and cluster strings, must_cite_one_of and relevant_ids lists of
// strings, retrieved a list of structs of id, parent_id and text strings and
// a float or double score. Any other table (a scores map, an unknown or a
// provenance column, another type) is read by the text path, each row a JSON
// line (input's parquetLines). So is any row the fast path does not decode
// to the text path's very Case: a null id, an empty id, a null element of a
// list, a null or empty retrieved id, a score that is not finite or is -0,
// a string that is not valid UTF-8, a row of more than parquetFastRow bytes:
// that row's line is made (ParquetRows.Line) and parsed as the text path
// parses it, so its Case or its error is the text path's.

// parquetShards is the stream of shards that can hand its Parquet shards to
// the fast path (input.Sharded).
type parquetShards interface {
	ParquetShards() []string
	ReadParquetShards(starts []int) error
	ShardRows(i int) (*input.ParquetRows, error)
	EmptyShard(i int) error
}

// parquetFastRow is the largest row (bytes of its values) decoded by the fast
// path; a larger one goes through its line, whose length is capped.
const parquetFastRow = 1 << 20

// pqStr is a string column of the plan: its leaf column, the definition
// level from which it is present (not null), -1 when absent.
type pqStr struct{ col, dField int }

// pqList is a list of strings.
type pqList struct{ col, dField, dElem, dItem, dMax int }

// pqPlan is how a shard's columns make a Case.
type pqPlan struct {
	id, locale, typ, query, cluster pqStr
	gold, relevant                  pqList
	hasRet                          bool
	retField, retElem, retItem      int
	retID, retParent, retScore      pqStr // dField: the leaf's DMax
	retCols                         []int // every leaf of an entry (text too)
}

// planParquet returns the plan of r's columns, or false when the fast path
// does not read them.
func planParquet(r *input.ParquetRows) (pqPlan, bool) {
	no := pqStr{-1, 0}
	pl := pqPlan{id: no, locale: no, typ: no, query: no, cluster: no, retID: no, retParent: no, retScore: no}
	pl.gold.col, pl.relevant.col = -1, -1
	if r.IsTREC() {
		return pl, false
	}
	seen := map[string]bool{}
	for _, f := range r.Fields() {
		if seen[f.Name] {
			return pl, false
		}
		seen[f.Name] = true
		for _, l := range f.Leaves {
			if !r.FastLeaf(l.Col) {
				return pl, false
			}
		}
		scalar := func(dst *pqStr) bool {
			if f.Kind != input.ParquetScalar || f.Leaves[0].Enc != input.ParquetString {
				return false
			}
			*dst = pqStr{f.Leaves[0].Col, f.DField}
			return true
		}
		list := func(dst *pqList) bool {
			if f.Kind != input.ParquetList || f.Obj || len(f.Leaves) != 1 || f.Leaves[0].Enc != input.ParquetString {
				return false
			}
			*dst = pqList{f.Leaves[0].Col, f.DField, f.DElem, f.DItem, f.Leaves[0].DMax}
			return true
		}
		var ok bool
		switch f.Name {
		case "id":
			ok = scalar(&pl.id)
		case "locale":
			ok = scalar(&pl.locale)
		case "type":
			ok = scalar(&pl.typ)
		case "query":
			ok = scalar(&pl.query)
		case "cluster":
			ok = scalar(&pl.cluster)
		case "must_cite_one_of":
			ok = list(&pl.gold)
		case "relevant_ids":
			ok = list(&pl.relevant)
		case "retrieved":
			ok = planRetrieved(&pl, f)
		}
		if !ok {
			return pl, false
		}
	}
	return pl, true
}

func planRetrieved(pl *pqPlan, f input.ParquetField) bool {
	if f.Kind != input.ParquetList || !f.Obj {
		return false
	}
	pl.hasRet, pl.retField, pl.retElem, pl.retItem = true, f.DField, f.DElem, f.DItem
	seen := map[string]bool{}
	for _, l := range f.Leaves {
		if seen[l.Name] {
			return false
		}
		seen[l.Name] = true
		pl.retCols = append(pl.retCols, l.Col)
		switch {
		case l.Name == "id" && l.Enc == input.ParquetString:
			pl.retID = pqStr{l.Col, l.DMax}
		case l.Name == "parent_id" && l.Enc == input.ParquetString:
			pl.retParent = pqStr{l.Col, l.DMax}
		case l.Name == "score" && l.Enc == input.ParquetFloat:
			pl.retScore = pqStr{l.Col, l.DMax}
		case l.Name == "text" && l.Enc == input.ParquetString:
		default:
			return false
		}
	}
	return pl.retID.col >= 0
}

// pqStrings views the strings of a batch in its arena; ascii: the batch's
// strings are all ASCII, so valid UTF-8.
type pqStrings struct{ ascii bool }

// str is s as a string (a view of the arena, valid until the batch is
// recycled), and whether the fast path takes it as it is: valid UTF-8 (the
// text path turns an invalid byte into U+FFFD).
func (a *pqStrings) str(s []byte) (string, bool) {
	if !a.ascii && !utf8.Valid(s) {
		return "", false
	}
	return unsafe.String(unsafe.SliceData(s), len(s)), true //nolint:gosec // G103: a view into the batch's arena, not written until the batch is recycled
}

// isASCII reports whether b is all ASCII.
func isASCII(b []byte) bool {
	le := binary.LittleEndian
	for len(b) >= 32 { // a batch's arena: 32 bytes a test
		if (le.Uint64(b)|le.Uint64(b[8:])|le.Uint64(b[16:])|le.Uint64(b[24:]))&0x8080808080808080 != 0 {
			return false
		}
		b = b[32:]
	}
	for len(b) >= 8 {
		if binary.LittleEndian.Uint64(b)&0x8080808080808080 != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// pqBatch is a run of rows on their way through mapParquet: the reader
// fills cols and arena with the rows' column values, a worker makes them
// into cases (makeCases, or the row's line) and gives them to work, in its
// own cache.
type pqBatch[T any] struct {
	pqRows
	seq     int
	results []T
	err     error
}

// pqRows is a batch's rows, from one shard.
type pqRows struct {
	cases []Case
	n     int
	cols  []input.ParquetCol // the rows' values, per leaf column
	arena []byte             // the strings of its rows
	ascii bool               // arena is all ASCII (the worker's)
	plan  *pqPlan            // the shard's
	keyer Keyer              // MapOptions.Keyer
	liner *input.ParquetLiner
	line  int   // the first row's line (its place in the input, from 1)
	row   int64 // the first row's number in its shard, from 1
}

func (b *pqBatch[T]) order() int         { return b.seq }
func (b *pqBatch[T]) done() ([]T, error) { return b.results, b.err }

// pqBatchCases and pqArenaSize bound a batch.
const (
	pqBatchCases = 128
	pqArenaSize  = 64 << 10
)

// pqWorker is a worker's scratch for the rows it makes into cases.
type pqWorker struct {
	row     []input.ParquetCol // makeCase: a row's values
	parser  CaseParser
	lineBuf []byte
	bad     []bool // makeCases: the rows made from their lines
	size    []int  // large: the rows' bytes
}

// makeCases makes the rows of b into its cases column by column, each
// column's buffers read once and in order, and sets w.bad[i] for each row
// the fast path does not decode (see the file's comment): makeCase makes
// it from its line.
func (w *pqWorker) makeCases(file string, b *pqRows) {
	n := b.n
	if cap(w.bad) < n {
		w.bad = make([]bool, n)
	}
	w.bad = w.bad[:n]
	bad := w.bad
	clear(bad)
	if len(b.arena) > parquetFastRow { // a row's strings are at most the arena
		w.large(b, bad)
	}
	cs := b.cases[:n]
	for i := range cs {
		c := &cs[i]
		c.File, c.Line, c.Raw, c.Unknown, c.Scores = file, b.line+i, nil, c.Unknown[:0], nil
	}
	a := pqStrings{ascii: b.ascii}
	pl := b.plan
	b.scalarCol(pl.id, &a, unsafe.Offsetof(Case{}.ID), bad)
	for i := range cs {
		if cs[i].ID == "" { // null or empty
			bad[i] = true
		}
	}
	b.scalarCol(pl.locale, &a, unsafe.Offsetof(Case{}.Locale), bad)
	b.scalarCol(pl.typ, &a, unsafe.Offsetof(Case{}.Type), bad)
	for i := range cs {
		if cs[i].Type == "" {
			cs[i].Type = "golden"
		}
	}
	b.scalarCol(pl.query, &a, unsafe.Offsetof(Case{}.Query), bad)
	b.scalarCol(pl.cluster, &a, unsafe.Offsetof(Case{}.Cluster), bad)
	b.listCol(pl.gold, &a, unsafe.Offsetof(Case{}.Gold), bad)
	b.listCol(pl.relevant, &a, unsafe.Offsetof(Case{}.Relevant), bad)
	for i := range cs {
		c := &cs[i]
		c.Retrieved, c.HasRetrieved, c.RetrievedKeys, c.Keyer = c.Retrieved[:0], false, c.RetrievedKeys[:0], nil
	}
	if pl.hasRet {
		b.retrievedCols(pl, &a, bad)
	}
}

// large sets bad[i] for each row of b whose strings are more than
// parquetFastRow bytes.
func (w *pqWorker) large(b *pqRows, bad []bool) {
	if cap(w.size) < len(bad) {
		w.size = make([]int, len(bad))
	}
	size := w.size[:len(bad)]
	clear(size)
	for k := range b.cols {
		col := &b.cols[k]
		marks := col.Marks()[:len(bad)]
		for i, m := range marks {
			if e := rowEnd(marks, i, len(col.Ends)); m.Ends < e {
				size[i] += int(col.Ends[e-1] - m.Base)
			}
		}
	}
	for i, n := range size {
		if n > parquetFastRow {
			bad[i] = true
		}
	}
}

// rowEnd is where row i of a column (its marks m, ends values in Ends)
// ends in Ends: the next row's start.
func rowEnd(m []input.ParquetMark, i, ends int) uint32 {
	if i+1 < len(m) {
		return m[i+1].Ends
	}
	return uint32(ends) //nolint:gosec // G115: a batch's ends fit
}

// rowDefsEnd is rowEnd for the levels.
func rowDefsEnd(m []input.ParquetMark, i, defs int) uint32 {
	if i+1 < len(m) {
		return m[i+1].Defs
	}
	return uint32(defs) //nolint:gosec // G115: a batch's levels fit
}

// caseStr is the string field at off in c.
func caseStr(c *Case, off uintptr) *string {
	return (*string)(unsafe.Add(unsafe.Pointer(c), off)) //nolint:gosec // G103: off is a string field's (unsafe.Offsetof)
}

// caseList is the []string field at off in c.
func caseList(c *Case, off uintptr) *[]string {
	return (*[]string)(unsafe.Add(unsafe.Pointer(c), off)) //nolint:gosec // G103: off is a []string field's (unsafe.Offsetof)
}

// scalarCol sets the string field at off of each case of b from column s
// ("" when absent or null); bad[i] when row i's is not valid UTF-8.
func (b *pqRows) scalarCol(s pqStr, a *pqStrings, off uintptr, bad []bool) {
	cs := b.cases[:b.n]
	if s.col < 0 {
		for i := range cs {
			*caseStr(&cs[i], off) = ""
		}
		return
	}
	col := &b.cols[s.col]
	marks, defs, ends, data := col.Marks(), col.Defs, col.Ends, b.arena
	marks = marks[:len(cs)]
	for i, m := range marks {
		v := ""
		if int(defs[m.Defs]) >= s.dField && m.Ends < rowEnd(marks, i, len(ends)) {
			var ok bool
			if v, ok = a.str(data[m.Base:ends[m.Ends]]); !ok {
				bad[i] = true
			}
		}
		*caseStr(&cs[i], off) = v
	}
}

// listCol sets the []string field at off of each case of b from list l,
// (empty when null or absent); bad[i] when row i's has a null element or
// a string that is not valid UTF-8.
func (b *pqRows) listCol(l pqList, a *pqStrings, off uintptr, bad []bool) {
	cs := b.cases[:b.n]
	if l.col < 0 {
		for i := range cs {
			p := caseList(&cs[i], off)
			*p = (*p)[:0]
		}
		return
	}
	col := &b.cols[l.col]
	marks, defs, ends, data := col.Marks(), col.Defs, col.Ends, b.arena
	marks = marks[:len(cs)]
	for i, m := range marks {
		p := caseList(&cs[i], off)
		dst := (*p)[:0]
		rd := defs[m.Defs:rowDefsEnd(marks, i, len(defs))]
		if int(rd[0]) >= l.dElem { // not null, not empty
			start, vi := m.Base, m.Ends
			for _, d := range rd {
				if int(d) < l.dItem || int(d) < l.dMax {
					bad[i] = true // a null element
					break
				}
				end := ends[vi]
				vi++
				v, ok := a.str(data[start:end])
				start = end
				if !ok {
					bad[i] = true
					break
				}
				dst = append(dst, v)
			}
		}
		*p = dst
	}
}

// retrievedCols sets each case's retrieved entries from the entries'
// columns (none when null; HasRetrieved unless null); bad[i] when an entry
// of row i is null, has a null or empty id, a string that is not valid
// UTF-8 or a score that is not finite or is -0, or the entries' leaves
// have unequal numbers of levels.
func (b *pqRows) retrievedCols(pl *pqPlan, a *pqStrings, bad []bool) {
	cs := b.cases[:b.n]
	ids := &b.cols[pl.retID.col]
	idMarks, idDefs := ids.Marks()[:len(cs)], ids.Defs
	// Every leaf of an entry has as many levels in a row of entries as the
	// ids.
	for _, k := range pl.retCols {
		if k == pl.retID.col {
			continue
		}
		col := &b.cols[k]
		marks := col.Marks()[:len(cs)]
		for i, m := range marks {
			im := idMarks[i]
			if int(idDefs[im.Defs]) >= pl.retElem && rowDefsEnd(marks, i, len(col.Defs))-m.Defs != rowDefsEnd(idMarks, i, len(idDefs))-im.Defs {
				bad[i] = true
			}
		}
	}
	var pMarks, sMarks []input.ParquetMark
	var pDefs, sDefs []uint8
	var pEnds []uint32
	var scores []float64
	if pl.retParent.col >= 0 {
		p := &b.cols[pl.retParent.col]
		pMarks, pDefs, pEnds = p.Marks()[:len(cs)], p.Defs, p.Ends
	}
	if pl.retScore.col >= 0 {
		s := &b.cols[pl.retScore.col]
		sMarks, sDefs, scores = s.Marks()[:len(cs)], s.Defs, s.Floats
	}
	// The identities' keys (KeyDict): a case has them when each of its
	// identities was read from a dictionary.
	var idKeys, pKeys []uint64
	if b.keyer != nil {
		idKeys = ids.Keys
		if pl.retParent.col >= 0 {
			pKeys = b.cols[pl.retParent.col].Keys
		}
	}
	data, idEnds := b.arena, ids.Ends
	dID, dItem, dParent, dScore := pl.retID.dField, pl.retItem, pl.retParent.dField, pl.retScore.dField
	for i, m := range idMarks {
		if bad[i] {
			continue
		}
		rd := idDefs[m.Defs:rowDefsEnd(idMarks, i, len(idDefs))]
		if int(rd[0]) < pl.retField {
			continue // null: no retrieved
		}
		c := &cs[i]
		c.HasRetrieved = true
		if int(rd[0]) < pl.retElem {
			continue // empty
		}
		n := len(rd)
		if cap(c.Retrieved) < n {
			c.Retrieved = make([]Retrieved, 0, n)
		}
		out := c.Retrieved[:n]
		iv, idEnd, idStart := m.Ends, rowEnd(idMarks, i, len(idEnds)), m.Base
		var pd, sd []uint8
		var pv, pStart, sv uint32
		if pMarks != nil {
			pm := pMarks[i]
			pd, pv, pStart = pDefs[pm.Defs:pm.Defs+uint32(n)], pm.Ends, pm.Base //nolint:gosec // G115: a row's levels fit
		}
		if sMarks != nil {
			sm := sMarks[i]
			sd, sv = sDefs[sm.Defs:sm.Defs+uint32(n)], sm.Floats //nolint:gosec // G115: a row's levels fit
		}
		ok := true
		keys, keyed := c.RetrievedKeys[:0], len(idKeys) > 0
		for k, d := range rd {
			if int(d) < dItem || int(d) < dID || iv >= idEnd {
				ok = false // a null entry, or no id
				break
			}
			end := idEnds[iv]
			key := input.ParquetNoKey
			if keyed {
				key = idKeys[iv]
			}
			iv++
			if end <= idStart {
				ok = false // an empty id
				break
			}
			var id string
			if id, ok = a.str(data[idStart:end]); !ok {
				break
			}
			idStart = end
			e := &out[k]
			*e = Retrieved{ID: id}
			if pd != nil && int(pd[k]) >= dParent {
				end := pEnds[pv]
				pv++
				var p string
				if p, ok = a.str(data[pStart:end]); !ok {
					break
				}
				pStart = end
				e.ParentID = p
				if p != "" { // the identity
					key = input.ParquetNoKey
					if len(pKeys) > 0 {
						key = pKeys[pv-1]
					}
				}
			}
			if keyed {
				keyed = key != input.ParquetNoKey
				keys = append(keys, key)
			}
			if sd != nil && int(sd[k]) >= dScore {
				x := scores[sv]
				sv++
				if math.IsNaN(x) || math.IsInf(x, 0) || x == 0 && math.Signbit(x) {
					ok = false
					break
				}
				e.Score, e.HasScore = x, true
			}
		}
		if !ok {
			bad[i] = true
			continue
		}
		c.Retrieved = out
		c.RetrievedKeys = keys
		if keyed {
			c.Keyer = b.keyer
		}
	}
}

// makeCase makes row i of b into b.cases[i] from the row's line, parsed
// as the text path parses it (its Case or its error is the text path's).
func (w *pqWorker) makeCase(file string, b *pqRows, i int) error {
	c := &b.cases[i]
	c.File, c.Line, c.Raw, c.Unknown, c.Scores = file, b.line+i, nil, c.Unknown[:0], nil
	if cap(w.row) < len(b.cols) {
		w.row = make([]input.ParquetCol, len(b.cols))
	}
	w.row = w.row[:len(b.cols)]
	for k := range b.cols {
		b.cols[k].Row(i, b.arena, &w.row[k])
	}
	var err error
	if w.lineBuf, err = b.liner.Line(w.lineBuf[:0], b.row+int64(i), w.row); err != nil {
		return fmt.Errorf("failed to read %s: %w", file, err) // as the reader reports a row it cannot read
	}
	err = w.parser.Parse(w.lineBuf, file, c.Line, c)
	c.Raw = nil
	return err
}

// mapParquet is MapCasesWith over Parquet shards read by rows. It reports
// false, having read nothing of src, when a shard's columns are not the
// fast path's (or a shard cannot be opened: the text path then says why).
func mapParquet[T any](ctx context.Context, src parquetShards, paths []string, file string, o MapOptions, work func(*Case, *T) error, emit func(*T) error) (bool, error) {
	plans := make([]pqPlan, len(paths))
	for i := range paths {
		r, err := src.ShardRows(i)
		if err != nil {
			return false, nil
		}
		pl, ok := planParquet(r)
		r.Close()
		if !ok {
			return false, nil
		}
		plans[i] = pl
	}
	workers := o.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	inflight := 2*workers + 2
	tokens := make(chan struct{}, inflight)
	free := make(chan *pqBatch[T], inflight)
	todo := make(chan *pqBatch[T], inflight)
	done := make(chan *pqBatch[T], inflight)
	starts := make([]int, 0, len(paths))

	var readers, workersWG sync.WaitGroup
	readers.Add(1)
	go func() { // reader: the rows' column values, in batches
		defer readers.Done()
		defer close(todo)
		seq, line := 0, 0
		var b *pqBatch[T]
		send := func() bool {
			select {
			case todo <- b:
				b = nil
				return true
			case <-ctx.Done():
				return false
			}
		}
		next := func() bool { // a fresh batch, once a token is had
			select {
			case tokens <- struct{}{}:
			case <-ctx.Done():
				return false
			}
			select {
			case b = <-free:
				b.n, b.err, b.arena = 0, nil, b.arena[:0]
			default:
				b = &pqBatch[T]{pqRows: pqRows{cases: make([]Case, pqBatchCases), arena: make([]byte, 0, pqArenaSize)}}
			}
			if !o.StringsInLine { // strings stay valid beyond emit
				b.arena = make([]byte, 0, pqArenaSize)
			}
			b.seq = seq
			seq++
			return true
		}
		fail := func(err error) { // a read error, as the text path's reader reports it
			if ctx.Err() != nil {
				return
			}
			err = fmt.Errorf("failed to read %s: %w", file, err)
			if b == nil && !next() {
				return
			}
			b.err = err
			send()
		}
		for i := range paths {
			starts = append(starts, line+1)
			r, err := src.ShardRows(i)
			if err != nil {
				fail(err)
				return
			}
			if pl := &plans[i]; o.Keyer != nil && pl.hasRet {
				r.KeyDict(pl.retID.col, o.Keyer.Keys)
				if pl.retParent.col >= 0 {
					r.KeyDict(pl.retParent.col, o.Keyer.Keys)
				}
			}
			liner := r.Liner()
			nrows := 0
			for {
				if b == nil {
					if !next() {
						r.Close()
						return
					}
					b.plan, b.liner, b.line, b.row, b.keyer = &plans[i], liner, line+1, r.Row()+1, o.Keyer
					if cap(b.cols) < r.NumCols() {
						b.cols = make([]input.ParquetCol, r.NumCols())
					}
					b.cols = b.cols[:r.NumCols()]
					for k := range b.cols {
						b.cols[k].Reset()
					}
				}
				var n int
				b.arena, n, err = r.NextRows(b.arena, b.cols, len(b.cases)-b.n, pqArenaSize)
				nrows += n
				line += n
				b.n += n
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					r.Close()
					fail(err)
					return
				}
				if b.n == len(b.cases) || len(b.arena) >= pqArenaSize {
					if !send() {
						r.Close()
						return
					}
				}
			}
			r.Close()
			if nrows == 0 {
				fail(src.EmptyShard(i))
				return
			}
			if b != nil && b.n > 0 && !send() { // a batch holds one shard's rows
				return
			}
		}
		if b != nil {
			send()
		}
	}()
	workersWG.Add(workers)
	for range workers {
		go func() {
			defer workersWG.Done()
			own := new(alone[pqWorker])
			w := &own.v
			for b := range todo {
				// The results are kept in a local until the batch ends: b
				// shares a cache line with the batch the other worker holds
				// (alone's comment).
				results := b.results[:0]
				b.ascii = isASCII(b.arena) // then so are its rows' strings
				if ctx.Err() == nil {
					w.makeCases(file, &b.pqRows)
				}
				for i := range b.n {
					if i&0x7f == 0 && ctx.Err() != nil {
						b.err = ctx.Err()
						break
					}
					if !w.bad[i] {
						// made by makeCases
					} else if err := w.makeCase(file, &b.pqRows, i); err != nil {
						b.err = err
						break
					}
					var zero T
					results = append(results, zero)
					if err := work(&b.cases[i], &results[i]); err != nil {
						results = results[:i]
						b.err = err
						break
					}
				}
				b.results = results
				done <- b
			}
		}()
	}
	go func() {
		workersWG.Wait()
		close(done)
	}()

	result := emitInOrder(done, inflight, tokens, cancel, emit, func(b *pqBatch[T]) {
		if cap(b.arena) <= 2*pqArenaSize { // not grown by a large row
			b.arena = b.arena[:0]
			select {
			case free <- b:
			default:
			}
		}
	})
	readers.Wait()
	if result == nil {
		result = ctx.Err()
	}
	if err := src.ReadParquetShards(starts); result == nil {
		result = err
	}
	return true, result
}
