// Package bm25 is Okapi BM25 over pre-tokenised documents (the retrieval chunks).
//
// score(q, d) = Σ over the distinct terms t of q of
//
//	idf(t) · tf(t,d)·(k1+1) / (tf(t,d) + k1·(1 − b + b·|d|/avgdl))
//
// with idf(t) = ln(1 + (N − df(t) + 0.5)/(df(t) + 0.5)) (Lucene's non-negative
// variant), k1 = 1.2 and b = 0.75. N, df and avgdl are taken over the whole index
// (all locales), also when a search is filtered.
//
// The postings are compact: one byte array for the whole index (outside the Go
// heap where the system allows), each term's
// postings in document order as varints (the gap to the previous document, then
// the term frequency), built in two passes over the documents so that nothing is
// grown by copying (about 2–3 bytes per posting instead of a 24-byte slice
// header per term and 8 bytes per posting, grown by doubling).
package bm25

import (
	"encoding/binary"
	"math"
	"runtime"
	"sync"

	"github.com/retrieval-gate/retrieval-gate/internal/offheap"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/internal/topk"
)

// Parameters of the scoring function.
const (
	K1 = 1.2
	B  = 0.75
)

// Index is an inverted index over documents 0..N-1.
type Index struct {
	ids   map[string]uint32 // term -> term number
	off   []int             // term number -> its postings, data[off[t]:off[t+1]]
	df    []int32           // term number -> document frequency
	data  []byte            // every term's postings: varint gap, varint tf
	norm  []float64         // k1·(1 − b + b·|d|/avgdl) per document
	avgdl float64
	pool  sync.Pool // *scratch of Search
	ranks []int32   // tie rank per document (SetTieRanks; nil: the document number)

	mapped *offheap.Mapping // data's mapping, when it is one (nil: on the heap)
}

// Close returns the postings' memory to the system now, rather than when
// the index is collected: memory outside the Go heap does not prompt a
// collection, so a process that builds many indexes (a library caller's
// tests) would hold it until its heap grew. A search after finds nothing.
func (ix *Index) Close() {
	if ix.mapped != nil {
		ix.mapped.Release()
	}
	ix.data, ix.avgdl = nil, 0
}

// NewFunc indexes n documents whose terms terms(d, emit) emits in order (repeats
// count); emit's argument is only read during the call. terms is called twice
// per document (a counting pass, then a filling pass) and must emit the same
// terms both times.
func NewFunc(n int, terms func(d int, emit func(term []byte))) *Index {
	ix := &Index{ids: map[string]uint32{}, norm: make([]float64, n)}
	// Per document: the term numbers it uses (first occurrence order) and their
	// counts, in tf (indexed by term number, reset after each document).
	var (
		tf    []int32
		used  []uint32
		last  []int32 // term number -> last document it was counted in
		size  []int   // term number -> bytes of its postings
		total float64
		tmp   [2 * binary.MaxVarintLen64]byte
	)
	count := func(d int, known bool) {
		used = used[:0]
		length := 0
		terms(d, func(term []byte) {
			length++
			id, ok := ix.ids[string(term)]
			if !ok {
				if known {
					panic("bm25: terms emitted a different term in the second pass")
				}
				id = uint32(len(ix.df)) //nolint:gosec // term ids are counted in uint32 (fewer terms than chunk tokens)
				ix.ids[string(term)] = id
				ix.df = append(ix.df, 0)
				tf = append(tf, 0)
				last = append(last, 0)
				size = append(size, 0)
			}
			if tf[id] == 0 {
				used = append(used, id)
			}
			tf[id]++
		})
		if !known {
			ix.norm[d] = float64(length)
			total += float64(length)
		}
	}
	// Pass 1: document frequencies and the size of every term's postings.
	for d := range n {
		count(d, false)
		for _, id := range used {
			gap := d - int(last[id])
			size[id] += len(binary.AppendUvarint(binary.AppendUvarint(tmp[:0], uint64(gap)), uint64(tf[id]))) //nolint:gosec // gap > 0 (documents in order) and tf ≥ 1
			last[id] = int32(d)
			ix.df[id]++
			tf[id] = 0
		}
	}
	ix.off = make([]int, len(ix.df)+1)
	for id, s := range size {
		ix.off[id+1] = ix.off[id] + s
	}
	// The postings are the index's bulk and hold no pointers: outside the Go
	// heap where the system allows, so that the collector's headroom is not
	// sized from them; returned to the system at Close or when the index is
	// unreachable, whichever comes first (offheap.Mapping frees once).
	data, mapped := offheap.Alloc(ix.off[len(ix.df)])
	ix.data = data
	if mapped {
		ix.mapped = &offheap.Mapping{B: data}
		runtime.AddCleanup(ix, (*offheap.Mapping).Release, ix.mapped)
	}
	// Pass 2: the postings, in document order per term.
	pos := size // reused: next write position per term
	copy(pos, ix.off[:len(ix.df)])
	clear(last)
	for d := range n {
		count(d, true)
		for _, id := range used {
			gap := d - int(last[id])
			w := binary.PutUvarint(ix.data[pos[id]:], uint64(gap))      //nolint:gosec // gap > 0: documents in order
			w += binary.PutUvarint(ix.data[pos[id]+w:], uint64(tf[id])) //nolint:gosec // tf ≥ 1
			pos[id] += w
			last[id] = int32(d)
			tf[id] = 0
		}
	}
	if n > 0 {
		ix.avgdl = total / float64(n)
	}
	for d, l := range ix.norm {
		ix.norm[d] = K1 * (1 - B + B*l/ix.avgdl)
	}
	return ix
}

// IDF is the inverse document frequency of term t.
func (ix *Index) IDF(t string) float64 {
	df := 0.0
	if id, ok := ix.ids[t]; ok {
		df = float64(ix.df[id])
	}
	return ix.idf(df)
}

func (ix *Index) idf(df float64) float64 {
	n := float64(len(ix.norm))
	return math.Log(1 + (n-df+0.5)/(df+0.5))
}

// Hit is a scored document.
type Hit struct {
	Doc   int
	Score float64
}

// scratch is one search's score per document (zero outside touched), and its
// top k.
type scratch struct {
	scores  []float64
	touched []int32
	heap    topk.Heap
	items   []topk.Item
}

// SetTieRanks sets each document's tie rank (ranks[d], distinct): of two
// documents whose scores round to the same 6 significant digits, Search keeps
// the lower rank (retrieve gives each chunk its place in chunk-id order).
// Without it the rank is the document number. Not concurrently with Search.
func (ix *Index) SetTieRanks(ranks []int32) {
	if len(ranks) != len(ix.norm) {
		panic("bm25: SetTieRanks needs one rank per document")
	}
	ix.ranks = ranks
}

// Search returns the k best documents for the query terms: the k first by
// score rounded to 6 significant digits, then by tie rank (SetTieRanks), best
// first by score (ties: lower tie rank first). Documents with score 0 (no
// query term) are never returned. keep, when not nil, restricts the
// candidates. Safe for concurrent use.
func (ix *Index) Search(query []string, k int, keep func(doc int) bool) []Hit {
	if k <= 0 || ix.avgdl == 0 {
		return nil
	}
	sc, _ := ix.pool.Get().(*scratch)
	if sc == nil {
		sc = &scratch{scores: make([]float64, len(ix.norm))}
	}
	scores, touched := sc.scores, sc.touched[:0]
	seen := map[string]bool{}
	for _, t := range query {
		if seen[t] {
			continue
		}
		seen[t] = true
		id, ok := ix.ids[t]
		if !ok {
			continue
		}
		idf := ix.idf(float64(ix.df[id]))
		ps := ix.data[ix.off[id]:ix.off[id+1]]
		doc := 0
		for len(ps) > 0 {
			gap, n := binary.Uvarint(ps)
			f, m := binary.Uvarint(ps[n:])
			ps = ps[n+m:]
			doc += int(gap) //nolint:gosec // a gap between two document indices (ints) written by Build
			if keep != nil && !keep(doc) {
				continue
			}
			if scores[doc] == 0 {
				touched = append(touched, int32(doc)) //nolint:gosec // document indices are below the chunk count, held in int32
			}
			tf := float64(f)
			scores[doc] += idf * tf * (K1 + 1) / (tf + ix.norm[doc])
		}
	}
	// Top k of the touched documents (topk: by score rounded to 6 significant
	// digits, then tie rank).
	h := &sc.heap
	h.Reset(k, ix.ranks)
	for _, d := range touched {
		s := scores[d]
		scores[d] = 0
		if s > 0 {
			h.Push(s, d)
		}
	}
	items := h.Items(sc.items[:0])
	sc.touched = touched
	runtime.KeepAlive(ix) // ix.data may be a mapping its cleanup frees
	out := make([]Hit, len(items))
	for i, it := range items {
		out[i] = Hit{Doc: int(it.Index), Score: it.Score}
	}
	sc.items = items
	ix.pool.Put(sc)
	return out
}
