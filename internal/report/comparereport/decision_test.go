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
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
	"github.com/retrieval-gate/retrieval-gate/internal/report/gatetable"
)

// One decision in every format: the docs' example (hybrid beats dense
// without the reranker, level with it) says "enable the reranker; take the
// simplest", and the outranked scenario no longer says "Use hybrid in
// production." beside it (issue 32 item 1).
func TestDecisionWordsAgree(t *testing.T) {
	beats := &Paired{Strategy: "hybrid", Baseline: "dense", Metric: "dcg_at_k", N: 113, Delta: 1.1, CI95: [2]format.Float{0.5, 1.7}, PValue: 0.0005, Significant: true, Primary: true}
	level := &Paired{Strategy: "hybrid+rerank", Baseline: "dense+rerank", Metric: "dcg_at_k", N: 113, Delta: 0.19, CI95: [2]format.Float{-0.2, 0.6}, PValue: 0.36, Primary: true}
	helps := &Paired{Strategy: "dense+rerank", Baseline: "dense", Metric: "dcg_at_k", N: 113, Delta: 2.2, CI95: [2]format.Float{1.7, 2.7}, PValue: 0.0005, Significant: true, Primary: true}
	d := &Document{K: 10, Primary: compare.Primary, Statistics: Statistics{Alpha: 0.05}, Recommended: compare.NoClearWinner,
		RecommendationTest: &Leader{Best: "hybrid+rerank", RunnerUp: "dense+rerank", Metric: "dcg_at_k", N: 113, Delta: 0.19, CI95: [2]format.Float{-0.2, 0.6}, PValue: 0.36},
		Decision:           &Decision{Verdict: "level", Best: "hybrid+rerank", Contenders: []string{"hybrid+rerank", "dense+rerank"}, Reranker: "use", Simplest: "dense+rerank"},
		Scenarios: []Scenario{
			{Code: "hybrid-beats-dense", Bearing: "outranked", Strategy: "hybrid", Versus: "dense", Test: beats},
			{Code: "dense-matches-hybrid", Bearing: "decides", Strategy: "hybrid+rerank", Versus: "dense+rerank", Test: level},
			{Code: "reranker-helps", Bearing: "supports", Strategy: "dense+rerank", Versus: "dense", Test: helps},
		}}
	dw := d.DecisionText()
	assert.Equal(t, "no clear winner: take dense+rerank", dw.Head)
	assert.Equal(t, "Decision: enable the reranker; take the simplest, dense+rerank (hybrid+rerank is not significantly better on DCG@10).", dw.Line)
	ts := d.ScenarioTexts()
	require.Len(t, ts, 3)
	assert.Empty(t, ts[0].Action, "an outranked scenario's action is not the decision's")
	assert.Equal(t, "Does not change the decision: neither hybrid nor dense is among the decision's strategies (hybrid+rerank and dense+rerank).", ts[0].Todo())
	assert.Contains(t, ts[1].Todo(), "Either works; dense/ANN is simpler (one index, no fusion). This is the decision's own comparison")
	assert.Equal(t, "Enable the reranker if the latency budget allows. Agrees with the decision.", ts[2].Todo())
	var text, md bytes.Buffer
	require.NoError(t, d.Markdown(&md))
	require.NoError(t, d.Text(&text))
	for _, out := range []string{text.String(), md.String()} {
		assert.Contains(t, out, dw.Line)
		assert.NotContains(t, out, "Use hybrid in production.")
		assert.Equal(t, 1, strings.Count(out, "Decision:"))
	}
	// A document written before the decision: the recommendation alone, the
	// scenarios' actions as they were.
	d.Decision = nil
	assert.Empty(t, d.DecisionText().Line)
	assert.Equal(t, "Use hybrid in production.", d.ScenarioTexts()[0].Todo())
}

// compare as a gate: the gates' verdict comes before the decision in every
// format, and a decision whose strategy is below the gate's floor says so,
// so the reader is not told "use hybrid" above a FAIL that hybrid would
// meet too.
func TestDecisionAfterGatesAndBelowFloors(t *testing.T) {
	d := &Document{K: 10, Primary: compare.Primary, Statistics: Statistics{Alpha: 0.05}, Recommended: "hybrid",
		RecommendationTest: &Leader{Best: "hybrid", RunnerUp: "dense", Metric: "dcg_at_k", N: 113, Delta: 1.1, CI95: [2]format.Float{0.5, 1.7}, PValue: 0.0004, Significant: true},
		Decision: &Decision{Verdict: "winner", Best: "hybrid", Contenders: []string{"hybrid"}, Simplest: "hybrid",
			BelowFloors: []BelowFloor{{Measure: "ndcg_at_k", N: 113, Threshold: 0.9, Value: 0.6678903585562527}}},
		Verdict: outcome.Fail,
		Gates: []gatetable.Entry{{Name: "floor:ndcg_at_k", Group: "strategy:dense", Measure: "ndcg_at_k", Status: outcome.Fail, N: 113,
			Threshold: new(format.Float(0.9)), Value: new(format.Float(0.576)), Reason: "strategy dense mean 0.576 is below the floor 0.900"}}}
	line := "Decision: use hybrid. hybrid is below the gate's floor: nDCG@10 0.668 < 0.900 (n = 113), so taking it alone does not pass the gate."
	assert.Equal(t, line, d.DecisionText().Line)
	var text, md bytes.Buffer
	require.NoError(t, d.Markdown(&md))
	require.NoError(t, d.Text(&text))
	for out, verdict := range map[string]string{text.String(): "gates: FAIL", md.String(): "### ❌ Gates: fail"} {
		require.Contains(t, out, verdict)
		require.Contains(t, out, line)
		assert.Less(t, strings.Index(out, verdict), strings.Index(out, "Recommended: hybrid"), "the verdict before the recommendation")
		assert.Less(t, strings.Index(out, "Recommended: hybrid"), strings.Index(out, line))
	}
	// Two floors missed: both, in the gate's order.
	d.Decision.BelowFloors = append(d.Decision.BelowFloors, BelowFloor{Measure: "mrr_at_k", N: 113, Threshold: 0.8, Value: 0.78})
	assert.Contains(t, d.DecisionText().Line, "hybrid is below the gate's floors: nDCG@10 0.668 < 0.900 (n = 113), MRR@10 0.780 < 0.800 (n = 113), so")
	// The JSON carries the misses at full precision.
	var js bytes.Buffer
	require.NoError(t, format.WriteJSON(&js, d.Decision))
	assert.Contains(t, js.String(), `"value": 0.6678903585562527`)
}

// The evaluate demo's run: lexical wins, hybrid is significantly below it and
// dense below both. The lexical-beats-dense scenario agrees with the decision
// and offers no other strategy beside it: "(or hybrid)" would put back a
// strategy the decision did not keep (the diagnosis says adding vector search
// to full text hurts there).
func TestLexicalScenarioOffersNoOtherStrategy(t *testing.T) {
	lex := &Paired{Strategy: "lexical", Baseline: "dense", Metric: "dcg_at_k", N: 146, Delta: 0.175, CI95: [2]format.Float{0.121, 0.243}, PValue: 0.0002, Significant: true, Primary: true}
	d := &Document{K: 10, Primary: compare.Primary, Statistics: Statistics{Alpha: 0.05}, Recommended: "lexical",
		RecommendationTest: &Leader{Best: "lexical", RunnerUp: "hybrid", Metric: "dcg_at_k", N: 146, Delta: 0.053, CI95: [2]format.Float{0.022, 0.096}, PValue: 0.0003, Significant: true},
		Decision:           &Decision{Verdict: "winner", Best: "lexical", Contenders: []string{"lexical"}, Simplest: "lexical"},
		Scenarios:          []Scenario{{Code: "lexical-beats-dense", Bearing: "supports", Strategy: "lexical", Versus: "dense", Test: lex}}}
	ts := d.ScenarioTexts()
	require.Len(t, ts, 1)
	assert.Equal(t, "The embedding model may not capture your domain: fine-tune it, or use full text. Agrees with the decision.", ts[0].Todo())
	var text, md bytes.Buffer
	require.NoError(t, d.Markdown(&md))
	require.NoError(t, d.Text(&text))
	for _, out := range []string{text.String(), md.String()} {
		assert.Contains(t, out, "Decision: use lexical.")
		assert.NotContains(t, out, "hybrid)")
	}
	// Without a decision (a document written before it) the action is the
	// scenario's own.
	d.Decision = nil
	assert.Contains(t, d.ScenarioTexts()[0].Todo(), "or use full text (or hybrid).")
}

// An interval marked unreliable in the paired tables is marked where the
// recommendation, a scenario or a diagnosis finding cites it too, with its
// footnote under them: "95% CI" alone would claim a coverage its method does
// not reach at that n (the HTML card marked the recommendation's already).
func TestDecisionIntervalsCarryTheirUnreliableMark(t *testing.T) {
	level := &Paired{Strategy: "hybrid", Baseline: "dense", Metric: "dcg_at_k", N: 20, Delta: 0.15, CI95: [2]format.Float{-0.42, 0.72}, PValue: 0.57, Primary: true, Unreliable: true}
	d := &Document{K: 10, Primary: compare.Primary, Statistics: Statistics{Alpha: 0.05}, Recommended: compare.NoClearWinner,
		RecommendationTest: &Leader{Best: "hybrid", RunnerUp: "dense", Metric: "dcg_at_k", N: 20, Delta: 0.15, CI95: [2]format.Float{-0.42, 0.72}, PValue: 0.57, Unreliable: true},
		Decision:           &Decision{Verdict: "level", Best: "hybrid", Contenders: []string{"hybrid", "dense"}, Simplest: "dense"},
		Scenarios:          []Scenario{{Code: "dense-matches-hybrid", Bearing: "decides", Strategy: "hybrid", Versus: "dense", Test: level}},
		Findings: []compare.Finding{{Kind: compare.HybridVsLexical, A: "hybrid", B: "bm25",
			Test: compare.Paired{Strategy: "hybrid", Baseline: "bm25", Metric: "dcg_at_k", N: 20, Delta: 0.4, CI: metrics.Interval{Lo: 0.1, Hi: 0.7, N: 20, Unreliable: true}, PHolm: 0.01, Significant: true}}}}
	var text, md bytes.Buffer
	require.NoError(t, d.Text(&text))
	require.NoError(t, d.Markdown(&md))
	for name, out := range map[string]string{"text": text.String(), "markdown": md.String()} {
		assert.Contains(t, out, "(delta +0.150, 95% CI [-0.420, +0.720]†, adjusted p", name)
		assert.Contains(t, out, "hybrid vs dense (Δ DCG@10 = +0.150, 95% CI [-0.420, +0.720]†, Holm p", name)
		// The finding (escaped in the Markdown: "\[", "\]").
		diagnosis := strings.Index(out, "+0.700]†, Holm p = 0.0100")
		if name == "markdown" {
			diagnosis = strings.Index(out, `+0.700\]†, Holm p = 0.0100`)
		}
		require.GreaterOrEqual(t, diagnosis, 0, "%s: the finding's interval is marked", name)
		// Each block's footnote below it: the decision's, then the diagnosis'.
		decision := strings.Index(out, "hybrid vs dense (Δ")
		foot := strings.Index(out[decision:], UnreliableLine)
		require.GreaterOrEqual(t, foot, 0, name)
		assert.Less(t, decision+foot, diagnosis, "%s: the decision's footnote comes before the diagnosis", name)
		assert.Contains(t, out[diagnosis:], UnreliableLine, name)
	}
	// With human labels the decision's intervals are the corrected ones: their footnote.
	d.Human = &Human{N: 20}
	assert.Equal(t, d.humanUnreliableLine(), d.DecisionUnreliableLine())
	assert.Equal(t, d.humanUnreliableLine(), d.ScenariosUnreliableLine())
	assert.True(t, strings.HasPrefix(d.DecisionUnreliableLine(), "† unreliable: this PPI++ interval rests on fewer than 30 human-labelled queries, "), d.DecisionUnreliableLine())
	// Over clusters the floor on the labelled clusters is named too.
	d.Human.Clusters = 12
	assert.Contains(t, d.DecisionUnreliableLine(), "fewer than 30 human-labelled queries or fewer than 20 labelled clusters, ")
	d.Human.Clusters = 0
	assert.Equal(t, UnreliableLine, d.DiagnosisUnreliableLine())
	// Nothing marked, no footnote.
	d.RecommendationTest.Unreliable, level.Unreliable, d.Findings[0].Test.CI.Unreliable = false, false, false
	assert.Empty(t, d.DecisionUnreliableLine())
	assert.Empty(t, d.DiagnosisUnreliableLine())
}
