package metrics

import "math"

// A confidence interval for the mean of a bounded variable with guaranteed
// coverage: the betting interval of Waudby-Smith and Ramdas (2024, "Estimating
// means of bounded random variables by betting", JRSS B 86, 1–27), with the
// capital diversified over a fixed grid of bets ("dKelly", their §5.3), which
// makes it a symmetric function of the sample (no order, no seed).
//
// Rescale the values to y ∈ [0, 1]. For a candidate mean m, a gambler who bets
// the fraction f of her capital that the mean is above m multiplies it by
// 1 − f + f·y_i/m at each value (λ = f/m in the paper's 1 + λ(y_i − m)); if
// the mean is m each factor has expectation 1, so the product over n
// independent values is a nonnegative variable of expectation 1 (an
// e-value), and so is the average over a grid of fractions f fixed in advance.
// By Markov's inequality, at the true mean the average reaches 2/α with
// probability at most α/2, whatever the distribution on [0, 1]: the lower
// bound is the smallest m where the "above" capital K⁺(m) stays below 2/α,
// the upper bound the largest where the "below" capital
// K⁻(m) = avg_f Π (1 − f + f·(1 − y_i)/(1 − m)) does (the paper's hedged
// capital with θ = ½). The interval covers the mean with probability at least
// 1 − α for every distribution on the range and every n ≥ 1 (no asymptotics):
// it is the "valid" half of MethodHallTBetting. K⁺ is nonincreasing and K⁻
// nondecreasing in m (each factor is), so each bound is one bisection.
//
// Because the grid is fixed and every factor depends on one value, the capital
// depends on the values only through their histogram: order-free and
// deterministic. The paper's predictable plug-in bets (tuned from the running
// variance) are a little narrower but depend on the order of the values, and a
// fixed order of a sorted sample would void the guarantee.

// bettingFractions is the grid of bet fractions f (of the largest bet that
// cannot lose everything): f_d = d/(D + 1), d = 1 … D, the paper's dKelly grid.
var bettingFractions = func() []float64 {
	const d = 20
	fs := make([]float64, d)
	for i := range fs {
		fs[i] = float64(i+1) / float64(d+1)
	}
	return fs
}()

// logMeanExp is log(avg exp(xs)).
func logMeanExp(xs []float64) float64 {
	mx := math.Inf(-1)
	for _, x := range xs {
		mx = max(mx, x)
	}
	if math.IsInf(mx, -1) {
		return mx
	}
	s := 0.0
	for _, x := range xs {
		s += math.Exp(x - mx)
	}
	return mx + math.Log(s/float64(len(xs)))
}

// bettingLogCapital is log K⁺(m) (above: bets that the mean exceeds m) or
// log K⁻(m) (below) of the values ys in [0, 1] with multiplicities cnt, m in
// (0, 1); logs is scratch of len(bettingFractions).
func bettingLogCapital(ys []float64, cnt []int64, m float64, above bool, logs []float64) float64 {
	for d, f := range bettingFractions {
		s := 0.0
		for i, y := range ys {
			var r float64
			if above {
				r = y / m
			} else {
				r = (1 - y) / (1 - m)
			}
			// 1 − f + f·r ≥ 1 − f > 0
			s += float64(cnt[i]) * math.Log1p(f*(r-1)) //nolint:gosec // G602: cnt has one multiplicity per value of ys
		}
		logs[d] = s
	}
	return logMeanExp(logs)
}

// BettingInterval is the 1 − alpha betting interval of the mean of the values
// vals (multiplicities cnt, n ≥ 1 in all) of a variable with range [lo, hi]
// (finite, lo < hi): [lower, upper] with lower < upper always (never a point),
// inside [lo, hi]. Its coverage is at least 1 − alpha for every distribution
// on [lo, hi] (see the comment above).
func BettingInterval(vals []float64, cnt []int64, lo, hi, alpha float64) [2]float64 {
	w := hi - lo
	ys := make([]float64, len(vals))
	var n, sum float64
	for i, v := range vals {
		ys[i] = min(1, max(0, (v-lo)/w))
		n += float64(cnt[i])
		sum += ys[i] * float64(cnt[i])
	}
	mean := min(1, max(0, sum/n))
	thr := math.Log(2 / alpha)
	logs := make([]float64, len(bettingFractions))
	// Lower bound: K⁺ is nonincreasing in m and at most 1 from the mean up
	// (AM–GM), so the bound lies in [0, mean]; it is 0 when K⁺ stays below the
	// threshold as m → 0 (the capital then only grows with values above 0).
	lower := bisectBetting(0, mean, func(m float64) bool {
		return bettingLogCapital(ys, cnt, m, true, logs) >= thr
	})
	upper := 1 - bisectBetting(0, 1-mean, func(m float64) bool {
		return bettingLogCapital(ys, cnt, 1-m, false, logs) >= thr
	})
	return [2]float64{lo + lower*w, lo + upper*w}
}

// bisectBetting returns the bound between the m in [a, b] where reject(m) is
// true (below) and those where it is false (above), reject being true then
// false as m grows from a: the last rejected m of a bisection to 1e-12 (on
// the [0, 1] scale), so the interval it bounds contains every m that is not
// rejected (conservative by at most 1e-12); a when reject(a + tiny) is
// already false.
func bisectBetting(a, b float64, reject func(m float64) bool) float64 {
	if b <= a {
		return a
	}
	// at m → a the capital may be unbounded (a value above 0 divided by m → 0);
	// test just above a.
	if !reject(a + (b-a)*1e-12) {
		return a
	}
	lo, hi := a, b
	for hi-lo > 1e-12 {
		mid := 0.5 * (lo + hi)
		if mid <= lo || mid >= hi {
			break
		}
		if reject(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}
