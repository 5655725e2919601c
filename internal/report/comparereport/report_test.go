package comparereport

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/input/trecfile"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/trend"
)

func compareFixture(t *testing.T, names ...string) *compare.Result {
	t.Helper()
	return compareFixtureResamples(t, 200, names...)
}

func compareFixtureResamples(t *testing.T, resamples int, names ...string) *compare.Result {
	t.Helper()
	q, err := trecfile.ParseQrels(context.Background(), strings.NewReader("q1 0 g 3\nq2 0 g 2\nq3 0 g 3\nq3 0 h 1\n"), "qrels.txt")
	require.NoError(t, err)
	var in []compare.Input
	for i, name := range names {
		docs := []string{"x", "g"}
		if i%2 == 1 {
			docs = []string{"g", "h"}
		}
		in = append(in, compare.Input{Name: name, Run: &trecfile.Run{File: name + ".run", K: 10, Queries: []trecfile.RunQuery{
			{ID: "q1", Docs: docs}, {ID: "q2", Docs: docs}, {ID: "q3", Docs: docs},
		}}})
	}
	res, err := compare.Compare(q, in, compare.Options{K: 2, Gain: metrics.GainExp, RelevantLevel: 2, Resamples: resamples, Seed: 1})
	require.NoError(t, err)
	return res
}

func keys(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func TestCompareJSONSchema(t *testing.T) {
	res := compareFixture(t, "ann", "hybrid")
	var b bytes.Buffer
	require.NoError(t, New(res).WriteJSON(&b))
	var doc map[string]any
	require.NoError(t, json.Unmarshal(b.Bytes(), &doc))
	assert.Equal(t, []string{"decision", "gain", "gates", "hybrids", "judged_at_k_threshold", "judged_only", "k", "max_dcg_at_k", "paired", "primary", "queries", "recommendation_test", "recommended", "relevance_scale", "relevant_level", "relevant_level_fallback", "rerankers", "scenarios", "schema", "statistics", "strategies", "verdict"}, keys(doc))
	assert.Equal(t, "retrieval-gate/compare@1", doc["schema"])
	assert.Equal(t, map[string]any{"at_relevant_level": 3.0, "judged": 3.0, "with_relevant": 3.0}, doc["queries"])
	s := doc["strategies"].(map[string]any)["hybrid"].(map[string]any)
	assert.Equal(t, []string{"best_queries", "failed_queries", "judged_at_k", "metrics", "missing_from_run", "n", "queries_by_measure", "query_values", "relevance_buckets", "relevance_by_position", "relevance_by_position_n", "relevance_distribution", "relevance_distribution_n", "worst_queries"}, keys(s))
	assert.Equal(t, []string{"highly_relevant", "n", "not_relevant", "relevant_plus"}, keys(s["relevance_buckets"].(map[string]any)))
	byM := s["queries_by_measure"].(map[string]any)
	assert.Len(t, byM, metrics.NumGraded)
	assert.Equal(t, map[string]any{"best": s["best_queries"], "worst": s["worst_queries"]}, byM["dcg_at_k"], "the primary's lists")
	// By rank over the judged documents, n each: ann's rank 1 (x) is judged
	// nowhere, so undefined (null), not 0; rank 2 is g in q1..q3 (3, 2, 3).
	ann := doc["strategies"].(map[string]any)["ann"].(map[string]any)
	assert.Equal(t, []any{nil, 8.0 / 3}, ann["relevance_by_position"])
	assert.Equal(t, []any{0.0, 3.0}, ann["relevance_by_position_n"])
	assert.InDelta(t, 11.417, doc["max_dcg_at_k"], 5e-4, "k = 2, levels up to 3, exp gain: 7 + 7/log2(3)")
	assert.Equal(t, []string{"low", "mean", "n"}, keys(s["judged_at_k"].(map[string]any)))
	assert.InDelta(t, 0.9, doc["judged_at_k_threshold"], 0)
	assert.Equal(t, false, doc["judged_only"])
	ms := s["metrics"].(map[string]any)
	assert.Len(t, ms, metrics.NumGraded)
	assert.Equal(t, []string{"ci95", "ci95_method", "mean", "n", "unreliable"}, keys(ms["dcg_at_k"].(map[string]any)))
	assert.Equal(t, []string{"0", "1", "2", "3", "unjudged"}, keys(s["relevance_distribution"].(map[string]any)))
	p := doc["paired"].([]any)[0].(map[string]any)
	assert.Equal(t, []string{"baseline", "ci95", "ci95_method", "delta", "metric", "n", "note", "p_value", "p_value_method", "p_value_unadjusted", "primary", "significant", "strategy", "unreliable"}, keys(p))
	assert.GreaterOrEqual(t, p["p_value"], p["p_value_unadjusted"], "Holm never lowers a p-value")
	lt := doc["recommendation_test"].(map[string]any)
	assert.Equal(t, []string{"best", "ci95", "ci95_method", "delta", "metric", "n", "note", "p_value", "p_value_method", "p_value_unadjusted", "primary", "runner_up", "significant", "unreliable"}, keys(lt))
	assert.Equal(t, "hybrid", lt["best"])
	assert.Equal(t, "ann", lt["runner_up"])
	assert.Equal(t, "dcg_at_k", lt["metric"])
	assert.Equal(t, p["p_value"], lt["p_value"], "the leaders are the paired comparison against the baseline here")

	// One run: no comparison behind the recommendation.
	b.Reset()
	require.NoError(t, New(compareFixture(t, "only")).WriteJSON(&b))
	doc = nil
	require.NoError(t, json.Unmarshal(b.Bytes(), &doc))
	assert.Contains(t, doc, "recommendation_test")
	assert.Nil(t, doc["recommendation_test"])
	// Sorted keys in the text itself, at every level.
	assert.Less(t, strings.Index(b.String(), `"gain"`), strings.Index(b.String(), `"k"`))
	b.Reset()
	require.NoError(t, New(res).WriteJSON(&b))
	assertSortedKeys(t, b.Bytes())
}

func TestCompareMarkdownEscapes(t *testing.T) {
	evil := "a|b <img src=x> `x` @team #1 \"q\"\n[l](u)"
	res := compareFixture(t, "plain", evil)
	var b bytes.Buffer
	require.NoError(t, New(res).Markdown(&b))
	md := b.String()
	assert.NotContains(t, md, "<img")
	assert.NotContains(t, md, "`x`")
	assert.NotContains(t, md, "@team")
	assert.Contains(t, md, format.EscapeMarkdown(evil))
	// No Mermaid chart: it could show neither intervals nor a legend (issue 13).
	assert.NotContains(t, md, "```mermaid")

	var txt bytes.Buffer
	require.NoError(t, New(res).Text(&txt))
	assert.NotContains(t, txt.String(), "\"q\"\n[l]")
}

func TestComparePerQueryLines(t *testing.T) {
	res := compareFixture(t, "a", "b")
	var b bytes.Buffer
	require.NoError(t, PerQuery(&b, res))
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	require.Len(t, lines, 6)
	var first struct {
		Strategy string             `json:"strategy"`
		QueryID  string             `json:"query_id"`
		Metrics  map[string]float64 `json:"metrics"`
	}
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &first))
	assert.Equal(t, "a", first.Strategy)
	assert.Equal(t, "q1", first.QueryID)
	assert.Len(t, first.Metrics, metrics.NumGraded)
	// "x", "g" with g of relevance 3 at rank 2: dcg = 7 / log2(3).
	assert.InDelta(t, 7/1.584962500721156, first.Metrics["dcg_at_k"], 1e-12)
	assert.True(t, strings.HasPrefix(lines[0], `{"judged_at_k":0.5,"metrics":{"dcg_at_k":`), "x is unjudged: judged@k 0.5")
}

// Every report says how the intervals and p-values were computed; each interval
// and test names its own method, and above metrics.ExactResamplingBudget
// queries × resamples the approximations are stated.
func TestCompareMethodReported(t *testing.T) {
	for _, tc := range []struct {
		name      string
		resamples int
		resampled bool
		ci, p     []any
		text      string
	}{
		// 3 queries: below 30 the intervals that are not Wilson's are hall-t
		// (Cornish–Fisher replaces BCa only from 30, metrics.TestColumnCI95).
		// Paired differences below 50 queries: hall-t united with the betting
		// interval; the rule of three where every difference is 0 (and no test).
		{"resampling", 200, true, []any{metrics.MethodBoundedWilson, metrics.MethodHallT, metrics.MethodHallTBetting, metrics.MethodRuleOfThree, metrics.MethodWilson}, []any{metrics.PMethodMcNemar, metrics.PMethodSignFlipExact, metrics.PMethodNoDifference},
			"95% CIs: Wilson (continuity-corrected) for 0/1 series, else hall-t (t united with Hall's skewness-corrected t) below 30 queries, BCa bootstrap (200 resamples, seed 1) from 30, widened to the measure's range when the values do not vary; paired differences: for 0/1 measures inverted from the exact McNemar test (it excludes 0 exactly when the test rejects), the rule of three when every difference is equal, else hall-t united with the betting interval of a bounded mean (coverage at least 95% whatever the distribution) below 50 queries or 15 non-zero differences, hall-t from there; p: exact McNemar for 0/1 measures, exact sign-flip where the paired differences share a lattice, else Monte Carlo sign-flip (200 resamples), none where every difference is 0 (p = 1)"},
		// 3 queries × 10,000,000 resamples = 3·10⁷ > 2·10⁷.
		{"approximation", 10_000_000, false, []any{metrics.MethodBoundedWilson, metrics.MethodHallT, metrics.MethodHallTBetting, metrics.MethodRuleOfThree, metrics.MethodWilson}, []any{metrics.PMethodMcNemar, metrics.PMethodSignFlipExact, metrics.PMethodNoDifference},
			"Cornish-Fisher approximation of the bootstrap, because 3 queries x 10000000 resamples exceeds 20000000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := compareFixtureResamples(t, tc.resamples, "ann", "hybrid")
			require.Equal(t, tc.resampled, res.Exact)
			var b bytes.Buffer
			require.NoError(t, New(res).WriteJSON(&b))
			var doc struct {
				Statistics map[string]any `json:"statistics"`
			}
			require.NoError(t, json.Unmarshal(b.Bytes(), &doc))
			assert.Equal(t, map[string]any{
				"resampled": tc.resampled, "ci95_methods": tc.ci, "p_value_methods": tc.p,
				"resamples": float64(tc.resamples), "seed": 1.0, "resampling_budget": float64(metrics.ExactResamplingBudget),
				"p_adjustment": "holm-within-measure", "alpha": 0.05,
			}, doc.Statistics)

			var txt, md bytes.Buffer
			require.NoError(t, New(res).Text(&txt))
			require.NoError(t, New(res).Markdown(&md))
			assert.Contains(t, txt.String(), tc.text)
			assert.Contains(t, md.String(), tc.text)
			// Approximations are also flagged where the intervals are shown.
			assert.Equal(t, !tc.resampled, strings.Contains(txt.String(), "(± is half the width of the 95% CI; large input: approximated, not resampled"))
			assert.Equal(t, !tc.resampled, strings.Contains(md.String(), "> **Large input:** the intervals and p-values below are large-sample approximations"))
		})
	}
}

// An interval whose method covers less than 0.95 at its n is marked unreliable in every report (3 queries here;
// the paired differences' hall-t-betting interval covers at every n and is not), and
// every interval, test and measure carries its n and method in the JSON.
func TestCompareUnreliableMarked(t *testing.T) {
	res := compareFixture(t, "ann", "hybrid")
	doc := New(res)
	var js, txt, md bytes.Buffer
	require.NoError(t, doc.WriteJSON(&js))
	require.NoError(t, doc.Text(&txt))
	require.NoError(t, doc.Markdown(&md))
	var raw struct {
		Paired     []map[string]any `json:"paired"`
		Strategies map[string]struct {
			Metrics map[string]map[string]any `json:"metrics"`
		} `json:"strategies"`
	}
	require.NoError(t, json.Unmarshal(js.Bytes(), &raw))
	for _, key := range metrics.GradedKeys {
		m := raw.Strategies["ann"].Metrics[key]
		// A 0/1 measure's interval (continuity-corrected Wilson) covers at every n.
		assert.Equal(t, m["ci95_method"] != metrics.MethodWilson, m["unreliable"], key)
		assert.NotEmpty(t, m["ci95_method"], key)
		assert.Greater(t, m["n"], 0.0, key)
	}
	for _, p := range raw.Paired {
		assert.Equal(t, false, p["unreliable"])
		// hall-t united with the betting interval; the rule of three where
		// every difference is equal; inverted from McNemar's test for hit.
		assert.Contains(t, []string{metrics.MethodHallTBetting, metrics.MethodRuleOfThree, metrics.MethodMcNemarInverted}, p["ci95_method"])
		assert.NotEmpty(t, p["p_value_method"])
		assert.Contains(t, p, "n")
	}
	for _, out := range []string{txt.String(), md.String()} {
		assert.Contains(t, out, "† unreliable: this interval's method covers less than 95% at this n in simulation")
		assert.Contains(t, out, "The recommendation rests on the primary measure DCG@2 alone (--primary)")
		assert.Contains(t, out, "relevance scale found in the qrels: 1..3")
	}
}

// The document reads back to itself: write, read, write gives the same bytes,
// and the renderers give the same reports from the read document (but for the
// findings and run notes, which the JSON does not carry).
func TestDocumentRoundTrip(t *testing.T) {
	for _, names := range [][]string{{"only"}, {"ann", "hybrid"}, {"a", "b", "c"}} {
		t.Run(strings.Join(names, ","), func(t *testing.T) {
			doc := New(compareFixture(t, names...))
			var first bytes.Buffer
			require.NoError(t, doc.WriteJSON(&first))
			back, err := Read(bytes.NewReader(first.Bytes()))
			require.NoError(t, err)
			var second bytes.Buffer
			require.NoError(t, back.WriteJSON(&second))
			assert.Equal(t, first.String(), second.String())
			assert.Equal(t, doc.Order, back.Order)
			assert.Equal(t, doc.Baseline, back.Baseline)
			assert.Equal(t, doc.ChartMax, back.ChartMax)
			assert.True(t, back.ReadBack)
			// Read back, the findings are unknown and the Markdown says so; else
			// it is the original's.
			doc.Findings, doc.ReadBack = nil, true
			var a, b bytes.Buffer
			require.NoError(t, doc.Markdown(&a))
			require.NoError(t, back.Markdown(&b))
			assert.Equal(t, a.String(), b.String())
			assert.Contains(t, b.String(), "### Diagnosis\n\nNot shown: "+NotCarriedLine+".\n")
		})
	}
	_, err := Read(strings.NewReader(`{"schema": "retrieval-gate/aggregates@1"}`))
	require.ErrorContains(t, err, `schema "retrieval-gate/aggregates@1" is not "retrieval-gate/compare@1"`)
	_, err = Read(strings.NewReader(`{`))
	require.Error(t, err)
}

// Full float64 precision in the JSON: a mean of 2/3 is written as the shortest
// form that reads back to the same float64, not rounded.
func TestJSONFullPrecision(t *testing.T) {
	doc := New(compareFixture(t, "ann", "hybrid"))
	var b bytes.Buffer
	require.NoError(t, doc.WriteJSON(&b))
	back, err := Read(bytes.NewReader(b.Bytes()))
	require.NoError(t, err)
	for name, s := range doc.Strategies {
		for key, m := range s.Metrics {
			assert.Equal(t, m.Mean.V(), back.Strategies[name].Metrics[key].Mean.V(), "%s %s", name, key)
		}
	}
	assert.Contains(t, b.String(), "2.6666666666666665", "relevance at rank 1 of hybrid: 8/3, unrounded")
}

// Every finding kind has its sentence, with the test behind it.
func TestFindingSentences(t *testing.T) {
	d := &Document{K: 10, Primary: compare.Primary}
	sig := compare.Paired{Delta: 0.4, CI: iv(0.2, 0.6), PHolm: 0.001, Significant: true, N: 50}
	neg := compare.Paired{Delta: -0.4, CI: iv(-0.6, -0.2), PHolm: 0.001, Significant: true, N: 50}
	ns := compare.Paired{Delta: 0.01, CI: iv(-0.1, 0.12), PHolm: 0.6, N: 50}
	for _, tc := range []struct {
		f    compare.Finding
		want string
	}{
		{compare.Finding{Kind: compare.HybridVsDense, A: "hybrid", B: "ann", Test: sig}, "hybrid is clearly above ann (Δ DCG@10 = +0.400, 95% CI [+0.200, +0.600], Holm p = 0.0010, n = 50): judging by the names (hybrid vs. dense/ANN), adding keyword matching helps on these queries."},
		{compare.Finding{Kind: compare.HybridVsDense, A: "hybrid", B: "ann", Test: ns}, "hybrid is not significantly above ann (Δ DCG@10 = +0.010, 95% CI [-0.100, +0.120], Holm p = 0.6000, n = 50): judging by the names, adding keyword matching to dense retrieval shows no clear benefit"},
		{compare.Finding{Kind: compare.HybridVsLexical, A: "hybrid", B: "bm25", Test: sig}, "adding vector search helps"},
		{compare.Finding{Kind: compare.HybridVsLexical, A: "hybrid", B: "bm25", Test: ns}, "adding vector search to full text shows no clear benefit"},
		{compare.Finding{Kind: compare.HybridVsDense, A: "hybrid", B: "ann", Test: neg}, "hybrid is significantly below ann (Δ DCG@10 = -0.400, 95% CI [-0.600, -0.200], Holm p = 0.0010, n = 50): judging by the names, adding keyword matching to dense retrieval hurts"},
		{compare.Finding{Kind: compare.HybridVsLexical, A: "hybrid", B: "bm25", Test: neg}, "hybrid is significantly below bm25 (Δ DCG@10 = -0.400"},
		{compare.Finding{Kind: compare.Reranker, A: "x+rerank", B: "x", Test: sig}, "The reranker helps significantly: x+rerank beats x"},
		{compare.Finding{Kind: compare.Reranker, A: "x+rerank", B: "x", Test: neg}, "The reranker hurts: x+rerank is significantly below x"},
		{compare.Finding{Kind: compare.Reranker, A: "x+rerank", B: "x", Test: ns}, "The reranker shows no significant gain: x+rerank vs x"},
		{compare.Finding{Kind: compare.MissingQueries, A: "x", Count: 1, N: 2}, "x has no results for 1 of the 2 evaluated queries; they score 0."},
	} {
		assert.Contains(t, d.finding(tc.f, identity), tc.want)
	}
}

func iv(lo, hi float64) metrics.Interval {
	return metrics.Interval{Lo: lo, Hi: hi, N: 50, Method: metrics.MethodBCa}
}

// assertSortedKeys checks that every JSON object in js lists its keys in order.
func assertSortedKeys(t *testing.T, js []byte) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(js))
	type frame struct {
		object bool
		last   string
		key    bool // the next string token is a key
	}
	var stack []frame
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		top := func() *frame { return &stack[len(stack)-1] }
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{', '[':
				if len(stack) > 0 && top().object {
					top().key = true
				}
				stack = append(stack, frame{object: v == '{', key: v == '{'})
				continue
			default:
				stack = stack[:len(stack)-1]
				if len(stack) > 0 && top().object {
					top().key = true
				}
				continue
			}
		case string:
			if len(stack) > 0 && top().object && top().key {
				assert.Less(t, top().last, v, "keys out of order")
				top().last, top().key = v, false
				continue
			}
		}
		if len(stack) > 0 && top().object {
			top().key = true
		}
	}
}

// The Markdown's paired comparisons show the primary measure's rows, one per
// strategy against the baseline, and collapse the other measures' rows below
// them; the line on the primary measure is printed once.
func TestCompareMarkdownPairedPrimaryVisible(t *testing.T) {
	doc := New(compareFixture(t, "ann", "hybrid", "dense"))
	var md bytes.Buffer
	require.NoError(t, doc.Markdown(&md))
	s := md.String()
	assert.Equal(t, 1, strings.Count(s, "The recommendation rests on the primary measure"))
	i := strings.Index(s, "### Paired comparisons against ann\n")
	require.GreaterOrEqual(t, i, 0)
	section := s[i:]
	section = section[:strings.Index(section, "</details>")]
	// Two strategies against the baseline, on every measure but the primary.
	others := 2 * (len(metrics.QueryMeasures) - 1)
	open := strings.Index(section, fmt.Sprintf("<details><summary>The other measures (secondary tests): %d paired comparisons</summary>", others))
	require.Positive(t, open, section)
	visible, collapsed := section[:open], section[open:]
	assert.Contains(t, visible, "On the primary measure, "+doc.Primary+" (")
	assert.Contains(t, visible, "| strategy | n | Δ mean | 95% CI of Δ | p (Holm) | significant |\n")
	for _, name := range []string{"hybrid", "dense"} {
		assert.Equal(t, 1, strings.Count(visible, "\n| "+name+" | "), name)
		assert.Equal(t, len(metrics.QueryMeasures)-1, strings.Count(collapsed, "\n| "+name+" | "), name)
	}
	assert.NotContains(t, collapsed, "| "+doc.Primary+" |")
	for _, m := range metrics.QueryMeasures {
		if m.Key != doc.Primary {
			assert.Contains(t, collapsed, "| hybrid | "+m.Key+" | ", m.Key)
		}
	}
}

// The trend of a run without gates shows the recommended strategy's primary
// measure; with no clear winner, the best one's on the recommendation test,
// else the first strategy's.
func TestTrendMeasuresNoClearWinner(t *testing.T) {
	d := &Document{Recommended: "dense", Primary: "dcg_at_k", Order: []string{"bm25", "dense"}}
	assert.Equal(t, []trend.Measure{{Group: "strategy:dense", Key: "dcg_at_k"}}, d.TrendMeasures())
	d.Recommended = compare.NoClearWinner
	d.RecommendationTest = &Leader{Best: "dense"}
	assert.Equal(t, []trend.Measure{{Group: "strategy:dense", Key: "dcg_at_k"}}, d.TrendMeasures())
	d.RecommendationTest = nil
	assert.Equal(t, []trend.Measure{{Group: "strategy:bm25", Key: "dcg_at_k"}}, d.TrendMeasures())
}

// With queries in clusters each --per-query line carries its query's cluster
// (null: a cluster of its own), and the cluster-level paired tests are
// recomputed from the file alone; without clusters the lines have no
// "cluster" key.
func TestComparePerQueryClusters(t *testing.T) {
	var qr strings.Builder
	var qa, qb []trecfile.RunQuery
	of := map[string]string{}
	for i := range 30 {
		id := fmt.Sprintf("q%02d", i)
		fmt.Fprintf(&qr, "%s 0 g %d\n%s 0 h 1\n", id, 1+i%3, id)
		qa = append(qa, trecfile.RunQuery{ID: id, Docs: []string{"g", "h"}})
		docs := []string{"h", "g"}
		if i%4 == 0 {
			docs = []string{"g", "x"}
		}
		qb = append(qb, trecfile.RunQuery{ID: id, Docs: docs})
		if i < 27 { // the last three are clusters of their own
			of[id] = fmt.Sprintf("card <%d>", i/3)
		}
	}
	q, err := trecfile.ParseQrels(context.Background(), strings.NewReader(qr.String()), "qrels.txt")
	require.NoError(t, err)
	in := []compare.Input{{Name: "a", Run: &trecfile.Run{File: "a", K: 10, Queries: qa}}, {Name: "b", Run: &trecfile.Run{File: "b", K: 10, Queries: qb}}}
	o := compare.Options{K: 2, Gain: metrics.GainExp, RelevantLevel: 2, Resamples: 200, Seed: 1}
	plain, err := compare.Compare(q, in, o)
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, PerQuery(&b, plain))
	assert.NotContains(t, b.String(), `"cluster"`)
	assert.True(t, strings.HasPrefix(b.String(), `{"judged_at_k":`))

	o.Clusters = of
	res, err := compare.Compare(q, in, o)
	require.NoError(t, err)
	b.Reset()
	require.NoError(t, PerQuery(&b, res))
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	require.Len(t, lines, 60)
	assert.True(t, strings.HasPrefix(lines[0], `{"cluster":"card <0>","judged_at_k":`), lines[0])
	assert.True(t, strings.HasPrefix(lines[29], `{"cluster":null,"judged_at_k":`), lines[29])
	// From the file alone: each query's cluster (null: its own) and the
	// strategies' values give the cluster-level tests the reports print (a
	// measure counts the queries it defines: null values are left out).
	type line struct {
		Cluster  *string             `json:"cluster"`
		Metrics  map[string]*float64 `json:"metrics"`
		QueryID  string              `json:"query_id"`
		Strategy string              `json:"strategy"`
	}
	val := map[string]map[string]map[string]*float64{} // strategy -> query -> metrics
	keys := map[string]string{}
	for _, l := range lines {
		var x line
		require.NoError(t, json.Unmarshal([]byte(l), &x))
		if val[x.Strategy] == nil {
			val[x.Strategy] = map[string]map[string]*float64{}
		}
		val[x.Strategy][x.QueryID] = x.Metrics
		keys[x.QueryID] = ""
		if x.Cluster != nil {
			keys[x.QueryID] = "c:" + *x.Cluster
		}
	}
	ids := slices.Sorted(maps.Keys(keys))
	for _, p := range res.Paired {
		var d []float64
		var ck []string
		for _, id := range ids {
			a, b := val[p.Strategy][id][p.Metric], val[p.Baseline][id][p.Metric]
			if a == nil || b == nil {
				continue
			}
			d, ck = append(d, *a-*b), append(ck, keys[id])
		}
		idx, G := metrics.ClusterIndex(ck)
		pv, method := metrics.ClusterPairedP(d, idx, G, o.Resamples, o.Seed)
		assert.Equal(t, p.PMethod, method, p.Metric)
		assert.InDelta(t, p.P, pv, 1e-12, p.Metric)
		assert.Equal(t, G, p.Clusters, p.Metric)
		assert.Equal(t, len(d), p.N, p.Metric)
	}
	assert.Equal(t, 12, res.Paired[0].Clusters, "9 cards and 3 queries of their own")
}
