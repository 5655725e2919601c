package metrics

import "math"

// Smallest detectable differences: the smallest true difference that a two-sided
// level-α test over n items detects with probability `power` (normal theory). The
// defaults of the reports are α = 0.05 and power = 0.8, so z_{1−α/2} + z_{power} =
// 1.959964 + 0.841621 = 2.801585.

// DefaultAlpha and DefaultPower are the level and power of the reports' detectable differences.
const (
	DefaultAlpha = 0.05
	DefaultPower = 0.8
)

// MDDMean is the smallest detectable shift of a mean from the observed standard
// deviation sd over n items: δ = (z_{1−α/2} + z_{power})·sd/√n. For a paired
// difference pass the sd of the differences. NaN for n = 0.
func MDDMean(sd float64, n int64, alpha, power float64) float64 {
	if n <= 0 {
		return math.NaN()
	}
	return (NormalQuantile(1-alpha/2) + NormalQuantile(power)) * sd / math.Sqrt(float64(n))
}

// SampleSD is the sample standard deviation √(Σ c(v − x̄)² / (n − 1)) of the
// histogram; NaN for n < 2.
func (h *Histogram) SampleSD() float64 {
	if h.n < 2 {
		return math.NaN()
	}
	vals, cnt := h.sorted()
	mean := h.Mean()
	var ss float64
	for i, v := range vals {
		d := v - mean
		ss += float64(cnt[i]) * d * d
	}
	return math.Sqrt(ss / float64(h.n-1))
}

// bisect finds the root of an increasing-through-zero f on [lo, hi] (f(lo) < 0 ≤ f(hi)).
func bisect(f func(float64) float64, lo, hi float64) float64 {
	for range 200 {
		mid := (lo + hi) / 2
		if mid == lo || mid == hi {
			break
		}
		if f(mid) < 0 {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// MDDProportion is the smallest detectable difference of a proportion from p0 over
// n items (the one-sample test of a floor p0): the δ > 0 solving
// √n·δ = z_{1−α/2}·√(p0(1−p0)) + z_{power}·√(p1(1−p1)) with p1 = p0 − δ (down) or
// p0 + δ (up), the binomial variances under H0 and under the alternative (Fleiss,
// Levin & Paik 2003, §2.5). NaN in a direction where no p1 in [0, 1] is detectable,
// and where the exact binomial test of p0 cannot reject at alpha even when all n
// items fall on that side (its two-sided p is then 2·p0ⁿ above the floor,
// 2·(1 − p0)ⁿ below): the normal approximation said one item detects ±0.758
// above a floor of 0.05, where the best it can show has p = 0.1.
func MDDProportion(p0 float64, n int64, alpha, power float64) (down, up float64) {
	if n <= 0 || p0 < 0 || p0 > 1 {
		return math.NaN(), math.NaN()
	}
	za, zb, rn := NormalQuantile(1-alpha/2), NormalQuantile(power), math.Sqrt(float64(n))
	solve := func(sign, room float64) float64 {
		f := func(d float64) float64 {
			p1 := p0 + sign*d
			return rn*d - za*math.Sqrt(p0*(1-p0)) - zb*math.Sqrt(max(0, p1*(1-p1)))
		}
		// The most extreme outcome on this side: every item a success (up)
		// or a failure (down), P = (1 − room)ⁿ under p0.
		if room <= 0 || 2*math.Pow(1-room, float64(n)) >= alpha || f(room) < 0 {
			return math.NaN()
		}
		return bisect(f, 0, room)
	}
	return solve(-1, p0), solve(1, 1-p0)
}

// McNemarMinPairs is the fewest discordant pairs at which the exact McNemar
// test can reject at 0.05: with N all in one direction p = 2·½^N, 0.0625 at
// N = 5 and 0.03125 at 6.
const McNemarMinPairs = 6

// MDDMcNemar is the smallest |Δ| = |p₀₁ − p₁₀| of two paired proportions that
// the McNemar test over n pairs detects with probability power at level
// alpha, by Connor's (1987) normal-theory formula √n·δ = z_{1−α/2}·√ψ_δ +
// z_{power}·√(ψ_δ − δ²) with the discordant proportion ψ_δ = max(ψ, δ): the
// observed ψ, or as much as a difference of δ needs (a difference larger than
// the discordant share ψ cannot happen without more discordant pairs). Unlike
// the formula at the observed ψ alone (used before), which has no answer once
// even δ = ψ is not detectable, it names the drop the test would see four
// times in five, and
// so is never "none" beside a test that has just rejected (issue 34: the
// demo's adversarial hit@5 read "p 0.0313 · MDD —"). Where δ ≤ ψ it is
// Connor's formula at the observed ψ, as before. NaN when n is below
// McNemarMinPairs (no difference can be significant) or ψ is outside [0, 1].
// The left side minus the right is negative and then positive once as δ
// grows (increasing up to ψ; beyond it its sign is that of
// √(nδ) − z_{1−α/2} − z_{power}·√(1 − δ), increasing), so bisection finds it.
func MDDMcNemar(psi float64, n int64, alpha, power float64) float64 {
	if n < McNemarMinPairs || psi < 0 || psi > 1 {
		return math.NaN()
	}
	za, zb, rn := NormalQuantile(1-alpha/2), NormalQuantile(power), math.Sqrt(float64(n))
	f := func(d float64) float64 {
		s := max(psi, d)
		return rn*d - za*math.Sqrt(s) - zb*math.Sqrt(max(0, s-d*d))
	}
	if f(1) < 0 {
		return math.NaN()
	}
	return bisect(f, 0, 1)
}
