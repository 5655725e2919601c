package compare

import (
	"context"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/input/inputtest"
	"github.com/retrieval-gate/retrieval-gate/internal/input/trecfile"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

// TestOracleJudgedOnly checks --judged-only (condensed lists) per query against
// NIST trec_eval 10.0's -J to 1e-9, on the run read as compare reads it (deep
// enough for the condensed top 10), and MRR@10 against trec_eval -M 10 on the
// run condensed by awk (testdata/oracle/README.md): on dev300 (labels 0–3,
// relevant level 1), and on wide300 (499 judgments at −1 or −2, which trec_eval
// reads as in the pool but unjudged, so -J drops them; levels above 3; trec_eval
// -l 2; testdata/oracle-wide/README.md). A value this tool leaves out of a mean
// (no document of positive gain, or none at the level for a binary measure) is
// one trec_eval scores 0.
func TestOracleJudgedOnly(t *testing.T) {
	ctx := context.Background()
	run, err := inputtest.ReadRun(ctx, "testdata/oracle/dev300.run", JudgedOnlyDepth, trecfile.RunOptions{})
	require.NoError(t, err)
	measures := map[string]int{
		"P_10": metrics.QueryIndex("precision_at_k"), "recall_10": metrics.QueryIndex("recall_at_k"), "ndcg_cut_10": metrics.QueryIndex("ndcg_at_k"),
		"map_cut_10": metrics.QueryIndex("map_at_k"), "success_10": metrics.QueryIndex("hit_at_k"), "recip_rank": metrics.QueryIndex("mrr_at_k"),
	}
	for _, set := range []struct {
		name, qrels, dir  string
		level             int
		levelSet          bool
		minCompared       int
		minDiffer         int
		condMeasures      int    // measures the condensed run's oracle file holds
		linear, exp, cond string // oracle files
	}{
		{"dev300", "testdata/oracle/dev300.qrels", "testdata/oracle/", 1, false, 200, 50, 6,
			"trec_eval_dev300_J.txt", "trec_eval_dev300_ndcg10_exp_J.txt", "trec_eval_dev300_condensed_M10.txt"},
		{"wide300", "testdata/oracle-wide/wide300.qrels", "testdata/oracle-wide/", 2, true, 100, 20, 1,
			"trec_eval_wide300_J_l2.txt", "trec_eval_wide300_ndcg10_exp_J.txt", "trec_eval_wide300_condensed_M10_l2.txt"},
	} {
		q, err := inputtest.ReadQrels(ctx, set.qrels)
		require.NoError(t, err)
		for _, tc := range []struct {
			name   string
			gain   metrics.Gain
			oracle map[string]map[string]float64
			want   int // measures the oracle file holds
		}{
			{"J linear", metrics.GainLinear, readTrecEval(t, set.dir+set.linear), 5},
			{"J exp", metrics.GainExp, readTrecEval(t, set.dir+set.exp), 1},
			{"condensed M10", metrics.GainLinear, readTrecEval(t, set.dir+set.cond), set.condMeasures},
		} {
			t.Run(set.name+" "+tc.name, func(t *testing.T) {
				o := Options{K: 10, Gain: tc.gain, RelevantLevel: set.level, RelevantLevelSet: set.levelSet, Resamples: 100, Seed: 1}
				plain, err := Compare(q, []Input{{Name: "synth", Run: run}}, o)
				require.NoError(t, err)
				o.JudgedOnly = true
				res, err := Compare(q, []Input{{Name: "synth", Run: run}}, o)
				require.NoError(t, err)
				s := res.Strategies[0]
				assert.Zero(t, s.Unjudged, "a condensed list has no unjudged document")
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
				assert.Greater(t, compared, set.minCompared)
				assert.Greater(t, differ, set.minDiffer, "the condensed lists must change many values, or the test proves nothing")
			})
		}
	}
}

// TestOracleJudgedAtK checks judged@10 per query against trec_eval's P.10 on
// the qrels with every label set to 1.
func TestOracleJudgedAtK(t *testing.T) {
	ctx := context.Background()
	q, err := inputtest.ReadQrels(ctx, "testdata/oracle/dev300.qrels")
	require.NoError(t, err)
	oracle := readTrecEval(t, "testdata/oracle/trec_eval_dev300_judged10.txt")["P_10"]
	require.Len(t, oracle, 301)
	for _, judgedOnly := range []bool{false, true} {
		depth := 10
		if judgedOnly {
			depth = JudgedOnlyDepth
		}
		run, err := inputtest.ReadRun(ctx, "testdata/oracle/dev300.run", depth, trecfile.RunOptions{})
		require.NoError(t, err)
		res, err := Compare(q, []Input{{Name: "synth", Run: run}}, Options{K: 10, Gain: metrics.GainLinear, RelevantLevel: 1, Resamples: 100, Seed: 1, JudgedOnly: judgedOnly})
		require.NoError(t, err)
		j := res.Strategies[0].Judged
		require.Len(t, j.PerQuery, res.N())
		sum := 0.0
		for i, id := range res.QueryIDs {
			want, ok := oracle[id]
			require.True(t, ok, id)
			assert.InDelta(t, want, j.PerQuery[i], 1e-12, id)
			sum += want
		}
		assert.Equal(t, res.N(), j.N)
		assert.InDelta(t, sum/float64(res.N()), j.Mean, 1e-12)
		assert.True(t, j.Low, "this run's top 10 is mostly unjudged")
		assert.Less(t, j.Mean, JudgedThreshold)
	}
}

// TestJudgedOnlyNegativeLabelsAsTrecEval checks --judged-only on qrels with
// negative labels (wide300: 499 judgments at −1 or −2) against trec_eval's -J
// as its source defines it (form_res_rels.c: with -J the ranking is the
// documents of relevance ≥ 0 in rank order; every count it keeps is the same
// as for that shorter run): every per-query measure at k = 10 and level 2
// equals the plain evaluation of the run condensed here without the package
// (the lines whose document has a label ≥ 0 for its query), whose plain values
// TestOracleTrecEvalWideScale checks against trec_eval itself;
// TestOracleJudgedOnly checks the result against trec_eval's own -J on these
// qrels.
func TestJudgedOnlyNegativeLabelsAsTrecEval(t *testing.T) {
	ctx := context.Background()
	q, err := inputtest.ReadQrels(ctx, "testdata/oracle-wide/wide300.qrels")
	require.NoError(t, err)
	run, err := inputtest.ReadRun(ctx, "testdata/oracle/dev300.run", JudgedOnlyDepth, trecfile.RunOptions{})
	require.NoError(t, err)
	raw, err := os.ReadFile("testdata/oracle-wide/wide300.qrels")
	require.NoError(t, err)
	label := map[[2]string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		f := strings.Fields(line)
		rel, err := strconv.Atoi(f[3])
		require.NoError(t, err)
		label[[2]string{f[0], f[2]}] = rel
	}
	condensed := &trecfile.Run{File: "condensed", Format: run.Format, K: run.K}
	dropped := 0 // negative labels in some top 10 that -J drops
	for _, rq := range run.Queries {
		keep := []string{}
		for r, d := range rq.Docs {
			rel, ok := label[[2]string{rq.ID, d}]
			if ok && rel >= 0 {
				keep = append(keep, d)
			} else if ok && r < 10 {
				dropped++
			}
		}
		condensed.Queries = append(condensed.Queries, trecfile.RunQuery{ID: rq.ID, Docs: keep})
	}
	require.Greater(t, dropped, 20, "the run must meet negative labels, or the test proves nothing")
	for _, gain := range []metrics.Gain{metrics.GainLinear, metrics.GainExp} {
		o := Options{K: 10, Gain: gain, RelevantLevel: 2, RelevantLevelSet: true, Resamples: 100, Seed: 1}
		want, err := Compare(q, []Input{{Name: "synth", Run: condensed}}, o)
		require.NoError(t, err)
		o.JudgedOnly = true
		got, err := Compare(q, []Input{{Name: "synth", Run: run}}, o)
		require.NoError(t, err)
		require.Equal(t, want.QueryIDs, got.QueryIDs)
		w, g := want.Strategies[0].Values, got.Strategies[0].Values
		require.Len(t, g, len(w))
		for i := range w {
			if math.IsNaN(w[i]) {
				assert.True(t, math.IsNaN(g[i]), "%s %s", got.QueryIDs[i/metrics.NumGraded], metrics.GradedKeys[i%metrics.NumGraded])
				continue
			}
			assert.InDelta(t, w[i], g[i], 1e-12, "%s %s", got.QueryIDs[i/metrics.NumGraded], metrics.GradedKeys[i%metrics.NumGraded])
		}
	}
}
