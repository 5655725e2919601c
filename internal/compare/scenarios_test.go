package compare_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/input/trecfile"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

// scenario returns the scenario of code about a and b (empty: any), or nil.
func scenario(res *compare.Result, code compare.ScenarioCode, a, b string) *compare.Scenario {
	for i, s := range res.Scenarios {
		if s.Code == code && (a == "" || s.A == a) && (b == "" || s.B == b) {
			return &res.Scenarios[i]
		}
	}
	return nil
}

func runSynthetic(t *testing.T, n int, p map[string]float64, order ...string) *compare.Result {
	t.Helper()
	q, in := synthetic(t, n, p, order)
	res, err := compare.Compare(q, in, opts())
	require.NoError(t, err)
	return res
}

// Each of the six scenarios: a comparison that meets its rule, and one that
// does not.
func TestScenarioTriggers(t *testing.T) {
	t.Run("hybrid beats dense", func(t *testing.T) {
		res := runSynthetic(t, 400, map[string]float64{"ann": 0.3, "hybrid": 0.7}, "ann", "hybrid")
		s := scenario(res, compare.HybridBeatsDense, "hybrid", "ann")
		require.NotNil(t, s, "%+v", res.Scenarios)
		assert.True(t, s.Test.Significant)
		assert.Greater(t, s.Test.Delta, 0.0)
		assert.Nil(t, scenario(res, compare.DenseMatchesHybrid, "", ""))
		// Dense significantly above hybrid: neither hybrid scenario.
		res = runSynthetic(t, 400, map[string]float64{"ann": 0.7, "hybrid": 0.3}, "ann", "hybrid")
		assert.Nil(t, scenario(res, compare.HybridBeatsDense, "", ""))
		assert.Nil(t, scenario(res, compare.DenseMatchesHybrid, "", ""))
	})
	t.Run("dense matches hybrid", func(t *testing.T) {
		res := runSynthetic(t, 400, map[string]float64{"dense": 0.5, "hybrid": 0.5}, "dense", "hybrid")
		s := scenario(res, compare.DenseMatchesHybrid, "hybrid", "dense")
		require.NotNil(t, s, "%+v", res.Scenarios)
		assert.False(t, s.Test.Significant)
		assert.Nil(t, scenario(res, compare.HybridBeatsDense, "", ""))
		res = runSynthetic(t, 400, map[string]float64{"dense": 0.3, "hybrid": 0.7}, "dense", "hybrid")
		assert.Nil(t, scenario(res, compare.DenseMatchesHybrid, "", ""))
	})
	t.Run("full text beats dense", func(t *testing.T) {
		res := runSynthetic(t, 400, map[string]float64{"dense": 0.35, "bm25": 0.75}, "dense", "bm25")
		s := scenario(res, compare.LexicalBeatsDense, "bm25", "dense")
		require.NotNil(t, s, "%+v", res.Scenarios)
		assert.True(t, s.Test.Significant)
		assert.Greater(t, s.Test.Delta, 0.0)
		assert.Equal(t, "dcg_at_k", s.Test.Metric)
		// Not significant, or dense ahead, or a different reranking: no scenario.
		for _, c := range []struct {
			p     map[string]float64
			order []string
		}{
			{map[string]float64{"dense": 0.5, "bm25": 0.5}, []string{"dense", "bm25"}},
			{map[string]float64{"dense": 0.75, "bm25": 0.35}, []string{"dense", "bm25"}},
			{map[string]float64{"dense+rerank": 0.35, "bm25": 0.75}, []string{"dense+rerank", "bm25"}},
		} {
			res := runSynthetic(t, 400, c.p, c.order...)
			assert.Nil(t, scenario(res, compare.LexicalBeatsDense, "", ""), "%v", c.p)
		}
	})
	t.Run("reranker helps", func(t *testing.T) {
		res := runSynthetic(t, 400, map[string]float64{"dense": 0.3, "dense+rerank": 0.7}, "dense", "dense+rerank")
		s := scenario(res, compare.RerankerHelps, "dense+rerank", "dense")
		require.NotNil(t, s, "%+v", res.Scenarios)
		assert.True(t, s.Test.Significant)
		res = runSynthetic(t, 400, map[string]float64{"dense": 0.5, "dense+rerank": 0.51}, "dense", "dense+rerank")
		assert.Nil(t, scenario(res, compare.RerankerHelps, "", ""))
		res = runSynthetic(t, 400, map[string]float64{"dense": 0.7, "dense+rerank": 0.3}, "dense", "dense+rerank")
		assert.Nil(t, scenario(res, compare.RerankerHelps, "", ""), "a reranker that hurts")
	})
	t.Run("wide intervals", func(t *testing.T) {
		res := runSynthetic(t, 12, map[string]float64{"a": 0.45, "b": 0.55}, "a", "b")
		s := scenario(res, compare.WideIntervalsScenario, "", "")
		require.NotNil(t, s, "%+v", res.Scenarios)
		assert.Equal(t, 12, s.N)
		assert.NotEmpty(t, s.A)
		// The queries for ±10%: 12·(w/0.1)², at least 30.
		assert.Equal(t, max(30, int(math.Ceil(12*(s.Width/0.1)*(s.Width/0.1)))), s.QueriesForWidth)
		assert.GreaterOrEqual(t, s.QueriesForWidth, compare.WideMinQueries)
		if !res.Leader.Significant {
			require.NotNil(t, s.Test)
			assert.Greater(t, s.QueriesToSeparate, 12)
		}
		res = runSynthetic(t, 2000, map[string]float64{"a": 0.5, "b": 0.5}, "a", "b")
		assert.Nil(t, scenario(res, compare.WideIntervalsScenario, "", ""), "%+v", res.Scenarios)
	})
	t.Run("all low", func(t *testing.T) {
		res := lowResult(t, 0.05)
		s := scenario(res, compare.AllLow, "", "")
		require.NotNil(t, s, "%+v", res.Scenarios)
		assert.Equal(t, "ndcg_at_k", s.Measure)
		assert.Equal(t, compare.LowNDCG, s.Threshold)
		assert.Less(t, s.Value, compare.LowNDCG)
		// One strategy out of the low range: not all low.
		res = lowResult(t, 0.9)
		assert.Nil(t, scenario(res, compare.AllLow, "", ""))
		res = runSynthetic(t, 400, map[string]float64{"a": 0.1, "b": 0.1}, "a", "b")
		assert.Nil(t, scenario(res, compare.AllLow, "", ""))
	})
}

// lowResult compares two strategies that rarely retrieve the relevant
// document (5% of the queries) and a third that finds it with probability p.
func lowResult(t *testing.T, p float64) *compare.Result {
	t.Helper()
	const n = 300
	var qb strings.Builder
	for i := range n {
		fmt.Fprintf(&qb, "q%04d 0 g 3\nq%04d 0 x 0\n", i, i)
	}
	q := qrels(t, qb.String())
	var in []compare.Input
	for si, c := range []struct {
		name string
		p    float64
	}{{"a", 0.05}, {"b", 0.05}, {"c", p}} {
		r := rand.New(rand.NewPCG(uint64(si)+7, 3))
		var qs []trecfile.RunQuery
		for i := range n {
			docs := []string{"x", "y", "z"}
			if r.Float64() < c.p {
				docs = []string{"g", "y", "z"}
			}
			qs = append(qs, trecfile.RunQuery{ID: fmt.Sprintf("q%04d", i), Docs: docs})
		}
		in = append(in, compare.Input{Name: c.name, Run: run(c.name+".run", qs...)})
	}
	res, err := compare.Compare(q, in, opts())
	require.NoError(t, err)
	return res
}

// A scenario's pair test is the diagnosis's: a hybrid vs dense finding and its
// scenario carry the same test.
func TestScenarioTestIsTheFindings(t *testing.T) {
	res := runSynthetic(t, 400, map[string]float64{"ann": 0.3, "hybrid": 0.7}, "ann", "hybrid")
	s := scenario(res, compare.HybridBeatsDense, "hybrid", "ann")
	require.NotNil(t, s)
	f := finding(t, res, compare.HybridVsDense, "hybrid", "ann")
	assert.Equal(t, f.Test, *s.Test)
}

// Mean relevance as the seed defines it: the average relevance of the results,
// not divided by k; the @k variant keeps its key.
func TestMeanRelevanceNotDividedByK(t *testing.T) {
	q := qrels(t, "qa 0 a1 3\nqa 0 a2 3\n")
	x := run("x.run", trecfile.RunQuery{ID: "qa", Docs: []string{"a1", "a2"}})
	res, err := compare.Compare(q, []compare.Input{{Name: "x", Run: x}}, compare.Options{K: 10, RelevantLevel: 2, Resamples: 100, Seed: 1})
	require.NoError(t, err)
	s := res.Strategies[0]
	assert.Equal(t, 3.0, s.Means[metrics.QueryIndex(metrics.KeyMeanRel)])
	assert.InDelta(t, 0.6, s.Means[metrics.QueryIndex(metrics.KeyRelPerK)], 1e-12)
	b := s.Buckets()
	assert.Equal(t, metrics.Buckets{N: 2, HighlyRelevant: 1, RelevantPlus: 1, NotRelevant: 0}, b)
	assert.InDelta(t, 31.8049, res.MaxDCG(), 1e-4) // 10 results of relevance 3, exp gain
}
