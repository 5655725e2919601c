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
	assert.Equal(t, map[string]string{"regression": "off", "delta-hit": "", "delta-recall": "", "delta-ndcg": ""}, out)

	c := &baseline.Comparison{Regression: outcome.Fail}
	c.Overall.Stats = []baseline.Stat{{Key: metrics.KeyRecall, Delta: -0.125}}
	publish.BaselineOutputs(out, c)
	assert.Equal(t, map[string]string{"regression": "fail", "delta-hit": "", "delta-recall": "-0.125", "delta-ndcg": ""}, out)
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
