package metrics

import (
	"math"
	"math/bits"
	"slices"

	"gonum.org/v1/gonum/mathext"
)

// Exact paired tests. For a 0/1 measure the paired sign-flip test is the exact
// McNemar test; for a measure whose paired differences take few distinct values the
// sign-flip distribution is computed exactly by convolving, over the distinct |d|
// values, the distribution of each value's signed sum, on the integer lattice the
// values share. Both are exact at any n; neither uses a normal approximation.

// BinomialCDFHalf is P(X ≤ k) for X ~ Binomial(n, ½). 0 for k < 0, 1 for k ≥ n.
// Up to n = 62 it is Σ_{i ≤ k} C(n, i) / 2ⁿ summed in integers, so the nearest
// float64 to the exact value: a p of 2·2⁻⁶ is 0.03125 and prints as a p of
// 1/32 from any other exact test does (the regularized incomplete beta's last
// bits made it 0.03125000000000001, "0.0313" beside the sign-flip's "0.0312").
// Beyond, the regularized incomplete beta I_{½}(n − k, k + 1).
func BinomialCDFHalf(k, n int64) float64 {
	switch {
	case k < 0:
		return 0
	case k >= n:
		return 1
	case n <= 62:
		// Every C(n, i) is below 2⁶¹ and their sum below 2⁶², so the sum is
		// exact and float64(sum) its nearest double; scaling by 2⁻ⁿ is exact.
		var sum, c uint64 = 0, 1
		for i := int64(0); i <= k; i++ {
			sum += c
			c = binomNext(c, uint64(n-i), uint64(i+1)) //nolint:gosec // G115: 0 ≤ i ≤ k < n ≤ 62
		}
		return math.Ldexp(float64(sum), -int(n))
	}
	return mathext.RegIncBeta(float64(n-k), float64(k+1), 0.5)
}

// binomNext is c·a/b = C(n, i+1) for c = C(n, i), a = n − i, b = i + 1: the
// product in 128 bits, the quotient (an integer below 2⁶¹) exact.
func binomNext(c, a, b uint64) uint64 {
	hi, lo := bits.Mul64(c, a)
	q, _ := bits.Div64(hi, lo, b)
	return q
}

// McNemarExactP is the exact McNemar test of b and c discordant pairs (b: first
// better, c: second better): the two-sided binomial test of b ~ Binomial(b + c, ½),
// p = min(1, 2·P(X ≤ min(b, c))). 1 when there is no discordant pair.
func McNemarExactP(b, c int64) float64 {
	if b < 0 || c < 0 {
		panic("metrics: McNemarExactP needs non-negative counts")
	}
	if b+c == 0 {
		return 1
	}
	return min(1, 2*BinomialCDFHalf(min(b, c), b+c))
}

// MaxLatticeDenominator bounds D in the search for a common lattice 1/D of the
// paired differences: 5040 = 2·lcm(1..10) covers precision and MRR at k ≤ 10.
const MaxLatticeDenominator = 5040

// SignFlipExactBudget bounds the work of the exact sign-flip convolution (lattice
// support × non-zero differences) and SignFlipExactMaxSupport its memory (lattice
// points of the sum): beyond either SignFlipExactP reports ok = false.
const (
	SignFlipExactBudget     = 400_000_000
	SignFlipExactMaxSupport = 1 << 21
)

// latticeOf returns the smallest D ≤ MaxLatticeDenominator such that every value
// times D is an integer (within 1e-9 relative), and those integers; ok = false if none.
func latticeOf(vals []float64) (int64, []int64, bool) {
	q := make([]int64, len(vals))
next:
	for d := int64(1); d <= MaxLatticeDenominator; d++ {
		for i, v := range vals {
			x := v * float64(d)
			r := math.Round(x)
			if math.Abs(x-r) > 1e-9*max(1, x) || r == 0 {
				continue next
			}
			q[i] = int64(r)
		}
		return d, q, true
	}
	return 0, nil, false
}

// SignFlipExactP is the exact two-sided paired sign-flip (randomization) test of
// the differences d: p = P(|Σ s_i d_i| ≥ |Σ d_i|) over all 2ⁿ sign vectors s, each
// equally likely under H0. The non-zero |d| are put on a common lattice 1/D; the
// distribution of the signed sum is the convolution over the distinct |d| = q/D,
// each with multiplicity m, of q·(2K − m), K ~ Binomial(m, ½). When every non-zero
// |d| is equal this is the binomial (McNemar) test, at any n. Where the
// convolution exceeds SignFlipExactBudget or SignFlipExactMaxSupport the same
// distribution is inverted from its characteristic function
// (signFlipFourierP, within SignFlipFourierBudget; its p is kept from
// FourierMinP up). ok = false when the values share no lattice
// (D ≤ MaxLatticeDenominator) or neither computation is within its bounds;
// p is then NaN.
func SignFlipExactP(d []float64) (p float64, ok bool) {
	signed := map[float64]int64{}
	for _, v := range d {
		signed[v]++
	}
	return signFlipExactCounts(signed)
}

// SignFlipExactP is the exact sign-flip p-value of the differences recorded
// in h, as compare's paired tests take it (PairedP): SignFlipExactP's, and
// where their values share no lattice (continuous differences: nDCG, RBO) and
// at most SignFlipEnumerateMax of them are not 0, SignFlipEnumerate's, which
// lists the 2^m sign vectors (about 10 ms at m = 20). ok = false beyond both.
func (h *Histogram) SignFlipExactP() (p float64, ok bool) {
	if p, ok := signFlipExactCounts(h.counts); ok {
		return p, true
	}
	var nonzero int64
	vals := make([]float64, 0, len(h.counts))
	for v, c := range h.counts {
		if v != 0 && c > 0 {
			nonzero += c
			vals = append(vals, v)
		}
	}
	if nonzero > SignFlipEnumerateMax {
		return math.NaN(), false
	}
	slices.Sort(vals) // one order of the sums, whatever the map's
	d := make([]float64, 0, nonzero)
	for _, v := range vals {
		for range h.counts[v] {
			d = append(d, v)
		}
	}
	return SignFlipEnumerate(d)
}

// signFlipExactCounts is SignFlipExactP of the differences given as distinct
// signed values and their counts.
func signFlipExactCounts(signed map[float64]int64) (p float64, ok bool) {
	mult := map[float64]int64{}
	for v, c := range signed {
		if v != 0 && c > 0 {
			mult[math.Abs(v)] += c
		}
	}
	if len(mult) == 0 {
		return 1, true
	}
	vals := make([]float64, 0, len(mult))
	for v := range mult {
		vals = append(vals, v)
	}
	slices.Sort(vals)
	_, q, ok := latticeOf(vals)
	if !ok {
		return math.NaN(), false
	}
	var tObs, support, items int64
	at := make(map[float64]int64, len(vals)) // |d| -> its lattice integer
	for i, v := range vals {
		at[v] = q[i]
	}
	for v, c := range signed {
		if v == 0 || c <= 0 {
			continue
		}
		qi := at[math.Abs(v)] * c
		if v > 0 {
			tObs += qi
		} else {
			tObs -= qi
		}
	}
	tObs = max(tObs, -tObs)
	m := make([]int64, len(vals))
	for i, v := range vals {
		m[i] = mult[v]
		support += q[i] * m[i]
		items += m[i]
	}
	if len(vals) == 1 {
		// T = q(2K − m): |T| ≥ tObs ⇔ K ≤ (m − tObs/q)/2 or K ≥ (m + tObs/q)/2.
		k := (m[0] - tObs/q[0]) / 2
		return min(1, 2*BinomialCDFHalf(k, m[0])), true
	}
	if support > SignFlipExactMaxSupport || float64(support)*float64(items) > SignFlipExactBudget {
		// The convolution is too costly: invert the characteristic function
		// (fourier.go), whose work grows with the distinct values instead of
		// the non-zero differences; its absolute rounding error leaves a p
		// below FourierMinP to the caller's other methods.
		if p, ok := signFlipFourierP(q, m, tObs); ok && p >= FourierMinP {
			return p, true
		}
		return math.NaN(), false
	}
	// dist[t + support] = P(T = t) over the values convolved so far.
	dist := make([]float64, 2*support+1)
	next := make([]float64, 2*support+1)
	dist[support] = 1
	reach := int64(0) // |T| ≤ reach so far
	for i := range vals {
		for range m[i] {
			lo, hi := support-reach-q[i], support+reach+q[i]
			clear(next[lo : hi+1])
			for t := support - reach; t <= support+reach; t++ {
				if pr := dist[t]; pr != 0 {
					next[t-q[i]] += 0.5 * pr
					next[t+q[i]] += 0.5 * pr
				}
			}
			reach += q[i]
			dist, next = next, dist
		}
	}
	// Sum the two tails from the outside in (smallest terms first).
	var tail float64
	for t := support; t >= tObs; t-- {
		tail += dist[support+t]
		if t != 0 {
			tail += dist[support-t]
		}
	}
	return min(1, tail), true
}
