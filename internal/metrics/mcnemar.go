package metrics

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Intervals of a mean paired difference that agree with its test, and the
// interval of differences that are all equal (issue 34).

// MethodMcNemarInverted: the interval of the mean difference of a 0/1 measure
// inverted from the exact McNemar test (McNemarCI95): the Clopper–Pearson
// interval of the share of discordant pairs that improved, the values of that
// share the exact McNemar test would not reject, scaled by the
// Clopper–Pearson interval of the discordant proportion. It excludes 0
// exactly when the test rejects at 0.05.
const MethodMcNemarInverted = "mcnemar-inverted"

// MethodRuleOfThree: every one of the n paired differences equals c (two
// runs identical on every case when c = 0): a mean other than c needs a
// share q of pairs that differ from c, and none of n did, so q ≤ U =
// 1 − 0.05^{1/(n−1)} (≈ 3/(n − 1), the rule of three), and the mean lies
// within that share times the room the range leaves on each side of c
// (RuleOfThreeCI95).
const MethodRuleOfThree = "rule-of-three"

// ClopperPearson is the exact (Clopper–Pearson 1934) two-sided 1 − alpha
// interval of a proportion from k successes in n ≥ 1 trials: the Beta(k,
// n − k + 1) quantile alpha/2 (0 at k = 0) and the Beta(k + 1, n − k)
// quantile 1 − alpha/2 (1 at k = n); the proportions an exact binomial test
// with alpha/2 in each tail would not reject.
func ClopperPearson(k, n int64, alpha float64) [2]float64 {
	if k < 0 || k > n || n < 1 {
		panic("metrics: ClopperPearson needs 0 <= k <= n, n >= 1")
	}
	lo, hi := 0.0, 1.0
	if k > 0 {
		lo = distuv.Beta{Alpha: float64(k), Beta: float64(n - k + 1)}.Quantile(alpha / 2)
	}
	if k < n {
		hi = distuv.Beta{Alpha: float64(k + 1), Beta: float64(n - k)}.Quantile(1 - alpha/2)
	}
	return [2]float64{lo, hi}
}

// McNemarCI95 is the 95% interval of the mean paired difference of a 0/1
// measure over n pairs, worse of them getting −1 (1 → 0) and better +1
// (0 → 1): the mean is Δ = ψ·(2π − 1), ψ the discordant proportion and π the
// share of discordant pairs that improved. Given N = worse + better
// discordant pairs the exact McNemar test is the binomial test of π = ½; the
// Clopper–Pearson interval [π_L, π_U] of better/N holds the π it does not
// reject (π_L > ½ exactly when better/N is significantly above ½, as
// McNemarExactP < 0.05), and [ψ_L, ψ_U] is the Clopper–Pearson interval of
// N/n. The interval is every ψ(2π − 1) over those two:
// [min(ψ_L(2π_L − 1), ψ_U(2π_L − 1)), max(ψ_U(2π_U − 1), ψ_L(2π_U − 1))],
// which excludes 0 exactly when the test rejects (ψ_L > 0 once N ≥ 1). With
// no discordant pair it is RuleOfThreeCI95 at 0 over [−1, 1]. Its exact
// coverage, over every (p₁₀, p₀₁) of a grid, is in docs/statistics.md
// (TestMcNemarCI95Coverage).
func McNemarCI95(worse, better, n int64) Interval {
	if worse < 0 || better < 0 || worse+better > n {
		panic("metrics: McNemarCI95 needs 0 <= worse + better <= n")
	}
	if n == 0 {
		return Interval{Lo: math.NaN(), Hi: math.NaN(), Method: MethodMcNemarInverted, Unreliable: true}
	}
	N := worse + better
	if N == 0 {
		return RuleOfThreeCI95(0, n, -1, 1)
	}
	pi := ClopperPearson(better, N, 0.05)
	psi := ClopperPearson(N, n, 0.05)
	at := func(p, s float64) float64 { return s * (2*p - 1) }
	lo := min(at(pi[0], psi[0]), at(pi[0], psi[1]))
	hi := max(at(pi[1], psi[1]), at(pi[1], psi[0]))
	return Interval{Lo: max(-1, lo), Hi: min(1, hi), N: n, Method: MethodMcNemarInverted}
}

// RuleOfThreeCI95 is the 95% interval of the mean of n ≥ 2 paired differences
// that all equal c, the differences ranging over [lo, hi] (finite):
// [c − U·(c − lo), c + U·(hi − c)], U = 1 − 0.05^{1/(n−1)}; [lo, hi] at
// n = 1. The mean is within q_c·(c − lo) below c and q_c·(hi − c) above it,
// q_c = P(a difference ≠ c), so the interval misses it only when every pair
// equals some value c whose p_c = 1 − q_c is below 1 − U; summed over every
// such c, Σ p_c^n ≤ (1 − U)^{n−1}·Σ p_c ≤ 0.05. So the samples whose every
// difference is equal are missed with probability at most 5% for every
// distribution on [lo, hi] (with 1 − 0.05^{1/n}, one c at a time, two c's
// could each take 5%: 0.9375 at n = 5 on ±1 with p ½); the other samples get
// their own interval (differenceInterval), and the exact coverage of the two
// together is at least 0.955 on every two-point distribution of a grid to
// n = 30 (TestDifferenceIntervalCoverageExact). Unlike the interval of the
// worst-case variance (BoundedWilsonCI95, used before), it shrinks like 1/n:
// 60 identical queries give ±0.0495 of the range's half-width, where
// bounded-wilson-cc gave ±0.261. With an infinite lo or hi it is [lo, hi]
// (MethodRange).
func RuleOfThreeCI95(c float64, n int64, lo, hi float64) Interval {
	if n < 1 {
		return Interval{Lo: math.NaN(), Hi: math.NaN(), Method: MethodRuleOfThree, Unreliable: true}
	}
	if math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return Interval{Lo: lo, Hi: hi, N: n, Method: MethodRange, Unreliable: UnreliableFor(MethodRange, n)}
	}
	if n == 1 {
		return Interval{Lo: lo, Hi: hi, N: n, Method: MethodRuleOfThree}
	}
	u := -math.Expm1(math.Log(0.05) / float64(n-1)) // 1 − 0.05^{1/(n−1)}
	c = min(hi, max(lo, c))
	return Interval{Lo: c - u*(c-lo), Hi: c + u*(hi-c), N: n, Method: MethodRuleOfThree}
}
