package metrics

import (
	"context"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// Paired comparisons of two runs over the same cases, from the histogram of the
// per-case differences (memory bounded by the distinct differences, not by n).

// FirstGoldRank is the 1-based position of the first gold card among the
// deduplicated ranked card identities (casefile.TopKIdentities with no cut), 0 when no gold
// card was retrieved.
func FirstGoldRank(ranked, gold []string) int {
	for i, id := range ranked {
		if contains(gold, id) {
			return i + 1
		}
	}
	return 0
}

// SignFlipP is the two-sided paired sign-flip randomization test of the differences
// recorded in h: p = (1 + #{|T*| ≥ |T|}) / (resamples + 1) with T = Σ d_i (Phipson &
// Smyth 2010). Under H0 each difference is as likely negated, so the m differences
// of one absolute value v contribute v·(2K − m), K ~ Binomial(m, ½): each resample
// draws one such K per distinct |d| (O(distinct values), the same distribution as
// flipping n signs). 1 when every difference is 0.
func (h *Histogram) SignFlipP(resamples int, seed uint64) float64 {
	p, _ := h.SignFlipPContext(context.Background(), resamples, seed)
	return p
}

// signFlipCoinsMinDistinct is the number of distinct |d| from which
// SignFlipPContext draws each K ~ Binomial(m, ½) by coins, as the number of
// ones among m random bits (fairHeads: a 64-bit draw and a popcount per 64
// differences), instead of as a gonum binomial (m uniform draws below
// m = 25, a rejection step with Lgamma, tan, exp and log from there).
// BenchmarkSignFlipResample (BENCHMARKS.md, "The histogram bootstrap and the
// sign-flip test by cheap draws") measured the coins at 3.5 to 8 ns per
// distinct |d| up to m = 30 (6 to 20 ns at m = 100), the binomials at 15 to
// 55 ns at m = 1 and 270 to 1,150 ns from m = 30: the coins are the cheaper
// at every size, 3 to 10 times at m = 1, up to 240 times at m = 30. The
// binomials are kept below this many distinct |d|, where 10,000 resamples
// take at most about 0.2 s, so that every p-value of few distinct
// differences keeps the draws, and so the bytes, it had before the coins
// existed (the repository's goldens, demos and tests draw at most 27
// distinct |d| by randomization outside the cancellation tests).
const signFlipCoinsMinDistinct = 64

// SignFlipPContext is SignFlipP that ends with ctx.Err() soon after ctx ends
// (checked every 16 resamples: 10,000 resamples of 9,000 distinct |d| take
// 0.3 to 0.7 s by coins, where binomials took 2 to 5 s).
func (h *Histogram) SignFlipPContext(ctx context.Context, resamples int, seed uint64) (float64, error) {
	abs := map[float64]int64{}
	var t, tol float64
	for v, c := range h.counts {
		if v != 0 && c > 0 {
			abs[math.Abs(v)] += c
			t += v * float64(c)
			tol += math.Abs(v) * float64(c)
		}
	}
	if len(abs) == 0 || resamples <= 0 {
		return 1, nil
	}
	vals := make([]float64, 0, len(abs))
	for v := range abs {
		vals = append(vals, v)
	}
	slices.Sort(vals)
	mult := make([]int64, len(vals))
	for i, v := range vals {
		mult[i] = abs[v]
	}
	t, tol = math.Abs(t), tol*1e-9 // |T*| within rounding of |T| counts as "as extreme"
	src := rand.NewPCG(seed, 0x9e3779b97f4a7c15)
	coins := len(vals) >= signFlipCoinsMinDistinct
	extreme := 0
	for b := range resamples {
		if b&15 == 0 {
			if err := ctx.Err(); err != nil {
				return math.NaN(), err
			}
		}
		var s float64
		if coins {
			s = signFlipCoins(src, vals, mult)
		} else {
			s = signFlipBinomials(src, vals, mult)
		}
		if math.Abs(s) >= t-tol {
			extreme++
		}
	}
	return float64(1+extreme) / float64(resamples+1), nil
}

// signFlipBinomials is one resample of the sign-flip statistic
// Σ v·(2K − m) over the distinct |d| (vals, ascending) and their
// multiplicities, K ~ Binomial(m, ½) drawn by gonum.
func signFlipBinomials(src rand.Source, vals []float64, mult []int64) float64 {
	s := 0.0
	for i, v := range vals {
		m := mult[i]
		k := distuv.Binomial{N: float64(m), P: 0.5, Src: src}.Rand()
		s += v * (2*k - float64(m))
	}
	return s
}

// signFlipCoins is signFlipBinomials with each K drawn as fairHeads: the same
// distribution, summed in the same order.
func signFlipCoins(src *rand.PCG, vals []float64, mult []int64) float64 {
	s := 0.0
	for i, v := range vals {
		m := mult[i]
		s += v * float64(2*fairHeads(src, m)-m)
	}
	return s
}

// fairHeads is K ~ Binomial(m, ½), m ≥ 0, exactly: the number of ones among m
// independent fair bits, the low m bits of ⌈m/64⌉ draws of 64 (one sign per
// difference, a draw per 64 of them).
func fairHeads(src *rand.PCG, m int64) int64 {
	var k int
	for ; m >= 64; m -= 64 {
		k += bits.OnesCount64(src.Uint64())
	}
	if m > 0 {
		k += bits.OnesCount64(src.Uint64() & (1<<uint(m) - 1))
	}
	return int64(k)
}

// PairedDiscordant returns, for differences of a 0/1 measure, the counts of −1
// (b: worse in the second run) and +1 (c: better); ok is false when some
// difference is not −1, 0 or 1.
func (h *Histogram) PairedDiscordant() (b, c int64, ok bool) {
	for v, n := range h.counts {
		switch v {
		case -1:
			b += n
		case 1:
			c += n
		case 0:
		default:
			return 0, 0, false
		}
	}
	return b, c, true
}
