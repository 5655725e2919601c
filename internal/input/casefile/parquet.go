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

// pqStrings views the strings of a row in the batch's arena; ascii: the
// row's strings are all ASCII, so valid UTF-8.
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

// pqRow is a row's column values, one per leaf column (ParquetCol.Row).
type pqRow []input.ParquetCol

// Col is leaf column c's values.
func (r pqRow) Col(c int) *input.ParquetCol { return &r[c] }

// decodeRow fills c from row r; false when the row must go
// through its line (see the file's comment).
func (pl *pqPlan) decodeRow(r pqRow, a *pqStrings, c *Case) bool {
	str := func(s pqStr) (string, bool, bool) { // value, present, ok
		if s.col < 0 {
			return "", false, true
		}
		col := r.Col(s.col)
		if int(col.Defs[0]) < s.dField || len(col.Ends) == 0 {
			return "", false, true
		}
		v, ok := a.str(col.Str(0))
		return v, true, ok
	}
	id, has, ok := str(pl.id)
	if !ok || !has || id == "" {
		return false
	}
	c.ID = id
	for _, f := range [...]struct {
		s   pqStr
		dst *string
	}{{pl.locale, &c.Locale}, {pl.typ, &c.Type}, {pl.query, &c.Query}, {pl.cluster, &c.Cluster}} {
		v, _, ok := str(f.s)
		if !ok {
			return false
		}
		*f.dst = v
	}
	if c.Type == "" {
		c.Type = "golden"
	}
	var okList bool
	if c.Gold, okList = pl.strList(r, pl.gold, a, c.Gold[:0]); !okList {
		return false
	}
	if c.Relevant, okList = pl.strList(r, pl.relevant, a, c.Relevant[:0]); !okList {
		return false
	}
	c.Retrieved, c.HasRetrieved = c.Retrieved[:0], false
	if pl.hasRet {
		return pl.retrieved(r, a, c)
	}
	return true
}

func (pl *pqPlan) strList(r pqRow, l pqList, a *pqStrings, dst []string) ([]string, bool) {
	if l.col < 0 {
		return dst, true
	}
	col := r.Col(l.col)
	if int(col.Defs[0]) < l.dElem { // null or empty
		return dst, true
	}
	vi := 0
	for _, d := range col.Defs {
		if int(d) < l.dItem || int(d) < l.dMax {
			return dst, false // a null element
		}
		v, ok := a.str(col.Str(vi))
		vi++
		if !ok {
			return dst, false
		}
		dst = append(dst, v)
	}
	return dst, true
}

func (pl *pqPlan) retrieved(r pqRow, a *pqStrings, c *Case) bool {
	ids := r.Col(pl.retID.col)
	if int(ids.Defs[0]) < pl.retField {
		return true // null: no retrieved
	}
	c.HasRetrieved = true
	if int(ids.Defs[0]) < pl.retElem {
		return true // empty
	}
	n := len(ids.Defs)
	for _, k := range pl.retCols {
		if len(r.Col(k).Defs) != n {
			return false
		}
	}
	// The entries' values, each column's strings one after another from
	// its base.
	var pDefs, sDefs []uint8
	var pEnds []uint32
	var pStart uint32
	var scores []float64
	if pl.retParent.col >= 0 {
		p := r.Col(pl.retParent.col)
		pDefs, pEnds, pStart = p.Defs, p.Ends, p.Base()
	}
	if pl.retScore.col >= 0 {
		s := r.Col(pl.retScore.col)
		sDefs, scores = s.Defs, s.Floats
	}
	if cap(c.Retrieved) < n {
		c.Retrieved = make([]Retrieved, 0, n)
	}
	out := c.Retrieved[:n]
	data, idEnds, idStart := ids.Data, ids.Ends, ids.Base()
	iv, pv, sv := 0, 0, 0
	dID, dItem := pl.retID.dField, pl.retItem
	for k, d := range ids.Defs {
		if int(d) < dItem || int(d) < dID || iv >= len(idEnds) {
			return false // a null entry, or no id
		}
		end := idEnds[iv]
		iv++
		if end <= idStart {
			return false // an empty id
		}
		id, ok := a.str(data[idStart:end])
		idStart = end
		if !ok {
			return false
		}
		e := &out[k]
		*e = Retrieved{ID: id}
		if pDefs != nil && int(pDefs[k]) >= pl.retParent.dField {
			end := pEnds[pv]
			pv++
			p, ok := a.str(data[pStart:end])
			pStart = end
			if !ok {
				return false
			}
			e.ParentID = p
		}
		if sDefs != nil && int(sDefs[k]) >= pl.retScore.dField {
			x := scores[sv]
			sv++
			if math.IsNaN(x) || math.IsInf(x, 0) || x == 0 && math.Signbit(x) {
				return false
			}
			e.Score, e.HasScore = x, true
		}
	}
	c.Retrieved = out
	return true
}

// pqBatch is a run of rows on their way through mapParquet: the reader
// fills cols and arena with the rows' column values, a worker makes them
// into cases (decodeRow, or the row's line) and gives them to work, in its
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
	row     pqRow
	parser  CaseParser
	lineBuf []byte
}

// makeCase makes row i of b into b.cases[i]: by decodeRow, or else from
// the row's line, parsed as the text path parses it (its Case or its
// error is the text path's).
func (w *pqWorker) makeCase(file string, b *pqRows, i int) error {
	c := &b.cases[i]
	c.File, c.Line, c.Raw, c.Unknown, c.Scores = file, b.line+i, nil, c.Unknown[:0], nil
	if cap(w.row) < len(b.cols) {
		w.row = make(pqRow, len(b.cols))
	}
	w.row = w.row[:len(b.cols)]
	size, ascii := 0, true // the row's string bytes; all ASCII
	for k := range b.cols {
		v := &w.row[k]
		b.cols[k].Row(i, b.arena, v)
		s := v.Bytes()
		size += len(s)
		if ascii && !b.ascii {
			ascii = isASCII(s)
		}
	}
	strs := pqStrings{ascii: ascii}
	if size <= parquetFastRow && b.plan.decodeRow(w.row, &strs, c) {
		return nil
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
			liner := r.Liner()
			nrows := 0
			for {
				if b == nil {
					if !next() {
						r.Close()
						return
					}
					b.plan, b.liner, b.line, b.row = &plans[i], liner, line+1, r.Row()+1
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
			var w pqWorker
			for b := range todo {
				b.results = b.results[:0]
				b.ascii = isASCII(b.arena) // then so are its rows' strings
				for i := range b.n {
					if i&0x7f == 0 && ctx.Err() != nil {
						b.err = ctx.Err()
						break
					}
					if err := w.makeCase(file, &b.pqRows, i); err != nil {
						b.err = err
						break
					}
					var zero T
					b.results = append(b.results, zero)
					if err := work(&b.cases[i], &b.results[i]); err != nil {
						b.results = b.results[:i]
						b.err = err
						break
					}
				}
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
