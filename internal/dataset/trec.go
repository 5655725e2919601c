package dataset

// TREC qrels and runs (and their JSONL alternatives) for `retrieval-gate compare`.
//
// Runs are streamed: a TREC run is read in blocks, parsed as bytes without a
// per-line allocation, and only the best k documents of each query are kept (a
// bounded insertion buffer ordered as trec_eval orders: score descending, ties by
// docid descending). A regular file is split into byte ranges at line boundaries
// that are parsed in parallel; the per-query buffers of the ranges are merged.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/valyala/fastjson"
)

// MaxRelevance is the top of the graded relevance scale 0..MaxRelevance.
const MaxRelevance = 3

// Qrels holds graded relevance judgments: for each judged query, the relevance
// (0..MaxRelevance) of each judged document.
type Qrels struct {
	File string
	ids  []string // query ids in first-appearance order
	idx  map[string]int32
	last int32                     // query of the previous line, -1 none
	lvl  [][MaxRelevance + 1]int32 // per query: number of judged documents at each level

	// judgments, indexed by j
	arena []byte   // docids concatenated
	jEnd  []uint32 // end of docid j in arena (start is jEnd[j-1], or 0)
	jQ    []int32
	jRel  []int8
	// perm lists the judgments grouped by query, ordered by (docid hash, file
	// order) within a query: those of query i are perm[qStart[i]:qStart[i+1]];
	// pHash[x] is the docid hash of perm[x].
	perm   []int32
	pHash  []uint64
	qStart []int32
	seed   maphash.Seed
}

// NumQueries is the number of judged queries.
func (q *Qrels) NumQueries() int { return len(q.ids) }

// NumJudgments is the number of (query, document) judgments.
func (q *Qrels) NumJudgments() int { return len(q.jRel) }

// QueryID returns the id of judged query i (0 <= i < NumQueries, first-appearance order).
func (q *Qrels) QueryID(i int) string { return q.ids[i] }

// QueryIndex returns the index of a judged query id.
func (q *Qrels) QueryIndex(id string) (int, bool) {
	i, ok := q.idx[id]
	return int(i), ok
}

// Levels returns how many documents of query i are judged at each relevance level.
func (q *Qrels) Levels(i int) [MaxRelevance + 1]int {
	var out [MaxRelevance + 1]int
	for l, c := range q.lvl[i] {
		out[l] = int(c)
	}
	return out
}

// Relevance returns the judged relevance of doc for query i; ok is false when the
// document is unjudged.
func (q *Qrels) Relevance(i int, doc string) (rel int, ok bool) {
	h := maphash.String(q.seed, doc)
	lo, hi := int(q.qStart[i]), int(q.qStart[i+1])
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if q.pHash[m] < h {
			lo = m + 1
		} else {
			hi = m
		}
	}
	for ; lo < int(q.qStart[i+1]) && q.pHash[lo] == h; lo++ {
		if string(q.doc(q.perm[lo])) == doc {
			return int(q.jRel[q.perm[lo]]), true
		}
	}
	return 0, false
}

func (q *Qrels) doc(j int32) []byte {
	var s uint32
	if j > 0 {
		s = q.jEnd[j-1]
	}
	return q.arena[s:q.jEnd[j]]
}

// add records a judgment.
func (q *Qrels) add(qid, doc []byte, rel int) {
	qi := q.last
	if qi < 0 || string(qid) != q.ids[qi] {
		var ok bool
		qi, ok = q.idx[string(qid)]
		if !ok {
			qi = int32(len(q.ids))
			s := string(qid)
			q.ids = append(q.ids, s)
			q.idx[s] = qi
			q.lvl = append(q.lvl, [MaxRelevance + 1]int32{})
		}
		q.last = qi
	}
	q.arena = append(q.arena, doc...)
	q.jEnd = append(q.jEnd, uint32(len(q.arena)))
	q.jQ = append(q.jQ, qi)
	q.jRel = append(q.jRel, int8(rel))
	q.lvl[qi][rel]++
}

// index groups the judgments by query (a counting sort) and orders each query's
// by docid hash, for lookups by binary search. It returns a duplicate (query,
// docid) as (first, second) judgment, the one whose second occurrence comes first
// in the file, or (-1, -1).
func (q *Qrels) index() (int32, int32) {
	nq := len(q.ids)
	q.seed = maphash.MakeSeed()
	q.qStart = make([]int32, nq+1)
	for _, qi := range q.jQ {
		q.qStart[qi+1]++
	}
	for i := range nq {
		q.qStart[i+1] += q.qStart[i]
	}
	type ent struct {
		h uint64
		j int32
	}
	ents := make([]ent, len(q.jQ))
	fill := slices.Clone(q.qStart[:nq])
	for j, qi := range q.jQ {
		ents[fill[qi]] = ent{maphash.Bytes(q.seed, q.doc(int32(j))), int32(j)}
		fill[qi]++
	}
	q.perm = make([]int32, len(ents))
	q.pHash = make([]uint64, len(ents))
	dup1, dup2 := int32(-1), int32(-1)
	for i := range nq {
		seg := ents[q.qStart[i]:q.qStart[i+1]]
		slices.SortFunc(seg, func(a, b ent) int {
			if a.h != b.h {
				if a.h < b.h {
					return -1
				}
				return 1
			}
			return int(a.j - b.j)
		})
		for x := 0; x < len(seg); x++ {
			// Within a run of equal hashes, any two equal docids are duplicates.
			for y := x + 1; y < len(seg) && seg[y].h == seg[x].h; y++ {
				if bytes.Equal(q.doc(seg[x].j), q.doc(seg[y].j)) && (dup2 < 0 || seg[y].j < dup2) {
					dup1, dup2 = seg[x].j, seg[y].j
				}
			}
		}
	}
	for x, e := range ents {
		q.perm[x], q.pHash[x] = e.j, e.h
	}
	return dup1, dup2
}

// ReadQrels reads a qrels file, TREC (`qid iter docid rel`) or JSONL
// ({"query_id", "doc_id", "relevance"}), detected by content.
func ReadQrels(ctx context.Context, path string) (*Qrels, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("failed to read qrels: %w", err)
	}
	defer f.Close()
	return ParseQrels(ctx, f, path)
}

// ParseQrels reads qrels from r; file names r in errors.
func ParseQrels(ctx context.Context, r io.Reader, file string) (*Qrels, error) {
	q := &Qrels{File: file, idx: map[string]int32{}, last: -1}
	jline := []int32{} // line of each judgment, for duplicate errors
	br := bufio.NewReaderSize(r, 1<<20)
	var p fastjson.Parser
	format := 0 // 0 unknown, 1 TREC, 2 JSONL
	line := 0
	var fields [5][]byte
	for {
		b, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A very long line: gather it whole.
			long := append([]byte(nil), b...)
			for errors.Is(err, bufio.ErrBufferFull) {
				b, err = br.ReadSlice('\n')
				long = append(long, b...)
			}
			b = long
		}
		if len(b) == 0 && err != nil {
			if err == io.EOF {
				break
			}
			return nil, fmt.Errorf("failed to read %s: %w", file, err)
		}
		line++
		if line&0xffff == 0 {
			if cerr := ctx.Err(); cerr != nil {
				return nil, cerr
			}
		}
		b = trecTrim(b)
		if len(b) == 0 {
			if err == io.EOF {
				break
			}
			continue
		}
		if format == 0 {
			format = 1
			if b[0] == '{' {
				format = 2
			}
		}
		var qid, doc []byte
		var rel int
		if format == 1 {
			nf := trecFields(b, fields[:])
			if nf != 4 {
				return nil, Errorf(file, line, "malformed qrels line: want 4 fields \"qid iter docid rel\", got %d", nf)
			}
			qid, doc = fields[0], fields[2]
			v, perr := trecInt(fields[3])
			if perr {
				return nil, Errorf(file, line, "relevance %q is not an integer", fields[3])
			}
			rel = v
		} else {
			var jerr error
			qid, doc, rel, jerr = parseQrelJSON(&p, b, file, line)
			if jerr != nil {
				return nil, jerr
			}
		}
		if rel < 0 || rel > MaxRelevance {
			return nil, Errorf(file, line, "relevance %d is outside the scale 0-%d", rel, MaxRelevance)
		}
		q.add(qid, doc, rel)
		jline = append(jline, int32(line))
		if err == io.EOF {
			break
		}
	}
	if len(q.ids) == 0 {
		return nil, Errorf(file, 0, "no judgments")
	}
	if j1, j2 := q.index(); j2 >= 0 {
		return nil, Errorf(file, int(jline[j2]), "duplicate judgment of document %q for query %q (first on line %d)", q.doc(j2), q.ids[q.jQ[j2]], jline[j1])
	}
	return q, nil
}

func parseQrelJSON(p *fastjson.Parser, b []byte, file string, line int) (qid, doc []byte, rel int, err error) {
	v, perr := p.ParseBytes(b)
	if perr != nil {
		return nil, nil, 0, Errorf(file, line, "malformed JSON: %v", perr)
	}
	if v.Type() != fastjson.TypeObject {
		return nil, nil, 0, Errorf(file, line, "a judgment must be a JSON object, got %s", v.Type())
	}
	id := func(key string) ([]byte, error) {
		f := v.Get(key)
		if f == nil {
			return nil, Errorf(file, line, "judgment has no %q", key)
		}
		switch f.Type() {
		case fastjson.TypeString:
			s := f.GetStringBytes()
			if len(s) == 0 || bytes.ContainsAny(s, " \t\r\n") {
				return nil, Errorf(file, line, "%q must be a non-empty id without whitespace", key)
			}
			return s, nil
		case fastjson.TypeNumber:
			return []byte(f.String()), nil
		}
		return nil, Errorf(file, line, "%q must be a string, got %s", key, f.Type())
	}
	if qid, err = id("query_id"); err != nil {
		return
	}
	if doc, err = id("doc_id"); err != nil {
		return
	}
	r := v.Get("relevance")
	if r == nil {
		return nil, nil, 0, Errorf(file, line, "judgment has no \"relevance\"")
	}
	f, ferr := r.Float64()
	if ferr != nil || f != math.Trunc(f) {
		return nil, nil, 0, Errorf(file, line, "\"relevance\" must be an integer 0-%d, got %s", MaxRelevance, r.String())
	}
	if f < -1e9 || f > 1e9 {
		f = -1
	}
	return qid, doc, int(f), nil
}

// trecTrim drops a trailing newline, carriage return and surrounding blanks.
func trecTrim(b []byte) []byte {
	for len(b) > 0 && trecSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	for len(b) > 0 && trecSpace(b[0]) {
		b = b[1:]
	}
	return b
}

func trecSpace(c byte) bool { return trecSpaceTab[c] }

var trecSpaceTab = [256]bool{' ': true, '\t': true, '\r': true, '\n': true, '\v': true, '\f': true}

// trecFields splits b at runs of blanks into dst and returns the number of
// fields found (which may exceed len(dst); extra fields are not stored).
func trecFields(b []byte, dst [][]byte) int {
	n := 0
	i := 0
	for i < len(b) {
		for i < len(b) && trecSpace(b[i]) {
			i++
		}
		if i == len(b) {
			break
		}
		s := i
		for i < len(b) && !trecSpace(b[i]) {
			i++
		}
		if n < len(dst) {
			dst[n] = b[s:i]
		}
		n++
	}
	return n
}

// trecInt parses an optionally signed decimal integer of at most 9 digits.
func trecInt(b []byte) (v int, bad bool) {
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 9 {
		return 0, true
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, true
		}
		v = v*10 + int(c-'0')
	}
	if neg {
		v = -v
	}
	return v, false
}

var trecPow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// trecScore parses a decimal float as strconv.ParseFloat does (correctly
// rounded). Plain decimals with at most 15 significant digits take an exact fast
// path (an integer below 2^53 divided by an exact power of ten is correctly
// rounded); anything else goes through strconv. NaN is rejected.
func trecScore(b []byte) (float64, bool) {
	i := 0
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		i = 1
	}
	var m uint64
	nd, dot := 0, -1
	fast := true
	for j := i; j < len(b); j++ {
		c := b[j]
		if d := c - '0'; d < 10 {
			m = m*10 + uint64(d)
			nd++
			continue
		}
		if c == '.' && dot < 0 {
			dot = j
			continue
		}
		fast = false
		break
	}
	// At most 15 digits in all: m < 10^15 < 2^53 and the power of ten is exact.
	if fast && nd > 0 && nd <= 15 {
		frac := 0
		if dot >= 0 {
			frac = len(b) - dot - 1
		}
		f := float64(m) / trecPow10[frac]
		if neg {
			f = -f
		}
		return f, true
	}
	f, err := strconv.ParseFloat(unsafe.String(unsafe.SliceData(b), len(b)), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, false
	}
	if math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

// RunQuery is the top k of one query of a run, best first.
type RunQuery struct {
	ID   string
	Docs []string
}

// Run is the top k of every query of a run, sorted by query id.
type Run struct {
	File    string
	Format  string // "trec" or "cases"
	K       int
	Queries []RunQuery
}

// RunOptions tunes the TREC run reader; zero values pick the defaults.
type RunOptions struct {
	Workers   int // parallel parsers; default GOMAXPROCS
	ChunkSize int // bytes per range; default 8 MiB
}

// ReadRun reads a run file, TREC (`qid Q0 docid rank score tag`) or a cases JSONL
// (`id` as query id, `retrieved` as the ranking, identity = parent_id else id),
// detected by content, and keeps the top k of each query.
func ReadRun(ctx context.Context, path string, k int, opt RunOptions) (*Run, error) {
	if k < 1 {
		return nil, fmt.Errorf("run cutoff k must be at least 1, got %d", k)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("failed to read run: %w", err)
	}
	defer f.Close()
	// Detect the format from the first non-blank byte.
	head := make([]byte, 4096)
	var first byte
	var off int64
	for first == 0 {
		n, rerr := f.ReadAt(head, off)
		if rerr != nil && rerr != io.EOF {
			return nil, fmt.Errorf("failed to read run: %w", rerr)
		}
		for _, c := range head[:n] {
			if !trecSpace(c) {
				first = c
				break
			}
		}
		off += int64(n)
		if rerr != nil {
			break
		}
	}
	if first == 0 {
		return nil, Errorf(path, 0, "empty run")
	}
	if first == '{' {
		return readCasesRun(ctx, f, path, k, opt)
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return ParseTRECRun(ctx, f, path, k)
	}
	return parseTRECRunAt(ctx, f, st.Size(), path, k, opt)
}

func readCasesRun(ctx context.Context, r io.Reader, file string, k int, opt RunOptions) (*Run, error) {
	type res struct {
		q    RunQuery
		line int
	}
	seen := map[string]int{}
	run := &Run{File: file, Format: "cases", K: k}
	err := MapCases(ctx, r, file, opt.Workers, func(c *Case) (res, error) {
		if !c.HasRetrieved {
			return res{}, Errorf(file, c.Line, "case %q has no \"retrieved\" list to rank", c.ID)
		}
		docs := make([]string, 0, min(k, len(c.Retrieved)))
		for _, e := range c.Retrieved {
			if len(docs) == k {
				break
			}
			id := e.Identity()
			if !slices.Contains(docs, id) {
				docs = append(docs, id)
			}
		}
		return res{RunQuery{ID: c.ID, Docs: docs}, c.Line}, nil
	}, func(x res) error {
		if prev, ok := seen[x.q.ID]; ok {
			return Errorf(file, x.line, "duplicate case id %q (first on line %d)", x.q.ID, prev)
		}
		seen[x.q.ID] = x.line
		run.Queries = append(run.Queries, x.q)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(run.Queries) == 0 {
		return nil, Errorf(file, 0, "empty run")
	}
	slices.SortFunc(run.Queries, func(a, b RunQuery) int { return strings.Compare(a.ID, b.ID) })
	return run, nil
}

// trecPoolK is the largest k whose buffers are carved, full size, from a shared pool.
const trecPoolK = 64

// trecEntry is one ranked document of a query's buffer.
type trecEntry struct {
	score float64
	doc   []byte
}

// trecBetter reports whether (s1, d1) ranks before (s2, d2): score descending, then
// docid descending (trec_eval's order).
func trecBetter(s1 float64, d1 []byte, s2 float64, d2 []byte) bool {
	if s1 != s2 {
		return s1 > s2
	}
	return bytes.Compare(d1, d2) > 0
}

// trecTopK is the bounded buffer of one query: at most k entries, best first, one
// per docid (its best-ranked occurrence).
type trecTopK struct {
	id      string
	entries []trecEntry
}

// trecRunParser accumulates the top k of every query it sees.
type trecRunParser struct {
	file   string
	k      int
	index  map[string]int32
	qs     []trecTopK
	last   int32 // index of the query of the previous line, -1 none
	pool   []trecEntry
	slab   []byte
	errOff int64 // byte offset of the line of err
	err    *Error
}

func newTrecRunParser(file string, k int) *trecRunParser {
	return &trecRunParser{file: file, k: k, index: map[string]int32{}, last: -1}
}

func (p *trecRunParser) alloc(n int) []byte {
	if n > 4096 {
		return make([]byte, n)
	}
	if len(p.slab) < n {
		p.slab = make([]byte, 1<<16)
	}
	b := p.slab[:n:n]
	p.slab = p.slab[n:]
	return b
}

func (p *trecRunParser) query(qid []byte) *trecTopK {
	if p.last >= 0 && string(qid) == p.qs[p.last].id {
		return &p.qs[p.last]
	}
	i, ok := p.index[string(qid)]
	if !ok {
		i = int32(len(p.qs))
		s := string(qid)
		p.index[s] = i
		var entries []trecEntry // large k: grown on demand
		if p.k <= trecPoolK {
			if len(p.pool) < p.k {
				p.pool = make([]trecEntry, 4096/p.k*p.k)
			}
			entries = p.pool[:0:p.k]
			p.pool = p.pool[p.k:]
		}
		p.qs = append(p.qs, trecTopK{id: s, entries: entries})
	}
	p.last = i
	return &p.qs[i]
}

// insert offers (score, doc) to t, copying doc when kept.
func (p *trecRunParser) insert(t *trecTopK, score float64, doc []byte) {
	e := t.entries
	n := len(e)
	if n == p.k && !trecBetter(score, doc, e[n-1].score, e[n-1].doc) {
		return
	}
	// The best-ranked occurrence of a docid wins.
	for i := range e {
		if bytes.Equal(e[i].doc, doc) {
			if !trecBetter(score, doc, e[i].score, e[i].doc) {
				return
			}
			// Remove the worse occurrence; its storage is reused below.
			d := e[i].doc
			copy(e[i:], e[i+1:])
			e[n-1].doc = d
			n--
			e = e[:n]
			break
		}
	}
	var buf []byte
	if n == p.k {
		buf = e[n-1].doc // evict the last
		n--
	} else if n < cap(e) {
		buf = e[:n+1][n].doc // storage of a previously removed entry, if any
	} else {
		e = slices.Grow(e, 1)
	}
	if cap(buf) >= len(doc) {
		buf = buf[:len(doc)]
	} else {
		buf = p.alloc(len(doc))
	}
	copy(buf, doc)
	pos := n
	for pos > 0 && trecBetter(score, doc, e[pos-1].score, e[pos-1].doc) {
		pos--
	}
	e = e[:n+1]
	copy(e[pos+1:], e[pos:n])
	e[pos] = trecEntry{score: score, doc: buf}
	t.entries = e
}

// trecClass classifies the bytes of a TREC run: 0 within a field, 1 a field
// separator (space, tab, CR), 2 the end of a line.
var trecClass = [256]uint8{' ': 1, '\t': 1, '\r': 1, '\n': 2}

// lines parses the lines `qid Q0 docid rank score tag` of b; base is the file
// offset of b[0]. b must end with '\n': that sentinel stops every scan, so the
// byte loops run without bounds checks. It stops at the first malformed line.
func (p *trecRunParser) lines(b []byte, base int64) bool {
	if len(b) == 0 {
		return true
	}
	if b[len(b)-1] != '\n' {
		panic("dataset: TREC run block without a final newline")
	}
	ptr := unsafe.Pointer(unsafe.SliceData(b))
	i := 0
	for i < len(b) {
		start := i
		var st, en [6]int
		n := 0
		c := trecClass[*(*byte)(unsafe.Add(ptr, i))]
		for {
			for c == 1 {
				i++
				c = trecClass[*(*byte)(unsafe.Add(ptr, i))]
			}
			if c == 2 {
				break
			}
			f := i
			for c == 0 {
				i++
				c = trecClass[*(*byte)(unsafe.Add(ptr, i))]
			}
			if n < 6 {
				st[n], en[n] = f, i
			}
			n++
		}
		i++ // past '\n'
		if n == 0 {
			continue // blank line
		}
		off := base + int64(start)
		if n != 6 {
			p.fail(off, "malformed run line: want 6 fields \"qid Q0 docid rank score tag\", got %d", n)
			return false
		}
		score, ok := trecScore(b[st[4]:en[4]])
		if !ok {
			p.fail(off, "score %q is not a number", b[st[4]:en[4]])
			return false
		}
		p.insert(p.query(b[st[0]:en[0]]), score, b[st[2]:en[2]])
	}
	return true
}

func (p *trecRunParser) fail(off int64, format string, args ...any) {
	p.errOff = off
	p.err = Errorf(p.file, 0, format, args...)
}

// merge folds o's buffers into p's.
func (p *trecRunParser) merge(o *trecRunParser) {
	for i := range o.qs {
		t := p.query([]byte(o.qs[i].id))
		for _, e := range o.qs[i].entries {
			p.insert(t, e.score, e.doc)
		}
	}
}

func (p *trecRunParser) run() *Run {
	run := &Run{File: p.file, Format: "trec", K: p.k, Queries: make([]RunQuery, len(p.qs))}
	for i, t := range p.qs {
		size := 0
		for _, e := range t.entries {
			size += len(e.doc)
		}
		var all []byte
		all = make([]byte, 0, size)
		for _, e := range t.entries {
			all = append(all, e.doc...)
		}
		s := unsafe.String(unsafe.SliceData(all), len(all))
		docs := make([]string, len(t.entries))
		o := 0
		for j, e := range t.entries {
			docs[j] = s[o : o+len(e.doc)]
			o += len(e.doc)
		}
		run.Queries[i] = RunQuery{ID: t.id, Docs: docs}
	}
	slices.SortFunc(run.Queries, func(a, b RunQuery) int { return strings.Compare(a.ID, b.ID) })
	return run
}

// ParseTRECRun reads a TREC run sequentially from r and keeps the top k per query.
func ParseTRECRun(ctx context.Context, r io.Reader, file string, k int) (*Run, error) {
	if k < 1 {
		return nil, fmt.Errorf("run cutoff k must be at least 1, got %d", k)
	}
	p := newTrecRunParser(file, k)
	buf := make([]byte, 1<<20)
	have := 0
	var base int64
	var lines int
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if have == len(buf) {
			buf = append(buf, make([]byte, len(buf))...)
		}
		n, err := r.Read(buf[have:])
		have += n
		eof := err == io.EOF
		if err != nil && !eof {
			return nil, fmt.Errorf("failed to read %s: %w", file, err)
		}
		end := have
		if !eof {
			end = bytes.LastIndexByte(buf[:have], '\n') + 1
		} else if have > 0 && buf[have-1] != '\n' {
			buf = append(buf[:have], '\n') // the sentinel after an unterminated last line
			have++
			end = have
		}
		if end > 0 {
			if !p.lines(buf[:end], base) {
				l := lines + bytes.Count(buf[:p.errOff-base], []byte{'\n'}) + 1
				p.err.Line = l
				return nil, p.err
			}
			lines += bytes.Count(buf[:end], []byte{'\n'})
			base += int64(end)
			have = copy(buf, buf[end:have])
		}
		if eof {
			break
		}
	}
	if len(p.qs) == 0 {
		return nil, Errorf(file, 0, "empty run")
	}
	return p.run(), nil
}

// parseTRECRunAt parses a TREC run of the given size in parallel byte ranges.
func parseTRECRunAt(ctx context.Context, ra io.ReaderAt, size int64, file string, k int, opt RunOptions) (*Run, error) {
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	chunk := int64(opt.ChunkSize)
	if chunk <= 0 {
		chunk = 8 << 20
	}
	nchunks := int((size + chunk - 1) / chunk)
	workers = max(1, min(workers, nchunks))
	var next atomic.Int64
	var errChunk atomic.Int64
	errChunk.Store(math.MaxInt64)
	type failure struct {
		off int64
		err *Error
	}
	fails := make([]failure, nchunks)
	var ioErr error
	var ioOnce sync.Once
	parsers := make([]*trecRunParser, workers)
	var wg sync.WaitGroup
	for w := range workers {
		p := newTrecRunParser(file, k)
		parsers[w] = p
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 0, chunk+1+trecTail)
			for {
				c := next.Add(1) - 1
				if c >= int64(nchunks) || c > errChunk.Load() {
					return
				}
				if ctx.Err() != nil {
					ioOnce.Do(func() { ioErr = ctx.Err() })
					errChunk.Store(-1)
					return
				}
				start, end := c*chunk, min((c+1)*chunk, size)
				b, base, err := trecReadRange(ra, &buf, start, end, size)
				if err != nil {
					ioOnce.Do(func() { ioErr = fmt.Errorf("failed to read %s: %w", file, err) })
					errChunk.Store(-1)
					return
				}
				p.last = -1
				if !p.lines(b, base) {
					fails[c] = failure{p.errOff, p.err}
					for {
						cur := errChunk.Load()
						if c >= cur || errChunk.CompareAndSwap(cur, c) {
							break
						}
					}
					return
				}
			}
		}()
	}
	wg.Wait()
	if ioErr != nil {
		return nil, ioErr
	}
	if c := errChunk.Load(); c != math.MaxInt64 {
		f := fails[c]
		line, err := trecLineOf(ra, f.off)
		if err != nil {
			return nil, fmt.Errorf("failed to read %s: %w", file, err)
		}
		f.err.Line = line
		return nil, f.err
	}
	p := parsers[0]
	for _, o := range parsers[1:] {
		p.merge(o)
	}
	if len(p.qs) == 0 {
		return nil, Errorf(file, 0, "empty run")
	}
	return p.run(), nil
}

// trecTail is how much is read at a time past a range to finish its last line.
const trecTail = 64 << 10

// trecReadRange returns the complete lines that start in [start, end) and the file
// offset of the first one. buf is reused when large enough.
func trecReadRange(ra io.ReaderAt, bufp *[]byte, start, end, size int64) ([]byte, int64, error) {
	from := start
	if start > 0 {
		from = start - 1 // to see whether a line starts at start
	}
	want := end - from
	buf := *bufp
	if int64(cap(buf)) < want {
		buf = make([]byte, want, want+trecTail)
	}
	buf = buf[:want]
	defer func() { *bufp = buf[:0] }()
	if _, err := ra.ReadAt(buf, from); err != nil && err != io.EOF {
		return nil, 0, err
	}
	skip := 0
	if start > 0 {
		nl := bytes.IndexByte(buf, '\n')
		if nl < 0 {
			return buf[:0], end, nil // no line starts in this range
		}
		skip = nl + 1
	}
	// Finish the last line, which may run past end.
	pos := end
	for buf[len(buf)-1] != '\n' && pos < size {
		more := min(int64(trecTail), size-pos)
		n := len(buf)
		buf = slices.Grow(buf, int(more))[:n+int(more)]
		if _, err := ra.ReadAt(buf[n:], pos); err != nil && err != io.EOF {
			return nil, 0, err
		}
		pos += more
		if nl := bytes.IndexByte(buf[n:], '\n'); nl >= 0 {
			buf = buf[:n+nl+1]
			break
		}
	}
	if len(buf) > skip && buf[len(buf)-1] != '\n' {
		buf = append(buf, '\n') // the file's last line has no newline: add the sentinel
	}
	return buf[skip:], from + int64(skip), nil
}

// trecLineOf returns the 1-based line number of the line starting at byte off.
func trecLineOf(ra io.ReaderAt, off int64) (int, error) {
	buf := make([]byte, 1<<20)
	line := 1
	var pos int64
	for pos < off {
		n := min(int64(len(buf)), off-pos)
		m, err := ra.ReadAt(buf[:n], pos)
		line += bytes.Count(buf[:m], []byte{'\n'})
		pos += int64(m)
		if err != nil && m == 0 {
			return 0, err
		}
	}
	return line, nil
}
