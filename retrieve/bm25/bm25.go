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
	return ix
}

// Len is the number of documents.
func (ix *Index) Len() int { return len(ix.docLen) }

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
	scores := map[int32]float64{}
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
			tf := float64(p.tf)
			norm := K1 * (1 - B + B*ix.docLen[p.doc]/ix.avgdl)
			scores[p.doc] += idf * tf * (K1 + 1) / (tf + norm)
		}
	}
	hits := make([]Hit, 0, len(scores))
	for d, s := range scores {
		hits = append(hits, Hit{Doc: int(d), Score: s})
	}
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].Score != hits[j].Score {
			return hits[i].Score > hits[j].Score
		}
		return hits[i].Doc < hits[j].Doc
	})
	if len(hits) > k {
		hits = hits[:k]
	}
	return hits
}
