package html

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

// CompareViewOf is the one adapter from a comparison to the dashboard: it picks
// the computed values (means, intervals, paired tests of compare) and selects,
// sorts and samples; it computes no statistic.
func CompareViewOf(r *compare.Result) CompareView {
	const M = metrics.NumGraded
	v := CompareView{
		K: r.K, Gain: r.Gain.String(), RelevantLevel: r.RelevantLevel,
		Judged: r.Judged, Evaluated: r.N(), NotEvaluated: r.NotEvaluated,
		Baseline: r.Baseline, Recommended: r.Recommended, Diagnosis: r.Diagnosis,
	}
	if r.Exact {
		v.Method = fmt.Sprintf("95%% CIs by percentile bootstrap (%d resamples, seed %d), p by sign-flip randomization", r.Resamples, r.Seed)
	} else {
		v.Method = "95% CIs and p by large-sample approximations of the bootstrap and the randomization test"
	}
	if l := r.Leader; l != nil {
		v.Leader = &PairView{A: l.Strategy, B: l.Baseline, Delta: l.Delta, CI: l.CI, PHolm: l.PHolm, Significant: l.Significant}
	}
	for i := range r.Strategies {
		s := &r.Strategies[i]
		sv := StrategyView{
			Name: s.Name, N: s.N,
			DCG:        Stat{s.Means[metrics.GDCG], s.CI[metrics.GDCG]},
			MeanRel:    Stat{s.Means[metrics.GMeanRel], s.CI[metrics.GMeanRel]},
			ByPosition: s.ByPosition, Failed: len(s.Failed),
			FailedSample: s.Failed[:min(Sample, len(s.Failed))],
		}
		v.Strategies = append(v.Strategies, sv)
		if sv.DCG.Mean > v.Strategies[v.Best].DCG.Mean {
			v.Best = i
		}
	}
	// Reranked pairs: NAME and NAME+rerank.
	for i, s := range v.Strategies {
		if base, ok := strings.CutSuffix(s.Name, RerankSuffix); ok {
			if r.StrategyIndex(base) < 0 {
				v.Groups = append(v.Groups, [2]int{-1, i})
			}
			continue
		}
		v.Groups = append(v.Groups, [2]int{i, r.StrategyIndex(s.Name + RerankSuffix)})
	}
	top := func(g [2]int) float64 {
		best := -1.0
		for _, i := range g {
			if i >= 0 && v.Strategies[i].DCG.Mean > best {
				best = v.Strategies[i].DCG.Mean
			}
		}
		return best
	}
	slices.SortStableFunc(v.Groups, func(a, b [2]int) int { return cmp.Compare(top(b), top(a)) })
	for _, g := range v.Groups {
		if g[0] < 0 || g[1] < 0 {
			continue
		}
		t, _ := r.PairTest(v.Strategies[g[1]].Name, v.Strategies[g[0]].Name, metrics.GDCG)
		v.Pairs = append(v.Pairs, RerankPair{Base: g[0], Rerank: g[1],
			Test: PairView{A: t.Strategy, B: t.Baseline, Delta: t.Delta, CI: t.CI, PHolm: t.PHolm, Significant: t.Significant}})
	}
	// Best and worst queries of the best strategy by mean relevance, ties by id.
	best := &r.Strategies[v.Best]
	v.QueriesOf = best.Name
	val := func(i, m int) float64 { return best.Values[i*M+m] }
	q := func(i int) QueryView {
		return QueryView{ID: r.QueryIDs[i], MeanRel: val(i, metrics.GMeanRel), DCG: val(i, metrics.GDCG)}
	}
	// QueryIDs are sorted, so the index breaks ties by id.
	for _, i := range smallest(r.N(), Sample, func(a, b int) bool {
		return val(a, metrics.GMeanRel) > val(b, metrics.GMeanRel) || val(a, metrics.GMeanRel) == val(b, metrics.GMeanRel) && a < b
	}) {
		v.BestQueries = append(v.BestQueries, q(i))
	}
	for _, i := range smallest(r.N(), Sample, func(a, b int) bool {
		return val(a, metrics.GMeanRel) < val(b, metrics.GMeanRel) || val(a, metrics.GMeanRel) == val(b, metrics.GMeanRel) && a < b
	}) {
		v.WorstQueries = append(v.WorstQueries, q(i))
	}
	return v
}

// smallest returns the k first of 0..n-1 in the strict total order before, in
// that order, in O(n·k) time and O(k) memory.
func smallest(n, k int, before func(a, b int) bool) []int {
	out := make([]int, 0, k+1)
	for i := range n {
		if len(out) == k && !before(i, out[k-1]) {
			continue
		}
		j := len(out)
		out = append(out, i)
		for ; j > 0 && before(i, out[j-1]); j-- {
			out[j] = out[j-1]
		}
		out[j] = i
		if len(out) > k {
			out = out[:k]
		}
	}
	return out
}

// CompareHTML writes the dashboard of a comparison (`compare --html`).
func CompareHTML(w io.Writer, r *compare.Result) error { return Compare(w, CompareViewOf(r)) }
