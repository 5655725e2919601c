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

func TestJudgedAtK(t *testing.T) {
	// qa: relevant a1, non-relevant a0, negative an; qb: b1; qc: c1; qd: d1.
	q := qrels(t, "qa 0 a1 3\nqa 0 a0 0\nqa 0 an -1\nqb 0 b1 2\nqc 0 c1 1\nqd 0 d1 1\n")
	for _, tc := range []struct {
		name     string
		queries  []trecfile.RunQuery
		perQuery []float64 // qa, qb, qc, qd
		mean     float64
		n        int
		low      bool
	}{
		{"every label of 0 or above counts; a negative one is unjudged, as trec_eval reads it", []trecfile.RunQuery{
			{ID: "qa", Docs: []string{"a1", "a0", "an"}}, {ID: "qb", Docs: []string{"b1"}}, {ID: "qc", Docs: []string{"c1"}}, {ID: "qd", Docs: []string{"d1"}},
		}, []float64{2.0 / 3, 1, 1, 1}, (2.0/3 + 3) / 4, 4, false},
		{"a short list divides by what it returned; a missing query is not counted", []trecfile.RunQuery{
			{ID: "qa", Docs: []string{"a1", "u1"}}, {ID: "qb", Docs: []string{"b1"}}, {ID: "qc", Docs: []string{"u2", "u3", "u4", "c1"}},
		}, []float64{0.5, 1, 0, math.NaN()}, 0.5, 3, true}, // k = 3: c1 is 4th
		{"a query with an empty ranking is not counted", []trecfile.RunQuery{
			{ID: "qa", Docs: []string{"a1"}}, {ID: "qb", Docs: []string{}}, {ID: "qc", Docs: []string{"c1"}}, {ID: "qd", Docs: []string{"d1", "u"}},
		}, []float64{1, math.NaN(), 1, 0.5}, 2.5 / 3, 3, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := compare.Compare(q, []compare.Input{{Name: "x", Run: run("x.run", tc.queries...)}}, opts())
			require.NoError(t, err)
			require.Equal(t, []string{"qa", "qb", "qc", "qd"}, res.QueryIDs)
			j := res.Strategies[0].Judged
			require.Len(t, j.PerQuery, 4)
			for i, want := range tc.perQuery {
				if math.IsNaN(want) {
					assert.True(t, math.IsNaN(j.PerQuery[i]), res.QueryIDs[i])
				} else {
					assert.InDelta(t, want, j.PerQuery[i], 1e-12, res.QueryIDs[i])
				}
			}
			assert.InDelta(t, tc.mean, j.Mean, 1e-12)
			assert.Equal(t, tc.n, j.N)
			assert.Equal(t, tc.low, j.Low)
		})
	}
}

func TestJudgedOnlyCondenses(t *testing.T) {
	q := qrels(t, "qa 0 a1 3\nqa 0 a2 2\nqa 0 a0 0\n")
	x := run("x.run", trecfile.RunQuery{ID: "other", Docs: []string{"z"}}, trecfile.RunQuery{ID: "qa", Docs: []string{"u1", "a0", "u2", "a1", "u3", "a2"}})
	before := x.Queries[1].Docs
	o := opts()
	o.K = 2
	plain, err := compare.Compare(q, []compare.Input{{Name: "x", Run: x}}, o)
	require.NoError(t, err)
	o.JudgedOnly = true
	cond, err := compare.Compare(q, []compare.Input{{Name: "x", Run: x}}, o)
	require.NoError(t, err)
	assert.Equal(t, []string{"u1", "a0", "u2", "a1", "u3", "a2"}, before, "the input run is not modified")
	p := metrics.QueryIndex("precision_at_k")
	// As retrieved the top 2 is u1, a0: P@2 = 0. Condensed it is a0, a1 (a1 from rank 4): P@2 = 1/2 at level 1.
	assert.InDelta(t, 0.0, plain.Strategies[0].Values[p], 1e-12)
	assert.InDelta(t, 0.5, cond.Strategies[0].Values[p], 1e-12)
	// judged@k is on the ranking as retrieved in both modes.
	assert.InDelta(t, 0.5, plain.Strategies[0].Judged.Mean, 1e-12)
	assert.InDelta(t, 0.5, cond.Strategies[0].Judged.Mean, 1e-12)
	assert.Equal(t, 1, plain.Strategies[0].Unjudged)
	assert.Zero(t, cond.Strategies[0].Unjudged)

	c := compare.Condense(q, x, 0)
	assert.Equal(t, []trecfile.RunQuery{{ID: "other", Docs: []string{"z"}}, {ID: "qa", Docs: []string{"a0", "a1", "a2"}}}, c.Queries,
		"unjudged documents removed before any cutoff; a query absent from the qrels kept as it is")
	assert.Equal(t, []string{"a0", "a1"}, compare.Condense(q, x, 2).Queries[1].Docs, "the first k judged documents")
}

// Issue 34's example: trec_eval reads a negative relevance as "in the pool,
// but unjudged" and -J drops it with the documents the qrels do not hold.
// Qrels q1: d1 −1, d2 1, d3 0; run d1, dX, d2; k = 1, level 1: trec_eval -J
// condenses the run to d2 and gives P_1 = 1 (form_res_rels.c keeps the
// documents of relevance ≥ 0 in rank order); before, d1 stayed as judged
// and not relevant, and every measure was 0.
func TestJudgedOnlyDropsNegativeLabels(t *testing.T) {
	q := qrels(t, "q1 0 d1 -1\nq1 0 d2 1\nq1 0 d3 0\n")
	x := run("x.run", trecfile.RunQuery{ID: "q1", Docs: []string{"d1", "dX", "d2"}})
	o := opts()
	o.K, o.RelevantLevel, o.RelevantLevelSet, o.Gain = 1, 1, true, metrics.GainLinear
	plain, err := compare.Compare(q, []compare.Input{{Name: "x", Run: x}}, o)
	require.NoError(t, err)
	o.JudgedOnly = true
	cond, err := compare.Compare(q, []compare.Input{{Name: "x", Run: x}}, o)
	require.NoError(t, err)
	assert.Equal(t, []string{"d2"}, compare.Condense(q, x, 0).Queries[0].Docs)
	for _, key := range []string{"precision_at_k", "hit_at_k", "mrr_at_k", "ndcg_at_k", "recall_at_k", "map_at_k"} {
		m := metrics.QueryIndex(key)
		assert.InDelta(t, 1.0, cond.Strategies[0].Values[m], 1e-12, "--judged-only %s", key)
		// Without -J trec_eval keeps d1 at rank 1, not relevant, gain 0.
		assert.InDelta(t, 0.0, plain.Strategies[0].Values[m], 1e-12, "%s as retrieved", key)
	}
	// The negative label is a hole of the top 1 (trec_eval's unj@1 = 1).
	assert.InDelta(t, 0.0, plain.Strategies[0].Judged.Mean, 1e-12)
	assert.Equal(t, 1, plain.Strategies[0].Unjudged)
	// Mean relevance leaves it out as it leaves out an unjudged result: the top 1 has none judged.
	assert.True(t, math.IsNaN(plain.Strategies[0].Values[metrics.QueryIndex("mean_relevance")]))
}
