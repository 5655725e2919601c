package publish_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/retrieval-gate/retrieval-gate/internal/baseline"
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
