package metrics

import (
	"math"
	"slices"
)

// BCa (bias-corrected and accelerated) bootstrap intervals of a mean (Efron 1987;
// Efron & Tibshirani 1993, §14.3), over the histogram bootstrap so that memory and
// time stay flat in n: the resamples are multinomial draws of the distinct values'
// counts, and the jackknife that gives the acceleration runs over the distinct
// values with their multiplicities (every item with value v has the same
// leave-one-out mean), O(distinct values).

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

// bcaLevel is the BCa-adjusted quantile level α' = Φ(z₀ + (z₀ + z_α)/(1 − a(z₀ + z_α)))
// of nominal level α (z_α = Φ⁻¹(α)); 0 or 1 when the denominator is not positive.
func bcaLevel(z0, a, alpha float64) float64 {
	za := NormalQuantile(alpha)
	den := 1 - a*(z0+za)
	if den <= 0 {
		if za < 0 {
			return 0
		}
		return 1
	}
	return NormalCDF(z0 + (z0+za)/den)
}

// BCaFromReplicates is the BCa 95% interval from bootstrap replicates stats (sorted
// in place), the estimate theta and the acceleration a: the type-7 quantiles of the
// replicates at the BCa-adjusted levels of 0.025 and 0.975.
func BCaFromReplicates(stats []float64, theta, a float64) [2]float64 {
	if len(stats) == 0 {
		return [2]float64{math.NaN(), math.NaN()}
	}
	z0 := bcaBias(stats, theta)
	slices.Sort(stats)
	return [2]float64{Quantile(stats, bcaLevel(z0, a, 0.025)), Quantile(stats, bcaLevel(z0, a, 0.975))}
}

// BCaCI95 is the BCa 95% interval of the mean over `resamples` histogram-bootstrap
// resamples, the acceleration from the jackknife over distinct values: the
// leave-one-out mean of an item of value v is (n·x̄ − v)/(n − 1), with
// multiplicity count(v). When every value is equal the bootstrap distribution is a
// point and says nothing about the uncertainty: the interval then widens to
// BoundedWilsonCI95 over the measure's range [lo, hi]. NaN when n = 0 or resamples ≤ 0.
func (h *Histogram) BCaCI95(resamples int, seed uint64, lo, hi float64) Interval {
	iv := Interval{Lo: math.NaN(), Hi: math.NaN(), N: h.n, Method: MethodBCa, Unreliable: Unreliable(h.n)}
	if h.n == 0 || resamples <= 0 {
		return iv
	}
	vals, cnt := h.sorted()
	if len(vals) < 2 {
		return BoundedWilsonCI95(vals[0], h.n, lo, hi)
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
	stats := resampleHistogramMeans(vals, cnt, h.n, resamples, seed)
	ci := BCaFromReplicates(stats, theta, a)
	iv.Lo, iv.Hi = ci[0], ci[1]
	return iv
}
