package metrics

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Three clusters, no unlabelled unit (λ̂ = 0, the estimate the mean of Y):
// the jackknife by hand.
func TestPPIClusteredByHand(t *testing.T) {
	// Cluster 0: 1, 0; cluster 1: 1; cluster 2: 0, 0, 1. θ̂ = 3/6 = 1/2.
	s := PPIStratum{Y: []float64{1, 0, 1, 0, 0, 1}, F: []float64{1, 1, 1, 0, 0, 0}, YC: []int{0, 0, 1, 2, 2, 2}}
	p := PPIClustered([]PPIStratum{s})
	// θ̂₋0 = 2/4 = 45/90, θ̂₋1 = 2/5 = 36/90, θ̂₋2 = 2/3 = 60/90; θ̄ = 47/90;
	// deviations −2, −11, 13 (/90), squares 294/8100; · (G − 1)/G = 2/3:
	// 196/8100 = 49/2025; · G_L/(G_L − 1) = 3/2: 49/1350, SE = 7/√1350.
	assert.Equal(t, MethodPPIClusterJackknife, p.Method)
	assert.InDelta(t, 0.5, p.Estimate, 1e-15)
	assert.InDelta(t, 7/math.Sqrt(1350), p.SE, 1e-15)
	assert.Equal(t, 3, p.Clusters)
	assert.Equal(t, 2.0, p.DF)
	assert.Equal(t, 6, p.N)
	assert.InDelta(t, 4.302652729911275, StudentT975(2), 1e-9) // t_{2, 0.975}
	assert.InDelta(t, 0.5-StudentT975(2)*7/math.Sqrt(1350), p.Lo, 1e-14)
	assert.InDelta(t, 0.5+StudentT975(2)*7/math.Sqrt(1350), p.Hi, 1e-14)
	iv := p.Interval()
	assert.True(t, iv.Unreliable, "3 clusters")
	// p: t = (1/2)/(7/√1350) = 2.6245 on 2 degrees of freedom:
	// 2·(1 − T_2(t)) = 1 − t/√(2 + t²) = 0.11968.
	tt := 0.5 * math.Sqrt(1350) / 7
	assert.InDelta(t, 1-tt/math.Sqrt(2+tt*tt), p.PValue(), 1e-9)
	// The order of the units within and across clusters does not matter.
	r := PPIStratum{Y: []float64{0, 1, 1, 0, 1, 0}, F: []float64{0, 1, 1, 0, 1, 0}, YC: []int{2, 7, 1, 2, 2, 7}}
	assert.InDelta(t, p.SE, PPIClustered([]PPIStratum{r}).SE, 1e-15)
}

// bruteClusterSE is the delete-one-cluster jackknife of Σ W_h·PPITuned
// recomputed from scratch on the units left.
func bruteClusterSE(strata []PPIStratum) float64 {
	seen := map[int]bool{}
	var gs []int
	for _, s := range strata {
		for _, c := range append(append([]int{}, s.YC...), s.UC...) {
			if !seen[c] {
				seen[c] = true
				gs = append(gs, c)
			}
		}
	}
	var thetas []float64
	for _, g := range gs {
		th := 0.0
		for _, s := range strata {
			var y, f, u []float64
			for i := range s.Y {
				if s.YC[i] != g {
					y, f = append(y, s.Y[i]), append(f, s.F[i])
				}
			}
			for i := range s.U {
				if s.UC[i] != g {
					u = append(u, s.U[i])
				}
			}
			w := s.Weight
			if len(strata) == 1 {
				w = 1
			}
			th += w * PPIMean(y, f, u, math.NaN()).Estimate
		}
		thetas = append(thetas, th)
	}
	m := mean(thetas)
	var ss float64
	for _, x := range thetas {
		ss += (x - m) * (x - m)
	}
	G := float64(len(thetas))
	labelled := map[int]bool{}
	for _, s := range strata {
		for _, c := range s.YC {
			labelled[c] = true
		}
	}
	GL := float64(len(labelled))
	return math.Sqrt(GL / (GL - 1) * (G - 1) / G * ss)
}

func randomClusterStratum(r *rand.Rand, n, N, G, first int, w float64) PPIStratum {
	s := PPIStratum{Weight: w}
	eff := make([]float64, G)
	for g := range eff {
		eff[g] = r.NormFloat64()
	}
	for range n {
		g := r.IntN(G)
		y := eff[g] + r.NormFloat64()
		s.Y, s.F, s.YC = append(s.Y, y), append(s.F, 0.8*y+0.3*r.NormFloat64()+0.5), append(s.YC, first+g)
	}
	for range N {
		g := r.IntN(G)
		s.U, s.UC = append(s.U, 0.8*(eff[g]+r.NormFloat64())+0.3*r.NormFloat64()+0.5), append(s.UC, first+g)
	}
	return s
}

// The jackknife from running sums equals the jackknife recomputed from
// scratch, pooled and stratified (a cluster spanning both strata leaves both
// at once), with and without unlabelled units.
func TestPPIClusteredBruteForce(t *testing.T) {
	r := NewRand(3407)
	for _, tc := range []struct {
		name   string
		strata func() []PPIStratum
	}{
		{"pooled", func() []PPIStratum { return []PPIStratum{randomClusterStratum(r, 40, 200, 30, 0, 1)} }},
		{"pooled, no unlabelled", func() []PPIStratum { return []PPIStratum{randomClusterStratum(r, 25, 0, 8, 0, 1)} }},
		{"two strata, shared clusters", func() []PPIStratum {
			return []PPIStratum{randomClusterStratum(r, 30, 100, 20, 0, 0.6), randomClusterStratum(r, 20, 80, 15, 10, 0.4)}
		}},
		{"two strata, own clusters", func() []PPIStratum {
			return []PPIStratum{randomClusterStratum(r, 30, 100, 20, 0, 0.7), randomClusterStratum(r, 20, 80, 15, 100, 0.3)}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := tc.strata()
			p := PPIClustered(st)
			require.False(t, math.IsNaN(p.SE))
			assert.InDelta(t, bruteClusterSE(st), p.SE, 1e-12)
			want := 0.0
			labelled := map[int]bool{}
			for _, s := range st {
				w := s.Weight
				if len(st) == 1 {
					w = 1
				}
				want += w * PPITuned(s.Y, s.F, s.U).Estimate
				for _, c := range s.YC {
					labelled[c] = true
				}
			}
			assert.InDelta(t, want, p.Estimate, 1e-12)
			assert.Equal(t, len(labelled), p.Clusters)
			assert.Equal(t, float64(len(labelled)-1), p.DF)
			if len(st) > 1 {
				assert.Equal(t, MethodPPIStratifiedClusterJackknife, p.Method)
				require.Len(t, p.Strata, 2)
				assert.Equal(t, MethodPPIClusterJackknife, p.Strata[0].Method)
			}
		})
	}
}

// Every unit its own cluster: the cluster jackknife is close to the
// jackknife over the labelled units plus the judge-alone term.
func TestPPIClusteredSingletons(t *testing.T) {
	r := NewRand(8)
	s := randomClusterStratum(r, 60, 400, 1, 0, 1)
	for i := range s.YC {
		s.YC[i] = i
	}
	for i := range s.UC {
		s.UC[i] = len(s.Y) + i
	}
	p, q := PPIClustered([]PPIStratum{s}), PPITuned(s.Y, s.F, s.U)
	assert.Equal(t, q.Estimate, p.Estimate)
	assert.InEpsilon(t, q.SE, p.SE, 0.03)
	assert.Equal(t, 60, p.Clusters)
}

func TestPPIClusteredEdges(t *testing.T) {
	// One labelled cluster: no interval.
	one := PPIClustered([]PPIStratum{{Y: []float64{1, 0, 1}, F: []float64{1, 0, 0}, YC: []int{4, 4, 4}, U: []float64{1}, UC: []int{5}}})
	assert.InDelta(t, 2.0/3, one.Estimate, 0.5)
	assert.True(t, math.IsNaN(one.SE))
	assert.True(t, math.IsNaN(one.Lo))
	assert.Equal(t, 1, one.Clusters)
	// A stratum with one labelled cluster: the combination has no interval.
	two := PPIClustered([]PPIStratum{
		{Y: []float64{1, 0}, F: []float64{1, 0}, YC: []int{1, 2}, Weight: 0.5},
		{Y: []float64{1, 1}, F: []float64{1, 0}, YC: []int{3, 3}, Weight: 0.5},
	})
	assert.False(t, math.IsNaN(two.Estimate))
	assert.True(t, math.IsNaN(two.SE))
	// Missing clusters: nothing.
	assert.True(t, math.IsNaN(PPIClustered([]PPIStratum{{Y: []float64{1}, F: []float64{1}}}).Estimate))
	assert.True(t, math.IsNaN(PPIClustered(nil).Estimate))
	// No variation between the clusters: SE 0, and Clip gives the rule of
	// three over the labelled clusters.
	flat := PPIClustered([]PPIStratum{{Y: []float64{1, 1, 1, 1}, F: []float64{1, 1, 1, 1}, YC: []int{0, 1, 2, 3}}})
	require.Equal(t, 0.0, flat.SE)
	c := flat.Clip(0, 1)
	assert.Equal(t, MethodRuleOfThree, c.Method)
	assert.Equal(t, RuleOfThreeCI95(1, 4, 0, 1).Lo, c.Lo)
}

// clusterSim is the seeded simulation of docs/statistics.md's "Human labels
// over queries in families": Queries evaluated queries in clusters of Size,
// an intra-cluster correlation of 0.5 (a cluster effect and a query effect of
// equal variance), a judge whose bias differs between clusters (a cluster
// bias beside the common one), and Sample human-labelled queries drawn at
// random among them. Paired: the values are a difference between two
// strategies whose true mean is 0 (each cluster favours one or the other),
// and the test's rejections at 0.05 are counted.
type clusterSim struct {
	Queries, Size, Sample, Reps int
	Paired                      bool
	Seed                        uint64
}

type clusterSimResult struct {
	CoverQuery, CoverCluster float64 // coverage of the true mean (paired: rejections of Δ = 0 at 0.05)
	WidthQuery, WidthCluster float64
	MeanClusters             float64 // mean labelled clusters
}

func (s clusterSim) run() clusterSimResult {
	r := NewRand(s.Seed)
	G := s.Queries / s.Size
	truth := 0.4
	if s.Paired {
		truth = 0
	}
	perm := make([]int, s.Queries)
	y, f, u := make([]float64, 0, s.Sample), make([]float64, 0, s.Sample), make([]float64, 0, s.Queries)
	yc, uc := make([]int, 0, s.Sample), make([]int, 0, s.Queries)
	yv, fv := make([]float64, s.Queries), make([]float64, s.Queries)
	var res clusterSimResult
	for range s.Reps {
		for g := range G {
			a := r.NormFloat64()           // the cluster's effect (ICC 0.5)
			b := 0.3 + 0.6*r.NormFloat64() // the judge's bias on the cluster
			for q := g * s.Size; q < (g+1)*s.Size; q++ {
				v := truth + a + r.NormFloat64()
				yv[q], fv[q] = v, v+b+0.3*r.NormFloat64()
			}
		}
		for i := range perm {
			perm[i] = i
		}
		r.Shuffle(len(perm), func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
		y, f, u, yc, uc = y[:0], f[:0], u[:0], yc[:0], uc[:0]
		for k, q := range perm {
			if k < s.Sample {
				y, f, yc = append(y, yv[q]), append(f, fv[q]), append(yc, q/s.Size)
			} else {
				u, uc = append(u, fv[q]), append(uc, q/s.Size)
			}
		}
		qp := PPITuned(y, f, u)
		cp := PPIClustered([]PPIStratum{{Y: y, F: f, U: u, YC: yc, UC: uc}})
		res.MeanClusters += float64(cp.Clusters)
		res.WidthQuery += qp.Hi - qp.Lo
		res.WidthCluster += cp.Hi - cp.Lo
		if s.Paired {
			if qp.PValue() < 0.05 {
				res.CoverQuery++
			}
			if cp.PValue() < 0.05 {
				res.CoverCluster++
			}
			continue
		}
		if qp.Lo <= truth && truth <= qp.Hi {
			res.CoverQuery++
		}
		if cp.Lo <= truth && truth <= cp.Hi {
			res.CoverCluster++
		}
	}
	R := float64(s.Reps)
	res.CoverQuery, res.CoverCluster, res.WidthQuery, res.WidthCluster, res.MeanClusters = res.CoverQuery/R, res.CoverCluster/R, res.WidthQuery/R, res.WidthCluster/R, res.MeanClusters/R
	return res
}

// TestPPIClusterSimulation is docs/statistics.md's table of the PPI++
// intervals over queries in families (RETRIEVAL_GATE_FULL_SIMULATION=1 go
// test ./internal/metrics -run TestPPIClusterSimulation -v: 10,000 samples
// per row; the normal suite runs 1,000 per row, about a second).
func TestPPIClusterSimulation(t *testing.T) {
	skipSimulationUnderRace(t)
	reps := 1000
	if fullSimulation() {
		reps = 10000
		fmt.Println("| design | human-labelled queries | labelled clusters (mean) | query-level jackknife: coverage / false positives | mean width | cluster jackknife (used): coverage / false positives | mean width |")
		fmt.Println("|---|---:|---:|---:|---:|---:|---:|")
	}
	for _, paired := range []bool{false, true} {
		for _, tc := range []struct{ queries, size, sample int }{{90, 3, 30}, {300, 3, 30}, {300, 3, 60}, {300, 3, 150}} {
			s := clusterSim{Queries: tc.queries, Size: tc.size, Sample: tc.sample, Reps: reps, Paired: paired, Seed: 34}
			res := s.run()
			design := fmt.Sprintf("mean, %d queries in clusters of %d", tc.queries, tc.size)
			if paired {
				design = fmt.Sprintf("paired Δ = 0, %d queries in clusters of %d", tc.queries, tc.size)
			}
			t.Logf("%s, %d labelled (%.1f clusters): query-level %.4f width %.3f; cluster %.4f width %.3f", design, tc.sample, res.MeanClusters, res.CoverQuery, res.WidthQuery, res.CoverCluster, res.WidthCluster)
			if fullSimulation() {
				fmt.Printf("| %s | %d | %.1f | %.4f | %.3f | %.4f | %.3f |\n", design, tc.sample, res.MeanClusters, res.CoverQuery, res.WidthQuery, res.CoverCluster, res.WidthCluster)
			}
			if res.MeanClusters < PPIMinClusters {
				continue // flagged unreliable
			}
			if paired {
				assert.LessOrEqual(t, res.CoverCluster, 0.06, "%s n %d: false positives", design, tc.sample)
				assert.Greater(t, res.CoverQuery, res.CoverCluster, "%s n %d", design, tc.sample)
				continue
			}
			assertCoverage(t, int(math.Round(res.CoverCluster*float64(reps))), reps, "%s n %d", design, tc.sample)
			assert.Less(t, res.CoverQuery, res.CoverCluster, "%s n %d", design, tc.sample)
		}
	}
}

// BenchmarkPPIClustered is BenchmarkPPITuned's data in clusters of 3: one
// PPI++ estimate with the delete-one-cluster jackknife.
func BenchmarkPPIClustered(b *testing.B) {
	r := NewRand(1)
	const N, n = 100000, 1000
	s := PPIStratum{Y: make([]float64, n), F: make([]float64, n), U: make([]float64, N-n), YC: make([]int, n), UC: make([]int, N-n)}
	perm := r.Perm(N)
	for i := range s.Y {
		s.Y[i] = r.Float64()
		s.F[i] = s.Y[i] + 0.1*r.NormFloat64()
		s.YC[i] = perm[i] / 3
	}
	for i := range s.U {
		s.U[i] = r.Float64()
		s.UC[i] = perm[n+i] / 3
	}
	b.ReportAllocs()
	for b.Loop() {
		PPIClustered([]PPIStratum{s})
	}
}
