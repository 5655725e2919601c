package compare_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/floor"
	"github.com/retrieval-gate/retrieval-gate/internal/input/trecfile"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
	"github.com/retrieval-gate/retrieval-gate/internal/report/comparereport"
)

func TestReadClusters(t *testing.T) {
	got, err := compare.ReadClusters(context.Background(), strings.NewReader("\uFEFF# query cluster\nq1 card-a\n\nq2\tcard-a\r\n  q3   card-b  \n"), "c.tsv")
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"q1": "card-a", "q2": "card-a", "q3": "card-b"}, got)
	for _, c := range []struct{ in, msg string }{
		{"q1 a\nq1 b\n", `c.tsv:2: query "q1" given twice (first on line 1, in cluster "a")`},
		{"q1\n", "c.tsv:1: a clusters line is `QUERY_ID CLUSTER` (2 fields), got 1"},
		{"q1 a b\n", "c.tsv:1: a clusters line is `QUERY_ID CLUSTER` (2 fields), got 3"},
		{"q1 a\n{\"query_id\": \"q2\", \"cluster\": \"b\"}\n", "c.tsv:2: a JSON object, but a clusters line is `QUERY_ID CLUSTER` (for a table of queries and clusters, give it to --queries as cases with `id` and `cluster`)"},
		{"q1 a\n" + strings.Repeat("x", compare.MaxClustersLine+1) + "\n", "c.tsv:2: line longer than 1 MiB"},
	} {
		_, err := compare.ReadClusters(context.Background(), strings.NewReader(c.in), "c.tsv")
		require.EqualError(t, err, c.msg)
	}
}

// Issue 34 item 2: 20 families of 3 queries; the second run finds the
// relevant document first on every query of 4 families and nowhere else. Over
// queries that is 12 improvements and no loss (McNemar p = 2·2⁻¹²); over
// families it is 4 of 20 families improving (the sign-flip of their sums: p =
// 2·2⁻⁴ = 0.125): not significant, and the reports say the statistics are
// over the clusters.
func TestCompareClusters(t *testing.T) {
	var ql, cl strings.Builder
	var a, b []trecfile.RunQuery
	for f := range 20 {
		for j := range 3 {
			id := fmt.Sprintf("q%02d-%d", f, j)
			fmt.Fprintf(&ql, "%s 0 %s-g 3\n%s 0 %s-x 0\n", id, id, id, id)
			fmt.Fprintf(&cl, "%s card-%02d\n", id, f)
			a = append(a, trecfile.RunQuery{ID: id, Docs: []string{id + "-x", id + "-g"}})
			docs := []string{id + "-x", id + "-g"}
			if f < 4 {
				docs = []string{id + "-g", id + "-x"}
			}
			b = append(b, trecfile.RunQuery{ID: id, Docs: docs})
		}
	}
	q := qrels(t, ql.String())
	o := opts()
	o.K = 1
	in := []compare.Input{{Name: "dense", Run: run("a.run", a...)}, {Name: "hybrid", Run: run("b.run", b...)}}
	hit := func(res *compare.Result) compare.Paired {
		for _, p := range res.Paired {
			if p.Metric == metrics.KeyGradedHit {
				return p
			}
		}
		t.Fatal("no hit comparison")
		return compare.Paired{}
	}
	plain, err := compare.Compare(q, in, o)
	require.NoError(t, err)
	p := hit(plain)
	assert.Equal(t, metrics.PMethodMcNemar, p.PMethod)
	assert.InDelta(t, 1.0/2048, p.P, 1e-12)
	assert.True(t, p.Significant)
	assert.Nil(t, plain.Clusters)

	cls, err := compare.ReadClusters(context.Background(), strings.NewReader(cl.String()), "clusters.tsv")
	require.NoError(t, err)
	o.Clusters, o.ClustersFile = cls, "clusters.tsv"
	res, err := compare.Compare(q, in, o)
	require.NoError(t, err)
	require.NotNil(t, res.Clusters)
	assert.Equal(t, compare.Clusters{File: "clusters.tsv", Queries: 60, Clusters: 20, Listed: 60}, *res.Clusters)
	p = hit(res)
	assert.Equal(t, metrics.PMethodClusterSignFlipExact, p.PMethod)
	assert.InDelta(t, 0.125, p.P, 1e-12)
	assert.False(t, p.Significant)
	assert.Equal(t, 60, p.N)
	assert.Equal(t, 20, p.Clusters)
	assert.Equal(t, metrics.MethodClusterT, p.CI.Method)
	assert.InDelta(t, 0.2, p.Delta, 1e-12)
	// 4 families of 20 differ: the t interval is marked unreliable and the
	// test decides (its interval [0.008, 0.392] excludes 0 where p = 0.125).
	assert.True(t, p.CI.Unreliable)
	assert.Equal(t, compare.NoteSmallN, p.Note)
	assert.Equal(t, metrics.MethodClusterT, res.Strategies[1].CI[metrics.QueryIndex(metrics.KeyDCG)].Method)
	assert.Equal(t, metrics.MethodBoundedWilson, res.Strategies[0].CI[metrics.QueryIndex(metrics.KeyDCG)].Method, "every DCG 0: the bounded interval over the 20 families")
	assert.Equal(t, int64(60), res.Strategies[0].CI[metrics.QueryIndex(metrics.KeyDCG)].N)
	assert.Equal(t, compare.NoClearWinner, res.Recommended)

	doc := comparereport.New(res)
	var js, md, txt bytes.Buffer
	require.NoError(t, doc.WriteJSON(&js))
	assert.Contains(t, js.String(), `"clusters": {`)
	assert.Contains(t, js.String(), `"p_value_method": "cluster-exact-sign-flip"`)
	require.NoError(t, doc.Markdown(&md))
	require.NoError(t, doc.Text(&txt))
	const line = "Queries in families: 60 queries in 20 clusters (clusters.tsv; 60 of the queries listed, each other one a cluster of its own)"
	assert.Contains(t, md.String(), line)
	assert.Contains(t, txt.String(), line)
	// Read back, the document says the same.
	back, err := comparereport.Read(bytes.NewReader(js.Bytes()))
	require.NoError(t, err)
	assert.Equal(t, doc.ClustersLine(func(s string) string { return s }), back.ClustersLine(func(s string) string { return s }))
	// More clusters than queries is refused on reading back.
	at := strings.Index(js.String(), `"clusters": {`) // statistics.clusters
	require.Positive(t, at)
	bad := js.String()[:at] + strings.Replace(js.String()[at:], `"clusters": 20,`, `"clusters": 99,`, 1)
	require.NotEqual(t, js.String(), bad)
	_, err = comparereport.Read(strings.NewReader(bad))
	require.ErrorContains(t, err, "statistics.clusters.queries")
}

// TestCompareClustersHull: a strategy's mean over queries in families is the
// cluster-t interval widened to the queries' own where that reaches further
// (cluster-t-hull): hit@1 59 of 60 over 30 families of 2 reads cluster-t
// [0.949, 1] alone, where Wilson-cc over the queries gives a lower bound near
// 0.90; families never make an interval narrower.
func TestCompareClustersHull(t *testing.T) {
	var ql, cl strings.Builder
	var a []trecfile.RunQuery
	for f := range 30 {
		for j := range 2 {
			id := fmt.Sprintf("q%02d-%d", f, j)
			fmt.Fprintf(&ql, "%s 0 %s-g 1\n%s 0 %s-x 0\n", id, id, id, id)
			fmt.Fprintf(&cl, "%s card-%02d\n", id, f)
			docs := []string{id + "-g", id + "-x"}
			if f == 0 && j == 0 {
				docs = []string{id + "-x", id + "-g"}
			}
			a = append(a, trecfile.RunQuery{ID: id, Docs: docs})
		}
	}
	q := qrels(t, ql.String())
	o := opts()
	o.K = 1
	in := []compare.Input{{Name: "dense", Run: run("a.run", a...)}}
	hitIdx := metrics.QueryIndex(metrics.KeyGradedHit)
	plain, err := compare.Compare(q, in, o)
	require.NoError(t, err)
	items := plain.Strategies[0].CI[hitIdx]
	assert.Equal(t, metrics.MethodWilson, items.Method)

	cls, err := compare.ReadClusters(context.Background(), strings.NewReader(cl.String()), "clusters.tsv")
	require.NoError(t, err)
	o.Clusters, o.ClustersFile = cls, "clusters.tsv"
	res, err := compare.Compare(q, in, o)
	require.NoError(t, err)
	ci := res.Strategies[0].CI[hitIdx]
	assert.Equal(t, metrics.MethodClusterHull, ci.Method)
	assert.InDelta(t, items.Lo, ci.Lo, 1e-12, "the queries' Wilson lower bound reaches further than cluster-t's")
	assert.Less(t, ci.Lo, 0.93)
	assert.InDelta(t, 1.0, ci.Hi, 1e-12)
	// cluster-t alone, over the same 30 families, is the narrower interval.
	xs, idx := make([]float64, 60), make([]int, 60)
	for i := range xs {
		xs[i], idx[i] = 1, i/2
	}
	xs[0] = 0
	alone := metrics.ClusterCI95(xs, idx, 30, 0, 1)
	assert.Equal(t, metrics.MethodClusterT, alone.Method)
	assert.InDelta(t, 0.949, alone.Lo, 0.001)
	assert.Greater(t, alone.Lo, ci.Lo)
}

// A floor's detectable difference over queries in clusters is the clusters':
// the standard error of cluster-t (as check's floors over cases in families),
// not the binomial one of queries taken as independent.
func TestCompareClustersFloor(t *testing.T) {
	var ql, cl strings.Builder
	var a []trecfile.RunQuery
	xs, idx := make([]float64, 0, 60), make([]int, 0, 60)
	for f := range 30 {
		for j := range 2 {
			id := fmt.Sprintf("q%02d-%d", f, j)
			fmt.Fprintf(&ql, "%s 0 %s-g 1\n%s 0 %s-x 0\n", id, id, id, id)
			fmt.Fprintf(&cl, "%s card-%02d\n", id, f)
			docs := []string{id + "-g", id + "-x"}
			hit := 1.0
			if f%3 == 0 { // a family misses together
				docs, hit = []string{id + "-x", id + "-g"}, 0
			}
			a = append(a, trecfile.RunQuery{ID: id, Docs: docs})
			xs, idx = append(xs, hit), append(idx, f)
		}
	}
	q := qrels(t, ql.String())
	o := opts()
	o.K = 1
	o.Gate = compare.GateOptions{Strategy: "dense", Floors: floor.List{{Measure: metrics.KeyGradedHit, Group: outcome.GroupOverall, Value: 0.5}}}
	in := []compare.Input{{Name: "dense", Run: run("a.run", a...)}}
	plain, err := compare.Compare(q, in, o)
	require.NoError(t, err)
	_, up := metrics.MDDProportion(0.5, 60, metrics.DefaultAlpha, metrics.DefaultPower)
	require.Len(t, plain.Gates, 1)
	assert.InDelta(t, up, plain.Gates[0].Detectable, 1e-12, "queries as independent: the binomial detectable difference")

	cls, err := compare.ReadClusters(context.Background(), strings.NewReader(cl.String()), "clusters.tsv")
	require.NoError(t, err)
	o.Clusters, o.ClustersFile = cls, "clusters.tsv"
	res, err := compare.Compare(q, in, o)
	require.NoError(t, err)
	se, G := metrics.ClusterMeanSE(xs, idx, 30)
	require.Equal(t, int64(30), G)
	want := metrics.MDDMean(se*math.Sqrt(60), 60, metrics.DefaultAlpha, metrics.DefaultPower)
	require.Len(t, res.Gates, 1)
	assert.InDelta(t, want, res.Gates[0].Detectable, 1e-12)
	assert.Greater(t, res.Gates[0].Detectable, plain.Gates[0].Detectable, "families that move together detect less")
}

// A series of 0s and 1s is a proportion only on a measure whose range is
// [0, 1]: DCG@1 and relevance/k@1 of six queries whose relevant document of
// relevance 1 comes first are 1 each, and with relevance 3 in the qrels their
// range is [0, 7] and [0, 3]. Their interval is not the Wilson interval of six
// successes, which ends at 1 (it read [0.517, 1]), and a floor's detectable
// difference is not the binomial one of a proportion.
func TestCompareZeroOneValuesOfAWiderRange(t *testing.T) {
	var ql strings.Builder
	var a []trecfile.RunQuery
	for i := range 6 {
		id := fmt.Sprintf("q%d", i)
		fmt.Fprintf(&ql, "%s 0 %s-g 1\n%s 0 %s-h 3\n", id, id, id, id)
		a = append(a, trecfile.RunQuery{ID: id, Docs: []string{id + "-g", id + "-h"}})
	}
	o := opts()
	o.K = 1
	o.Gate = compare.GateOptions{Strategy: "dense", Floors: floor.List{{Measure: metrics.KeyDCG, Group: outcome.GroupOverall, Value: 0.9}}}
	res, err := compare.Compare(qrels(t, ql.String()), []compare.Input{{Name: "dense", Run: run("a.run", a...)}}, o)
	require.NoError(t, err)
	for _, key := range []string{metrics.KeyDCG, metrics.KeyRelPerK, metrics.KeyMeanRel} {
		m := metrics.QueryIndex(key)
		require.Equal(t, 1.0, res.Strategies[0].Means[m], key)
		ci := res.Strategies[0].CI[m]
		assert.NotEqual(t, metrics.MethodWilson, ci.Method, key)
		assert.Greater(t, ci.Hi, 1.0, key)
	}
	require.Len(t, res.Gates, 1)
	assert.True(t, math.IsNaN(res.Gates[0].Detectable), "no spread: the detectable difference cannot be estimated")
	require.NotEmpty(t, res.Gates[0].Why)
	assert.Equal(t, outcome.NoSpread, res.Gates[0].Why[len(res.Gates[0].Why)-1].Code)
}

// The wide-intervals scenario's power calculation counts the families: the
// queries that detect the best two's observed difference come from the
// cluster-robust standard error (as the floors' detectable difference does),
// not from the sd of the per-query differences as if each query were
// independent. Five families of 4 queries, two of which the second run
// improves on every query and one it worsens on every query.
func TestCompareClustersQueriesToSeparate(t *testing.T) {
	var ql, cl strings.Builder
	var a, b []trecfile.RunQuery
	var d []float64
	var idx []int
	up := 7 - 7/math.Log2(3) // DCG@2 of the relevant document at rank 1 rather than 2
	for f := range 5 {
		for j := range 4 {
			id := fmt.Sprintf("q%d-%d", f, j)
			fmt.Fprintf(&ql, "%s 0 %s-g 3\n%s 0 %s-x 0\n", id, id, id, id)
			fmt.Fprintf(&cl, "%s card-%d\n", id, f)
			first, second := []string{id + "-g", id + "-x"}, []string{id + "-g", id + "-x"}
			diff := 0.0
			switch f {
			case 0, 1:
				first, diff = []string{id + "-x", id + "-g"}, up
			case 2:
				second, diff = []string{id + "-x", id + "-g"}, -up
			}
			a = append(a, trecfile.RunQuery{ID: id, Docs: first})
			b = append(b, trecfile.RunQuery{ID: id, Docs: second})
			d, idx = append(d, diff), append(idx, f)
		}
	}
	o := opts()
	o.K = 2
	cls, err := compare.ReadClusters(context.Background(), strings.NewReader(cl.String()), "clusters.tsv")
	require.NoError(t, err)
	o.Clusters, o.ClustersFile = cls, "clusters.tsv"
	res, err := compare.Compare(qrels(t, ql.String()), []compare.Input{{Name: "a", Run: run("a.run", a...)}, {Name: "b", Run: run("b.run", b...)}}, o)
	require.NoError(t, err)
	require.NotNil(t, res.Leader)
	require.False(t, res.Leader.Significant)
	var wide *compare.Scenario
	for i := range res.Scenarios {
		if res.Scenarios[i].Code == compare.WideIntervalsScenario {
			wide = &res.Scenarios[i]
		}
	}
	require.NotNil(t, wide)
	delta := math.Abs(res.Leader.Delta)
	se, G := metrics.ClusterMeanSE(d, idx, 5)
	require.Equal(t, int64(5), G)
	want := max(compare.WideMinQueries, metrics.QueriesToDetect(se*math.Sqrt(20), delta, compare.Alpha, compare.Power))
	assert.Equal(t, want, wide.QueriesToSeparate)
	independent := max(compare.WideMinQueries, metrics.QueriesToDetect(metrics.SampleSDOf(d), delta, compare.Alpha, compare.Power))
	assert.Greater(t, wide.QueriesToSeparate, independent, "families that move together need more queries")
}

// A floor over clusters whose means do not vary is not decided as if the
// queries were independent: 60 queries that all hit in 3 families read the
// binomial detectable difference of 60 queries; the clusters' standard error
// is 0, and the figure cannot be estimated.
func TestCompareClustersFloorNoSpread(t *testing.T) {
	var ql, cl strings.Builder
	var a []trecfile.RunQuery
	for i := range 60 {
		id := fmt.Sprintf("q%02d", i)
		fmt.Fprintf(&ql, "%s 0 %s-g 1\n%s 0 %s-x 0\n", id, id, id, id)
		fmt.Fprintf(&cl, "%s card-%d\n", id, i%3)
		a = append(a, trecfile.RunQuery{ID: id, Docs: []string{id + "-g", id + "-x"}})
	}
	o := opts()
	o.K = 1
	o.Gate = compare.GateOptions{Strategy: "dense", Floors: floor.List{{Measure: metrics.KeyGradedHit, Group: outcome.GroupOverall, Value: 0.9}}}
	cls, err := compare.ReadClusters(context.Background(), strings.NewReader(cl.String()), "clusters.tsv")
	require.NoError(t, err)
	o.Clusters, o.ClustersFile = cls, "clusters.tsv"
	res, err := compare.Compare(qrels(t, ql.String()), []compare.Input{{Name: "dense", Run: run("a.run", a...)}}, o)
	require.NoError(t, err)
	require.Len(t, res.Gates, 1)
	assert.True(t, math.IsNaN(res.Gates[0].Detectable), "%v", res.Gates[0].Detectable)
	assert.Equal(t, outcome.NoSpread, res.Gates[0].Why[len(res.Gates[0].Why)-1].Code)
}
