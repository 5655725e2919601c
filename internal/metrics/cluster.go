package metrics

import "math"

// Queries in families (issue 34 item 2): generate writes two questions and a
// keyword query per card, and teams write several paraphrases per intent. Such
// queries are not independent: an interval or a paired test that treats them
// as such is too narrow and rejects too often. When the queries carry a
// cluster key, the intervals and tests below are computed at the cluster level.

// Methods of the cluster-level intervals and p-values.
const (
	// MethodClusterT: the mean Σx/n of items in G clusters, with the
	// cluster-robust standard error (CR1: √(G/(G−1)·Σ_g (S_g − n_g·x̄)²)/n, S_g
	// and n_g the cluster's sum and size) and Student's t with G − 1 degrees of
	// freedom, clipped to the measure's range.
	MethodClusterT = "cluster-t"
	// PMethodClusterSignFlipExact: the exact sign-flip test of the clusters'
	// sums of differences (a cluster's differences keep or flip their signs
	// together): on their lattice, or every sign vector listed.
	PMethodClusterSignFlipExact = "cluster-exact-sign-flip"
	// PMethodClusterRandomization: the Monte Carlo sign-flip test of the
	// clusters' sums, where no exact form is cheap.
	PMethodClusterRandomization = "cluster-sign-flip-randomization"
	// PMethodClusterSaddlepoint: the saddlepoint approximation of the
	// clusters' sign-flip test (SignFlipSaddlepointP), from
	// SaddlepointMinQueries clusters.
	PMethodClusterSaddlepoint = "cluster-sign-flip-saddlepoint"
)

// ClusterReliableMinClusters is the fewest clusters from which MethodClusterT
// is not marked unreliable: in docs/statistics.md's simulation of clustered
// queries its coverage was at least CoverageFloor from 20 clusters on every
// design (0.923 at 10 clusters of 1 to 6 queries); below, the t approximation
// of a cluster-robust standard error rests on too few clusters. A paired
// interval is also marked below DifferenceReliableMinNonzero clusters whose
// differences do not sum to 0: as for sparse differences of queries, a t
// interval learns from the clusters that moved, and a handful is not enough.
const ClusterReliableMinClusters = 20

// ClusterIndex numbers the distinct keys in order of first appearance: idx[i]
// is key i's cluster in [0, G). An empty key is a cluster of its own (an item
// without a family).
func ClusterIndex(keys []string) (idx []int, G int) {
	idx = make([]int, len(keys))
	seen := make(map[string]int, len(keys))
	for i, k := range keys {
		if k == "" {
			idx[i] = G
			G++
			continue
		}
		j, ok := seen[k]
		if !ok {
			j = G
			seen[k] = j
			G++
		}
		idx[i] = j
	}
	return idx, G
}

// Subclusters restricts a clustering to the items rows (the queries a measure
// counts): the cluster index of each row renumbered to [0, G) in order of
// first appearance, and G.
func Subclusters(idx []int, rows []int) (sub []int, G int) {
	sub = make([]int, len(rows))
	seen := make(map[int]int)
	for i, r := range rows {
		j, ok := seen[idx[r]]
		if !ok {
			j = len(seen)
			seen[idx[r]] = j
		}
		sub[i] = j
	}
	return sub, len(seen)
}

// ClusterSums returns each cluster's sum and size of the values xs whose
// clusters are idx (in [0, G)).
func ClusterSums(xs []float64, idx []int, G int) (sums []float64, sizes []int64) {
	sums, sizes = make([]float64, G), make([]int64, G)
	for i, v := range xs {
		sums[idx[i]] += v
		sizes[idx[i]]++
	}
	return sums, sizes
}

// ClusterSE is the mean Σx/n of items whose G = len(sums) clusters have the
// sums and sizes given, and its cluster-robust (CR1) standard error
// √(G/(G−1)·Σ_g (S_g − n_g·x̄)²)/n (NaN below 2 clusters).
func ClusterSE(sums []float64, sizes []int64) (mean, se float64) {
	G := len(sums)
	n, tot := 0.0, 0.0
	for g := range sums {
		n += float64(sizes[g])
		tot += sums[g]
	}
	mean = tot / n
	ss := 0.0
	for g := range sums {
		r := sums[g] - float64(sizes[g])*mean
		ss += r * r
	}
	if G < 2 {
		return mean, math.NaN()
	}
	return mean, math.Sqrt(float64(G)/float64(G-1)*ss) / n
}

// ClusterCI95 is the 95% interval of the mean Σx/n of the values xs (range
// [lo, hi]) of items in the G clusters idx: MethodClusterT, marked unreliable
// below ClusterReliableMinClusters clusters. A standard error of 0 (every
// cluster's sum equal to its size times the mean: every value equal, or
// residuals that cancel) or a single cluster gets the interval of a sample
// without variation over G items (BoundedWilsonCI95 with n = G), never a
// point.
func ClusterCI95(xs []float64, idx []int, G int, lo, hi float64) Interval {
	sums, sizes := ClusterSums(xs, idx, G)
	return ClusterSumsCI95(sums, sizes, lo, hi)
}

// ClusterSumsCI95 is ClusterCI95 from the clusters' sums and sizes.
func ClusterSumsCI95(sums []float64, sizes []int64, lo, hi float64) Interval {
	G := len(sums)
	var n int64
	for _, m := range sizes {
		n += m
	}
	if n == 0 || G == 0 {
		return Interval{Lo: math.NaN(), Hi: math.NaN(), Method: MethodClusterT, Unreliable: true}
	}
	mean, se := ClusterSE(sums, sizes)
	if G < 2 || se == 0 || math.IsNaN(se) {
		iv := BoundedWilsonCI95(mean, int64(G), lo, hi)
		iv.N = n
		return iv
	}
	t := t975(int64(G - 1))
	iv := Interval{Lo: mean - t*se, Hi: mean + t*se, N: n, Method: MethodClusterT, Unreliable: G < ClusterReliableMinClusters}
	if !math.IsInf(lo, 0) {
		iv.Lo = max(iv.Lo, lo)
	}
	if !math.IsInf(hi, 0) {
		iv.Hi = min(iv.Hi, hi)
	}
	return iv
}

// ClusterPairedCI95 is the 95% interval of the mean paired difference d
// (range [−w, w]) of items in the G clusters idx: MethodClusterT; when every
// difference is equal, RuleOfThreeCI95 over the G clusters (no cluster
// differed); when the clusters' residuals cancel although the differences
// vary, the rule of three's bound is not enough and the interval is the
// bounded one over G (BoundedWilsonCI95).
func ClusterPairedCI95(d []float64, idx []int, G int, w float64) Interval {
	n := int64(len(d))
	if n == 0 || G == 0 {
		return Interval{Lo: math.NaN(), Hi: math.NaN(), Method: MethodClusterT, Unreliable: true}
	}
	if same(d) && G >= 2 && !math.IsInf(w, 0) && w > 0 {
		iv := RuleOfThreeCI95(d[0], int64(G), -w, w)
		iv.N = n
		return iv
	}
	sums, sizes := ClusterSums(d, idx, G)
	return ClusterSumsPairedCI95(sums, sizes, w)
}

// ClusterSumsPairedCI95 is ClusterPairedCI95 from the clusters' sums and
// sizes of differences that are not all equal (the caller gives those the
// rule of three over the clusters).
func ClusterSumsPairedCI95(sums []float64, sizes []int64, w float64) Interval {
	iv := ClusterSumsCI95(sums, sizes, -w, w)
	if iv.Method == MethodClusterT {
		moved := 0
		for _, s := range sums {
			if s != 0 {
				moved++
			}
		}
		iv.Unreliable = iv.Unreliable || moved < DifferenceReliableMinNonzero
	}
	return iv
}

// ClusterPairedP is the two-sided sign-flip p-value of the paired differences
// d at the cluster level: the test of the G clusters' sums (each cluster's
// differences keep or flip their signs together, which is what the two runs
// being exchangeable on each family of queries means). Exact when cheap
// (PairedExactP of the sums: their lattice, or every sign vector; sums that
// are all −1, 0 or 1 make it the sign test of the clusters); otherwise the
// Monte Carlo test of the sums below SaddlepointMinQueries clusters within
// the resampling budget, else LargeSampleSignFlipP. No difference: p = 1,
// PMethodNoDifference.
func ClusterPairedP(d []float64, idx []int, G int, resamples int, seed uint64) (float64, string) {
	sums, _ := ClusterSums(d, idx, G)
	p, method := ClusterSumsP(sums, resamples, seed)
	if method == PMethodNoDifference && !same(d) {
		// Every cluster's differences cancel: the clusters' test sees no
		// difference (p = 1), though some queries changed.
		return 1, PMethodClusterSignFlipExact
	}
	return p, method
}

// ClusterSumsP is ClusterPairedP from the clusters' sums of differences;
// PMethodNoDifference when every sum is 0.
func ClusterSumsP(sums []float64, resamples int, seed uint64) (float64, string) {
	G := len(sums)
	if p, method, ok := PairedExactP(sums); ok {
		if method == PMethodNoDifference {
			return p, method
		}
		// McNemar's on sums of ±1 is the exact sign-flip test of them.
		return p, PMethodClusterSignFlipExact
	}
	if !UseLargeSampleP(G, resamples) {
		return SignFlipPValues(sums, G, 1, resamples, seed)[0], PMethodClusterRandomization
	}
	p, method := LargeSampleSignFlipP(sums, resamples, seed)
	if method == PMethodSaddlepoint {
		return p, PMethodClusterSaddlepoint
	}
	return p, PMethodClusterRandomization
}
