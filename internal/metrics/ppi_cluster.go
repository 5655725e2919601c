package metrics

import "math"

// Human-corrected estimates over queries in families (issue 34 items 2 and
// 7): when the queries come in clusters (generate's cards, a team's
// paraphrases of one intent), the labelled and unlabelled queries of one
// cluster are not independent (a judge can be biased on a whole card), and a
// standard error over the labelled queries as if independent is too narrow.
// PPIClustered takes the standard error of the power-tuned estimate from the
// delete-one-cluster jackknife instead.

// MethodPPIClusterJackknife names the interval of the power-tuned PPI++
// estimate over queries in clusters (PPIClustered, one stratum): the
// estimate ± t·SE with SE from the delete-one-cluster jackknife (every query
// of the cluster left out, labelled or not, λ̂ tuned again) and Student's t
// with (labelled clusters − 1) degrees of freedom.
const MethodPPIClusterJackknife = "ppi++-cluster-jackknife"

// MethodPPIStratifiedClusterJackknife names the interval of the stratified
// PPI++ estimate over queries in clusters (PPIClustered, two strata or
// more): Σ W_h θ̂_h with the delete-one-cluster jackknife of the whole
// combination (a cluster spanning two strata is left out of both at once)
// and Student's t with (labelled clusters − 1) degrees of freedom.
const MethodPPIStratifiedClusterJackknife = "ppi++-stratified-cluster-jackknife"

// PPIMinClusters is the fewest clusters holding a labelled unit from which a
// cluster-level PPI++ interval is not marked unreliable: its own simulation
// (docs/statistics.md, TestPPIClusterSimulation, 10,000 samples per row)
// covered 0.949–0.967 from 21 labelled clusters on, each row not
// significantly below 0.95 (CoverageFloor's rule). It is no longer
// ClusterReliableMinClusters: the cluster-t interval failed that rule below
// 100 clusters on uneven families, this jackknife interval did not at 21.
// The human n floor (PPIMinN) holds as well.
const PPIMinClusters = 20

// ppiSums are the centred sums of a stratum's units (or of one cluster's
// units in a stratum): the labelled y − my and f − c, the unlabelled u − c
// (my the stratum's mean of Y, c its pooled mean of F ∪ U).
type ppiSums struct {
	n, N                      int
	sy, sf, syf, sff, su, suu float64
}

func (s *ppiSums) sub(o *ppiSums) ppiSums {
	return ppiSums{s.n - o.n, s.N - o.N, s.sy - o.sy, s.sf - o.sf, s.syf - o.syf, s.sff - o.sff, s.su - o.su, s.suu - o.suu}
}

// theta is the power-tuned estimate of the units the sums hold, around the
// centres my and c (tunedLambda's λ̂ and PPIMean's θ̂ from the sums); NaN
// without a labelled unit.
func (s ppiSums) theta(my, c float64) float64 {
	if s.n == 0 {
		return math.NaN()
	}
	m, M := float64(s.n), float64(s.N)
	lambda := 0.0
	if s.N > 0 && s.n >= 2 {
		cov := (s.syf - s.sy*s.sf/m) / (m - 1)
		tot := m + M
		s1, s2 := s.sf+s.su, s.sff+s.suu
		if v := (s2 - s1*s1/tot) / (tot - 1); v > 0 {
			lambda = min(1, max(0, cov/((1+m/M)*v)))
		}
	}
	th := (my + s.sy/m) - lambda*(c+s.sf/m)
	if s.N > 0 {
		th += lambda * (c + s.su/M)
	}
	return th
}

// PPIClustered is the PPI++ estimate of a mean over units in clusters: each
// stratum's power-tuned estimate θ̂_h (PPITuned's λ̂ and θ̂; one stratum: the
// pooled estimate) combined as θ̂ = Σ W_h θ̂_h (one stratum: weight 1), with
// the standard error of the delete-one-cluster jackknife,
//
//	SE² = G_L/(G_L − 1) · (G − 1)/G · Σ_g (θ̂₋g − θ̄)²,
//
// over the G clusters holding a unit (labelled or not) of any stratum: θ̂₋g
// is the estimate without every unit of cluster g, λ̂_h tuned again in each
// stratum the cluster touches, θ̄ the mean of the θ̂₋g; G_L/(G_L − 1) is the
// small-sample factor of a cluster-robust variance (CR1, as MethodClusterT's)
// over the G_L clusters holding a labelled unit: without it the interval
// covered 0.947–0.952 at 150 labelled queries of 300 in clusters of 3
// (TestPPIClusterSimulation), with it 0.949–0.953. The labelled part and the
// judge-alone part of the variance (and their covariance within a cluster)
// are in the one jackknife, so no λ̂²·var(U)/N term is added. The
// interval is θ̂ ± t·SE with Student's t on (G_L − 1) degrees of freedom, G_L
// the clusters holding a labelled unit (Clusters, DF). A partly labelled
// cluster counts in G_L and its unlabelled units leave with it.
//
// The strata's YC and UC give each unit's cluster (an index in [0, G), as
// ClusterIndex numbers them: the work and memory are O(n + N + G); the same
// cluster may span strata). The estimate is NaN when a stratum has
// no labelled unit; the interval is NaN below 2 labelled clusters, or when
// leaving a cluster out leaves a stratum without a labelled unit (a stratum
// needs 2 labelled clusters: merge it, or pool). It has no I/O.
func PPIClustered(strata []PPIStratum) StratifiedPPI {
	method := MethodPPIClusterJackknife
	if len(strata) > 1 {
		method = MethodPPIStratifiedClusterJackknife
	}
	out := StratifiedPPI{PPI: PPI{Estimate: math.NaN(), SE: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), Lambda: math.NaN(), Method: method}, DF: math.NaN()}
	if len(strata) == 0 {
		return out
	}
	weight := func(h int) float64 {
		if len(strata) == 1 {
			return 1
		}
		return strata[h].Weight
	}
	G := 0 // one more than the largest cluster index
	for _, s := range strata {
		if len(s.YC) != len(s.Y) || len(s.UC) != len(s.U) {
			return out
		}
		for _, c := range s.YC {
			G = max(G, c+1)
		}
		for _, c := range s.UC {
			G = max(G, c+1)
		}
	}
	// shift[g] is Σ_h W_h·(θ̂_h without cluster g − θ̂_h) over the strata
	// cluster g touches; touched and labelled mark the clusters holding a
	// unit, a labelled unit.
	shift := make([]float64, G)
	touched, labelled := make([]bool, G), make([]bool, G)
	slot := make([]int, G) // a cluster's index in the stratum's sums, −1: none yet
	for g := range slot {
		slot[g] = -1
	}
	most := 0 // the most units of a stratum: its clusters are no more
	for _, s := range strata {
		most = max(most, len(s.Y)+len(s.U))
	}
	sums, ids := make([]ppiSums, 0, min(G, most)), make([]int, 0, min(G, most))
	est, undefined := 0.0, false
	for h, s := range strata {
		p := PPITuned(s.Y, s.F, s.U)
		if len(strata) > 1 {
			sp := p
			if one := PPIClustered([]PPIStratum{s}); !math.IsNaN(one.Estimate) {
				sp = one.PPI
			}
			out.Strata = append(out.Strata, sp)
		} else {
			out.Lambda = p.Lambda
		}
		out.N += p.N
		out.Others += p.Others
		if p.N == 0 {
			return out
		}
		est += weight(h) * p.Estimate
		n, N := len(s.Y), len(s.U)
		my, mf, mu := mean(s.Y), mean(s.F), mean(s.U)
		c := mf
		if N > 0 {
			c = (float64(n)*mf + float64(N)*mu) / float64(n+N)
		}
		// The stratum's centred sums per cluster (sums[slot[g]]) and in all.
		sums, ids = sums[:0], ids[:0]
		at := func(g int) *ppiSums {
			if slot[g] < 0 {
				slot[g] = len(sums)
				sums, ids = append(sums, ppiSums{}), append(ids, g)
				touched[g] = true
			}
			return &sums[slot[g]]
		}
		var all ppiSums
		for i := range s.Y {
			a, b := s.Y[i]-my, s.F[i]-c
			cs := at(s.YC[i])
			cs.n++
			cs.sy, cs.sf, cs.syf, cs.sff = cs.sy+a, cs.sf+b, cs.syf+a*b, cs.sff+b*b
			all.n++
			all.sy, all.sf, all.syf, all.sff = all.sy+a, all.sf+b, all.syf+a*b, all.sff+b*b
			labelled[s.YC[i]] = true
		}
		for i, v := range s.U {
			d := v - c
			cs := at(s.UC[i])
			cs.N++
			cs.su, cs.suu = cs.su+d, cs.suu+d*d
			all.N++
			all.su, all.suu = all.su+d, all.suu+d*d
		}
		full := all.theta(my, c)
		for k, g := range ids {
			slot[g] = -1
			t := all.sub(&sums[k]).theta(my, c)
			if math.IsNaN(t) { // the stratum's only labelled cluster
				undefined = true
				continue
			}
			shift[g] += weight(h) * (t - full)
		}
	}
	out.Estimate = est
	for g := range labelled {
		if labelled[g] {
			out.Clusters++
		}
	}
	if out.Clusters < 2 || undefined {
		return out
	}
	// θ̂₋g = θ̂ + shift[g] over the touched clusters, in index order.
	var k int
	var tm, s2 float64
	for g := range touched {
		if !touched[g] {
			continue
		}
		th := est + shift[g]
		k++
		d := th - tm
		tm += d / float64(k)
		s2 += d * (th - tm)
	}
	GL := float64(out.Clusters)
	se := math.Sqrt(s2 * float64(k-1) / float64(k) * GL / (GL - 1))
	out.SE, out.DF = se, GL-1
	t := StudentT975(out.Clusters - 1)
	out.Lo, out.Hi = est-t*se, est+t*se
	return out
}
