package metrics

import "math"

// Intervals and paired tests of the per-query series of compare, where each
// series is a column of values over the same queries and the bootstrap
// replicates of every column come from one shared index draw (BootstrapMeans).

// Methods of the intervals (Interval.Method) beyond those of proportion.go.
const (
	// MethodCornishFisher: the second-order (skewness-corrected) normal
	// approximation of the bootstrap distribution of the mean, used only where
	// queries × resamples exceeds ExactResamplingBudget; like BCa its coverage
	// error is O(1/n), and at such n (≥ 2,000 queries at the default resamples)
	// its simulated coverage is within Monte Carlo error of 95%.
	MethodCornishFisher = "cornish-fisher"
)

// Methods of a paired p-value.
const (
	// PMethodMcNemar: every paired difference is −1, 0 or 1: the exact McNemar
	// (binomial) test on the discordant counts, at any n.
	PMethodMcNemar = "exact-mcnemar"
	// PMethodSignFlipExact: the exact sign-flip distribution on the lattice of the
	// differences (SignFlipExactP), at any n within its budget.
	PMethodSignFlipExact = "exact-sign-flip"
	// PMethodRandomization: the Monte Carlo sign-flip test (SignFlipPValues), a
	// valid p-value at any number of resamples (Phipson & Smyth 2010).
	PMethodRandomization = "sign-flip-randomization"
	// PMethodNoDifference: every paired difference is 0, so no query tells the
	// two apart and there is nothing to test: p = 1 (what every paired test
	// gives there), named as such rather than as a test (issue 34).
	PMethodNoDifference = "no-difference"
)

// IsZeroOne reports whether every value of xs is 0 or 1 (and there is one).
func IsZeroOne(xs []float64) bool {
	if len(xs) == 0 {
		return false
	}
	for _, v := range xs {
		if v != 0 && v != 1 {
			return false
		}
	}
	return true
}

// ColumnCI95 is the 95% interval of the mean of the series xs of a measure with
// range [lo, hi], given the bootstrap replicates of that mean (stats, sorted in
// place; nil above the resampling budget): the Wilson interval when the range
// is [0, 1] and every value is 0 or 1 (a proportion; values 0 and 1 of a
// wider range, DCG or relevance/k at 1, are not one: the Wilson interval ends
// at 1 where the measure's queries reach beyond it);
// BoundedWilsonCI95 when every value is equal; otherwise BCa from the
// replicates with the jackknife acceleration of the mean (the leave-one-out mean
// of item i is (Σx − x_i)/(n − 1), O(n)), or, without replicates, the
// Cornish–Fisher interval (MeanCI95Normal).
func ColumnCI95(xs, stats []float64, lo, hi float64) Interval {
	n := int64(len(xs))
	if n == 0 {
		return Interval{Lo: math.NaN(), Hi: math.NaN(), Method: MethodBCa, Unreliable: true}
	}
	if lo == 0 && hi == 1 && IsZeroOne(xs) {
		var k int64
		for _, v := range xs {
			if v == 1 {
				k++
			}
		}
		return WilsonCI95(k, n)
	}
	return meanCI(xs, stats, lo, hi)
}

// PairedCI95 is the 95% interval of the mean paired difference d (range
// [−w, w], w the width of the measure's range): McNemarCI95 when the measure
// is 0/1 (zeroOne: hit) and every difference is −1, 0 or 1, the interval
// inverted from the exact McNemar test that tests it (issue 34); otherwise
// differenceInterval, i.e. RuleOfThreeCI95 when every difference is equal,
// MethodHallTBetting below DifferenceReliableMinN differences or
// DifferenceReliableMinNonzero non-zero ones (w finite), else MethodHallT. Not BCa: on paired differences that are mostly 0 (heavy
// tails, little skewness) BCa covered 0.87 at n = 20, 0.88 at 30, 0.92 at 50
// and 0.93 at 100 in docs/statistics.md's simulation, the t interval and
// MethodHallT 0.94–0.95 (and MethodHallT alone 0.88 at n = 20 on differences
// that are 0 four times in five, hence the betting interval below 50).
func PairedCI95(d []float64, w float64, zeroOne bool) Interval {
	if len(d) == 0 {
		return Interval{Lo: math.NaN(), Hi: math.NaN(), Method: MethodHallT, Unreliable: true}
	}
	n := int64(len(d))
	if zeroOne {
		var worse, better int64
		ok := true
		for _, v := range d {
			switch v {
			case -1:
				worse++
			case 1:
				better++
			case 0:
			default:
				ok = false
			}
		}
		if ok {
			return McNemarCI95(worse, better, n)
		}
	}
	if same(d) && n >= 2 && !math.IsInf(w, 0) && w > 0 {
		return RuleOfThreeCI95(d[0], n, -w, w)
	}
	var nonzero int64
	for _, v := range d {
		if v != 0 {
			nonzero++
		}
	}
	if (n < DifferenceReliableMinN || nonzero < DifferenceReliableMinNonzero) && !math.IsInf(w, 0) && w > 0 {
		h := NewHistogram()
		for _, v := range d {
			h.Add(v)
		}
		vals, cnt := h.sorted()
		return differenceInterval(vals, cnt, n, -w, w)
	}
	// From DifferenceReliableMinN on, the moments summed in the order of d,
	// as before.
	if same(d) {
		return BoundedWilsonCI95(d[0], n, -w, w)
	}
	ci := hallTFromValues(d, -w, w)
	return Interval{Lo: ci[0], Hi: ci[1], N: n, Method: MethodHallT, Unreliable: n < DifferenceReliableMinN || nonzero < DifferenceReliableMinNonzero}
}

// same reports whether every value of xs equals the first.
func same(xs []float64) bool {
	for _, v := range xs {
		if v != xs[0] {
			return false
		}
	}
	return true
}

func meanCI(xs, stats []float64, lo, hi float64) Interval {
	n := int64(len(xs))
	var sum float64
	same := true
	for _, v := range xs {
		sum += v
		same = same && v == xs[0]
	}
	if same {
		return BoundedWilsonCI95(xs[0], n, lo, hi)
	}
	if n < SmallSampleMaxN {
		ci := hallTFromValues(xs, lo, hi)
		return Interval{Lo: ci[0], Hi: ci[1], N: n, Method: MethodHallT, Unreliable: UnreliableFor(MethodHallT, n)}
	}
	if stats == nil {
		ci := MeanCI95Normal(xs)
		return Interval{Lo: ci[0], Hi: ci[1], N: n, Method: MethodCornishFisher, Unreliable: UnreliableFor(MethodCornishFisher, n)}
	}
	jack := make([]float64, n)
	w := make([]int64, n)
	for i, v := range xs {
		jack[i] = (sum - v) / float64(n-1)
		w[i] = 1
	}
	ci := BCaExpandedFromReplicates(stats, sum/float64(n), JackknifeAcceleration(jack, w), n)
	return Interval{Lo: ci[0], Hi: ci[1], N: n, Method: MethodBCa, Unreliable: UnreliableFor(MethodBCa, n)}
}

// PairedExactP is the exact two-sided paired test of the differences d, when
// one is cheap: none when every difference is 0 (p = 1, PMethodNoDifference),
// McNemar's when every difference is −1, 0 or 1, else the exact sign-flip
// test on the lattice of the differences. ok = false when neither
// applies (the caller resamples, or bounds).
func PairedExactP(d []float64) (p float64, method string, ok bool) {
	var b, c, nonzero int64
	zeroOne := true
	first := 0.0
	for _, v := range d {
		switch v {
		case 1:
			b++
		case -1:
			c++
		case 0:
			continue
		default:
			zeroOne = false
		}
		if nonzero++; first == 0 {
			first = math.Abs(v)
		}
	}
	if nonzero == 0 {
		return 1, PMethodNoDifference, true
	}
	if zeroOne {
		return McNemarExactP(b, c), PMethodMcNemar, true
	}
	// A first difference on no lattice rules the lattice out, before the O(n) work.
	if _, _, ok := latticeOf([]float64{first}); ok {
		if p, ok := SignFlipExactP(d); ok {
			return p, PMethodSignFlipExact, true
		}
	}
	if nonzero <= SignFlipEnumerateMax {
		if p, ok := SignFlipEnumerate(d); ok {
			return p, PMethodSignFlipExact, true
		}
	}
	return math.NaN(), "", false
}

// SignFlipEnumerateMax is the most non-zero differences SignFlipEnumerate lists
// the sign vectors of (2^20 ≈ 10⁶ sums).
const SignFlipEnumerateMax = 20

// SignFlipEnumerate is the exact two-sided sign-flip p-value P(|Σ s_i d_i| ≥ |Σ d_i|)
// by listing every sign vector of the non-zero differences (in Gray-code order,
// one addition each); a sum within 1e-9·Σ|d_i| of |Σ d_i| counts as as extreme.
// ok = false beyond SignFlipEnumerateMax non-zero differences.
func SignFlipEnumerate(d []float64) (p float64, ok bool) {
	var nz []float64
	var obs, abs float64
	for _, v := range d {
		if v != 0 {
			nz = append(nz, v)
			obs += v
			abs += math.Abs(v)
		}
	}
	if len(nz) > SignFlipEnumerateMax {
		return math.NaN(), false
	}
	if len(nz) == 0 {
		return 1, true
	}
	obs = math.Abs(obs) - 1e-9*abs
	t := 0.0
	for _, v := range nz {
		t += v
	}
	hits := 0
	sign := make([]bool, len(nz)) // true: flipped
	total := 1 << len(nz)
	for g := 0; g < total; g++ {
		if g > 0 {
			i := 0 // the bit that changes between Gray codes g−1 and g
			for (g>>i)&1 == 0 {
				i++
			}
			if sign[i] {
				t += 2 * nz[i]
			} else {
				t -= 2 * nz[i]
			}
			sign[i] = !sign[i]
		}
		if math.Abs(t) >= obs {
			hits++
		}
	}
	return float64(hits) / float64(total), true
}

// QueryRange is the range [lo, hi] of one query's value of a compare measure at
// cutoff k with gain g when relevance levels go up to maxLevel: [0, 1] for the
// binary and unit measures, [0, Σ_{r ≤ k} gain(maxLevel)/log2(r + 1)] for DCG and
// [0, maxLevel] for the mean relevance (the other unbounded measures).
func QueryRange(info Info, k int, g Gain, maxLevel int) (lo, hi float64) {
	if info.Scale != ScaleUnbounded {
		return 0, 1
	}
	if info.Params&ParamGain != 0 {
		levels := make([]int, maxLevel+1)
		if maxLevel > 0 {
			levels[maxLevel] = k
		}
		return 0, IdealDCG(levels, k, g)
	}
	return 0, float64(maxLevel)
}

// MaxResamples is the largest number of bootstrap (and randomization-test)
// resamples any command accepts: beyond it the Monte Carlo error is far below
// every reported digit, while memory and time grow with it.
const MaxResamples = 100_000
