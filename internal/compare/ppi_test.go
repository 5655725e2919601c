package compare_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/compare/comparetest"
	"github.com/retrieval-gate/retrieval-gate/internal/floor"
	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/labelfile"
	"github.com/retrieval-gate/retrieval-gate/internal/input/trecfile"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

func sheet(t *testing.T, csv string) *labelfile.Sheet {
	t.Helper()
	s, err := labelfile.ReadSheet(context.Background(), strings.NewReader("query_id,doc_id,grade\n"+csv), "sheet.csv")
	require.NoError(t, err)
	return s
}

// biasedWorld is 200 queries, each with documents a and b. The judge grades a
// 3 and b 2 everywhere; people grade a 1 and b 3 (b 2 on every fifth query).
// Strategy "A" ranks a first, "B" ranks b first. The first 60 queries are labelled.
func biasedWorld(t *testing.T) (*trecfile.Qrels, []compare.Input, *labelfile.Sheet) {
	var qr, sh strings.Builder
	var qa, qb []trecfile.RunQuery
	for i := range 200 {
		id := fmt.Sprintf("q%03d", i)
		fmt.Fprintf(&qr, "%s 0 a 3\n%s 0 b 2\n", id, id)
		hb := 3
		if i%5 == 0 {
			hb = 2
		}
		if i < 60 {
			fmt.Fprintf(&sh, "%s,a,1\n%s,b,%d\n", id, id, hb)
		}
		qa = append(qa, trecfile.RunQuery{ID: id, Docs: []string{"a", "b"}})
		qb = append(qb, trecfile.RunQuery{ID: id, Docs: []string{"b", "a"}})
	}
	return qrels(t, qr.String()), []compare.Input{{Name: "A", Run: run("a.run", qa...)}, {Name: "B", Run: run("b.run", qb...)}}, sheet(t, sh.String())
}

func TestHumanCorrection(t *testing.T) {
	q, runs, sh := biasedWorld(t)
	o := opts()
	o.K = 1
	judgeOnly, err := compare.Compare(q, runs, o)
	require.NoError(t, err)
	require.Nil(t, judgeOnly.Human)
	assert.Equal(t, "A", judgeOnly.Recommended, "the biased judge prefers A")

	o.HumanSheet = sh
	o.Gate = compare.GateOptions{Strategy: "A", FailIfBeaten: true, Floors: floor.List{{Measure: "dcg_at_k", Value: 5}}}
	res, err := compare.Compare(q, runs, o)
	require.NoError(t, err)
	h := res.Human
	require.NotNil(t, h)
	assert.Equal(t, 60, h.N)
	assert.Equal(t, 120, h.Pairs)
	dcg := metrics.QueryIndex("dcg_at_k")
	// The judge's values are constant (A: 7, B: 3 at k 1), so λ̂ = 0 and the
	// estimate is the human mean: A 1, B (48·7 + 12·3)/60.
	a, b := h.Means[0][dcg], h.Means[1][dcg]
	assert.Equal(t, 60, a.N)
	assert.Equal(t, 140, a.Others)
	assert.InDelta(t, 1, a.Estimate, 1e-12)
	assert.InDelta(t, (48*7.0+12*3)/60, b.Estimate, 1e-12)
	assert.Equal(t, 7.0, res.Strategies[0].Means[dcg], "the judge-only mean is kept")
	assert.Equal(t, "B", res.Recommended, "the corrected figures decide")
	require.NotNil(t, res.Leader)
	assert.Equal(t, compare.PMethodPPIJackknife, res.Leader.PMethod)
	assert.Equal(t, "B", res.Leader.Strategy)
	// The paired corrected test of B against the baseline A.
	var pd compare.Paired
	for _, p := range h.Paired {
		if p.Metric == "dcg_at_k" {
			pd = p
		}
	}
	assert.Equal(t, "B", pd.Strategy)
	assert.InDelta(t, b.Estimate-a.Estimate, pd.Delta, 1e-12)
	assert.True(t, pd.Significant)
	// The gates on A use the corrected figures: its floor 5 fails (1 < 5,
	// where the judge's 7 would pass) and B beats it.
	require.Len(t, res.Gates, 2)
	assert.Equal(t, "fail", string(res.Gates[0].Status))
	assert.InDelta(t, 1, res.Gates[0].Value, 1e-12)
	assert.Equal(t, int64(60), res.Gates[0].N)
	assert.Equal(t, "fail", string(res.Gates[1].Status))
	// The judge's bias on the sample: a (human 1) judged 3, b (human 3) judged 2,
	// b (human 2) judged 2.
	assert.Equal(t, 120, h.Bias.N)
	assert.Equal(t, 60, h.Bias.Confusion[1][3])
	assert.Equal(t, 48, h.Bias.Confusion[3][2])
	assert.Equal(t, 12, h.Bias.Confusion[2][2])
	assert.InDelta(t, (60*2.0-48)/120, h.Bias.MSE, 1e-12)
	assert.InDelta(t, 2, h.Bias.ByLevel[1].MSE, 1e-12)
	assert.InDelta(t, -1, h.Bias.ByLevel[3].MSE, 1e-12)
	assert.Equal(t, 0, h.Bias.ByLevel[0].N)
	assert.True(t, math.IsNaN(h.Bias.ByLevel[0].MSE))
}

func TestHumanCorrectionTuned(t *testing.T) {
	// The judge's values vary with the truth: λ̂ > 0, and the estimate is
	// metrics.PPITuned of the per-query values.
	var qr, sh strings.Builder
	var qs []trecfile.RunQuery
	var y, f, u []float64
	for i := range 100 {
		id := fmt.Sprintf("q%03d", i)
		j := i % 4              // the judge's grade of d
		hg := min(3, j+(i/4)%2) // the human's: the same or one more
		fmt.Fprintf(&qr, "%s 0 d %d\n%s 0 e 1\n", id, j, id)
		qs = append(qs, trecfile.RunQuery{ID: id, Docs: []string{"d"}})
		dcg := func(g int) float64 { return math.Pow(2, float64(g)) - 1 }
		if i%3 == 0 {
			fmt.Fprintf(&sh, "%s,d,%d\n%s,e,1\n", id, hg, id)
			y, f = append(y, dcg(hg)), append(f, dcg(j))
		} else {
			u = append(u, dcg(j))
		}
	}
	o := opts()
	o.K = 1
	o.HumanSheet = sheet(t, sh.String())
	res, err := compare.Compare(qrels(t, qr.String()), []compare.Input{{Name: "x", Run: run("x.run", qs...)}}, o)
	require.NoError(t, err)
	want := metrics.PPITuned(y, f, u)
	got := res.Human.Means[0][metrics.QueryIndex("dcg_at_k")]
	assert.Greater(t, want.Lambda, 0.0)
	assert.InDelta(t, want.Estimate, got.Estimate, 1e-12)
	assert.InDelta(t, want.Lo, got.Lo, 1e-12)
	assert.InDelta(t, want.Lambda, got.Lambda, 1e-12)
	assert.Equal(t, 34, got.N)
	// nDCG under the human grades: the ideal is d at the human grade, then e (1).
	var ny []float64
	for i := 0; i < 100; i += 3 {
		hg := min(3, i%4+(i/4)%2)
		ideal := math.Pow(2, float64(hg)) - 1
		if hg < 1 {
			ideal = 1
		}
		ny = append(ny, (math.Pow(2, float64(hg))-1)/ideal)
	}
	ho := res.Human.HumanOnly[0][metrics.QueryIndex("ndcg_at_k")]
	assert.InDelta(t, metrics.HumanOnly(ny).Estimate, ho.Estimate, 1e-12)
	assert.LessOrEqual(t, ho.Estimate, 1.0)
}

func TestHumanSheetUnknown(t *testing.T) {
	q, runs, _ := biasedWorld(t)
	o := opts()
	for _, tc := range []struct{ rows, want string }{
		{"q000,a,1\nq999,a,1\n", "sheet.csv:3: query \"q999\" is not in the judge's qrels qrels.txt"},
		{"q000,a,1\nq000,zz,1\n", "sheet.csv:3: document \"zz\" of query \"q000\" is neither judged in qrels.txt nor retrieved by a run in its top k"},
	} {
		o.HumanSheet = sheet(t, tc.rows)
		_, err := compare.Compare(q, runs, o)
		var ie *input.Error
		require.ErrorAs(t, err, &ie)
		assert.EqualError(t, err, tc.want)
	}
}

// A corrected difference with no variation among its labelled queries
// (standard error 0) and a nonzero estimate is tested exactly on what people
// labelled: the sign test of the 20 equal human differences, p = 2·0.5^20
// (over 5 clusters of 4, of the clusters' sums: 2·0.5^5); it was reported
// "no-difference", p = 1, and the recommendation called the strategies level.
func TestHumanConstantDifference(t *testing.T) {
	for _, tc := range []struct {
		name     string
		clusters bool
		method   string
		p        float64
	}{
		{"independent", false, compare.PMethodHumanSignFlipExact, 2 * math.Pow(0.5, 20)},
		{"clusters", true, compare.PMethodHumanClusterSignFlipExact, 2 * math.Pow(0.5, 5)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, runs, o, err := comparetest.ConstantDifference(tc.clusters)
			require.NoError(t, err)
			res, err := compare.Compare(q, runs, o)
			require.NoError(t, err)
			require.NotNil(t, res.Human)
			for _, key := range []string{"dcg_at_k", "ndcg_at_k", "map_at_k", "mrr_at_k", "rbp_at_k"} {
				m := metrics.QueryIndex(key)
				var pd compare.Paired
				for _, p := range res.Human.Paired {
					if p.Metric == key {
						pd = p
					}
				}
				assert.Less(t, pd.Delta, 0.0, key)
				assert.Equal(t, tc.method, pd.PMethod, key)
				assert.InDelta(t, tc.p, pd.P, 1e-15, key)
				assert.Equal(t, pd.P < compare.Alpha, pd.Significant, key)
				// Every labelled difference is the same: the standard error is 0
				// (not rounding noise) and the interval the rule of three.
				assert.Equal(t, metrics.MethodRuleOfThree, pd.CI.Method, key)
				assert.Equal(t, 0.0, res.Human.Means[0][m].SE, key)
			}
			// hit and precision: both 1 and 0.5 on every query, under either
			// grades: no difference at all.
			for _, p := range res.Human.Paired {
				if p.Metric == "hit_at_k" {
					assert.Equal(t, metrics.PMethodNoDifference, p.PMethod)
					assert.Equal(t, 1.0, p.P)
				}
			}
			require.NotNil(t, res.Leader)
			assert.Equal(t, "A", res.Leader.Strategy)
			assert.Equal(t, tc.method, res.Leader.PMethod)
			if tc.clusters {
				assert.False(t, res.Leader.Significant, "5 clusters cannot reach 0.05")
				assert.Equal(t, compare.NoClearWinner, res.Recommended)
			} else {
				assert.True(t, res.Leader.Significant)
				assert.Equal(t, compare.NoteNoVariation, res.Leader.Note, "the rule of three at 20 queries crosses 0")
				assert.Equal(t, "A", res.Recommended, "the decision rests on the exact test")
			}
		})
	}
}

// With human labels the scenarios' tests are the decision's (human-corrected):
// the judge prefers hybrid, people prefer dense; the judge-only comparison
// meets "hybrid beats dense", the corrected one does not, and its decision is
// dense, so no scenario may tell the reader to use hybrid in production.
func TestHumanScenariosFollowTheDecision(t *testing.T) {
	q, runs, sh := biasedWorld(t)
	runs[0].Name, runs[1].Name = "hybrid", "dense"
	o := opts()
	o.K = 1
	judgeOnly, err := compare.Compare(q, runs, o)
	require.NoError(t, err)
	require.NotNil(t, scenario(judgeOnly, compare.HybridBeatsDense, "hybrid", "dense"), "%+v", judgeOnly.Scenarios)

	o.HumanSheet = sh
	res, err := compare.Compare(q, runs, o)
	require.NoError(t, err)
	require.Equal(t, "dense", res.Decision.Taken())
	assert.Nil(t, scenario(res, compare.HybridBeatsDense, "", ""), "%+v", res.Scenarios)
	for _, s := range res.Scenarios {
		if s.Test != nil {
			assert.Equal(t, res.Human.N, s.Test.N, "scenario %s rests on the corrected test", s.Code)
		}
	}
}
