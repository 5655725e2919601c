package compare

import (
	"bufio"
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

// readTrecEval parses `trec_eval -q` output: measure -> query -> value.
func readTrecEval(t *testing.T, path string) map[string]map[string]float64 {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	out := map[string]map[string]float64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		require.Len(t, fs, 3)
		v, err := strconv.ParseFloat(fs[2], 64)
		require.NoError(t, err)
		if out[fs[0]] == nil {
			out[fs[0]] = map[string]float64{}
		}
		out[fs[0]][fs[1]] = v
	}
	require.NoError(t, sc.Err())
	return out
}

func oracleRuns(t *testing.T) map[string]*trecfile.Run {
	t.Helper()
	ctx := context.Background()
	runs := map[string]*trecfile.Run{}
	for name, opt := range map[string]trecfile.RunOptions{
		"default":          {},
		"tiny-ranges":      {Workers: 3, ChunkSize: 4096},
		"one-worker-split": {Workers: 1, ChunkSize: 1000},
	} {
		run, err := inputtest.ReadRun(ctx, "testdata/oracle/dev300.run", 10, opt)
		require.NoError(t, err, name)
		runs[name] = run
	}
	f, err := os.Open("testdata/oracle/dev300.run")
	require.NoError(t, err)
	defer f.Close()
	seq, err := trecfile.ParseTRECRun(ctx, f, "dev300.run", 10)
	require.NoError(t, err)
	runs["sequential"] = seq
	return runs
}

// TestOracleTrecEval checks per-query values against NIST trec_eval 10.0 to 1e-9.
func TestOracleTrecEval(t *testing.T) {
	q, err := inputtest.ReadQrels(context.Background(), "testdata/oracle/dev300.qrels")
	require.NoError(t, err)
	require.Equal(t, 300, q.NumQueries())
	m10 := readTrecEval(t, "testdata/oracle/trec_eval_dev300_M10.txt")
	exp := readTrecEval(t, "testdata/oracle/trec_eval_dev300_ndcg10_exp.txt")
	measures := map[string]int{
		"P_10": metrics.QueryIndex("precision_at_k"), "recall_10": metrics.QueryIndex("recall_at_k"), "ndcg_cut_10": metrics.QueryIndex("ndcg_at_k"),
		"recip_rank": metrics.QueryIndex("mrr_at_k"), "map_cut_10": metrics.QueryIndex("map_at_k"), "success_10": metrics.QueryIndex("hit_at_k"),
	}
	for name, run := range oracleRuns(t) {
		t.Run(name, func(t *testing.T) {
			for _, tc := range []struct {
				gain   metrics.Gain
				oracle map[string]map[string]float64
				only   string
			}{
				{metrics.GainLinear, m10, ""},
				{metrics.GainExp, exp, "ndcg_cut_10"},
			} {
				res, err := Compare(q, []Input{{Name: "synth", Run: run}}, Options{
					K: 10, Gain: tc.gain, RelevantLevel: 1, Resamples: 100, Seed: 1,
				})
				require.NoError(t, err)
				s := res.Strategies[0]
				evaluated := map[string]int{}
				for i, id := range res.QueryIDs {
					evaluated[id] = i
				}
				for measure, mi := range measures {
					if tc.only != "" && measure != tc.only {
						continue
					}
					perQuery := tc.oracle[measure]
					require.Len(t, perQuery, 301, measure) // 300 queries + "all"
					sum := 0.0
					for qid, want := range perQuery {
						if qid == "all" {
							continue
						}
						i, ok := evaluated[qid]
						if !ok {
							// No relevant document: trec_eval scores 0 and counts it in "all"; we exclude it.
							assert.Zero(t, want, "%s %s", measure, qid)
							continue
						}
						got := s.Values[i*metrics.NumGraded+mi]
						assert.InDelta(t, want, got, 1e-9, "%s %s", measure, qid)
						sum += got
					}
					// trec_eval's "all" divides by every judged query; our mean by the evaluated ones.
					assert.InDelta(t, perQuery["all"], sum/300, 1e-9, measure)
					assert.InDelta(t, sum/float64(res.N()), s.Means[mi], 1e-12, measure)
				}
			}
		})
	}
}

func TestOracleReadersAgree(t *testing.T) {
	runs := oracleRuns(t)
	for name, run := range runs {
		assert.Equal(t, runs["sequential"].Queries, run.Queries, name)
	}
}

// TestOracleTrecEvalWideScale checks per-query values against NIST trec_eval
// 10.0 to 1e-9 on qrels with relevance −2..6 (negative and above 3), relevant
// level 2, both gains.
func TestOracleTrecEvalWideScale(t *testing.T) {
	q, err := inputtest.ReadQrels(context.Background(), "testdata/oracle-wide/wide300.qrels")
	require.NoError(t, err)
	lo, hi := q.Scale()
	require.Equal(t, [2]int{-2, 6}, [2]int{lo, hi})
	run, err := inputtest.ReadRun(context.Background(), "testdata/oracle/dev300.run", 10, trecfile.RunOptions{})
	require.NoError(t, err)
	m10 := readTrecEval(t, "testdata/oracle-wide/trec_eval_wide300_M10_l2.txt")
	exp := readTrecEval(t, "testdata/oracle-wide/trec_eval_wide300_ndcg10_exp.txt")
	measures := map[string]int{
		"P_10": metrics.QueryIndex("precision_at_k"), "recall_10": metrics.QueryIndex("recall_at_k"), "ndcg_cut_10": metrics.QueryIndex("ndcg_at_k"),
		"recip_rank": metrics.QueryIndex("mrr_at_k"), "map_cut_10": metrics.QueryIndex("map_at_k"), "success_10": metrics.QueryIndex("hit_at_k"),
	}
	for _, tc := range []struct {
		gain   metrics.Gain
		oracle map[string]map[string]float64
		only   string
	}{
		{metrics.GainLinear, m10, ""},
		{metrics.GainExp, exp, "ndcg_cut_10"},
	} {
		t.Run(tc.gain.String(), func(t *testing.T) {
			res, err := Compare(q, []Input{{Name: "synth", Run: run}}, Options{
				K: 10, Gain: tc.gain, RelevantLevel: 2, RelevantLevelSet: true, Resamples: 100, Seed: 1,
			})
			require.NoError(t, err)
			assert.Equal(t, [2]int{-2, 6}, [2]int{res.MinLevel, res.MaxLevel})
			s := res.Strategies[0]
			evaluated := map[string]int{}
			for i, id := range res.QueryIDs {
				evaluated[id] = i
			}
			compared := 0
			for measure, mi := range measures {
				if tc.only != "" && measure != tc.only {
					continue
				}
				perQuery := tc.oracle[measure]
				require.Len(t, perQuery, 301, measure) // 300 queries + "all"
				sum := 0.0
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
						// Not counted by the measure (no document of positive gain, or
						// none at level 2 for a binary one): trec_eval scores 0.
						assert.Zero(t, want, "%s %s", measure, qid)
						continue
					}
					assert.InDelta(t, want, got, 1e-9, "%s %s", measure, qid)
					sum += got
					compared++
				}
				assert.InDelta(t, perQuery["all"], sum/300, 1e-9, measure)
			}
			assert.Greater(t, compared, 100)
		})
	}
}
