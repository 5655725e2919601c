// Package trecfile reads the inputs of `retrieval-gate compare`: graded qrels and
// ranked runs, in TREC format or as JSONL (qrels) and cases JSONL (runs).
package trecfile

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
	"unsafe"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos"
)

// MaxLineBytes caps one line of a qrels or TREC run file (without its newline):
// no judgment or ranked document needs more, and a hostile file cannot make the
// reader hold a line of any size.
const MaxLineBytes = 1 << 20

// MinRelevance..MaxRelevance is the range of relevance a qrels file may use (a
// judgment is stored in an int8). As in trec_eval, a negative relevance is a
// judged, not relevant document of gain 0 that no level count includes; a level
// above 3 keeps its value (its exp gain 2^rel − 1 is finite for every level of the
// range, and exact in float64 up to 53).
const (
	MinRelevance = math.MinInt8
	MaxRelevance = math.MaxInt8
)

// Qrels holds graded relevance judgments: for each judged query, the relevance
// (MinRelevance..MaxRelevance) of each judged document.
type Qrels struct {
	File string
	ids  []string // query ids in first-appearance order
	idx  map[string]int32
	last int32 // query of the previous line, -1 none
	// lvl[i*stride+l] is the number of judged documents of query i at level l
	// (0 <= l <= maxRel); stride is max(maxRel, 0) + 1.
	lvl            []int32
	stride         int
	minRel, maxRel int

	// judgments, indexed by j
	arena []byte   // docids concatenated
	jEnd  []uint32 // end of docid j in arena (start is jEnd[j-1], or 0)
	jQ    []int32  // query of judgment j, while the file is read (nil after)
	jRel  []int8
	// perm lists the judgments grouped by query, ordered by (docid hash, file
	// order) within a query: those of query i are perm[qStart[i]:qStart[i+1]];
	// pHash[x] is the docid hash of perm[x] (32 bits: equal hashes are told
	// apart by their docids).
	perm   []int32
	pHash  []uint32
	qStart []int32
	seed   maphash.Seed
}

// docHash is the hash of a docid in the index.
func (q *Qrels) docHash(doc string) uint32 {
	return uint32(maphash.String(q.seed, doc)) //nolint:gosec // G115: the hash's low 32 bits, on purpose
}

// NumQueries is the number of judged queries.
func (q *Qrels) NumQueries() int { return len(q.ids) }

// QueryID returns the id of judged query i (0 <= i < NumQueries, first-appearance order).
func (q *Qrels) QueryID(i int) string { return q.ids[i] }

// QueryIndex returns the index of a judged query id.
func (q *Qrels) QueryIndex(id string) (int, bool) {
	i, ok := q.idx[id]
	return int(i), ok
}

// AppendLevels appends to dst how many documents of query i are judged at each
// relevance level 0..MaxLevel (negative judgments are in no level).
func (q *Qrels) AppendLevels(dst []int, i int) []int {
	for _, c := range q.lvl[i*q.stride : (i+1)*q.stride] {
		dst = append(dst, int(c))
	}
	return dst
}

// Scale is the lowest and highest relevance of any judgment in the file.
func (q *Qrels) Scale() (lo, hi int) { return q.minRel, q.maxRel }

// MaxLevel is the highest relevance of any judgment (0 when every one is negative):
// Levels has MaxLevel+1 entries.
func (q *Qrels) MaxLevel() int { return q.stride - 1 }

// Relevance returns the judged relevance of doc for query i; ok is false when the
// document is unjudged.
func (q *Qrels) Relevance(i int, doc string) (rel int, ok bool) {
	h := q.docHash(doc)
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

// add records a judgment (rel in MinRelevance..MaxRelevance). It returns false, recording
// nothing, when the judgment does not fit: judgments and queries are int32
// indices and the docids end at uint32 offsets of one arena, so at most
// math.MaxInt32 judgments and 4 GiB of docids.
func (q *Qrels) add(qid, doc []byte, rel int) bool {
	// nq <= nj (each query has a judgment); both are tested so each conversion
	// below has its bound in sight.
	nj, nq, end := len(q.jQ), len(q.ids), len(q.arena)+len(doc)
	if nj >= math.MaxInt32 || nq >= math.MaxInt32 || int64(end) > math.MaxUint32 || rel < MinRelevance || rel > MaxRelevance {
		return false
	}
	qi := q.last
	if qi < 0 || string(qid) != q.ids[qi] {
		var ok bool
		qi, ok = q.idx[string(qid)]
		if !ok {
			qi = int32(nq)
			s := string(qid)
			q.ids = append(q.ids, s)
			q.idx[s] = qi
		}
		q.last = qi
	}
	q.arena = append(q.arena, doc...)
	q.jEnd = append(q.jEnd, uint32(end))
	q.jQ = append(q.jQ, qi)
	q.jRel = append(q.jRel, int8(rel))
	if len(q.jRel) == 1 {
		q.minRel, q.maxRel = rel, rel
	}
	q.minRel, q.maxRel = min(q.minRel, rel), max(q.maxRel, rel)
	return true
}

// countLevels fills lvl from the judgments once the scale is known.
func (q *Qrels) countLevels() {
	q.stride = max(q.maxRel, 0) + 1
	q.lvl = make([]int32, len(q.ids)*q.stride)
	for j, rel := range q.jRel {
		if rel >= 0 {
			q.lvl[int(q.jQ[j])*q.stride+int(rel)]++
		}
	}
}

// presizeLines is the line after which ParseQrels sizes its arrays for the
// whole file, when it knows the file's size.
const presizeLines = 4096

// presize grows the judgments' arrays, once, to what a file of size bytes
// holds when the rest is like its first read bytes (2% more), so that they are
// not copied again and again as they grow (each copy garbage until collected:
// most of the reader's peak). The guess is bounded by the file: a docid of
// one byte a line of at least 8 bytes ("q 0 d 1\n").
func (q *Qrels) presize(size, read int64) {
	if read <= 0 || size <= 2*read {
		return
	}
	grow := func(n int) int {
		est := float64(n) * float64(size) / float64(read) * 1.02
		return int(min(est, float64(size)))
	}
	nj := min(grow(len(q.jRel)), int(size/8)+1, math.MaxInt32)
	q.arena = slices.Grow(q.arena, max(0, grow(len(q.arena))-len(q.arena)))
	q.jEnd = slices.Grow(q.jEnd, max(0, nj-len(q.jEnd)))
	q.jQ = slices.Grow(q.jQ, max(0, nj-len(q.jQ)))
	q.jRel = slices.Grow(q.jRel, max(0, nj-len(q.jRel)))
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
	q.perm = make([]int32, len(q.jQ))
	q.pHash = make([]uint32, len(q.jQ))
	fill := slices.Clone(q.qStart[:nq])
	for j, qi := range q.jQ {
		q.perm[fill[qi]] = int32(j)
		fill[qi]++
	}
	for x, j := range q.perm {
		d := q.doc(j)
		q.pHash[x] = q.docHash(unsafe.String(unsafe.SliceData(d), len(d))) //nolint:gosec // G103: a view of the arena, hashed at once
	}
	dup1, dup2 := int32(-1), int32(-1)
	for i := range nq {
		lo, hi := q.qStart[i], q.qStart[i+1]
		b := byHash{q.pHash[lo:hi], q.perm[lo:hi]}
		if hi-lo <= 32 {
			b.insertionSort() // most queries: without sort.Sort's boxing of b
		} else {
			sort.Sort(b)
		}
		h, p := q.pHash[lo:hi], q.perm[lo:hi]
		for x := range h {
			// Within a run of equal hashes, any two equal docids are duplicates.
			for y := x + 1; y < len(h) && h[y] == h[x]; y++ {
				if bytes.Equal(q.doc(p[x]), q.doc(p[y])) && (dup2 < 0 || p[y] < dup2) {
					dup1, dup2 = p[x], p[y]
				}
			}
		}
	}
	return dup1, dup2
}

// byHash sorts a query's judgments by (docid hash, file order).
type byHash struct {
	h []uint32
	p []int32
}

func (b byHash) Len() int { return len(b.h) }
func (b byHash) Less(x, y int) bool {
	if b.h[x] != b.h[y] {
		return b.h[x] < b.h[y]
	}
	return b.p[x] < b.p[y]
}
func (b byHash) Swap(x, y int) {
	b.h[x], b.h[y] = b.h[y], b.h[x]
	b.p[x], b.p[y] = b.p[y], b.p[x]
}

func (b byHash) insertionSort() {
	for i := 1; i < len(b.h); i++ {
		for j := i; j > 0 && b.Less(j, j-1); j-- {
			b.Swap(j, j-1)
		}
	}
}

// lineMarks gives each judgment its line: marks are (judgment, line) where a
// judgment's line is not the one after its predecessor's (a blank line
// between them, or the first), so a file without blank lines needs one.
type lineMarks []struct{ j, line int32 }

// add notes that judgment j is on line.
func (m *lineMarks) add(j, line int32) {
	if n := len(*m); n > 0 {
		last := (*m)[n-1]
		if line-last.line == j-last.j {
			return
		}
	}
	*m = append(*m, struct{ j, line int32 }{j, line})
}

// line is judgment j's line.
func (m lineMarks) line(j int32) int {
	i := sort.Search(len(m), func(i int) bool { return m[i].j > j }) - 1
	return int(m[i].line + (j - m[i].j))
}

// ParseQrels reads qrels from r; file names r in errors.
func ParseQrels(ctx context.Context, r io.Reader, file string) (*Qrels, error) {
	q := &Qrels{File: file, idx: map[string]int32{}, last: -1}
	size, sized := regularSize(r)
	var read int64      // bytes of the lines read, for presize
	var jline lineMarks // the line of each judgment, for duplicate errors
	br := bufio.NewReaderSize(input.Reader(ctx, r), MaxLineBytes+1)
	var p jsonpos.Parser
	format := 0 // 0 unknown, 1 TREC, 2 JSONL
	line := 0
	var fields [5][]byte
	for {
		b, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			return nil, input.Errorf(file, line+1, "line longer than %d MiB", MaxLineBytes>>20)
		}
		if err != nil && err != io.EOF && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if len(b) == 0 && err != nil {
			if err == io.EOF {
				break
			}
			return nil, fmt.Errorf("failed to read %s: %w", file, err)
		}
		line++
		read += int64(len(b))
		if sized && line == presizeLines {
			q.presize(size, read)
		}
		if line&0xffff == 0 {
			if cerr := ctx.Err(); cerr != nil {
				return nil, cerr
			}
		}
		if line == 1 {
			b = input.TrimBOM(b)
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
			if nf == 3 && beirQrelsHeader(fields[:3]) {
				return nil, input.Errorf(file, line, "a BEIR qrels TSV (header \"query-id corpus-id score\"), not TREC qrels: convert it first with `retrieval-gate import --in %s --out qrels.trec` (docs/import.md)", file)
			}
			if nf != 4 {
				return nil, input.Errorf(file, line, "malformed qrels line: want 4 fields \"qid iter docid rel\", got %d", nf)
			}
			qid, doc = fields[0], fields[2]
			v, perr := trecInt(fields[3])
			if perr && trecDigits(fields[3]) {
				return nil, input.Errorf(file, line, "relevance %s is outside the accepted range %d..%d", fields[3][:min(len(fields[3]), 40)], MinRelevance, MaxRelevance)
			}
			if perr {
				return nil, input.Errorf(file, line, "relevance %q is not an integer", fields[3])
			}
			rel = v
		} else {
			var jerr error
			qid, doc, rel, jerr = parseQrelJSON(&p, b, file, line)
			if jerr != nil {
				return nil, jerr
			}
		}
		if rel < MinRelevance || rel > MaxRelevance {
			return nil, input.Errorf(file, line, "relevance %d is outside the accepted range %d..%d", rel, MinRelevance, MaxRelevance)
		}
		if line > math.MaxInt32 || !q.add(qid, doc, rel) {
			return nil, input.Errorf(file, line, "more than one qrels file may hold (at most %d judgments and lines, 4 GiB of document ids)", math.MaxInt32)
		}
		jline.add(int32(len(q.jRel)-1), int32(line)) //nolint:gosec // both below math.MaxInt32 (checked above)
		if err == io.EOF {
			break
		}
	}
	if len(q.ids) == 0 {
		return nil, input.Errorf(file, 0, "no judgments")
	}
	if j1, j2 := q.index(); j2 >= 0 {
		return nil, input.Errorf(file, jline.line(j2), "duplicate judgment of document %q for query %q (first on line %d)", q.doc(j2), q.ids[q.jQ[j2]], jline.line(j1))
	}
	q.countLevels()
	q.jQ = nil // the index (qStart) has the queries
	return q, nil
}

func parseQrelJSON(p *jsonpos.Parser, b []byte, file string, line int) (qid, doc []byte, rel int, err error) {
	v, perr := p.Parse(b, line, 0)
	if perr != nil {
		var se *jsonpos.SyntaxError
		if errors.As(perr, &se) {
			return nil, nil, 0, input.Errorf(file, line, "%s", se.Describe())
		}
		return nil, nil, 0, input.Errorf(file, line, "%s", perr)
	}
	if v.Kind != jsonpos.Object {
		return nil, nil, 0, input.Errorf(file, line, "a judgment must be a JSON object, got %s", v.TypeName())
	}
	id := func(key string) ([]byte, error) {
		f := v.Get(key)
		if f == nil {
			return nil, input.Errorf(file, line, "judgment has no %q", key)
		}
		switch f.Kind {
		case jsonpos.String:
			s := f.Str
			if len(s) == 0 || strings.ContainsAny(s, " \t\r\n") {
				return nil, input.Errorf(file, line, "%q must be a non-empty id without whitespace", key)
			}
			return []byte(s), nil
		case jsonpos.Number:
			return f.Raw(b), nil
		}
		return nil, input.Errorf(file, line, "%q must be a string, got %s", key, f.TypeName())
	}
	if qid, err = id("query_id"); err != nil {
		return
	}
	if doc, err = id("doc_id"); err != nil {
		return
	}
	r := v.Get("relevance")
	if r == nil {
		return nil, nil, 0, input.Errorf(file, line, "judgment has no \"relevance\"")
	}
	bad := func() error {
		got := r.TypeName()
		if r.Kind == jsonpos.Number {
			got = string(r.Raw(b)[:min(r.End-r.Off, 64)])
		}
		return input.Errorf(file, line, "\"relevance\" must be an integer %d..%d, got %s", MinRelevance, MaxRelevance, got)
	}
	if r.Kind != jsonpos.Number {
		return nil, nil, 0, bad()
	}
	f, ok := r.Float64(b)
	if !ok || f != math.Trunc(f) {
		return nil, nil, 0, bad()
	}
	if f < MinRelevance || f > MaxRelevance {
		return nil, nil, 0, input.Errorf(file, line, "relevance %s is outside the accepted range %d..%d", r.Raw(b), MinRelevance, MaxRelevance)
	}
	return qid, doc, int(f), nil
}

// beirQrelsHeader reports whether a line's fields are BEIR's qrels header
// (query-id corpus-id score), which `import` converts.
func beirQrelsHeader(f [][]byte) bool {
	return string(f[0]) == "query-id" && string(f[1]) == "corpus-id" && string(f[2]) == "score"
}
