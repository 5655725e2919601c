package metrics

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Intervals of a mean over few items. The studentized mean T = √n(x̄ − μ)/s has
// a skewness of order γ/√n (γ the skewness of the data) that Student's t
// interval ignores and that BCa over few items corrects only partly: on
// right-skewed scores (70% zeros) the BCa interval misses high four times as
// often as low at n = 20. Hall's (1992) transformation ("On the removal of
// skewness by transformation", JRSS B 54, 221–228)
// g(t) = t + γt²/(3√n) + γ²t³/(27n) + γ/(6√n) is monotone
// (g′ = (1 + γt/(3√n))² ≥ 0) and makes g(T) nearly symmetric, giving
// [x̄ − se·g⁻¹(q), x̄ − se·g⁻¹(−q)], se = s/√n, q the 0.975 quantile of Student's
// t with n − 1 degrees of freedom and g⁻¹(u) = 3√n/γ·((1 + γ/√n·(u − γ/(6√n)))^⅓ − 1).
// Alone it is not enough: where the sample skewness is noise (heavy tails, as
// in paired differences that are mostly 0) it moves the interval off the mean
// and covers 0.89 at n = 20, where the t interval covers 0.95 (and BCa 0.87).
// So the interval is the union of the two: the t interval, extended on the side
// the sample skewness points to as far as Hall's interval reaches. It covers
// whenever either does, needs no resampling (one pass over the distinct
// values) and is clipped to the measure's range. docs/statistics.md,
// "Interval coverage", has its simulated coverage and widths.

// MethodHallT: the union of Student's t interval and Hall's skewness-corrected t
// interval of a mean (HallTInterval), for means over 2 to SmallSampleMaxN − 1
// items that are not 0/1 and vary.
const MethodHallT = "hall-t"

// SmallSampleMaxN is the n from which the interval of a mean that is not 0/1
// is BCa at the expanded level; below it, from 2 items, it is MethodHallT.
const SmallSampleMaxN = 30

// HallTInterval is the 95% interval of the mean theta of n items with sample
// standard deviation s (divisor n − 1) and sample skewness skew (moments with
// divisor n: m₃/m₂^{3/2}): the union of the t interval theta ± q·s/√n and Hall's
// interval, clipped to [lo, hi]. n ≥ 2 and s > 0.
func HallTInterval(theta, s, skew float64, n int64, lo, hi float64) [2]float64 {
	rn := math.Sqrt(float64(n))
	se := s / rn
	q := t975(n - 1)
	ginv := func(u float64) float64 { return hallInverse(u, skew, rn) }
	return [2]float64{max(lo, min(theta-q*se, theta-se*ginv(q))), min(hi, max(theta+q*se, theta-se*ginv(-q)))}
}

// hallInverse is Hall's g⁻¹(u) = 3√n/γ·((1 + x)^⅓ − 1), x = γ/√n·(u − γ/(6√n)),
// with rn = √n, computed without cancellation: (1 + x)^⅓ − 1 is
// expm1(log1p(x)/3) for x > −1 (the form above loses every digit when γ is
// rounding noise: a skewness of 1e-16 on a symmetric sample made the cube
// root 1 + 1e-16, its excess over 1 all error, and the quotient by γ moved
// the interval by up to two standard errors), cbrt(1 + x) − 1 below, where
// 1 + x is far from 1. A skewness of 0 gives u.
func hallInverse(u, skew, rn float64) float64 {
	if skew == 0 {
		return u
	}
	x := skew / rn * (u - skew/(6*rn))
	var c float64 // (1 + x)^⅓ − 1
	if x > -1 {
		c = math.Expm1(math.Log1p(x) / 3)
	} else {
		c = math.Cbrt(1+x) - 1
	}
	return 3 * rn / skew * c
}

// hallTFromCounts is HallTInterval of the sample of values vals (at least
// two distinct) with multiplicities cnt, n items in all, the moments summed in
// the order of vals (ascending for a histogram, so the result does not depend
// on the order the values were added).
func hallTFromCounts(vals []float64, cnt []int64, n int64, lo, hi float64) [2]float64 {
	var sum float64
	for i, v := range vals {
		sum += v * float64(cnt[i])
	}
	nf := float64(n)
	theta := sum / nf
	var m2, m3 float64
	for i, v := range vals {
		d := v - theta
		m2 += float64(cnt[i]) * d * d
		m3 += float64(cnt[i]) * d * d * d
	}
	s := math.Sqrt(m2 / (nf - 1))
	skew := 0.0
	if m2 > 0 {
		skew = (m3 / nf) / math.Pow(m2/nf, 1.5)
	}
	return HallTInterval(theta, s, skew, n, lo, hi)
}

// hallTFromValues is hallTFromCounts of the values xs (not all equal, n ≥ 2),
// summed in their order.
func hallTFromValues(xs []float64, lo, hi float64) [2]float64 {
	ones := make([]int64, len(xs))
	for i := range ones {
		ones[i] = 1
	}
	return hallTFromCounts(xs, ones, int64(len(xs)), lo, hi)
}

// t975Table holds the 0.975 quantiles of Student's t with 1 to
// SmallSampleMaxN − 1 degrees of freedom (the inverse incomplete beta is the
// slow part of an interval otherwise).
var t975Table = func() []float64 {
	q := make([]float64, SmallSampleMaxN)
	for nu := 1; nu < SmallSampleMaxN; nu++ {
		q[nu] = distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(nu)}.Quantile(0.975)
	}
	return q
}()

// t975 is the 0.975 quantile of Student's t with nu ≥ 1 degrees of freedom.
func t975(nu int64) float64 {
	if nu < int64(len(t975Table)) {
		return t975Table[nu]
	}
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(nu)}.Quantile(0.975)
}
