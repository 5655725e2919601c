package publish_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/baseline"
	"github.com/retrieval-gate/retrieval-gate/internal/calibrate"
	"github.com/retrieval-gate/retrieval-gate/internal/gate"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
	"github.com/retrieval-gate/retrieval-gate/internal/publish"
)

func TestBaselineOutputs(t *testing.T) {
	out := map[string]string{}
	publish.BaselineOutputs(out, nil)
	assert.Equal(t, map[string]string{"regression": "off", "delta-hit": "", "delta-recall": "", "delta-ndcg": "",
		"churn": "off", "mean-rbo": "", "churn-share": ""}, out)

	c := &baseline.Comparison{Available: true, Regression: outcome.Fail, ChurnStatus: outcome.Pass}
	c.Overall.Stats = []baseline.Stat{{Key: metrics.KeyRecall, Delta: -0.125}}
	c.Churn.Overall = baseline.ChurnGroup{N: 8, RBO: baseline.Estimate{Mean: 0.9375}, Share: baseline.Estimate{Mean: 0.25}}
	publish.BaselineOutputs(out, c)
	assert.Equal(t, map[string]string{"regression": "fail", "delta-hit": "", "delta-recall": "-0.125", "delta-ndcg": "",
		"churn": "pass", "mean-rbo": "0.9375", "churn-share": "0.25"}, out)

	// No top k to compare: the figures are empty.
	c.Churn.Overall = baseline.ChurnGroup{Held: 3, Unknown: 3}
	publish.BaselineOutputs(out, c)
	assert.Empty(t, out["mean-rbo"])
	assert.Empty(t, out["churn-share"])
}

func TestStaleIndexWarning(t *testing.T) {
	assert.Equal(t, "retrieval-gate: 1 retrieved entry in 1 case are not cards of the knowledge base (a stale index?), e.g. a\\nb. This is a warning, not a failure.",
		publish.StaleIndexWarning(gate.UnknownRetrieved{Entries: 1, Cases: 1, Examples: []string{"a\nb"}}))
	assert.Equal(t, "retrieval-gate: 3 retrieved entries in 2 cases are not cards of the knowledge base (a stale index?). This is a warning, not a failure.",
		publish.StaleIndexWarning(gate.UnknownRetrieved{Entries: 3, Cases: 2}))
}

func TestPathOutputs(t *testing.T) {
	p := publish.PathOutputs(map[string]string{"out": "a/b", "json": ""})
	assert.Equal(t, map[string]string{"out": "a/b"}, p.Outputs)
	assert.Equal(t, []string{"out"}, p.PathOutputs)
}

// Several paths are published in the order of their names, every time (the
// warnings of those outside the workspace follow this order: judge's came in
// the map's order, different from run to run).
func TestPathOutputsInNameOrder(t *testing.T) {
	paths := map[string]string{"qrels": "q", "judgments": "j", "json": "x", "cache": "c", "human-sheet": "h", "batch-out": ""}
	for range 20 {
		assert.Equal(t, []string{"cache", "human-sheet", "json", "judgments", "qrels"}, publish.PathOutputs(paths).PathOutputs)
	}
}

// An integrity problem's annotation wrote its case id as it is and its gold id
// as Go's %q: a bidi override in the case id reordered the annotation GitHub
// shows on the diff, and the same override read (U+202E) in the text report
// and \u202e two words later. Both ids are now written as every report writes
// them (format.CaseGold: SanitizeText's (U+XXXX)), and calibrate's
// annotations write their ids (dimension, case, rater) the same way.
func TestAnnotationIDsEscapedAsReports(t *testing.T) {
	r := &gate.Result{}
	r.Integrity.Problems = []gate.Problem{
		{File: "c.jsonl", Line: 2, CaseID: "en\u202E1", GoldID: "gold\u2066x", Kind: gate.UnknownCard},
		{File: "c.jsonl", Line: 3, CaseID: "en-2", GoldID: "", Kind: gate.EmptyID},
	}
	pub := publish.Check(r, func(int) string { return "" }, "", func(k gate.ProblemKind) string { return string(k) })
	require.Len(t, pub.Annotations, 2)
	assert.Equal(t, `case en(U+202E)1: gold id "gold(U+2066)x": unknown_card`, pub.Annotations[0].Message)
	assert.Equal(t, `case en-2: gold id "": empty_id`, pub.Annotations[1].Message)

	// The reason names the label's file (calibratereport.ViolationReason).
	c := &calibrate.Result{Dimensions: []*calibrate.Dimension{{Name: "rel\u200Bevance", Violations: []calibrate.Violation{{CaseID: "c\u202D9", File: "l.jsonl", Line: 1}}}}}
	c.Blind = &calibrate.BlindCheck{Raters: []calibrate.RaterBlind{{Rater: "ann\u202E", Violations: []calibrate.BlindViolation{{CaseID: "c\u061C1", Dimension: "d\u200F", Code: calibrate.BlindNotBefore}}}}}
	cp := publish.Calibrate(c, "", "", func(calibrate.Violation) string { return "why (l\u202Egnp.jsonl:1)" })
	require.Len(t, cp.Annotations, 2)
	assert.Equal(t, "rel(U+200B)evance, case c(U+202D)9: why (l(U+202E)gnp.jsonl:1)", cp.Annotations[0].Message)
	assert.Equal(t, "d(U+200F), case c(U+061C)1, rater ann(U+202E): not provably committed before its judge score (not-before)", cp.Annotations[1].Message)
}
