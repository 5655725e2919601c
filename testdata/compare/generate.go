//go:build ignore

// generate writes the compare demo: graded qrels for 120 queries and five TREC
// runs (bm25, dense, hybrid, and dense and hybrid with a reranker over their
// top 20). Each strategy ranks a query's 40 candidates by relevance × its
// quality plus Gaussian noise; a query's difficulty scales the noise, so some
// queries fail everywhere. Deterministic: go run testdata/compare/generate.go
//
// It also writes queries.jsonl, what each query id stands for (compare
// --queries): a help-centre question per id, from a topic and a phrasing
// chosen by the id's number (no random draw: the qrels and runs are the same
// with or without it), locale en, no cluster (the queries are independent).
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
	w := bufio.NewWriter(must(os.Create(filepath.Join(dir, "queries.jsonl"))))
	for i := range queries {
		text := fmt.Sprintf(phrasings[(i/len(topics))%len(phrasings)], topics[i%len(topics)])
		fmt.Fprintf(w, "{\"id\": \"q%03d\", \"locale\": \"en\", \"query\": %q}\n", i+1, text)
	}
	check(w.Flush())
}

// topics and phrasings make the demo's query texts: query i is phrasing
// i/len(topics) of topic i%len(topics).
var (
	topics = []string{
		"reset my password", "turn on two-factor authentication", "change the email on my account", "delete my account",
		"export my data", "download an invoice", "update my credit card", "cancel my subscription",
		"get a refund", "change my plan", "add a team member", "remove a team member",
		"set up single sign-on", "rotate an API key", "connect the Slack integration", "import contacts from a CSV file",
		"recover a deleted project", "change the workspace language", "turn off email notifications", "report a security issue",
		"move a project to another workspace", "see the audit log", "limit who can invite guests", "change my time zone",
		"use the mobile app offline", "print a report", "share a dashboard publicly", "restore an older version of a file",
		"increase the upload size limit", "fix a failed payment", "verify my domain", "transfer ownership of the workspace",
		"merge two accounts", "set a data retention period", "find my order number", "contact support by phone",
		"change the billing address", "pause my subscription", "unlock a locked account", "sign in with a Google account",
	}
	phrasings = []string{"How do I %s?", "What is the quickest way to %s", "can't %s"}
)

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
