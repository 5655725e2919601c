package compare_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/input/trecfile"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

// clusterJudge is the judge's grade of query i's document in cluster c: by
// the cluster, one more on every fifth query (1 to 3: every query evaluated).
func clusterJudge(c, i int) int {
	if i%5 == 0 {
		c++
	}
	return 1 + c%3
}

// clusterWorld is 120 queries in 24 clusters of 5 with one document d. The
// judge grades d mostly by the cluster (clusterJudge); people grade
// it the same or one more, by the cluster (a judge biased on some cards, not
// on others); every third query is labelled. Strategy "x" retrieves d, "y"
// retrieves d on the even clusters only. The cases carry the cluster
// (card-NN) and, from cluster 12 on, the locale pt-BR (en before).
func clusterWorld(t *testing.T) (*trecfile.Qrels, []compare.Input, compare.Options, map[string]int) {
	var qr, sh strings.Builder
	var xs, ys []trecfile.RunQuery
	qs := compare.Queries{}
	cluster := map[string]int{}
	for i := range 120 {
		id := fmt.Sprintf("q%03d", i)
		c := i / 5
		j := clusterJudge(c, i)
		hg := min(3, j+(c/3)%2)
		loc := "en"
		if c >= 12 {
			loc = "pt-br"
		}
		qs[id] = compare.Query{Cluster: fmt.Sprintf("card-%02d", c), Locale: loc}
		cluster[id] = c
		fmt.Fprintf(&qr, "%s 0 d %d\n", id, j)
		xs = append(xs, trecfile.RunQuery{ID: id, Docs: []string{"d"}})
		if c%2 == 0 {
			ys = append(ys, trecfile.RunQuery{ID: id, Docs: []string{"d"}})
		}
		if i%3 == 0 {
			fmt.Fprintf(&sh, "%s,d,%d\n", id, hg)
		}
	}
	o := opts()
	o.K = 1
	o.HumanSheet = sheet(t, sh.String())
	return qrels(t, qr.String()), []compare.Input{{Name: "x", Run: run("x.run", xs...)}, {Name: "y", Run: run("y.run", ys...)}}, o, cluster
}

// Human labels over queries in clusters (issue 34 items 2 and 3): the
// corrected estimate is the same, its interval and test come from the
// delete-one-cluster jackknife (metrics.PPIClustered on the same values),
// and the interval is wider than the same data's as if the queries were
// independent.
func TestHumanCorrectionClusters(t *testing.T) {
	q, runs, o, cluster := clusterWorld(t)
	dcg := metrics.QueryIndex("dcg_at_k")
	plain, err := compare.Compare(q, runs, o)
	require.NoError(t, err)
	require.Nil(t, plain.Clusters)
	require.Zero(t, plain.Human.Clusters)

	cl := map[string]string{}
	for id, c := range cluster {
		cl[id] = fmt.Sprintf("card-%02d", c)
	}
	o.Clusters, o.ClustersFile = cl, "clusters.tsv"
	res, err := compare.Compare(q, runs, o)
	require.NoError(t, err)
	h := res.Human
	require.NotNil(t, res.Clusters)
	assert.Equal(t, 24, res.Clusters.Clusters)
	assert.Equal(t, 24, h.Clusters, "every cluster of 5 holds a labelled query (every third)")
	assert.Nil(t, h.Strata)

	// The same values by hand: x's DCG@1 on the labelled queries (human, judge)
	// and the others (judge), with their clusters.
	var s metrics.PPIStratum
	gain := func(g int) float64 { return math.Pow(2, float64(g)) - 1 }
	for i := range 120 {
		id := fmt.Sprintf("q%03d", i)
		c := cluster[id]
		j := clusterJudge(c, i)
		if i%3 == 0 {
			s.Y, s.F, s.YC = append(s.Y, gain(min(3, j+(c/3)%2))), append(s.F, gain(j)), append(s.YC, c)
		} else {
			s.U, s.UC = append(s.U, gain(j)), append(s.UC, c)
		}
	}
	want := metrics.PPIClustered([]metrics.PPIStratum{s})
	got, before := h.Means[0][dcg], plain.Human.Means[0][dcg]
	assert.Equal(t, metrics.MethodPPIClusterJackknife, got.Method)
	assert.Equal(t, metrics.MethodPPIJackknife, before.Method)
	assert.InDelta(t, want.Estimate, got.Estimate, 1e-12)
	assert.InDelta(t, before.Estimate, got.Estimate, 1e-12, "the estimate does not change")
	assert.InDelta(t, want.SE, got.SE, 1e-12)
	assert.InDelta(t, want.Lo, got.Lo, 1e-12)
	assert.Equal(t, 24, got.Clusters)
	assert.Greater(t, got.Hi-got.Lo, 1.2*(before.Hi-before.Lo), "the judge's bias by cluster: the clustered interval is wider")
	assert.False(t, got.Interval().Unreliable, "40 labelled queries in 24 clusters")
	t.Logf("DCG@1 of x: over clusters %.4f [%.4f, %.4f], as if independent [%.4f, %.4f]", got.Estimate, got.Lo, got.Hi, before.Lo, before.Hi)

	// The paired test of y against x uses the same jackknife.
	var pd, pdBefore compare.Paired
	for i, p := range h.Paired {
		if p.Metric == "dcg_at_k" {
			pd, pdBefore = p, plain.Human.Paired[i]
		}
	}
	assert.Equal(t, compare.PMethodPPIClusterJackknife, pd.PMethod)
	assert.Equal(t, compare.PMethodPPIJackknife, pdBefore.PMethod)
	assert.Equal(t, 24, pd.Clusters, "y differs from x on the odd clusters only; every cluster's labelled differences count, 0 or not")
	assert.InDelta(t, pdBefore.Delta, pd.Delta, 1e-12)
	assert.Greater(t, pd.P, pdBefore.P, "the test over clusters is less sure")

	// With the cases' locales too: the stratified estimate over clusters.
	o.Clusters, o.ClustersFile = nil, ""
	o.Queries, o.QueriesFile = compare.Queries{}, "cases.jsonl"
	for id, c := range cluster {
		loc := "en"
		if c >= 12 {
			loc = "pt-br"
		}
		o.Queries[id] = compare.Query{Cluster: fmt.Sprintf("card-%02d", c), Locale: loc}
	}
	st, err := compare.Compare(q, runs, o)
	require.NoError(t, err)
	require.NotNil(t, st.Human.Strata)
	require.False(t, st.Human.Strata.Pooled)
	e := st.Human.Means[0][dcg]
	assert.Equal(t, metrics.MethodPPIStratifiedClusterJackknife, e.Method)
	assert.Equal(t, 24, e.Clusters)
	assert.False(t, math.IsNaN(e.SE))
	assert.Equal(t, metrics.MethodPPIClusterJackknife, st.Human.ByLocale[0][0][dcg].Method)
	assert.Equal(t, 12, st.Human.ByLocale[0][0][dcg].Clusters)
}
