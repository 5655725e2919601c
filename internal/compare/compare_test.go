package compare_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/input/trecfile"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/report/comparereport"
)

func qrels(t *testing.T, content string) *trecfile.Qrels {
	t.Helper()
	q, err := trecfile.ParseQrels(context.Background(), strings.NewReader(content), "qrels.txt")
	require.NoError(t, err)
	return q
}

func run(file string, queries ...trecfile.RunQuery) *trecfile.Run {
	return &trecfile.Run{File: file, Format: "trec", K: 10, Queries: queries}
}

func opts() compare.Options {
	return compare.Options{K: 3, Gain: metrics.GainExp, RelevantLevel: 2, Resamples: 500, Seed: 1}
}

func TestCompareCounts(t *testing.T) {
	q := qrels(t, "qa 0 a1 3\nqa 0 a2 1\nqb 0 b1 2\nqc 0 c1 1\nqd 0 d1 2\nqe 0 e1 0\n")
	// qc has no document at level ≥ 2 but one of positive gain: the graded
	// measures count it, the binary ones do not. qe has nothing of positive gain:
	// excluded and counted. qd is missing from run "x".
	x := run("x.run",
		trecfile.RunQuery{ID: "qa", Docs: []string{"a2", "zz", "a1"}},
		trecfile.RunQuery{ID: "qb", Docs: []string{"b1"}},
		trecfile.RunQuery{ID: "qc", Docs: []string{"c1"}},
		trecfile.RunQuery{ID: "unjudged-query", Docs: []string{"u"}},
	)
	res, err := compare.Compare(q, []compare.Input{{Name: "x", Run: x}}, opts())
	require.NoError(t, err)
	assert.Equal(t, 5, res.Judged)
	assert.Equal(t, 1, res.NotEvaluated)
	assert.Equal(t, 3, res.MaxLevel)
	assert.False(t, res.LevelFallback)
	assert.Equal(t, []string{"qa", "qb", "qc", "qd"}, res.QueryIDs)
	for m, info := range metrics.QueryMeasures {
		want := 4
		if info.Params&metrics.ParamRelevantLevel != 0 {
			want = 3
		}
		assert.Equal(t, want, res.MeasureN[m], info.Key)
	}
	s := res.Strategies[0]
	assert.Equal(t, 4, s.N)
	assert.Equal(t, 1, s.Missing)
	assert.Equal(t, 1, s.NotJudged)
	assert.Equal(t, 4, s.RunQueries)
	// Top-k documents of the evaluated queries: a2 (1), zz (unjudged), a1 (3), b1 (2), c1 (1).
	assert.Equal(t, 5, s.Retrieved)
	assert.Equal(t, 1, s.Unjudged)
	levels, unjudged := s.Distribution()
	assert.Equal(t, []float64{0.2, 0.4, 0.2, 0.2}, levels) // rel 0 (with the unjudged), 1, 2, 3
	assert.Equal(t, 0.2, unjudged)
	// By rank over the judged documents: a2, b1, c1 (qd is missing); zz is
	// unjudged, so rank 2 has none and is undefined; a1.
	assertByPosition(t, []float64{4.0 / 3, math.NaN(), 3}, []int{3, 0, 1}, s)
	assert.Equal(t, []string{"qd"}, s.Failed)                 // qa's top-1 has relevance 1, not 0
	assert.Equal(t, []string{"qa", "qb", "qc", "qd"}, s.Best) // dcg 1 + 7/log2(4) = 4.5, 3, 1, 0
	assert.Equal(t, []string{"qd", "qc", "qb", "qa"}, s.Worst)
	// Binary measures over qa, qb, qd: hit = (1 + 1 + 0) / 3; graded ones over all four.
	assert.InDelta(t, 2.0/3, s.Means[metrics.QueryIndex("hit_at_k")], 1e-12)
	assert.InDelta(t, (4.5+3+1+0)/4, s.Means[metrics.QueryIndex("dcg_at_k")], 1e-12)
	assert.True(t, math.IsNaN(s.Values[2*metrics.NumGraded+metrics.QueryIndex("hit_at_k")]), "qc has no hit@k")
	assert.Equal(t, "x", res.Recommended)
	assert.Empty(t, res.Paired)
}

// Binary qrels (highest level 1) under the default level 2 are evaluated at
// level 1 and say so.
func TestCompareBinaryQrelsFallBack(t *testing.T) {
	q := qrels(t, "qa 0 a1 1\nqa 0 a2 0\nqb 0 b1 1\n")
	x := run("x.run", trecfile.RunQuery{ID: "qa", Docs: []string{"a1"}}, trecfile.RunQuery{ID: "qb", Docs: []string{"zz"}})
	res, err := compare.Compare(q, []compare.Input{{Name: "x", Run: x}}, opts())
	require.NoError(t, err)
	assert.True(t, res.LevelFallback)
	assert.Equal(t, 1, res.RelevantLevel)
	assert.Equal(t, 1, res.MaxLevel)
	assert.InDelta(t, 0.5, res.Strategies[0].Means[metrics.QueryIndex("hit_at_k")], 1e-12)
}

func TestCompareErrors(t *testing.T) {
	q := qrels(t, "qa 0 a1 3\n")
	_, err := compare.Compare(q, []compare.Input{{Name: "x", Run: run("x.run", trecfile.RunQuery{ID: "other", Docs: []string{"a1"}})}}, opts())
	require.EqualError(t, err, `x.run: run "x" has no query in common with the qrels qrels.txt`)

	r := run("x.run", trecfile.RunQuery{ID: "qa", Docs: []string{"a1"}})
	_, err = compare.Compare(q, []compare.Input{{Name: "x", Run: r}, {Name: "x", Run: r}}, opts())
	require.EqualError(t, err, `duplicate strategy name "x"`)

	o := opts()
	o.Baseline = "nope"
	_, err = compare.Compare(q, []compare.Input{{Name: "x", Run: r}}, o)
	require.EqualError(t, err, `baseline "nope" is not one of the runs`)

	// Binary qrels under the default level fall back to level 1; a level given
	// explicitly is kept, and nothing at it is an error.
	o = opts()
	o.RelevantLevelSet = true
	_, err = compare.Compare(qrels(t, "qa 0 a1 1\n"), []compare.Input{{Name: "x", Run: r}}, o)
	require.ErrorContains(t, err, "qrels.txt: no judged query has a document of relevance >= 2 (the highest level is 1)")
	_, err = compare.Compare(qrels(t, "qa 0 a1 0\n"), []compare.Input{{Name: "x", Run: r}}, opts())
	require.ErrorContains(t, err, "qrels.txt: no judged query has a document of relevance >= 1")
	o = opts()
	o.Primary = "nope"
	_, err = compare.Compare(q, []compare.Input{{Name: "x", Run: r}}, o)
	require.ErrorContains(t, err, `primary measure "nope" is not one of dcg_at_k`)
}

// synthetic builds n queries, each with one document of relevance 3 (g), one of
// relevance 2 (s) and junk, and runs whose chance of ranking g first is given.
func synthetic(t *testing.T, n int, strategies map[string]float64, order []string) (*trecfile.Qrels, []compare.Input) {
	var qb strings.Builder
	for i := range n {
		fmt.Fprintf(&qb, "q%04d 0 g 3\nq%04d 0 s 2\nq%04d 0 j 0\n", i, i, i)
	}
	q := qrels(t, qb.String())
	var in []compare.Input
	for si, name := range order {
		r := rand.New(rand.NewPCG(uint64(si)+1, 2))
		var qs []trecfile.RunQuery
		for i := range n {
			docs := []string{"j", "s", "g"}
			if r.Float64() < strategies[name] {
				docs = []string{"g", "s", "j"}
			}
			qs = append(qs, trecfile.RunQuery{ID: fmt.Sprintf("q%04d", i), Docs: docs})
		}
		in = append(in, compare.Input{Name: name, Run: run(name+".run", qs...)})
	}
	return q, in
}

func TestCompareRecommendationAndDiagnosis(t *testing.T) {
	q, in := synthetic(t, 400, map[string]float64{"ann": 0.3, "hybrid": 0.6, "hybrid+rerank": 0.62}, []string{"ann", "hybrid", "hybrid+rerank"})
	res, err := compare.Compare(q, in, opts())
	require.NoError(t, err)
	assert.True(t, res.Exact)
	assert.Equal(t, "ann", res.Baseline)
	require.Len(t, res.Paired, 2*metrics.NumGraded)
	p := res.Paired[0]
	assert.Equal(t, "hybrid", p.Strategy)
	assert.Equal(t, "dcg_at_k", p.Metric)
	assert.True(t, p.Significant)
	assert.Greater(t, p.Delta, 0.0)
	assert.Less(t, p.CI.Lo, p.Delta)
	assert.Greater(t, p.CI.Hi, p.Delta)
	// hybrid+rerank and hybrid are close: no clear winner.
	assert.Equal(t, compare.NoClearWinner, res.Recommended)
	require.NotNil(t, res.Leader)
	assert.False(t, res.Leader.Significant)
	assert.True(t, finding(t, res, compare.HybridVsDense, "hybrid", "ann").Better())
	rr := finding(t, res, compare.Reranker, "hybrid+rerank", "hybrid")
	assert.False(t, rr.Better() || rr.Worse(), "no significant gain")

	q, in = synthetic(t, 400, map[string]float64{"ann": 0.3, "hybrid": 0.7}, []string{"ann", "hybrid"})
	res, err = compare.Compare(q, in, opts())
	require.NoError(t, err)
	assert.Equal(t, "hybrid", res.Recommended)
}

// finding returns the finding of kind about a (and b, when not empty; a too
// when not empty), failing the test when there is none.
func finding(t *testing.T, res *compare.Result, kind compare.FindingKind, a, b string) compare.Finding {
	t.Helper()
	for _, f := range res.Findings {
		if f.Kind == kind && (a == "" || f.A == a) && (b == "" || f.B == b) {
			return f
		}
	}
	t.Fatalf("no finding %d about %q and %q in %+v", kind, a, b, res.Findings)
	return compare.Finding{}
}

func TestCompareJSONDeterministic(t *testing.T) {
	render := func() []byte {
		q, in := synthetic(t, 300, map[string]float64{"a": 0.3, "b": 0.5, "c": 0.5}, []string{"a", "b", "c"})
		res, err := compare.Compare(q, in, compare.Options{K: 3, Gain: metrics.GainExp, RelevantLevel: 2, Resamples: 1000, Seed: 1})
		require.NoError(t, err)
		var b bytes.Buffer
		require.NoError(t, comparereport.New(res).WriteJSON(&b))
		require.NoError(t, comparereport.PerQuery(&b, res))
		require.NoError(t, comparereport.New(res).Markdown(&b))
		require.NoError(t, comparereport.New(res).Text(&b))
		return b.Bytes()
	}
	first := render()
	prev := runtime.GOMAXPROCS(1)
	second := render()
	runtime.GOMAXPROCS(prev)
	assert.Equal(t, string(first), string(second))
}

func TestCompareApproximationMatchesResampling(t *testing.T) {
	q, in := synthetic(t, 600, map[string]float64{"a": 0.5, "b": 0.56}, []string{"a", "b"})
	exact, err := compare.Compare(q, in, compare.Options{K: 3, RelevantLevel: 2, Resamples: 2500, Seed: 1})
	require.NoError(t, err)
	require.True(t, exact.Exact)
	// 100,000 resamples × 600 queries exceeds the budget: approximations.
	approx, err := compare.Compare(q, in, compare.Options{K: 3, RelevantLevel: 2, Resamples: 100000, Seed: 1})
	require.NoError(t, err)
	require.False(t, approx.Exact)
	for s := range exact.Strategies {
		for m := range metrics.NumGraded {
			e, a := exact.Strategies[s].CI[m], approx.Strategies[s].CI[m]
			w := e.Hi - e.Lo
			assert.InDelta(t, e.Lo, a.Lo, 0.1*w+1e-12, "%d %s", s, metrics.GradedKeys[m])
			assert.InDelta(t, e.Hi, a.Hi, 0.1*w+1e-12, "%d %s", s, metrics.GradedKeys[m])
		}
	}
	for i := range exact.Paired {
		// Exact tests agree at any resamples; beyond the budget the saddlepoint
		// p is within Monte Carlo error of the 2,500-resample p.
		e, a := exact.Paired[i], approx.Paired[i]
		if a.PMethod == metrics.PMethodSaddlepoint {
			assert.InDelta(t, e.P, a.P, 3*math.Sqrt(e.P*(1-e.P)/2500)+2.0/2500, e.Metric)
		} else {
			assert.Equal(t, e.P, a.P, e.Metric)
		}
	}
}

func TestCompareDiagnosisLexicalUnjudgedMissing(t *testing.T) {
	q, in := synthetic(t, 400, map[string]float64{"bm25": 0.3, "hybrid": 0.7}, []string{"bm25", "hybrid"})
	res, err := compare.Compare(q, in, opts())
	require.NoError(t, err)
	assert.True(t, finding(t, res, compare.HybridVsLexical, "hybrid", "bm25").Better())
	for _, s := range res.Strategies {
		assert.False(t, s.Judged.Low, s.Name)
	}

	// A run whose top k is mostly unjudged and that misses an evaluated query.
	q2 := qrels(t, "qa 0 a1 3\nqb 0 b1 2\n")
	x := run("x.run", trecfile.RunQuery{ID: "qa", Docs: []string{"u1", "u2", "a1"}})
	res, err = compare.Compare(q2, []compare.Input{{Name: "x", Run: x}}, opts())
	require.NoError(t, err)
	u := res.Strategies[0].Judged
	assert.True(t, u.Low)
	assert.InDelta(t, 1.0/3, u.Mean, 1e-12, "judged@k: a1 of u1, u2, a1")
	assert.Equal(t, 1, u.N, "qb has no result: not counted")
	m := finding(t, res, compare.MissingQueries, "x", "")
	assert.Equal(t, [2]int{1, 2}, [2]int{m.Count, m.N})
}

// The primary measure's tests are Holm-adjusted across the strategies only;
// each secondary measure within its own family.
func TestComparePrimaryFamily(t *testing.T) {
	q, in := synthetic(t, 200, map[string]float64{"a": 0.3, "b": 0.45, "c": 0.5}, []string{"a", "b", "c"})
	res, err := compare.Compare(q, in, opts())
	require.NoError(t, err)
	byMetric := map[string][]compare.Paired{}
	for _, p := range res.Paired {
		byMetric[p.Metric] = append(byMetric[p.Metric], p)
	}
	require.Len(t, byMetric, metrics.NumGraded)
	for key, ps := range byMetric {
		require.Len(t, ps, 2, key)
		want := metrics.Holm([]float64{ps[0].P, ps[1].P})
		assert.Equal(t, want[0], ps[0].PHolm, key)
		assert.Equal(t, want[1], ps[1].PHolm, key)
		assert.Equal(t, key == compare.Primary, ps[0].Primary, key)
		assert.NotEmpty(t, ps[0].PMethod, key)
	}
	// hit@k is 0/1: exact McNemar (no test where no query differs), its
	// interval inverted from it; MRR@k (differences 0, ±1/2) on its lattice:
	// exact sign-flip.
	for _, p := range byMetric["hit_at_k"] {
		assert.Contains(t, []string{metrics.PMethodMcNemar, metrics.PMethodNoDifference}, p.PMethod)
		if p.PMethod == metrics.PMethodMcNemar {
			assert.Equal(t, metrics.MethodMcNemarInverted, p.CI.Method)
		} else {
			assert.Equal(t, 1.0, p.P)
			assert.Equal(t, metrics.MethodRuleOfThree, p.CI.Method)
		}
	}
	assert.Equal(t, metrics.PMethodSignFlipExact, byMetric["mrr_at_k"][0].PMethod)

	// Another primary: the recommendation's test is on it.
	o := opts()
	o.Primary = "hit_at_k"
	res, err = compare.Compare(q, in, o)
	require.NoError(t, err)
	require.NotNil(t, res.Leader)
	assert.Equal(t, "hit_at_k", res.Leader.Metric)
	assert.True(t, res.Leader.Primary)
}

// n = 5 with every query favouring one run by about as much: the hall-t
// interval alone excluded 0 while the exact sign-flip test (p = 2/32) is not
// significant, and the comparison said why (small-n); the interval of paired
// differences below 50 queries is now hall-t united with the betting interval,
// which covers at every n and here includes 0, as the test does: no
// disagreement to explain. (At n = 2 hall-t alone already included 0: t with
// one degree of freedom.)
func TestCompareDisagreementHasReason(t *testing.T) {
	var qs strings.Builder
	var ra, rb []trecfile.RunQuery
	for i, rank := range []int{2, 2, 3, 2, 3} {
		id := fmt.Sprintf("q%d", i+1)
		fmt.Fprintf(&qs, "%s 0 g 3\n%s 0 s 2\n", id, id)
		docs := []string{"x", "s"}[:rank-1]
		ra = append(ra, trecfile.RunQuery{ID: id, Docs: append(append([]string(nil), docs...), "g")})
		rb = append(rb, trecfile.RunQuery{ID: id, Docs: []string{"g", "s"}})
	}
	q := qrels(t, qs.String())
	res, err := compare.Compare(q, []compare.Input{{Name: "a", Run: run("a.run", ra...)}, {Name: "b", Run: run("b.run", rb...)}}, opts())
	require.NoError(t, err)
	p := res.Paired[metrics.QueryIndex(compare.Primary)]
	require.Equal(t, compare.Primary, p.Metric)
	assert.LessOrEqual(t, p.CI.Lo, 0.0, "the interval includes 0")
	assert.Greater(t, p.CI.Hi, 0.0)
	assert.Equal(t, metrics.MethodHallTBetting, p.CI.Method)
	assert.False(t, p.Significant)
	assert.Equal(t, 0.0625, p.P)
	assert.Equal(t, metrics.PMethodSignFlipExact, p.PMethod)
	assert.Empty(t, p.Note)
	assert.False(t, p.CI.Unreliable)
	for _, p := range res.Paired {
		excludes := p.CI.Lo > 0 || p.CI.Hi < 0
		assert.True(t, excludes == p.Significant || p.Note != "", "%s: a disagreement without a reason", p.Metric)
	}
}

// TestCompareWideScale checks relevance outside 0..3, from TREC and JSONL
// qrels, against hand-computed values: a negative judgment has gain 0, is not
// relevant and is not in the ideal ranking (trec_eval); a level 4 has gain
// 2^4 − 1 = 15 (exp) or 4 (linear).
func TestCompareWideScale(t *testing.T) {
	trec := "q1 0 d1 4\nq1 0 d2 -1\nq1 0 d3 1\nq1 0 d4 0\nq2 0 d5 -1\nq2 0 d6 2\n"
	var jsonl strings.Builder
	for _, l := range strings.Split(strings.TrimSpace(trec), "\n") {
		f := strings.Fields(l)
		fmt.Fprintf(&jsonl, `{"query_id":%q,"doc_id":%q,"relevance":%s}`+"\n", f[0], f[2], f[3])
	}
	x := run("x.run",
		trecfile.RunQuery{ID: "q1", Docs: []string{"d2", "d1", "d3"}},
		trecfile.RunQuery{ID: "q2", Docs: []string{"d5", "zz", "d6"}},
	)
	l3 := math.Log2(3)
	for name, content := range map[string]string{"trec": trec, "jsonl": jsonl.String()} {
		for _, tc := range []struct {
			gain      metrics.Gain
			dcg, ndcg [2]float64 // q1, q2
		}{
			// q1 ranks -1, 4, 1 (ideal 4, 1); q2 ranks -1, unjudged, 2 (ideal 2).
			{metrics.GainExp, [2]float64{15/l3 + 1.0/2, 3.0 / 2}, [2]float64{(15/l3 + 1.0/2) / (15 + 1/l3), 0.5}},
			{metrics.GainLinear, [2]float64{4/l3 + 1.0/2, 2.0 / 2}, [2]float64{(4/l3 + 1.0/2) / (4 + 1/l3), 0.5}},
		} {
			t.Run(name+"/"+tc.gain.String(), func(t *testing.T) {
				o := opts()
				o.Gain = tc.gain
				res, err := compare.Compare(qrels(t, content), []compare.Input{{Name: "x", Run: x}}, o)
				require.NoError(t, err)
				assert.Equal(t, [2]int{-1, 4}, [2]int{res.MinLevel, res.MaxLevel})
				assert.Equal(t, []string{"q1", "q2"}, res.QueryIDs)
				s := res.Strategies[0]
				at := func(i int, key string) float64 { return s.Values[i*metrics.NumGraded+metrics.QueryIndex(key)] }
				for i := range 2 {
					assert.InDelta(t, tc.dcg[i], at(i, "dcg_at_k"), 1e-12, "dcg q%d", i+1)
					assert.InDelta(t, tc.ndcg[i], at(i, "ndcg_at_k"), 1e-12, "ndcg q%d", i+1)
					assert.InDelta(t, 1.0/3, at(i, "precision_at_k"), 1e-15) // one document ≥ 2 in the top 3
				}
				assert.InDelta(t, 1.0/2, at(0, "mrr_at_k"), 1e-15)
				assert.InDelta(t, 1.0/3, at(1, "mrr_at_k"), 1e-15)
				assert.InDelta(t, 5.0/3, at(0, "mean_relevance_at_k"), 1e-15) // (0 + 4 + 1) / 3: -1 counts 0
				assert.InDelta(t, 2.0/3, at(1, "mean_relevance_at_k"), 1e-15)
				// Top-3 documents by level 0..4 (the negative ones at 0), the unjudged
				// ones: zz and the two negative labels, which trec_eval reads as "in
				// the pool, but unjudged" (issue 34).
				assert.Equal(t, []int{3, 1, 1, 0, 1}, s.ByLevel)
				assert.Equal(t, 3, s.Unjudged)
				assertByPosition(t, []float64{math.NaN(), 4, 1.5}, []int{0, 1, 2}, s) // -1 and zz are not judged
				assert.Equal(t, []string{"q1", "q2"}, s.Failed)                       // a negative top-1 fails
			})
		}
	}
}

// assertByPosition checks the mean relevance by rank (NaN: none judged there)
// and the judged documents at each rank.
func assertByPosition(t *testing.T, want []float64, n []int, s compare.Strategy) {
	t.Helper()
	assert.Equal(t, n, s.ByPositionN)
	require.Len(t, s.ByPosition, len(want))
	for r, w := range want {
		if math.IsNaN(w) {
			assert.True(t, math.IsNaN(s.ByPosition[r]), "rank %d: undefined, not %v", r+1, s.ByPosition[r])
			continue
		}
		assert.InDelta(t, w, s.ByPosition[r], 1e-15, "rank %d", r+1)
	}
}

// Issue 34 item 1 and issue 32 item 2: two strategies that return identical
// lists on every query. Every difference is 0: the comparison says the
// rankings are identical, tests nothing (p = 1, no-difference), gives the
// rule-of-three interval (DCG@10 at 60 queries: ±1.575 of a range of 31.8,
// where bounded-wilson-cc gave ±8.299), and the recommendation is no clear
// winner because the two are identical.
func TestCompareIdenticalRankings(t *testing.T) {
	var ql strings.Builder
	var qs []trecfile.RunQuery
	for i := range 60 {
		id := fmt.Sprintf("q%02d", i)
		fmt.Fprintf(&ql, "%s 0 %s-a %d\n%s 0 %s-b %d\n", id, id, 1+i%3, id, id, i%2)
		docs := []string{id + "-a", id + "-b", id + "-x"}
		if i%4 == 0 {
			docs = []string{id + "-x", id + "-b", id + "-a"}
		}
		qs = append(qs, trecfile.RunQuery{ID: id, Docs: docs})
	}
	q := qrels(t, ql.String())
	copyOf := make([]trecfile.RunQuery, len(qs))
	for i, rq := range qs {
		copyOf[i] = trecfile.RunQuery{ID: rq.ID, Docs: append([]string(nil), rq.Docs...)}
	}
	o := opts()
	o.K = 10
	res, err := compare.Compare(q, []compare.Input{{Name: "dense", Run: run("a.run", qs...)}, {Name: "dense-copy", Run: run("b.run", copyOf...)}}, o)
	require.NoError(t, err)
	assert.True(t, res.Identical(0, 1))
	w := metrics.QueryIndex(metrics.KeyDCG)
	lo, hi := metrics.QueryRange(metrics.QueryMeasures[w].Info, 10, metrics.GainExp, 3)
	u := 1 - math.Pow(0.05, 1.0/59)
	for _, p := range res.Paired {
		assert.True(t, p.Identical, p.Metric)
		assert.Equal(t, 0.0, p.Delta, p.Metric)
		assert.Equal(t, 1.0, p.P, p.Metric)
		assert.Equal(t, metrics.PMethodNoDifference, p.PMethod, p.Metric)
		assert.Equal(t, metrics.MethodRuleOfThree, p.CI.Method, p.Metric)
		assert.False(t, p.Significant)
		assert.Empty(t, p.Note)
		if p.Metric == metrics.KeyDCG {
			assert.InDelta(t, u*(hi-lo), p.CI.Hi, 1e-12)
			assert.InDelta(t, -u*(hi-lo), p.CI.Lo, 1e-12)
			assert.InDelta(t, 1.575, p.CI.Hi*31.805/(hi-lo), 5e-4, "scaled to the issue's range 31.805")
		}
	}
	require.NotNil(t, res.Leader)
	assert.True(t, res.Leader.Identical)
	assert.Equal(t, compare.NoClearWinner, res.Recommended)

	// One query ranked differently: not identical, and its measures differ.
	copyOf[5].Docs = []string{copyOf[5].Docs[1], copyOf[5].Docs[0], copyOf[5].Docs[2]}
	res, err = compare.Compare(q, []compare.Input{{Name: "dense", Run: run("a.run", qs...)}, {Name: "dense-copy", Run: run("b.run", copyOf...)}}, o)
	require.NoError(t, err)
	assert.False(t, res.Identical(0, 1))
	for _, p := range res.Paired {
		assert.False(t, p.Identical, p.Metric)
	}
}
