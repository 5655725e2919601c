package baseline

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
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
