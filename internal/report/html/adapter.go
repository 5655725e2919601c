package html

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/report/comparereport"
)

// CompareViewOf is the one adapter from a comparison to the dashboard. Every
// figure comes from the typed document d (means, intervals, n, positions,
// failed queries, the recommendation and its test, the reranker findings and the
// diagnosis); the per-query values of r serve only to select the best and worst
// queries by mean relevance, which the document does not carry. It selects,
// sorts and samples; it computes no statistic.
func CompareViewOf(d *comparereport.Document, r *compare.Result) CompareView {
	v := CompareView{
		K: d.K, Gain: d.Gain, RelevantLevel: d.RelevantLevel,
		Judged: d.Queries.Judged, Evaluated: d.Queries.WithRelevant, NotEvaluated: d.NotEvaluated,
		Baseline: d.Baseline, Recommended: d.Recommended, Diagnosis: d.Diagnosis(),
		Gates: d.Gates, Verdict: string(d.Verdict),
	}
	st := d.Statistics
	if st.Resampled {
		v.Method = fmt.Sprintf("95%% CIs by percentile bootstrap (%d resamples, seed %d), p by sign-flip randomization", st.Resamples, st.Seed)
	} else {
		v.Method = "95% CIs and p by large-sample approximations of the bootstrap and the randomization test"
	}
	if l := d.RecommendationTest; l != nil {
		v.Leader = &PairView{A: l.Best, B: l.RunnerUp, Delta: l.Delta.V(), CI: [2]float64{l.CI95[0].V(), l.CI95[1].V()}, PHolm: l.PValue.V(), Significant: l.Significant}
	}
	stat := func(s comparereport.Summary) Stat {
		return Stat{s.Mean.V(), [2]float64{s.CI95[0].V(), s.CI95[1].V()}}
	}
	index := map[string]int{}
	for i, name := range d.Order {
		s := d.Strategies[name]
		pos := make([]float64, len(s.RelevanceByPosition))
		for j, x := range s.RelevanceByPosition {
			pos[j] = x.V()
		}
		sv := StrategyView{
			Name: name, N: s.N,
			DCG: stat(s.Metrics[metrics.KeyDCG]), MeanRel: stat(s.Metrics[metrics.KeyMeanRel]),
			Measures:   make([]MeasureStat, len(metrics.QueryMeasures)),
			ByPosition: pos, Failed: len(s.FailedQueries),
			FailedSample: s.FailedQueries[:min(Sample, len(s.FailedQueries))],
		}
		for m := range metrics.QueryMeasures {
			if x, ok := s.Metrics[metrics.QueryMeasures[m].Key]; ok {
				sv.Measures[m] = MeasureStat{Stat: stat(x), N: x.N, Has: true}
			}
		}
		v.Strategies = append(v.Strategies, sv)
		index[name] = i
		if sv.DCG.Mean > v.Strategies[v.Best].DCG.Mean {
			v.Best = i
		}
	}
	lookup := func(name string) int {
		if i, ok := index[name]; ok {
			return i
		}
		return -1
	}
	// Reranked pairs: NAME and NAME+rerank.
	for i, s := range v.Strategies {
		if base, ok := strings.CutSuffix(s.Name, RerankSuffix); ok {
			if lookup(base) < 0 {
				v.Groups = append(v.Groups, [2]int{-1, i})
			}
			continue
		}
		v.Groups = append(v.Groups, [2]int{i, lookup(s.Name + RerankSuffix)})
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
	// The reranker test of each pair is compare's finding (reranked − base, paired
	// randomization test, Holm-adjusted with the report's comparisons).
	for _, g := range v.Groups {
		if g[0] < 0 || g[1] < 0 {
			continue
		}
		base, rr := v.Strategies[g[0]].Name, v.Strategies[g[1]].Name
		for _, f := range d.Findings {
			if f.Kind == compare.Reranker && f.A == rr && f.B == base {
				t := f.Test
				v.Pairs = append(v.Pairs, RerankPair{Base: g[0], Rerank: g[1],
					Test: PairView{A: rr, B: base, Delta: t.Delta, CI: t.CI.CI(), PHolm: t.PHolm, Significant: t.Significant}})
				break
			}
		}
	}
	// Best and worst queries of the best strategy by mean relevance, ties by id.
	best := v.Strategies[v.Best].Name
	v.QueriesOf = best
	var rs *compare.Strategy
	if i := r.StrategyIndex(best); i >= 0 {
		rs = &r.Strategies[i]
	}
	if rs == nil {
		return v
	}
	const M = metrics.NumGraded
	mr, dcg := metrics.QueryIndex(metrics.KeyMeanRel), metrics.QueryIndex(metrics.KeyDCG)
	val := func(i, m int) float64 { return rs.Values[i*M+m] }
	q := func(i int) QueryView {
		return QueryView{ID: r.QueryIDs[i], MeanRel: val(i, mr), DCG: val(i, dcg)}
	}
	// QueryIDs are sorted, so the index breaks ties by id.
	for _, i := range smallest(r.N(), Sample, func(a, b int) bool {
		return val(a, mr) > val(b, mr) || val(a, mr) == val(b, mr) && a < b
	}) {
		v.BestQueries = append(v.BestQueries, q(i))
	}
	for _, i := range smallest(r.N(), Sample, func(a, b int) bool {
		return val(a, mr) < val(b, mr) || val(a, mr) == val(b, mr) && a < b
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

// CompareHTML writes the dashboard of a comparison (`compare --html`) from its
// document and result; overRuns, when the run has a history (nil: none), is the
// primary measure over the earlier runs and this one, charted in its own section.
func CompareHTML(w io.Writer, d *comparereport.Document, r *compare.Result, overRuns *HistoryView) error {
	v := CompareViewOf(d, r)
	v.OverRuns = overRuns
	return Compare(w, v)
}
