package comparereport

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

// Every scenario has its finding, its action and its rule in words, with the
// numbers the domain carries.
func TestScenarioSentences(t *testing.T) {
	d := &Document{K: 10, Primary: compare.Primary, Statistics: Statistics{Alpha: 0.05}}
	lex := &Paired{Strategy: "bm25", Baseline: "dense", Metric: "dcg_at_k", N: 120, Delta: 1.035, CI95: [2]format.Float{0.41, 1.66}, PValue: 0.0025, Significant: true, Primary: true}
	ns := &Paired{Strategy: "hybrid", Baseline: "ann", Metric: "dcg_at_k", N: 120, Delta: 0.05, CI95: [2]format.Float{-0.2, 0.3}, PValue: 0.61, Primary: true}
	for _, tc := range []struct {
		s                   Scenario
		found, action, rule string
	}{
		{Scenario{Code: "hybrid-beats-dense", Strategy: "hybrid", Versus: "ann", Test: lex},
			"Hybrid significantly better than dense/ANN: hybrid beats ann", "Use hybrid in production.", "a hybrid strategy significantly above"},
		{Scenario{Code: "dense-matches-hybrid", Strategy: "hybrid", Versus: "ann", Test: ns},
			"Dense/ANN and hybrid are about equal: hybrid vs ann (Δ DCG@10 = +0.050", "Either works; dense/ANN is simpler", "is not significant (Holm-adjusted p ≥ 0.05)"},
		// The run of the issue: lexical beat dense by +1.035 DCG@10, Holm p 0.0025.
		{Scenario{Code: "lexical-beats-dense", Strategy: "bm25", Versus: "dense", Test: lex},
			"Full text significantly better than dense/ANN: bm25 beats dense (Δ DCG@10 = +1.035, 95% CI [+0.410, +1.660], Holm p = 0.0025, n = 120).",
			"The embedding model may not capture your domain: fine-tune it, or use full text", "a full-text (lexical) strategy significantly above (Holm-adjusted p < 0.05 on DCG@10"},
		{Scenario{Code: "reranker-helps", Strategy: "x+rerank", Versus: "x", Test: lex},
			"The reranker helps significantly: x+rerank beats x", "Enable the reranker if the latency budget allows.", "a strategy with the reranker significantly above"},
		{Scenario{Code: "wide-intervals", Strategy: "b", Queries: 12, RelativeHalfWidth: 0.25, QueriesForWidth: 75, QueriesToSeparate: 240, Test: ns},
			"The intervals are wide: 12 evaluated queries; DCG@10 of b is ±25% of its mean.",
			"Add queries: about 75 evaluated queries bring the widest interval to ±10% of its mean (the width falls as 1/√n); about 240 detect the observed difference between hybrid and ann (Δ DCG@10 = +0.050) with 80% power at α = 0.05",
			"fewer than 30 evaluated queries, or a DCG@10 interval wider than ±10% of its mean"},
		{Scenario{Code: "all-low", Strategy: "a", Measure: "ndcg_at_k", Threshold: 0.3, Value: 0.21},
			"Every strategy scores low: the highest upper 95% bound of nDCG@10 is 0.210 (a), below 0.300.",
			"Check data quality and relevance", "low means nDCG@10 below 0.300 for every strategy, even at the upper end of its 95% interval"},
	} {
		got := d.scenario(tc.s, identity)
		assert.NotContains(t, got.Found, "not shown equal", tc.s.Code)
		assert.Contains(t, got.Found, tc.found, tc.s.Code)
		assert.Contains(t, got.Action, tc.action, tc.s.Code)
		assert.Contains(t, got.Rule, tc.rule, tc.s.Code)
	}
}

// Dense ≈ hybrid under wide intervals says the two were not separated, not
// shown equal.
func TestDenseMatchesHybridUnderWideIntervals(t *testing.T) {
	ns := &Paired{Strategy: "hybrid", Baseline: "ann", Metric: "dcg_at_k", N: 12, Delta: 0.05, CI95: [2]format.Float{-0.9, 1}, PValue: 0.61, Primary: true}
	d := &Document{K: 10, Primary: compare.Primary, Statistics: Statistics{Alpha: 0.05},
		Scenarios: []Scenario{{Code: "dense-matches-hybrid", Strategy: "hybrid", Versus: "ann", Test: ns}, {Code: "wide-intervals", Queries: 12, QueriesForWidth: 90}}}
	assert.Contains(t, d.ScenarioTexts()[0].Found, "The intervals are wide (below): not separated by these queries, which is not shown equal.")
}

// The lexical-beats-dense run in every format, and the scale of DCG and the
// buckets with their n; the diagnosis no longer repeats a scenario's pair.
func TestScenariosInEveryFormat(t *testing.T) {
	res := compareFixture(t, "ann", "hybrid")
	d := New(res)
	lex := paired(&compare.Paired{Strategy: "bm25", Baseline: "dense", Metric: "dcg_at_k", N: 120, Delta: 1.035, CI: iv(0.41, 1.66), PHolm: 0.0025, Significant: true, Primary: true})
	d.Scenarios = append(d.Scenarios, Scenario{Code: "lexical-beats-dense", Strategy: "bm25", Versus: "dense", Test: &lex})
	var text, md, js bytes.Buffer
	require.NoError(t, d.Text(&text))
	require.NoError(t, d.Markdown(&md))
	require.NoError(t, d.WriteJSON(&js))
	for name, out := range map[string]string{"text": text.String(), "markdown": md.String()} {
		assert.Contains(t, out, "Full text significantly better than dense/ANN: bm25 beats dense (Δ DCG@2 = +1.035", name)
		assert.Contains(t, out, "The embedding model may not capture your domain", name)
		assert.Contains(t, out, "DCG@2 (of 11.417)", name)
		assert.Contains(t, out, "DCG@2 is out of 11.417, the maximum possible: 2 results of relevance 3 with the exp (2^rel - 1) gain", name)
		assert.Contains(t, out, "highly relevant (3)", name)
		// Mean relevance with its n of queries, over the judged results (hall-t at n = 3).
		assert.Contains(t, out, "2.667 ±1.500 (3)", name)
		assert.Contains(t, out, "the buckets are shares of the n judged top-2 documents", name)
		assert.NotContains(t, out, "dcg@", name)
		// The hybrid vs ann finding is said once, as its scenario.
		assert.Equal(t, 1, strings.Count(out, "hybrid vs ann"), name)
		assert.NotContains(t, out, "hybrid is not significantly above ann", name)
	}
	assert.Contains(t, js.String(), `"code": "lexical-beats-dense"`)
	// Read back, the scenarios and the scale are still there.
	back, err := Read(bytes.NewReader(js.Bytes()))
	require.NoError(t, err)
	assert.Equal(t, d.MaxDCGAtK, back.MaxDCGAtK)
	require.Len(t, back.Scenarios, len(d.Scenarios))
	text.Reset()
	require.NoError(t, back.Text(&text))
	assert.Contains(t, text.String(), "Full text significantly better than dense/ANN")
	// The buckets are over the judged documents: hybrid's top 2 of 3 queries
	// are 6 documents, 2 of them unjudged (counted not relevant before: n 6,
	// relevant+ 3/6 = 0.5).
	hb := back.Strategies["hybrid"].RelevanceBuckets
	assert.Equal(t, 4, hb.N)
	assert.Equal(t, format.Float(0.75), hb.RelevantPlus)
}

// A document written before the scale and buckets existed reads back with the
// maximum DCG from its k, gain and scale, and no bucket figures.
func TestReadOldDocument(t *testing.T) {
	old := `{"schema": "retrieval-gate/compare@1", "k": 10, "gain": "linear", "relevance_scale": [0, 3], "relevant_level": 2, "primary": "dcg_at_k",
 "gates": [], "verdict": "pass", "paired": [], "recommended": "a", "recommendation_test": null,
 "queries": {"judged": 1, "with_relevant": 1, "at_relevant_level": 1},
 "statistics": {"alpha": 0.05, "resamples": 10000, "seed": 1},
 "strategies": {"a": {"n": 1, "missing_from_run": 0, "metrics": {}, "relevance_distribution": {"0": 1, "unjudged": 0}}}}`
	d, err := Read(strings.NewReader(old))
	require.NoError(t, err)
	assert.InDelta(t, metrics.MaxDCG(10, 3, metrics.GainLinear), d.MaxDCGAtK.V(), 1e-12)
	assert.Equal(t, []string{format.Missing, format.Missing, format.Missing, format.Missing, "0"}, d.bucketCells(d.Strategies["a"]))
}

// A measure's n per strategy: one number when the strategies agree, the range
// when mean relevance leaves out different queries for each (a top k without
// a judged result), the missing glyph when no strategy has the measure.
func TestMeasureNRange(t *testing.T) {
	doc := func(ns ...int64) *Document {
		d := &Document{Strategies: map[string]*Strategy{}}
		for i, n := range ns {
			name := string(rune('a' + i))
			d.Strategies[name] = &Strategy{Name: name, Metrics: map[string]Summary{metrics.KeyMeanRel: {N: n}}}
			d.Order = append(d.Order, name)
		}
		return d
	}
	for _, tc := range []struct {
		ns   []int64
		want string
	}{
		{[]int64{113, 113}, "113"},
		{[]int64{113, 98, 110}, "98–113"},
		{nil, format.Missing},
	} {
		assert.Equal(t, tc.want, doc(tc.ns...).measureN(metrics.KeyMeanRel), "%v", tc.ns)
	}
}
