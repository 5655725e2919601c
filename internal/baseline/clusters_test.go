package baseline

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
)

// Issue 34 item 2: 20 families of 3 cases, every case of 4 families newly
// hit, and 2 cases without a cluster, one newly hit: over cases McNemar's
// 13 against 0 gives p = 2·2⁻¹³; over the 22 clusters (sums 3, 3, 3, 3, 1
// and 17 zeros) the exact sign-flip test gives 2·2⁻⁵ = 0.0625.
func TestClusterStat(t *testing.T) {
	ce := &cell{}
	h := metrics.NewHistogram()
	hit := metrics.CaseIndex(metrics.KeyHit)
	var base, cur float64
	for f := range 20 {
		for range 3 {
			d := 0.0
			if f < 4 {
				d = 1
			}
			h.Add(d)
			ce.addClustered(fmt.Sprintf("card-%02d", f), hit, d)
			cur += d
		}
	}
	h.Add(1)
	h.Add(0)
	cur++
	info := metrics.CaseMeasures[hit].Info
	s := PairedStat(info, h, base, cur, 2000, 1)
	assert.Equal(t, TestMcNemar, s.Test)
	assert.InDelta(t, 2.0/8192, s.P, 1e-15)
	assert.True(t, s.Rejects)

	sums, sizes := clusterSums(hit, ce.clus, h, ce.clusDiff[hit])
	require.Len(t, sums, 22)
	assert.Equal(t, []float64{3, 3, 3, 3}, sums[:4])
	assert.Equal(t, []float64{0, 1}, sums[20:], "the cases without a cluster, by value")
	assert.Equal(t, []int64{1, 1}, sizes[20:])
	clusterStat(&s, info, h, sums, sizes, 2000, 1)
	assert.Equal(t, TestClusterSignFlipExact, s.Test)
	assert.InDelta(t, 0.0625, s.P, 1e-12)
	assert.False(t, s.Rejects)
	assert.Empty(t, s.Change)
	assert.Equal(t, int64(22), s.Clusters)
	assert.Equal(t, int64(62), s.N)
	assert.Equal(t, metrics.MethodClusterT, s.CI95Method)
	assert.True(t, s.Unreliable, "5 of 22 clusters moved")
	_, se := metrics.ClusterSE(sums, sizes)
	assert.InDelta(t, (metrics.NormalQuantile(0.975)+metrics.NormalQuantile(0.8))*se, s.MDD, 1e-12)

	// No case changed: no test, the rule of three over the clusters.
	z := metrics.NewHistogram()
	zc := &cell{}
	for i := range 30 {
		z.Add(0)
		zc.addClustered(fmt.Sprint(i/3), hit, 0)
	}
	s = PairedStat(info, z, 30, 30, 2000, 1)
	sums, sizes = clusterSums(hit, zc.clus, z, zc.clusDiff[hit])
	clusterStat(&s, info, z, sums, sizes, 2000, 1)
	assert.Equal(t, TestNone, s.Test)
	assert.Equal(t, metrics.MethodRuleOfThree, s.CI95Method)
	assert.Equal(t, int64(10), s.Clusters)
	assert.InDelta(t, metrics.RuleOfThreeCI95(0, 10, -1, 1).Hi, s.CI95[1], 1e-15)
}

// The smallest detectable drop is claimed only where a test could detect
// one, and estimated only from differences that vary. Below 6 pairs (or 6
// clusters) no sign-flip test rejects at 0.05 (its smallest p is 2·½^n:
// 0.0625 at 5), and differences that are all equal have sd 0: the
// normal-theory formula read "n = 5 paired cases detect drops of 0.000"
// beside p = 0.0625. Over clusters the MDD is the clusters' also when
// nothing changed: 40 identical cases in 4 families read the cases' McNemar
// MDD, 0.185, where no test of 4 clusters can reject.
func TestPairedMDDNeedsATestAndSpread(t *testing.T) {
	rec := metrics.CaseMeasures[metrics.CaseIndex(metrics.KeyRecall)].Info
	hit := metrics.CaseMeasures[metrics.CaseIndex(metrics.KeyHit)].Info
	hist := func(d ...float64) *metrics.Histogram {
		h := metrics.NewHistogram()
		for _, v := range d {
			h.Add(v)
		}
		return h
	}
	repeat := func(v float64, n int) []float64 {
		d := make([]float64, n)
		for i := range d {
			d[i] = v
		}
		return d
	}
	for _, c := range []struct {
		name     string
		info     metrics.Info
		d        []float64
		noSpread bool
		test     string
	}{
		{"5 equal drops: no test of 5 can reject", rec, repeat(-1, 5), false, TestSignFlipExact},
		{"5 varied drops", rec, []float64{-1, -0.5, -0.5, 0, -1}, false, TestSignFlipExact},
		{"6 equal drops: no spread", rec, repeat(-1, 6), true, TestSignFlipExact},
		{"40 unchanged: no spread", rec, repeat(0, 40), true, TestNone},
		{"3 unchanged", rec, repeat(0, 3), false, TestNone},
	} {
		s := PairedStat(c.info, hist(c.d...), 0, 0, 2000, 1)
		assert.Equal(t, c.test, s.Test, c.name)
		assert.True(t, math.IsNaN(s.MDD), "%s: MDD %v", c.name, s.MDD)
		assert.Equal(t, c.noSpread, s.NoSpread, c.name)
		_, clause := detectsDrop(&s, 0.05)
		want := outcome.DetectsDrop
		if c.noSpread {
			want = outcome.DropNoSpread
		}
		assert.Equal(t, want, clause.Code, c.name)
	}
	s := PairedStat(rec, hist(-1, -0.5, -0.5, 0, -1, -0.25), 0, 0, 2000, 1)
	assert.False(t, math.IsNaN(s.MDD), "6 varied differences: estimated")
	assert.False(t, s.NoSpread)

	// Over clusters: 40 unchanged cases in G families.
	for _, G := range []int{1, 4, 5, 8} {
		z := metrics.NewHistogram()
		zc := &cell{}
		idx := metrics.CaseIndex(metrics.KeyHit)
		for i := range 40 {
			z.Add(0)
			zc.addClustered(fmt.Sprint(i%G), idx, 0)
		}
		s := PairedStat(hit, z, 40, 40, 2000, 1)
		require.False(t, math.IsNaN(s.MDD), "over cases, Connor's MDD of no discordance")
		sums, sizes := clusterSums(idx, zc.clus, z, zc.clusDiff[idx])
		clusterStat(&s, hit, z, sums, sizes, 2000, 1)
		assert.Equal(t, int64(G), s.Clusters)
		assert.True(t, math.IsNaN(s.MDD), "G = %d: MDD %v", G, s.MDD)
		assert.Equal(t, G >= metrics.McNemarMinPairs, s.NoSpread, "G = %d", G)
		_, clause := detectsDrop(&s, 0.05)
		if s.NoSpread {
			assert.Equal(t, outcome.Clause{Code: outcome.DropNoSpread, N: 40, M: int64(G), Value: 0, Threshold: 0.05}, clause)
		} else {
			assert.Equal(t, outcome.DetectsDrop, clause.Code)
			assert.Equal(t, int64(G), clause.M, "the reason names the clusters")
		}
	}
}
