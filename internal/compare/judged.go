package compare

import (
	"math"
	"sync"

	"github.com/retrieval-gate/retrieval-gate/internal/input/trecfile"
)

// Holes: how much of each strategy's top k has a label (judged@k), and the
// measures on condensed lists (--judged-only, trec_eval's -J).

// JudgedThreshold is the judged@k below which a strategy's measures are flagged:
// more than a tenth of its top k is unjudged and counted as relevance 0. At
// 0.9 an unjudged tenth can hide up to a tenth of precision and more of DCG
// (the holes of a strategy that retrieves new documents sit high in its
// ranking), about the size of the differences compare is asked to separate.
const JudgedThreshold = 0.9

// JudgedOnlyDepth is how deep each ranking is read with Options.JudgedOnly:
// the judged documents among its first JudgedOnlyDepth form the condensed list
// (a run deeper than that is cut there first, as trec_eval's -M would).
const JudgedOnlyDepth = 1000

// JudgedAtK is the share of a strategy's top k that has a label in the qrels
// (0 or above: a negative grade is unjudged, judgedRelevance), averaged over the evaluated
// queries that returned at least one document. A query's share divides by the
// documents it returned in its top k (k, or fewer for a shorter list), so a
// short list is not mistaken for a hole; with k or more documents per query it
// is 1 − trec_eval's unj@k, and trec_eval's P@k on the qrels with every label
// of 0 or above counted relevant (ir_measures' Judged@k also counts a negative
// label). It is computed on the ranking as retrieved, also with
// --judged-only (where the condensed lists are judged by construction).
type JudgedAtK struct {
	Mean float64 // NaN when N is 0
	N    int     // evaluated queries with at least one document in the run
	// Low says Mean is below JudgedThreshold.
	Low bool
	// PerQuery is each evaluated query's share (Result.QueryIDs order); NaN
	// for a query without a document.
	PerQuery []float64
}

// judgedRelevance is doc's relevance for qrels query qi as trec_eval reads
// the qrels: judged when graded 0 or above; a negative grade (spam −1, junk
// −2 in TREC web qrels) is "in the pool, but unjudged" (trec_eval's
// RELVALUE_UNJUDGED, form_res_rels.c), like a document the qrels do not
// hold: relevance 0 here, a hole for judged@k (trec_eval's unj@k counts it
// unjudged too), left out of the mean relevance and of relevance by position,
// and dropped from the condensed lists of --judged-only (trec_eval's -J).
// Without --judged-only it stays in the ranking with gain 0 and is never
// relevant, as in trec_eval.
func judgedRelevance(q *trecfile.Qrels, qi int, doc string) (rel int, judged bool) {
	rel, judged = q.Relevance(qi, doc)
	if !judged || rel < 0 {
		return 0, false
	}
	return rel, true
}

// holeParts is how many parts the queries are split into for the parallel
// passes below (each part writes its own slots: the result does not depend on
// scheduling).
const holeParts = 8

// inParts calls f on holeParts consecutive parts of [0, n) in parallel.
func inParts(n int, f func(lo, hi int)) {
	var wg sync.WaitGroup
	for p := range holeParts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(p*n/holeParts, (p+1)*n/holeParts)
		}()
	}
	wg.Wait()
}

// judgedAtK computes run's judged@k over the evaluated queries eval (qrels indexes).
func judgedAtK(q *trecfile.Qrels, run *trecfile.Run, eval []int, k int) JudgedAtK {
	j := JudgedAtK{PerQuery: make([]float64, len(eval))}
	pos := make([]int32, q.NumQueries()) // qrels index -> position in eval + 1 (0: not evaluated)
	for i, qi := range eval {
		pos[qi] = int32(i + 1)
		j.PerQuery[i] = math.NaN()
	}
	inParts(len(run.Queries), func(lo, hi int) {
		for _, rq := range run.Queries[lo:hi] {
			qi, ok := q.QueryIndex(rq.ID)
			if !ok || pos[qi] == 0 || len(rq.Docs) == 0 {
				continue
			}
			docs := rq.Docs[:min(k, len(rq.Docs))]
			judged := 0
			for _, d := range docs {
				if _, ok := judgedRelevance(q, qi, d); ok {
					judged++
				}
			}
			j.PerQuery[pos[qi]-1] = float64(judged) / float64(len(docs))
		}
	})
	j.summarize()
	return j
}

// Condense returns the run with every document unjudged for its query
// (judgedRelevance: absent from the qrels or graded below 0) removed from each
// ranking, before any cutoff (trec_eval's -J; Sakai's condensed lists), keeping the first k judged documents of each (k < 1: all of them).
// Queries absent from the qrels are kept as they are (compare ignores them);
// the run itself is not modified.
func Condense(q *trecfile.Qrels, run *trecfile.Run, k int) *trecfile.Run {
	out := &trecfile.Run{File: run.File, Format: run.Format, K: run.K, Queries: make([]trecfile.RunQuery, len(run.Queries))}
	inParts(len(run.Queries), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			rq := run.Queries[i]
			qi, ok := q.QueryIndex(rq.ID)
			if !ok {
				out.Queries[i] = rq
				continue
			}
			var docs []string
			for _, d := range rq.Docs {
				if k > 0 && len(docs) == k {
					break
				}
				if _, judged := judgedRelevance(q, qi, d); judged {
					docs = append(docs, d)
				}
			}
			if docs == nil {
				docs = []string{}
			}
			out.Queries[i] = trecfile.RunQuery{ID: rq.ID, Docs: docs}
		}
	})
	return out
}

// evaluateHoles is evaluate with the holes: judged@k on the run as retrieved,
// then (Options.JudgedOnly) the measures on its condensed lists. Without
// JudgedOnly, judged@k comes from evaluate's own counts (no second pass).
func evaluateHoles(q *trecfile.Qrels, in Input, eval []int, inBinary []bool, primary int, opt Options) (Strategy, error) {
	if !opt.JudgedOnly {
		s, err := evaluate(q, in, eval, inBinary, primary, opt)
		if err == nil {
			s.Judged = judgedFromCounts(s.topN, s.topUnjudged)
		}
		s.topN, s.topUnjudged = nil, nil
		return s, err
	}
	j := judgedAtK(q, in.Run, eval, opt.K)
	in.Run = Condense(q, in.Run, opt.K)
	s, err := evaluate(q, in, eval, inBinary, primary, opt)
	s.Judged = j
	s.topN, s.topUnjudged = nil, nil
	return s, err
}

// judgedFromCounts is judged@k from each evaluated query's documents in the
// top k (n) and unjudged ones among them (u).
func judgedFromCounts(n, u []int32) JudgedAtK {
	j := JudgedAtK{PerQuery: make([]float64, len(n))}
	for i := range n {
		j.PerQuery[i] = math.NaN()
		if n[i] > 0 {
			j.PerQuery[i] = float64(n[i]-u[i]) / float64(n[i])
		}
	}
	j.summarize()
	return j
}

// summarize sets Mean, N and Low from PerQuery, in query order (the mean does
// not depend on the run's order).
func (j *JudgedAtK) summarize() {
	sum := 0.0
	for _, v := range j.PerQuery {
		if !math.IsNaN(v) {
			sum += v
			j.N++
		}
	}
	j.Mean = math.NaN()
	if j.N > 0 {
		j.Mean = sum / float64(j.N)
		j.Low = j.Mean < JudgedThreshold
	}
}
