//go:build ignore

// generate writes the compare demo: graded qrels for 120 queries and five TREC
// runs (bm25, dense, hybrid, and dense and hybrid with a reranker over their
// top 20). Each strategy ranks a query's 40 candidates by relevance × its
// quality plus Gaussian noise; a query's difficulty scales the noise, so some
// queries fail everywhere. Deterministic: go run testdata/compare/generate.go
package main

import (
	"bufio"
	"cmp"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
)

const (
	queries    = 120
	candidates = 40
	k          = 10
)

type doc struct {
	id  string
	rel int // -1: unjudged
}

func main() {
	dir := filepath.Join("testdata", "compare")
	r := rand.New(rand.NewPCG(2026, 15))
	pool := make([][]doc, queries)
	hard := make([]float64, queries)
	q := bufio.NewWriter(must(os.Create(filepath.Join(dir, "qrels.trec"))))
	for i := range queries {
		qid := fmt.Sprintf("q%03d", i+1)
		hard[i] = 0.6 + 1.4*r.Float64()
		for j := range candidates {
			d := doc{id: fmt.Sprintf("d%03d-%02d", i+1, j+1), rel: 0}
			switch {
			case j == 0:
				d.rel = 3
			case j < 3:
				d.rel = 2
			case j < 7:
				d.rel = 1
			case j < 25:
				d.rel = 0
			default:
				d.rel = -1
			}
			if i%17 == 5 && d.rel > 0 { // a few queries without any relevant document
				d.rel = 0
			}
			if d.rel >= 0 {
				fmt.Fprintf(q, "%s 0 %s %d\n", qid, d.id, d.rel)
			}
			pool[i] = append(pool[i], d)
		}
	}
	check(q.Flush())
	type strategy struct {
		name    string
		quality float64
	}
	rank := func(ds []doc, quality, noise float64) []doc {
		type sc struct {
			d doc
			s float64
		}
		var xs []sc
		for _, d := range ds {
			rel := float64(max(d.rel, 0))
			xs = append(xs, sc{d, rel*quality + noise*r.NormFloat64()})
		}
		slices.SortStableFunc(xs, func(a, b sc) int { return cmp.Compare(b.s, a.s) })
		out := make([]doc, len(xs))
		for i, x := range xs {
			out[i] = x.d
		}
		return out
	}
	write := func(name string, ranked [][]doc, n int) {
		w := bufio.NewWriter(must(os.Create(filepath.Join(dir, name+".trec"))))
		for i, ds := range ranked {
			for j, d := range ds[:n] {
				fmt.Fprintf(w, "q%03d Q0 %s %d %.4f %s\n", i+1, d.id, j+1, float64(n-j)/float64(n), name)
			}
		}
		check(w.Flush())
	}
	for _, s := range []strategy{{"bm25", 0.55}, {"dense", 0.75}, {"hybrid", 0.95}} {
		base := make([][]doc, queries)
		for i := range queries {
			base[i] = rank(pool[i], s.quality, hard[i])
		}
		write(s.name, base, k)
		if s.name == "bm25" {
			continue
		}
		rr := make([][]doc, queries)
		for i := range queries {
			rr[i] = rank(base[i][:20], 1.2, hard[i])
		}
		write(s.name+"+rerank", rr, k)
	}
}

func must[T any](v T, err error) T {
	check(err)
	return v
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
