package metrics

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Interval methods (Interval.Method): how a 95% interval was computed.
const (
	// MethodWilson: the Wilson score interval of a proportion (every value 0 or 1).
	MethodWilson = "wilson"
	// MethodBCa: the bias-corrected and accelerated bootstrap of a mean.
	MethodBCa = "bca"
	// MethodBoundedWilson: the sample shows no variation (one distinct value) but is
	// not 0/1: the Wilson interval of the value rescaled to the measure's range
	// [lo, hi], the widest a normal-theory interval can be for a variable in that range.
	MethodBoundedWilson = "bounded-wilson"
	// MethodRange: no variation and an unbounded range: the honest interval is the range.
	MethodRange = "range"
	// MethodPercentile: the percentile bootstrap (kappa).
	MethodPercentile = "percentile"
	// MethodWilsonDisagreement: kappa whose bootstrap collapses to a point (no
	// observed disagreement, a rater that used one category, a perfect inverse,
	// very small n): the kappa implied by the Wilson interval of the observed
	// weighted disagreement, the chance disagreement of the margins held fixed.
	MethodWilsonDisagreement = "wilson-disagreement"
)

// CoverageFloor is the simulated coverage of a nominal 95% interval below which
// the interval is marked unreliable (docs/statistics.md, "Interval coverage").
const CoverageFloor = 0.93

// ReliableMinN is the smallest n from which the BCa interval at the expanded
// level covers at least CoverageFloor in every simulation of docs/statistics.md
// (ReliableMinNFor(MethodBCa)): at n = 20 right-skewed scores (70% zeros) gave
// 0.923 with one seed, at n = 30 0.950.
const ReliableMinN = 30

// ReliableMinNFor is the smallest n from which the method's simulated coverage in
// the docs' table (TestCoverageTable) is at least CoverageFloor at every
// simulated point of that n and above: BCa (expanded level, the mean of skewed
// scores and quadratic kappa) and the Cornish–Fisher interval 30; Wilson and the
// intervals built on it 50 (the score interval's coverage oscillates with p: 0.925
// at p = 0.95, n = 20); the percentile bootstrap 100.
func ReliableMinNFor(method string) int64 {
	switch method {
	case MethodWilson, MethodBoundedWilson, MethodWilsonDisagreement:
		return 50
	case MethodPercentile:
		return 100
	}
	return ReliableMinN
}

// Unreliable reports whether a BCa interval over n items covers less than
// CoverageFloor in the simulation: n < ReliableMinN.
func Unreliable(n int64) bool { return n < ReliableMinN }

// UnreliableFor reports whether an interval of the method over n items covers
// less than CoverageFloor in the simulation: n < ReliableMinNFor(method).
// Reports mark such intervals instead of printing them bare.
func UnreliableFor(method string, n int64) bool { return n < ReliableMinNFor(method) }

// Interval is a 95% confidence interval with the n it rests on and its method.
// Lo and Hi are NaN when n = 0.
type Interval struct {
	Lo, Hi     float64
	N          int64
	Method     string
	Unreliable bool // UnreliableFor(Method, N): simulated coverage below CoverageFloor
}

// CI returns [Lo, Hi].
func (iv Interval) CI() [2]float64 { return [2]float64{iv.Lo, iv.Hi} }

// Z95 is z_{0.975}, the two-sided 95% standard-normal quantile.
const Z95 = z975

// NormalQuantile is Φ⁻¹(p), the standard-normal quantile.
func NormalQuantile(p float64) float64 { return distuv.UnitNormal.Quantile(p) }

// NormalCDF is Φ(x), the standard-normal distribution function.
func NormalCDF(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }

// WilsonInterval is the Wilson (1927) score interval of a proportion with k successes
// in n trials: (p̂ + z²/2n ± z·√(p̂(1−p̂)/n + z²/4n²)) / (1 + z²/n). Never a point for
// n ≥ 1; NaN for n = 0. k outside [0, n] panics.
func WilsonInterval(k, n int64, z float64) [2]float64 {
	if k < 0 || k > n {
		panic("metrics: WilsonInterval needs 0 <= k <= n")
	}
	if n == 0 {
		return [2]float64{math.NaN(), math.NaN()}
	}
	return wilsonAt(float64(k)/float64(n), float64(n), z)
}

// wilsonAt is the Wilson interval at proportion p over n (p need not be k/n),
// with the exact ends 0 at p = 0 and 1 at p = 1.
func wilsonAt(p, n, z float64) [2]float64 {
	z2 := z * z
	den := 1 + z2/n
	mid := (p + z2/(2*n)) / den
	half := z * math.Sqrt(p*(1-p)/n+z2/(4*n*n)) / den
	lo, hi := mid-half, mid+half
	if p == 0 {
		lo = 0
	}
	if p == 1 {
		hi = 1
	}
	return [2]float64{max(0, lo), min(1, hi)}
}

// WilsonCI95 is the 95% Wilson interval of k successes in n as an Interval.
func WilsonCI95(k, n int64) Interval {
	ci := WilsonInterval(k, n, Z95)
	return Interval{Lo: ci[0], Hi: ci[1], N: n, Method: MethodWilson, Unreliable: UnreliableFor(MethodWilson, n)}
}

// BoundedWilsonCI95 is the 95% interval of a mean v over n items of a measure with
// range [lo, hi] when the sample shows no variation: the Wilson interval at
// (v−lo)/(hi−lo) mapped back. A variable in [lo, hi] with mean μ has variance at most
// (μ−lo)(hi−μ), attained by the two-point variable on {lo, hi}, so this is the
// Wilson interval of the worst case. With an infinite lo or hi it is [lo, hi].
func BoundedWilsonCI95(v float64, n int64, lo, hi float64) Interval {
	iv := Interval{N: n, Unreliable: Unreliable(n)}
	switch {
	case n == 0:
		iv.Lo, iv.Hi, iv.Method = math.NaN(), math.NaN(), MethodBoundedWilson
	case math.IsInf(lo, 0) || math.IsInf(hi, 0):
		iv.Lo, iv.Hi, iv.Method = lo, hi, MethodRange
	case hi <= lo:
		iv.Lo, iv.Hi, iv.Method = lo, lo, MethodBoundedWilson
	default:
		p := min(1, max(0, (v-lo)/(hi-lo)))
		ci := wilsonAt(p, float64(n), Z95)
		iv.Lo, iv.Hi, iv.Method = lo+ci[0]*(hi-lo), lo+ci[1]*(hi-lo), MethodBoundedWilson
	}
	iv.Unreliable = UnreliableFor(iv.Method, n)
	return iv
}

// IsBinary reports whether every recorded value is 0 or 1 (and there is at least
// one): such a measure is a proportion and its interval is Wilson's.
func (h *Histogram) IsBinary() bool {
	if h.n == 0 {
		return false
	}
	for v := range h.counts {
		if v != 0 && v != 1 {
			return false
		}
	}
	return true
}

// MeanCI95 is the 95% interval of the mean, chosen by the values: Wilson when every
// value is 0 or 1; otherwise BCa over the histogram bootstrap (BCaCI95), which widens
// to BoundedWilsonCI95 over [lo, hi] (the measure's range) when all values are equal.
func (h *Histogram) MeanCI95(resamples int, seed uint64, lo, hi float64) Interval {
	if h.IsBinary() {
		return WilsonCI95(h.counts[1], h.n)
	}
	return h.BCaCI95(resamples, seed, lo, hi)
}
