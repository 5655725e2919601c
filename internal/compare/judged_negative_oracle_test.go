package compare

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/input/inputtest"
	"github.com/retrieval-gate/retrieval-gate/internal/input/trecfile"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

// TestOracleJudgedOnlyWideScale checks --judged-only per query against NIST
// trec_eval 10.0's own -J on qrels with negative labels (wide300: 499
// judgments at −1 or −2, which trec_eval reads as in the pool but unjudged, so
// -J drops them) and levels above 3, at relevant level 2 (trec_eval -l 2), both
// gains, to 1e-9; MRR@10 against trec_eval -M 10 on the run condensed by awk
// to the documents labelled 0 or above (testdata/oracle-wide/README.md). A
// value this tool leaves out of a mean (no document of positive gain, or none
// at level 2 for a binary measure) is one trec_eval scores 0.
func TestOracleJudgedOnlyWideScale(t *testing.T) {
	ctx := context.Background()
	q, err := inputtest.ReadQrels(ctx, "testdata/oracle-wide/wide300.qrels")
	require.NoError(t, err)
	run, err := inputtest.ReadRun(ctx, "testdata/oracle/dev300.run", JudgedOnlyDepth, trecfile.RunOptions{})
	require.NoError(t, err)
	j := readTrecEval(t, "testdata/oracle-wide/trec_eval_wide300_J_l2.txt")
	jexp := readTrecEval(t, "testdata/oracle-wide/trec_eval_wide300_ndcg10_exp_J.txt")
	cond := readTrecEval(t, "testdata/oracle-wide/trec_eval_wide300_condensed_M10_l2.txt")
	measures := map[string]int{
		"P_10": metrics.QueryIndex("precision_at_k"), "recall_10": metrics.QueryIndex("recall_at_k"), "ndcg_cut_10": metrics.QueryIndex("ndcg_at_k"),
		"map_cut_10": metrics.QueryIndex("map_at_k"), "success_10": metrics.QueryIndex("hit_at_k"), "recip_rank": metrics.QueryIndex("mrr_at_k"),
	}
	for _, tc := range []struct {
		name   string
		gain   metrics.Gain
		oracle map[string]map[string]float64
		want   int // measures read from the oracle file
	}{
		{"J linear l2", metrics.GainLinear, j, 5},
		{"J exp", metrics.GainExp, jexp, 1},
		{"condensed M10 l2", metrics.GainLinear, cond, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := Options{K: 10, Gain: tc.gain, RelevantLevel: 2, RelevantLevelSet: true, Resamples: 100, Seed: 1}
			plain, err := Compare(q, []Input{{Name: "synth", Run: run}}, o)
			require.NoError(t, err)
			o.JudgedOnly = true
			res, err := Compare(q, []Input{{Name: "synth", Run: run}}, o)
			require.NoError(t, err)
			s := res.Strategies[0]
			evaluated := map[string]int{}
			for i, id := range res.QueryIDs {
				evaluated[id] = i
			}
			read, compared, differ := 0, 0, 0
			for measure, mi := range measures {
				perQuery, ok := tc.oracle[measure]
				if !ok {
					continue
				}
				read++
				require.Len(t, perQuery, 301, measure) // 300 queries + "all"
				for qid, want := range perQuery {
					if qid == "all" {
						continue
					}
					i, ok := evaluated[qid]
					got := math.NaN()
					if ok {
						got = s.Values[i*metrics.NumGraded+mi]
					}
					if math.IsNaN(got) {
						assert.Zero(t, want, "%s %s", measure, qid)
						continue
					}
					assert.InDelta(t, want, got, 1e-9, "%s %s", measure, qid)
					if p := plain.Strategies[0].Values[i*metrics.NumGraded+mi]; !math.IsNaN(p) && math.Abs(got-p) > 1e-9 {
						differ++
					}
					compared++
				}
			}
			require.Equal(t, tc.want, read, "the oracle file holds the measures named")
			assert.Greater(t, compared, 100)
			assert.Greater(t, differ, 20, "-J must change many values, or the test proves nothing")
		})
	}
}
