package metrics

import (
	"math"
	"slices"
)

// The sign-flip test at large n by the saddlepoint approximation of its
// randomization distribution (Daniels 1954; Robinson 1982, "Saddlepoint
// approximations for permutation tests and confidence intervals", JRSS B 44).
//
// Under H0 the signs of the m non-zero paired differences d_i are independent
// and fair, so T = Σ s_i d_i has the cumulant generating function
// K(s) = Σ log cosh(s·d_i), known exactly. The tail P(T ≥ t) is approximated by
// Barndorff-Nielsen's r* form of the Lugannani–Rice formula: with ŝ the root of
// K'(ŝ) = t, w = √(2(ŝt − K(ŝ))) and u = ŝ·√K''(ŝ), P(T ≥ t) ≈ Φ̄(w + log(u/w)/w).
// Its error is relative, O(1/m), uniformly over the tail where the statistic is
// a sum of bounded terms (Robinson 1982; Jensen 1995, "Saddlepoint
// Approximations", §6). It is made conservative (issue 34): the tail of a
// lattice sum is taken half a step inside (the continuity correction) and the
// result is multiplied by 1 + SaddlepointMargin/m_eff; in the tests
// (saddlepoint_test.go) it is then never below the exact p of lattice
// differences (the Fourier inversion, fourier.go), where the plain
// approximation was up to 6% below it. It costs O(m) per Newton step (about
// ten steps), with no resampling, so it is deterministic and gives full power
// at any n: a z of 30 gives p ≈ 10⁻¹⁹⁷, not a bound of 1.12/√n.

// PMethodSaddlepoint: the saddlepoint approximation of the sign-flip
// distribution (SignFlipSaddlepointP), used from SaddlepointMinQueries queries
// on, or above ExactResamplingBudget, when at least SaddlepointMinNonzero
// differences are non-zero.
const PMethodSaddlepoint = "sign-flip-saddlepoint"

// SaddlepointMinQueries is the number of queries from which a paired test
// without an exact form uses the saddlepoint approximation instead of Monte
// Carlo at any number of resamples: its relative error there is far below the
// Monte Carlo error of any allowed number of resamples, and one method from
// 2,000 queries on means a few more queries cannot change the verdict by a
// change of method.
const SaddlepointMinQueries = 2000

// SaddlepointMinNonzero is the fewest non-zero differences the saddlepoint
// approximation is used on; with fewer (and no exact form) the non-zero
// differences alone are resampled (zeros do not move the sign-flip statistic),
// at most SaddlepointMinNonzero × MaxResamples sums.
const SaddlepointMinNonzero = 100

// HoeffdingFromZ is the standardized sign-flip statistic |Σd|/√(Σd²) from which
// SignFlipSaddlepointP reports Hoeffding's bound 2·exp(−z²/2) ≤ 1.3·10⁻³¹³: every
// p-value there prints as "< 1e-300".
const HoeffdingFromZ = 38

// LargeSampleSignFlipP is the two-sided sign-flip p-value of the differences d
// when PairedExactP has no exact form and either len(d) ≥ SaddlepointMinQueries
// or len(d) × resamples exceeds ExactResamplingBudget: the saddlepoint
// approximation with at least SaddlepointMinNonzero non-zero differences, else
// the Monte Carlo test of the non-zero differences (resamples, seed).
func LargeSampleSignFlipP(d []float64, resamples int, seed uint64) (float64, string) {
	nz := make([]float64, 0, len(d))
	for _, v := range d {
		if v != 0 {
			nz = append(nz, v)
		}
	}
	if len(nz) >= SaddlepointMinNonzero {
		return SignFlipSaddlepointP(nz), PMethodSaddlepoint
	}
	return SignFlipPValues(nz, len(nz), 1, resamples, seed)[0], PMethodRandomization
}

// LargeSampleSignFlipPs is LargeSampleSignFlipP of each series of ds, the
// series spread over GOMAXPROCS goroutines (the result does not depend on it).
func LargeSampleSignFlipPs(ds [][]float64, resamples int, seed uint64) ([]float64, []string) {
	ps, methods := make([]float64, len(ds)), make([]string, len(ds))
	parallelBlocks(len(ds), func(i int) {
		ps[i], methods[i] = LargeSampleSignFlipP(ds[i], resamples, seed)
	})
	return ps, methods
}

// UseLargeSampleP reports whether the paired tests of n queries with
// `resamples` resamples that have no exact form use LargeSampleSignFlipP.
func UseLargeSampleP(n, resamples int) bool {
	return n >= SaddlepointMinQueries || !ResamplingIsExact(n, resamples)
}

// SignFlipSaddlepointP is the saddlepoint approximation of the two-sided
// sign-flip p-value P(|Σ s_i d_i| ≥ |Σ d_i|) (see the top of this file), made
// conservative: on differences that share a lattice 1/D (D ≤
// MaxLatticeDenominator), where the sum moves in steps h = 2g/D (g the
// greatest common divisor of the lattice integers), the tail is taken at
// |Σd| − h/2 (the continuity correction of a lattice variable, Daniels 1987),
// and the result is multiplied by 1 + SaddlepointMargin/m_eff, m_eff =
// (Σd²)²/Σd⁴ the effective number of differences (the approximation's
// relative error is of order 1/m_eff). Uncorrected it was up to 6% below the
// exact p on precision@10 (0.0952 against 0.0961 at 50,000 queries); corrected
// it was below it by at most 1.06/m_eff on skewed differences, and with the
// margin it was never below it in the tests (saddlepoint_test.go). It is 1
// when every difference is 0, 2^{1−m} (exact) when the m non-zero differences
// all have one sign, and 0 only when the p-value underflows float64 (below
// about 10⁻³⁰⁸).
func SignFlipSaddlepointP(d []float64) float64 {
	var t, s1, v, v4 float64
	m := 0
	for _, x := range d {
		if x != 0 {
			m++
			t += x
			s1 += math.Abs(x)
			v += x * x
			v4 += x * x * x * x
		}
	}
	if m == 0 {
		return 1
	}
	t = math.Abs(t)
	if t >= s1*(1-1e-12) { // every sign alike: the two extreme sign vectors
		return math.Min(1, math.Ldexp(1, 1-m))
	}
	z := t / math.Sqrt(v)
	if z >= HoeffdingFromZ {
		// Every approximation is below 1e-300 here: report Hoeffding's exact
		// upper bound P(|T| ≥ t) ≤ 2·exp(−t²/(2V)) (at most 1.3e-313; 0 once it
		// underflows), without the O(m) Newton steps.
		return 2 * math.Exp(-z*z/2)
	}
	margin := 1 + SaddlepointMargin*v4/(v*v)
	t -= signFlipLatticeStep(d) / 2
	z = t / math.Sqrt(v)
	if z < 0.1 {
		// The distribution is symmetric: its normal approximation is off by
		// O(1/m) (the kurtosis), and p is above 0.9 here.
		return math.Min(1, margin*math.Erfc(z/math.Sqrt2))
	}
	// Newton on the concave, increasing K'(s) − t from s = t/V stays left of the
	// root and converges to it monotonically (quadratically near it). A relative
	// error δ in ŝ moves w by O(δ²) and u by δ, so 1e-9 is far below what p needs.
	s := t / v
	for range 100 {
		k1, k2, _ := signFlipCumulants(d, s, false)
		if k2 <= 0 {
			break
		}
		step := (t - k1) / k2
		s += step
		if step <= 1e-9*s {
			break
		}
	}
	_, k2, k := signFlipCumulants(d, s, true)
	w2 := 2 * (s*t - k)
	if w2 <= 0 || k2 <= 0 {
		return math.Min(1, margin*math.Erfc(z/math.Sqrt2))
	}
	w := math.Sqrt(w2)
	u := s * math.Sqrt(k2)
	r := w + math.Log(u/w)/w
	return math.Min(1, margin*math.Erfc(r/math.Sqrt2))
}

// SaddlepointMargin is c in the conservative factor 1 + c/m_eff of
// SignFlipSaddlepointP: twice the largest relative error times m_eff seen
// against the exact p (1.06, on differences 95% small and positive, 5% large
// and negative).
const SaddlepointMargin = 2

// latticeSpanMaxDistinct bounds the distinct |d| signFlipLatticeStep looks at:
// beyond it the differences are treated as continuous (step 0).
const latticeSpanMaxDistinct = 1 << 16

// signFlipLatticeStep is the step h of the sign-flip sum Σ s_i d_i when the
// non-zero |d| share a lattice 1/D (D ≤ MaxLatticeDenominator): flipping d_i
// moves the sum by 2|d_i|, so its values are h = 2g/D apart, g the greatest
// common divisor of the lattice integers; 0 without a lattice.
func signFlipLatticeStep(d []float64) float64 {
	// A first non-zero difference on no lattice rules the lattice out before
	// the pass over the distinct values (nDCG's differences, at once).
	for _, x := range d {
		if x != 0 {
			if _, _, ok := latticeOf([]float64{math.Abs(x)}); !ok {
				return 0
			}
			break
		}
	}
	seen := map[float64]bool{}
	var vals []float64
	for _, x := range d {
		if a := math.Abs(x); a != 0 && !seen[a] {
			if len(vals) == latticeSpanMaxDistinct {
				return 0
			}
			seen[a] = true
			vals = append(vals, a)
		}
	}
	if len(vals) == 0 {
		return 0
	}
	slices.Sort(vals)
	den, q, ok := latticeOf(vals)
	if !ok {
		return 0
	}
	var g int64
	for _, x := range q {
		for x != 0 {
			g, x = x, g%x
		}
	}
	return 2 * float64(g) / float64(den)
}

// signFlipCumulants returns K′(s), K″(s) and, with withK, K(s) of the
// sign-flip sum of d, K(s) = Σ log cosh(s·d_i), from one expm1 per difference.
func signFlipCumulants(d []float64, s float64, withK bool) (k1, k2, k float64) {
	for _, x := range d {
		if x == 0 {
			continue
		}
		ax := math.Abs(x)
		a := s * ax
		// em = e^{−2a} − 1: tanh a = −em/(2 + em), sech² a = 4(1 + em)/(2 + em)²;
		// expm1 only where e^{−2a} is near 1 (exp is the cheaper call).
		var em float64
		if a < 0.35 {
			em = math.Expm1(-2 * a)
		} else {
			em = math.Exp(-2*a) - 1
		}
		den := 2 + em
		th := -em / den
		sech2 := 4 * (1 + em) / (den * den)
		k1 += ax * th
		k2 += x * x * sech2
		if withK {
			switch {
			case th < 0.7: // log cosh a = −½ log(1 − tanh² a)
				k -= 0.5 * math.Log1p(-th*th)
			case a < 20:
				k -= 0.5 * math.Log(sech2)
			default: // log cosh a = a − log 2 + log1p(e^{−2a})
				k += a - math.Ln2 + (1 + em)
			}
		}
	}
	return k1, k2, k
}
