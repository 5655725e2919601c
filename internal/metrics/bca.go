package metrics

import (
	"context"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// BCa (bias-corrected and accelerated) bootstrap intervals of a mean (Efron 1987;
// Efron & Tibshirani 1993, §14.3), over the histogram bootstrap so that memory and
// time are bounded by the distinct values, not n: the resamples are multinomial
// draws of the distinct values' counts (a binomial per value, or item draws
// where there are at most 32 items per value, resampleHistogramMeans), and the
// jackknife that gives the acceleration runs over the distinct values with
// their multiplicities (every item with value v has the same leave-one-out
// mean), O(distinct values).

// bcaBias is the bias correction z₀ = Φ⁻¹(#{θ* < θ̂} + ½·#{θ* = θ̂}) / B), the
// mid-rank form that stays finite for the discrete bootstrap distributions of
// few-valued measures; the proportion is clamped to [½/B, 1 − ½/B]. A replicate
// within 1e-12·max(1, |θ̂|) of θ̂ is a tie (the same mean summed in another order).
func bcaBias(stats []float64, theta float64) float64 {
	var less, eq int
	tol := 1e-12 * max(1, math.Abs(theta))
	for _, s := range stats {
		switch {
		case math.Abs(s-theta) <= tol:
			eq++
		case s < theta:
			less++
		}
	}
	b := float64(len(stats))
	p := (float64(less) + 0.5*float64(eq)) / b
	p = min(max(p, 0.5/b), 1-0.5/b)
	return NormalQuantile(p)
}

// JackknifeAcceleration is the BCa acceleration of a statistic from its jackknife
// values θ_(i) with multiplicities w_i: a = Σ w (θ̄ − θ_(i))³ / (6 (Σ w (θ̄ − θ_(i))²)^{3/2}),
// θ̄ = Σ w θ_(i) / Σ w. 0 when the jackknife values do not vary.
func JackknifeAcceleration(jack []float64, w []int64) float64 {
	var tot, sum float64
	for i, v := range jack {
		tot += float64(w[i])
		sum += float64(w[i]) * v
	}
	bar := sum / tot
	var num, den float64
	for i, v := range jack {
		d := bar - v
		num += float64(w[i]) * d * d * d
		den += float64(w[i]) * d * d
	}
	if den == 0 {
		return 0
	}
	return num / (6 * math.Pow(den, 1.5))
}

// bcaLevelZ is the BCa-adjusted quantile level α' = Φ(z₀ + (z₀ + z_α)/(1 − a(z₀ + z_α)))
// of the nominal level whose normal quantile is z_α (given as z_α itself, so that
// a tail level too small for 1 − α to differ from 1 in float64 keeps its
// quantile); 0 or 1 when the denominator is not positive.
func bcaLevelZ(z0, a, za float64) float64 {
	den := 1 - a*(z0+za)
	if den <= 0 {
		if za < 0 {
			return 0
		}
		return 1
	}
	return NormalCDF(z0 + (z0+za)/den)
}

// bcaAt is the BCa interval from bootstrap replicates stats (sorted in place),
// the estimate theta and the acceleration a at the nominal tail level alpha
// (each side): the type-7 quantiles of the replicates at the BCa-adjusted levels.
func bcaAt(stats []float64, theta, a, alpha float64) [2]float64 {
	if len(stats) == 0 {
		return [2]float64{math.NaN(), math.NaN()}
	}
	z0 := bcaBias(stats, theta)
	slices.Sort(stats)
	za := NormalQuantile(alpha)
	return [2]float64{Quantile(stats, bcaLevelZ(z0, a, za)), Quantile(stats, bcaLevelZ(z0, a, -za))}
}

// ExpandedAlpha is the nominal tail level of the small-sample expansion of a
// bootstrap interval from n items (Hesterberg 2015, "What teachers should know
// about the bootstrap", §5.2): Φ(−√(n/(n−1))·t_{0.975, n−1}), the level at which
// the normal quantile equals the t quantile widened by the bootstrap's missing
// n/(n−1) variance factor. 0.0159 at n = 20, 0.0211 at n = 50, 0.0231 at 100;
// it tends to 0.025. For n < 2 it is 0.025.
func ExpandedAlpha(n int64) float64 {
	if n < 2 {
		return 0.025
	}
	nu := float64(n - 1)
	tq := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: nu}.Quantile(0.975)
	return NormalCDF(-math.Sqrt(float64(n)/nu) * tq)
}

// BCaExpandedFromReplicates is BCaFromReplicates at the expanded nominal level
// ExpandedAlpha(n) of an estimate from n items: the BCa interval whose simulated
// coverage is at least 0.93 from n = 20 on (docs/statistics.md).
func BCaExpandedFromReplicates(stats []float64, theta, a float64, n int64) [2]float64 {
	return bcaAt(stats, theta, a, ExpandedAlpha(n))
}

// LargeSampleMinN is the n from which the interval of a mean that is not 0/1
// is MethodHallT again instead of BCa: both are second-order accurate, and
// at this n their endpoints agree to a small fraction of the width
// (TestHallTMatchesBCaAtLargeN) and MethodHallT covers 0.95 on every
// distribution of docs/statistics.md's simulation; it resamples nothing,
// where BCa drew 10,000 multinomial resamples of the histogram (one binomial
// per distinct value each), about a tenth of check's CPU on a million cases.
const LargeSampleMinN = 10_000

// ContinuousCI95 is the 95% interval of the mean of a measure that is not 0/1
// (range [lo, hi]): below SmallSampleMaxN items and from LargeSampleMinN the
// union of the t interval and Hall's skewness-corrected one (HallTInterval,
// MethodHallT), in between BCa (BCaCI95); BoundedWilsonCI95 when every value is
// equal. NaN when n = 0 or resamples ≤ 0.
func (h *Histogram) ContinuousCI95(resamples int, seed uint64, lo, hi float64) Interval {
	iv, _ := h.ContinuousCI95Context(context.Background(), resamples, seed, lo, hi)
	return iv
}

// ContinuousCI95Context is ContinuousCI95 that ends with ctx.Err() soon after
// ctx ends (BCaCI95Context).
func (h *Histogram) ContinuousCI95Context(ctx context.Context, resamples int, seed uint64, lo, hi float64) (Interval, error) {
	if h.n >= 2 && (h.n < SmallSampleMaxN || h.n >= LargeSampleMinN) && resamples > 0 {
		if vals, cnt := h.sorted(); len(vals) >= 2 {
			ci := hallTFromCounts(vals, cnt, h.n, lo, hi)
			return Interval{Lo: ci[0], Hi: ci[1], N: h.n, Method: MethodHallT, Unreliable: UnreliableFor(MethodHallT, h.n)}, nil
		}
	}
	return h.BCaCI95Context(ctx, resamples, seed, lo, hi)
}

// DifferenceCI95 is the 95% interval of the mean of paired differences (range
// [lo, hi]): differenceInterval of their histogram. NaN when n = 0. It
// resamples nothing: one pass over the distinct values (and, below
// DifferenceReliableMinN with a finite range, two bisections of the betting
// capital).
func (h *Histogram) DifferenceCI95(lo, hi float64) Interval {
	if h.n == 0 {
		return Interval{Lo: math.NaN(), Hi: math.NaN(), Method: MethodHallT, Unreliable: true}
	}
	vals, cnt := h.sorted()
	return differenceInterval(vals, cnt, h.n, lo, hi)
}

// differenceInterval is the 95% interval of the mean of n ≥ 1 paired
// differences with distinct values vals (ascending) and multiplicities cnt,
// range [lo, hi]:
//   - every difference equal, n ≥ 2 and a finite range: RuleOfThreeCI95 (issue 34:
//     it was the betting interval alone below DifferenceReliableMinN and the
//     worst-case BoundedWilsonCI95 from there, ±0.261 of the range at 60
//     identical pairs where this gives ±0.0495);
//   - a finite range and fewer than DifferenceReliableMinN differences, or
//     fewer than DifferenceReliableMinNonzero of them non-zero:
//     MethodHallTBetting, the union of MethodHallT (when the values vary) and
//     the betting interval (BettingInterval), never unreliable: the betting
//     interval alone covers at least 95% for every distribution on the range;
//   - otherwise MethodHallT (BoundedWilsonCI95 when every difference is
//     equal), unreliable below DifferenceReliableMinN pairs or
//     DifferenceReliableMinNonzero non-zero ones (only an unbounded range
//     gets there).
func differenceInterval(vals []float64, cnt []int64, n int64, lo, hi float64) Interval {
	if len(vals) == 1 && n >= 2 && !math.IsInf(lo, 0) && !math.IsInf(hi, 0) && lo < hi {
		return RuleOfThreeCI95(vals[0], n, lo, hi)
	}
	var nonzero int64
	for i, v := range vals {
		if v != 0 {
			nonzero += cnt[i]
		}
	}
	if (n < DifferenceReliableMinN || nonzero < DifferenceReliableMinNonzero) && !math.IsInf(lo, 0) && !math.IsInf(hi, 0) && lo < hi {
		ci := BettingInterval(vals, cnt, lo, hi, 0.05)
		if len(vals) >= 2 && n >= 2 {
			ht := hallTFromCounts(vals, cnt, n, lo, hi)
			ci = [2]float64{min(ci[0], ht[0]), max(ci[1], ht[1])}
		}
		return Interval{Lo: ci[0], Hi: ci[1], N: n, Method: MethodHallTBetting, Unreliable: UnreliableFor(MethodHallTBetting, n)}
	}
	if len(vals) < 2 {
		return BoundedWilsonCI95(vals[0], n, lo, hi)
	}
	ci := hallTFromCounts(vals, cnt, n, lo, hi)
	return Interval{Lo: ci[0], Hi: ci[1], N: n, Method: MethodHallT, Unreliable: n < DifferenceReliableMinN || nonzero < DifferenceReliableMinNonzero}
}

// BCaCI95 is the BCa 95% interval of the mean over `resamples` histogram-bootstrap
// resamples at the small-sample expanded level (BCaExpandedFromReplicates), the acceleration from the jackknife over distinct values: the
// leave-one-out mean of an item of value v is (n·x̄ − v)/(n − 1), with
// multiplicity count(v). When every value is equal the bootstrap distribution is a
// point and says nothing about the uncertainty: the interval then widens to
// BoundedWilsonCI95 over the measure's range [lo, hi]. NaN when n = 0 or resamples ≤ 0.
func (h *Histogram) BCaCI95(resamples int, seed uint64, lo, hi float64) Interval {
	iv, _ := h.BCaCI95Context(context.Background(), resamples, seed, lo, hi)
	return iv
}

// BCaCI95Context is BCaCI95 that ends with ctx.Err() soon after ctx ends: its
// resamples cost O(distinct values) binomial draws each, or O(n) cheap item
// draws where those are the cheaper (resampleHistogramMeans); 10,000 of them
// over 9,000 distinct values take about 0.4 s by item draws (13 s by
// binomials).
func (h *Histogram) BCaCI95Context(ctx context.Context, resamples int, seed uint64, lo, hi float64) (Interval, error) {
	iv := Interval{Lo: math.NaN(), Hi: math.NaN(), N: h.n, Method: MethodBCa, Unreliable: UnreliableFor(MethodBCa, h.n)}
	if h.n == 0 || resamples <= 0 {
		return iv, nil
	}
	vals, cnt := h.sorted()
	if len(vals) < 2 {
		return BoundedWilsonCI95(vals[0], h.n, lo, hi), nil
	}
	var sum float64
	for i, v := range vals {
		sum += v * float64(cnt[i])
	}
	theta := sum / float64(h.n)
	jack := make([]float64, len(vals))
	for i, v := range vals {
		jack[i] = (sum - v) / float64(h.n-1)
	}
	a := JackknifeAcceleration(jack, cnt)
	stats, err := resampleHistogramMeans(ctx, vals, cnt, h.n, resamples, seed)
	if err != nil {
		return iv, err
	}
	ci := BCaExpandedFromReplicates(stats, theta, a, h.n)
	iv.Lo, iv.Hi = ci[0], ci[1]
	return iv, nil
}
