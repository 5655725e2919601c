// Package bm25 is Okapi BM25 over pre-tokenised documents (the retrieval chunks).
//
// score(q, d) = Σ over the distinct terms t of q of
//
//	idf(t) · tf(t,d)·(k1+1) / (tf(t,d) + k1·(1 − b + b·|d|/avgdl))
//
// with idf(t) = ln(1 + (N − df(t) + 0.5)/(df(t) + 0.5)) (Lucene's non-negative
// variant), k1 = 1.2 and b = 0.75. N, df and avgdl are taken over the whole index
// (all locales), also when a search is filtered.
package bm25

import (
	"math"
	"sort"
)

// Parameters of the scoring function.
const (
	K1 = 1.2
	B  = 0.75
)

type posting struct {
	doc int32
	tf  int32
}

// Index is an inverted index over documents 0..N-1.
type Index struct {
	postings map[string][]posting
	docLen   []float64
	norm     []float64 // k1·(1 − b + b·|d|/avgdl) per document
	avgdl    float64
}

// New indexes docs, each given as its terms (repeats count).
func New(docs [][]string) *Index {
	ix := &Index{postings: map[string][]posting{}, docLen: make([]float64, len(docs))}
	total := 0.0
	for d, terms := range docs {
		ix.docLen[d] = float64(len(terms))
		total += float64(len(terms))
		tf := map[string]int32{}
		for _, t := range terms {
			tf[t]++
		}
		for t, n := range tf {
			ix.postings[t] = append(ix.postings[t], posting{doc: int32(d), tf: n})
		}
	}
	if len(docs) > 0 {
		ix.avgdl = total / float64(len(docs))
	}
	ix.norm = make([]float64, len(docs))
	for d, l := range ix.docLen {
		ix.norm[d] = K1 * (1 - B + B*l/ix.avgdl)
	}
	return ix
}

// IDF is the inverse document frequency of term t.
func (ix *Index) IDF(t string) float64 {
	n := float64(len(ix.docLen))
	df := float64(len(ix.postings[t]))
	return math.Log(1 + (n-df+0.5)/(df+0.5))
}

// Hit is a scored document.
type Hit struct {
	Doc   int
	Score float64
}

// Search returns the k best documents for the query terms, best first (ties: lower
// document number first). Documents with score 0 (no query term) are never
// returned. keep, when not nil, restricts the candidates.
func (ix *Index) Search(query []string, k int, keep func(doc int) bool) []Hit {
	if k <= 0 || ix.avgdl == 0 {
		return nil
	}
	scores := make([]float64, len(ix.docLen))
	var touched []int32
	seen := map[string]bool{}
	for _, t := range query {
		if seen[t] {
			continue
		}
		seen[t] = true
		ps := ix.postings[t]
		if len(ps) == 0 {
			continue
		}
		idf := ix.IDF(t)
		for _, p := range ps {
			if keep != nil && !keep(int(p.doc)) {
				continue
			}
			if scores[p.doc] == 0 {
				touched = append(touched, p.doc)
			}
			tf := float64(p.tf)
			scores[p.doc] += idf * tf * (K1 + 1) / (tf + ix.norm[p.doc])
		}
	}
	// Top k of the touched documents with a bounded min-heap (root = worst kept).
	better := func(a, b Hit) bool {
		if a.Score != b.Score {
			return a.Score > b.Score
		}
		return a.Doc < b.Doc
	}
	h := make([]Hit, 0, min(k, len(touched)))
	for _, d := range touched {
		e := Hit{Doc: int(d), Score: scores[d]}
		if e.Score <= 0 {
			continue
		}
		if len(h) < k {
			h = append(h, e)
			for j := len(h) - 1; j > 0; {
				p := (j - 1) / 2
				if !better(h[p], h[j]) {
					break
				}
				h[p], h[j] = h[j], h[p]
				j = p
			}
			continue
		}
		if !better(e, h[0]) {
			continue
		}
		h[0] = e
		for j := 0; ; {
			l, m := 2*j+1, j
			if l < len(h) && better(h[m], h[l]) {
				m = l
			}
			if r := l + 1; r < len(h) && better(h[m], h[r]) {
				m = r
			}
			if m == j {
				break
			}
			h[j], h[m] = h[m], h[j]
			j = m
		}
	}
	sort.Slice(h, func(i, j int) bool { return better(h[i], h[j]) })
	return h
}
