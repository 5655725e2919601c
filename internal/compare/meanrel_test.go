package compare_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/input/trecfile"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

// Mean relevance as the seed defines it, the average relevance over the
// judged query–result pairs: per query the judged results of the top k
// (unjudged ones left out, not counted 0), a query without a judged result
// undefined and left out of the run's mean, interval and n, and a paired
// comparison over the queries both runs define. The buckets are over the
// judged results too.
func TestMeanRelevanceOverJudged(t *testing.T) {
	// q1: a 3, b 0; q2: a 2; q3: a 1, c 3. u* are unjudged.
	q := qrels(t, "q1 0 a 3\nq1 0 b 0\nq2 0 a 2\nq3 0 a 1\nq3 0 c 3\n")
	base := run("base.run",
		trecfile.RunQuery{ID: "q1", Docs: []string{"a", "u1"}},  // 3 (counting u1 as 0: 1.5)
		trecfile.RunQuery{ID: "q2", Docs: []string{"u2", "u3"}}, // undefined (was 0)
		trecfile.RunQuery{ID: "q3", Docs: []string{"a", "c"}})   // 2
	other := run("other.run",
		trecfile.RunQuery{ID: "q1", Docs: []string{"a", "b"}}, // 1.5
		trecfile.RunQuery{ID: "q2", Docs: []string{"a", "u"}}) // 2 (was 1); q3 absent: undefined (was 0)
	o := opts()
	o.K = 2
	res, err := compare.Compare(q, []compare.Input{{Name: "base", Run: base}, {Name: "other", Run: other}}, o)
	require.NoError(t, err)
	m := metrics.QueryIndex(metrics.KeyMeanRel)
	const M = metrics.NumGraded
	for _, tc := range []struct {
		name     string
		perQuery []float64 // q1, q2, q3
		mean     float64
		n        int
		buckets  metrics.Buckets
	}{
		{"base", []float64{3, math.NaN(), 2}, 2.5, 2, metrics.Buckets{N: 3, HighlyRelevant: 2.0 / 3, RelevantPlus: 2.0 / 3, NotRelevant: 1.0 / 3}},
		{"other", []float64{1.5, 2, math.NaN()}, 1.75, 2, metrics.Buckets{N: 3, HighlyRelevant: 1.0 / 3, RelevantPlus: 2.0 / 3, NotRelevant: 1.0 / 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &res.Strategies[res.StrategyIndex(tc.name)]
			for i, want := range tc.perQuery {
				got := s.Values[i*M+m]
				if math.IsNaN(want) {
					assert.True(t, math.IsNaN(got), "%s: %v", res.QueryIDs[i], got)
				} else {
					assert.InDelta(t, want, got, 1e-12, res.QueryIDs[i])
				}
			}
			assert.InDelta(t, tc.mean, s.Means[m], 1e-12)
			assert.Equal(t, tc.n, s.MeasureN[m])
			assert.Equal(t, int64(tc.n), s.CI[m].N)
			// Every other measure still counts every evaluated query.
			assert.Equal(t, 3, s.MeasureN[metrics.QueryIndex(metrics.KeyRelPerK)])
			b := s.Buckets()
			assert.Equal(t, tc.buckets.N, b.N)
			assert.InDelta(t, tc.buckets.HighlyRelevant, b.HighlyRelevant, 1e-12)
			assert.InDelta(t, tc.buckets.RelevantPlus, b.RelevantPlus, 1e-12)
			assert.InDelta(t, tc.buckets.NotRelevant, b.NotRelevant, 1e-12)
		})
	}
	// The paired comparison uses q1 alone, the one query both define.
	var p *compare.Paired
	for i := range res.Paired {
		if res.Paired[i].Metric == metrics.KeyMeanRel {
			p = &res.Paired[i]
		}
	}
	require.NotNil(t, p)
	assert.Equal(t, 1, p.N)
	assert.InDelta(t, -1.5, p.Delta, 1e-12)
	// mean_relevance_at_k is unchanged: Σ rel / k, unjudged 0, every query.
	k := metrics.QueryIndex(metrics.KeyRelPerK)
	assert.InDelta(t, (1.5+0+2)/3, res.Strategies[0].Means[k], 1e-12)
}

// As the primary measure, mean relevance ranks the queries it defines only.
func TestMeanRelevanceAsPrimary(t *testing.T) {
	q := qrels(t, "q1 0 a 3\nq2 0 a 3\nq3 0 a 3\nq4 0 a 3\n")
	x := run("x.run",
		trecfile.RunQuery{ID: "q1", Docs: []string{"a", "u"}}, trecfile.RunQuery{ID: "q2", Docs: []string{"u"}},
		trecfile.RunQuery{ID: "q3", Docs: []string{"a"}}, trecfile.RunQuery{ID: "q4", Docs: []string{"a", "u", "u2"}})
	o := opts()
	o.Primary = metrics.KeyMeanRel
	res, err := compare.Compare(q, []compare.Input{{Name: "x", Run: x}}, o)
	require.NoError(t, err)
	m := metrics.QueryIndex(metrics.KeyMeanRel)
	s := res.Strategies[0]
	assert.Equal(t, 3, s.MeasureN[m])
	assert.InDelta(t, 3.0, s.Means[m], 1e-12) // the former definition: (1.5 + 0 + 3 + 1) / 4
	assert.Equal(t, []string{"q1", "q3", "q4"}, s.Best[:3])
}
