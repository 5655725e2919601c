package compare_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/floor"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
)

// The one decision: the strategies it keeps, what they say of the reranker,
// the simplest of them, and each scenario's bearing on it (issue 32 item 1:
// the docs' example said "no clear winner" beside "Use hybrid in production").
func TestDecision(t *testing.T) {
	t.Run("level, reranked: enable it, take the simpler retriever", func(t *testing.T) {
		// The docs' example in small: hybrid beats dense without the reranker;
		// with it on both sides they are level.
		res := runSynthetic(t, 300, map[string]float64{"dense": 0.3, "hybrid": 0.6, "dense+rerank": 0.8, "hybrid+rerank": 0.8},
			"dense", "hybrid", "dense+rerank", "hybrid+rerank")
		require.Equal(t, compare.NoClearWinner, res.Recommended)
		d := res.Decision
		assert.Equal(t, compare.VerdictLevel, d.Verdict)
		assert.ElementsMatch(t, []string{"dense+rerank", "hybrid+rerank"}, d.Contenders)
		assert.Equal(t, d.Best, d.Contenders[0])
		assert.Equal(t, compare.RerankerUse, d.Reranker)
		assert.Equal(t, "dense+rerank", d.Simplest)
		bearing := map[string]compare.Bearing{}
		for _, s := range res.Scenarios {
			bearing[string(s.Code)+" "+s.A+" "+s.B] = s.Bearing
		}
		assert.Equal(t, compare.BearingOutranked, bearing["hybrid-beats-dense hybrid dense"], "%v", bearing)
		assert.Equal(t, compare.BearingDecides, bearing["dense-matches-hybrid hybrid+rerank dense+rerank"], "%v", bearing)
		assert.Equal(t, compare.BearingSupports, bearing["reranker-helps dense+rerank dense"], "%v", bearing)
		assert.Equal(t, compare.BearingSupports, bearing["reranker-helps hybrid+rerank hybrid"], "%v", bearing)
	})
	t.Run("winner", func(t *testing.T) {
		res := runSynthetic(t, 400, map[string]float64{"ann": 0.3, "hybrid": 0.7}, "ann", "hybrid")
		d := res.Decision
		assert.Equal(t, compare.VerdictWinner, d.Verdict)
		assert.Equal(t, "hybrid", res.Recommended)
		assert.Equal(t, []string{"hybrid"}, d.Contenders)
		assert.Equal(t, compare.RerankerUnknown, d.Reranker) // no run reranks
		require.NotNil(t, scenario(res, compare.HybridBeatsDense, "hybrid", "ann"))
		assert.Equal(t, compare.BearingSupports, scenario(res, compare.HybridBeatsDense, "hybrid", "ann").Bearing)
	})
	t.Run("reranker hurts: leave it off", func(t *testing.T) {
		res := runSynthetic(t, 400, map[string]float64{"dense": 0.7, "dense+rerank": 0.3}, "dense", "dense+rerank")
		assert.Equal(t, compare.VerdictWinner, res.Decision.Verdict)
		assert.Equal(t, compare.RerankerSkip, res.Decision.Reranker)
	})
	t.Run("level with and without the reranker: optional, the simpler", func(t *testing.T) {
		res := runSynthetic(t, 400, map[string]float64{"dense": 0.5, "dense+rerank": 0.5}, "dense", "dense+rerank")
		d := res.Decision
		assert.Equal(t, compare.VerdictLevel, d.Verdict)
		assert.Equal(t, compare.RerankerEither, d.Reranker)
		assert.Equal(t, "dense", d.Simplest)
	})
	t.Run("one strategy", func(t *testing.T) {
		res := runSynthetic(t, 40, map[string]float64{"dense": 0.5}, "dense")
		assert.Equal(t, compare.Decision{Verdict: compare.VerdictOnly, Best: "dense", Contenders: []string{"dense"}, Simplest: "dense"}, res.Decision)
		for _, s := range res.Scenarios {
			assert.Equal(t, compare.BearingQualifies, s.Bearing, s.Code)
		}
	})
}

// The decision's strategy held to the gate's floors: a decision to switch to
// a strategy that is below the floor too says so (its mean and n, decided as
// the floor gate decides), so the gate's FAIL and the decision do not pull
// two ways.
func TestDecisionBelowFloors(t *testing.T) {
	q, in := synthetic(t, 400, map[string]float64{"ann": 0.3, "hybrid": 0.7}, []string{"ann", "hybrid"})
	run := func(g compare.GateOptions) *compare.Result {
		t.Helper()
		o := opts()
		o.Gate = g
		res, err := compare.Compare(q, in, o)
		require.NoError(t, err)
		return res
	}
	// MRR: 1 when g is first (ann 30% of the queries, hybrid 70%), else 1/2.
	mrr := func(v float64) floor.List {
		return floor.List{{Measure: "mrr_at_k", Group: outcome.GroupOverall, Value: v}}
	}
	// ann fails a floor that hybrid, the decision, meets: nothing to add.
	res := run(compare.GateOptions{Strategy: "ann", Floors: mrr(0.75)})
	require.Equal(t, "hybrid", res.Decision.Taken())
	require.Equal(t, outcome.Fail, res.Verdict())
	assert.Empty(t, res.Decision.BelowFloors)

	// Both below: the decision carries hybrid's miss.
	res = run(compare.GateOptions{Strategy: "ann", Floors: mrr(0.95)})
	require.Equal(t, outcome.Fail, res.Verdict())
	h := res.Strategies[res.StrategyIndex("hybrid")]
	require.Len(t, res.Decision.BelowFloors, 1)
	assert.Equal(t, compare.BelowFloor{Measure: "mrr_at_k", Threshold: 0.95, Value: h.Means[metrics.QueryIndex("mrr_at_k")], N: 400}, res.Decision.BelowFloors[0])
	assert.Less(t, res.Decision.BelowFloors[0].Value, 0.95)

	// The gate on hybrid itself: the decision's misses are the gate's failures.
	res = run(compare.GateOptions{Strategy: "hybrid", Floors: append(mrr(0.95), floor.Spec{Measure: "mrr_at_k", Group: outcome.GroupOverall, Value: 0.1})})
	require.Len(t, res.Gates, 2)
	assert.Equal(t, outcome.Fail, res.Gates[0].Status)
	assert.Equal(t, outcome.Pass, res.Gates[1].Status)
	require.Len(t, res.Decision.BelowFloors, 1)
	assert.Equal(t, res.Gates[0].Value, res.Decision.BelowFloors[0].Value)
	assert.Equal(t, res.Gates[0].N, res.Decision.BelowFloors[0].N)

	// No gate, no floors: nothing.
	assert.Empty(t, run(compare.GateOptions{}).Decision.BelowFloors)
}
