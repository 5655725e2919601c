package bm25

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// benchDocs is 10,000 documents of 150 terms over a Zipf-like vocabulary of
// 2,000 (BENCHMARKS.md's retrieve KB, smaller), and 100 queries of 8 terms.
func benchDocs() (docs [][]string, queries [][]string) {
	r := rand.New(rand.NewPCG(1, 2))
	term := func() string { return fmt.Sprintf("w%dx", int(2000*r.Float64()*r.Float64())) }
	docs = make([][]string, 10_000)
	for d := range docs {
		for range 150 {
			docs[d] = append(docs[d], term())
		}
	}
	queries = make([][]string, 100)
	for q := range queries {
		for range 8 {
			queries[q] = append(queries[q], term())
		}
	}
	return docs, queries
}

// BenchmarkBuild: one op indexes the 10,000 documents.
func BenchmarkBuild(b *testing.B) {
	docs, _ := benchDocs()
	b.ReportAllocs()
	for b.Loop() {
		New(docs)
	}
}

// BenchmarkSearch: one op runs the 100 queries (k = 50, unfiltered).
func BenchmarkSearch(b *testing.B) {
	docs, queries := benchDocs()
	ix := New(docs)
	b.ReportAllocs()
	for b.Loop() {
		for _, q := range queries {
			ix.Search(q, 50, nil)
		}
	}
}
