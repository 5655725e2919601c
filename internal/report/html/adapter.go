package html

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/report/comparereport"
)

// WholePages is how many of the newest runs of "Select run" have their whole
// page embedded (this run's included): a page per run of the history's 100
// would make the page several megabytes.
const WholePages = 20

// CompareViewOf is the one adapter from a comparison to the dashboard. Every
// figure comes from the typed document d (means, intervals, n, positions,
// failed queries, the recommendation and its test, the reranker findings and the
// diagnosis); the per-query values of r serve only to select the best and worst
// queries by mean relevance, which the document does not carry. It selects,
// sorts and samples; it computes no statistic.
func CompareViewOf(d *comparereport.Document, r *compare.Result, overRuns *HistoryView) CompareView {
	v := CompareView{
		K: d.K, Gain: d.Gain, RelevantLevel: d.RelevantLevel,
		Judged: d.Queries.Judged, Evaluated: d.Queries.WithRelevant, NotEvaluated: d.NotEvaluated,
		Baseline: d.Baseline, Recommended: d.Recommended, Diagnosis: d.Diagnosis(),
		Gates: d.Gates, Verdict: string(d.Verdict),
		MaxDCG: d.MaxDCGAtK.V(), MaxDCGLevel: max(d.RelevanceScale[1], 1),
		Scenarios: d.ScenarioTexts(), Decision: d.DecisionText(), NoScenario: comparereport.NoScenarioLine, BucketsNote: d.BucketsNote(),
		ScenariosNote: d.ScenariosUnreliableLine(), DiagnosisNote: d.DiagnosisUnreliableLine(), DecisionNote: d.DecisionUnreliableLine(),
		GatesNote: d.GatesUnreliableLine(),
	}
	v.Methods = methodLines(d)
	v.Identical = d.IdenticalLines(func(s string) string { return s }) // the page escapes every text
	v.Holes = holesViewOf(d)
	if h, ok := d.HumanSection(func(s string) string { return s }); ok { // the page escapes every text
		v.Human = &h
	}
	v.Primary, v.RerankMeasure = d.Primary, d.Primary
	// "Select run": the runs of the history (OverRuns, this run the newest),
	// this run from its own document; "Select metric": every measure found.
	cur := exploreRun{Label: "this run", Current: true, Order: d.Order, Measures: RunMeasures{}}
	for _, name := range d.Order {
		ms := map[string]Point{}
		for key, s := range d.Strategies[name].Metrics {
			ms[key] = Point{Mean: s.Mean.V(), Lo: s.CI95[0].V(), Hi: s.CI95[1].V(), N: int(s.N), Unreliable: s.Unreliable}
		}
		cur.Measures[name] = ms
	}
	if o := overRuns; o != nil && o.Unread == "" && len(o.Runs) > 0 {
		n := len(o.Runs)
		v.RunPages = make([]*CompareView, n)
		v.RunMissing = make([]string, n)
		for i, r := range o.Runs[:n-1] {
			// The whole page of an earlier run, from its document (the newest
			// WholePages runs: each is about 80 KB of page).
			if i < n-WholePages {
				v.RunMissing[i] = fmt.Sprintf("This page embeds the whole page of the newest %d runs only (each adds about 80 KB); the measures of %s are under \"Per strategy\" and in the chart over the runs, and its own --html report has the rest.", WholePages, runLabel(i, n, r))
			} else if rd, err := comparereport.Read(bytes.NewReader(r.Document)); err != nil {
				v.RunMissing[i] = "The document of " + runLabel(i, n, r) + " in the history could not be read: " + err.Error() + "."
			} else {
				pv := CompareViewOf(rd, nil, nil)
				pv.RunLabel = runLabel(i, n, r)
				pv.Primary, pv.Measures = "", nil // set below, as this run's
				v.RunPages[i] = &pv
			}
			order := make([]string, 0, len(r.Measures))
			for name := range r.Measures {
				order = append(order, name)
			}
			slices.Sort(order)
			v.Runs = append(v.Runs, overRun(exploreRun{Label: runLabel(i, n, r), Order: order, Measures: r.Measures}, i, r))
		}
		cur = overRun(cur, n-1, o.Runs[n-1])
		cur.Label = runLabel(n-1, n, o.Runs[n-1]) + " (this run)"
	}
	v.Current = len(v.Runs)
	v.Runs = append(v.Runs, cur)
	all := make([]RunMeasures, len(v.Runs))
	names := slices.Clone(d.Order)
	for i, r := range v.Runs {
		all[i] = r.Measures
		for _, n := range r.Order {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	v.Measures = measureKeys(all)
	if !slices.Contains(v.Measures, v.Primary) {
		v.Measures = append(v.Measures, v.Primary)
	}
	for _, pv := range v.RunPages {
		if pv != nil { // one "Select metric" for every run's page
			pv.Primary, pv.Measures = v.Primary, v.Measures
		}
	}
	v.Colours = StrategyColours(names)
	if l := d.RecommendationTest; l != nil {
		v.Leader = &PairView{A: l.Best, B: l.RunnerUp, N: l.N, Delta: l.Delta.V(), CI: [2]float64{l.CI95[0].V(), l.CI95[1].V()}, PHolm: l.PValue.V(), Significant: l.Significant, Identical: l.Identical, Note: comparereport.NoteText(l.Note),
			Unreliable: l.Unreliable}
	}
	stat := func(s comparereport.Summary) Stat {
		return Stat{s.Mean.V(), [2]float64{s.CI95[0].V(), s.CI95[1].V()}, s.Unreliable}
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
			Buckets:    bucketsOf(s),
			ByPosition: pos, ByPositionN: s.RelevanceByPositionN, Failed: len(s.FailedQueries),
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
	// The reranker pairs are compare's findings as the document carries them
	// (rerankers: reranked − base on the primary measure, its paired test,
	// Holm-adjusted with the report's comparisons on that measure, and its
	// effect), the test named by its method: compare pairs names that differ
	// by a reranker word ("dense" and "dense-ce" too), so the table lists
	// what the JSON and the text report list; the chart's groups above are
	// NAME and NAME+rerank only. In the chart's order (the base's group, then
	// the document's).
	if d.RerankersUnknown { // a document written before the JSON had them
		for _, g := range v.Groups {
			if g[0] < 0 || g[1] < 0 {
				continue
			}
			base, rr := v.Strategies[g[0]].Name, v.Strategies[g[1]].Name
			v.Pairs = append(v.Pairs, RerankPair{Base: g[0], Rerank: g[1], Untested: true,
				Test: PairView{A: rr, B: base, Delta: math.NaN(), CI: [2]float64{math.NaN(), math.NaN()}, PHolm: math.NaN()}})
		}
	} else {
		for _, t := range d.Rerankers {
			b, r := lookup(t.Base), lookup(t.Reranked)
			if b < 0 || r < 0 {
				continue // not a strategy of the document (a hand-edited file)
			}
			v.Pairs = append(v.Pairs, RerankPair{Base: b, Rerank: r, Effect: compare.Effect(t.Effect),
				Test: PairView{A: t.Reranked, B: t.Base, N: t.N, Delta: t.Delta.V(), CI: [2]float64{t.CI95[0].V(), t.CI95[1].V()}, PHolm: t.PValue.V(), Significant: t.Significant, Unreliable: t.Unreliable,
					PTest: methodText(d.Statistics, t.PValueMethod)}})
		}
		group := func(i int) int {
			return slices.IndexFunc(v.Groups, func(g [2]int) bool { return g[0] == i || g[1] == i })
		}
		slices.SortStableFunc(v.Pairs, func(a, b RerankPair) int { return cmp.Compare(group(a.Base), group(b.Base)) })
	}
	// Best and worst queries of every strategy by each measure, as the
	// document lists them (the primary's: best_queries and worst_queries),
	// each with its text and its values of every measure.
	if len(v.Strategies) > 0 {
		v.QueriesOf = v.Strategies[v.Best].Name
	}
	v.Texts = len(d.QueryTexts) > 0
	for _, name := range d.Order {
		s := d.Strategies[name]
		qv := func(ids []string) []QueryView {
			out := make([]QueryView, 0, len(ids))
			for _, id := range ids {
				q := QueryView{ID: id, Text: d.QueryTexts[id], Values: map[string]float64{}}
				for key, x := range s.QueryValues[id] {
					q.Values[key] = x.V()
				}
				out = append(out, q)
			}
			return out
		}
		if len(s.BestQueries)+len(s.WorstQueries) == 0 {
			continue
		}
		by := map[string]QueryLists{}
		for key, l := range s.QueriesByMeasure {
			by[key] = QueryLists{Best: qv(l.Best), Worst: qv(l.Worst)}
		}
		by[d.Primary] = QueryLists{Best: qv(s.BestQueries), Worst: qv(s.WorstQueries)}
		v.QueryStrategies = append(v.QueryStrategies, QueriesView{Strategy: name, By: by})
	}
	return v
}

// CompareHTML writes the dashboard of a comparison (`compare --html`) from its
// document and result; overRuns, when the run has a history (nil: none), is the
// primary measure over the earlier runs and this one, charted in its own section.
func CompareHTML(w io.Writer, d *comparereport.Document, r *compare.Result, overRuns *HistoryView) error {
	v := CompareViewOf(d, r, overRuns)
	v.OverRuns = overRuns
	return Compare(w, v)
}

// overRun adds to e what the chart over the runs shows of run i: as
// runsChart labels and marks it.
func overRun(e exploreRun, i int, r RunView) exploreRun {
	e.X = RunTick(i, r)
	e.K = strconv.Itoa(r.K)
	e.Commit = format.CommitPrefix(r.Commit, 7)
	e.Of, e.Tip = dcgOf(r), dcgTip(r)
	if r.Changed != nil {
		e.Changed = "inputs changed: " + strings.Join(r.Changed, ", ")
	}
	return e
}

// runLabel names run i of n in "Select run": its number, day, commit and branch.
func runLabel(i, n int, r RunView) string {
	s := fmt.Sprintf("run %d of %d", i+1, n)
	if len(r.Time) >= 10 {
		s += " · " + r.Time[:10]
	}
	if r.Commit != "" {
		s += " · " + format.CommitPrefix(r.Commit, 7)
	}
	if r.Branch != "" {
		s += " · " + r.Branch
	}
	return s
}

// methodWords are the words for the method ids the document states
// (statistics.ci95_methods and p_value_methods, each interval's ci95_method,
// each test's p_value_method); an id not listed is shown as it is, so a new
// method is named, never misnamed.
var methodWords = map[string]string{
	metrics.MethodWilson:                "Wilson score with continuity correction",
	metrics.MethodBCa:                   "BCa bootstrap",
	metrics.MethodHallT:                 "t united with Hall's skewness-corrected t",
	metrics.MethodHallTBetting:          "t united with Hall's skewness-corrected t and the betting interval of a bounded mean",
	metrics.MethodPercentile:            "percentile bootstrap",
	metrics.MethodBoundedWilson:         "Wilson score with continuity correction scaled to the measure's range",
	metrics.MethodRange:                 "the measure's range (values that do not vary)",
	metrics.MethodCornishFisher:         "Cornish–Fisher approximation of the bootstrap",
	metrics.MethodWilsonDisagreement:    "Wilson score of the disagreement",
	metrics.MethodBCaWilsonLower:        "BCa bootstrap, its lower end extended to the Wilson score of the disagreement",
	metrics.MethodMcNemarInverted:       "inverted from the exact McNemar test (it excludes 0 exactly when the test rejects)",
	metrics.MethodRuleOfThree:           "the rule of three (every difference equal: the share of queries that could differ, times the range)",
	metrics.PMethodNoDifference:         "none: every paired difference is 0 (p = 1)",
	metrics.MethodPPIJackknife:          "PPI++ with the jackknife standard error",
	compare.PMethodPPIJackknife:         "t test of the PPI++ estimate with the jackknife standard error",
	metrics.MethodPPIStratified:         "PPI++ stratified by locale (each locale's jackknife standard error, Welch–Satterthwaite t)",
	compare.PMethodPPIStratified:        "t test of the PPI++ estimate stratified by locale (Welch–Satterthwaite degrees of freedom)",
	metrics.PMethodMcNemar:              "exact McNemar",
	metrics.PMethodSignFlipExact:        "exact sign-flip",
	metrics.PMethodRandomization:        "sign-flip randomization",
	metrics.PMethodSaddlepoint:          "saddlepoint approximation of the sign-flip distribution",
	metrics.MethodClusterT:              "t with the cluster-robust standard error (queries in families)",
	metrics.MethodClusterHull:           "t with the cluster-robust standard error, widened to the interval over the queries as if independent where that reaches further (queries in families)",
	metrics.PMethodClusterSignFlipExact: "exact sign-flip of the clusters' sums",
	metrics.PMethodClusterRandomization: "sign-flip randomization of the clusters' sums",
	metrics.PMethodClusterSaddlepoint:   "saddlepoint approximation of the clusters' sign-flip distribution",

	// Human-corrected estimates over queries in families.
	metrics.MethodPPIClusterJackknife:            "PPI++ over queries in families (delete-one-cluster jackknife standard error, t with labelled clusters − 1 df)",
	compare.PMethodPPIClusterJackknife:           "t test of the PPI++ estimate over queries in families (delete-one-cluster jackknife standard error)",
	metrics.MethodPPIStratifiedClusterJackknife:  "PPI++ stratified by locale over queries in families (delete-one-cluster jackknife of the weighted sum, t with labelled clusters − 1 df)",
	compare.PMethodPPIStratifiedClusterJackknife: "t test of the PPI++ estimate stratified by locale over queries in families (delete-one-cluster jackknife standard error)",

	// A corrected difference whose labelled queries do not vary.
	compare.PMethodHumanSignFlipExact:                "exact sign-flip test of the labelled queries' human paired differences (their corrected difference does not vary: p = 2·0.5^n when all n are equal)",
	compare.PMethodHumanSignFlipRandomization:        "sign-flip randomization of the labelled queries' human paired differences (their corrected difference does not vary)",
	compare.PMethodHumanClusterSignFlipExact:         "exact sign-flip test of the clusters' sums of the labelled queries' human paired differences (their corrected difference does not vary)",
	compare.PMethodHumanClusterSignFlipRandomization: "sign-flip randomization of the clusters' sums of the labelled queries' human paired differences (their corrected difference does not vary)",
}

// methodText is method id m in words (methodWords; an id not listed as it
// is), with the resamples and seed of the statistics st when it draws them.
func methodText(st comparereport.Statistics, m string) string {
	w, ok := methodWords[m]
	if !ok {
		w = m
	}
	if resampledMethods[m] {
		w += fmt.Sprintf(" (%s resamples, seed %d)", Count(st.Resamples), st.Seed)
	}
	return w
}

// resampledMethods are those that draw the document's resamples.
var resampledMethods = map[string]bool{metrics.MethodBCa: true, metrics.MethodBCaWilsonLower: true, metrics.MethodPercentile: true, metrics.PMethodRandomization: true, metrics.PMethodClusterRandomization: true,
	compare.PMethodHumanSignFlipRandomization: true, compare.PMethodHumanClusterSignFlipRandomization: true}

// methodLines say how the document's intervals and p-values were computed,
// from what the document states: each interval method with the measures it
// was used for (in the strategies' summaries and the paired differences),
// each test with its measures, the adjustment and alpha. It states; it
// computes nothing.
func methodLines(d *comparereport.Document) []string {
	st := d.Statistics
	words := func(m string) string { return methodText(st, m) }
	// method -> measure keys, in the order the methods are first met.
	type use struct {
		method string
		keys   []string
	}
	collect := func(add func(func(method, key string))) []use {
		var out []use
		add(func(method, key string) {
			if method == "" {
				return
			}
			i := slices.IndexFunc(out, func(u use) bool { return u.method == method })
			if i < 0 {
				out = append(out, use{method: method})
				i = len(out) - 1
			}
			if !slices.Contains(out[i].keys, key) {
				out[i].keys = append(out[i].keys, key)
			}
		})
		for i := range out {
			slices.SortStableFunc(out[i].keys, func(a, b string) int { return keyRank(a) - keyRank(b) })
		}
		return out
	}
	text := func(us []use) string {
		var parts []string
		for _, u := range us {
			labels := make([]string, len(u.keys))
			for i, k := range u.keys {
				labels[i] = MeasureLabel(k, d.K)
			}
			parts = append(parts, words(u.method)+" for "+strings.Join(labels, ", "))
		}
		return strings.Join(parts, "; ")
	}
	means := collect(func(add func(string, string)) {
		for _, name := range d.Order {
			s := d.Strategies[name]
			for _, key := range metrics.GradedKeys {
				if m, ok := s.Metrics[key]; ok {
					add(m.CI95Method, key)
				}
			}
		}
	})
	diffs := collect(func(add func(string, string)) {
		for _, p := range d.Paired {
			add(p.CI95Method, p.Metric)
		}
		if l := d.RecommendationTest; l != nil {
			add(l.CI95Method, l.Metric)
		}
	})
	tests := collect(func(add func(string, string)) {
		for _, p := range d.Paired {
			add(p.PValueMethod, p.Metric)
		}
		if l := d.RecommendationTest; l != nil {
			add(l.PValueMethod, l.Metric)
		}
	})
	var out []string
	if l := d.ClustersLine(func(s string) string { return s }); l != "" { // the page escapes every text
		out = append(out, l)
	}
	if len(means) > 0 {
		out = append(out, "95% intervals of the means: "+text(means)+".")
	}
	if len(diffs) > 0 {
		out = append(out, "95% intervals of the paired differences: "+text(diffs)+".")
	}
	if len(tests) > 0 {
		adj := st.PAdjustment
		if adj == comparereport.PAdjustment {
			adj = "Holm within each measure across the strategies"
		}
		out = append(out, "p-values: "+text(tests)+"; adjusted by "+adj+"; significant when the adjusted p < "+format.Full(st.Alpha.V())+".")
	}
	if !st.Resampled {
		out = append(out, fmt.Sprintf("Not resampled: %s queries × %s resamples exceeds the budget of %s.", Count(d.Queries.WithRelevant), Count(st.Resamples), Count(st.ResamplingBudget)))
	}
	return out
}

// keyRank orders measure keys as the registry does (others last).
func keyRank(key string) int {
	if i := slices.Index(metrics.GradedKeys, key); i >= 0 {
		return i
	}
	return len(metrics.GradedKeys)
}
