package metrics

import (
	"context"
	"math"
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
// draws one binomial per distinct |d| (O(distinct values), the same distribution as
// flipping n signs). 1 when every difference is 0.
func (h *Histogram) SignFlipP(resamples int, seed uint64) float64 {
	p, _ := h.SignFlipPContext(context.Background(), resamples, seed)
	return p
}

// SignFlipPContext is SignFlipP that ends with ctx.Err() soon after ctx ends
// (checked every 16 resamples: 10,000 resamples of 5,000 distinct |d| take
// about 2.5 s).
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
	t, tol = math.Abs(t), tol*1e-9 // |T*| within rounding of |T| counts as "as extreme"
	src := rand.NewPCG(seed, 0x9e3779b97f4a7c15)
	extreme := 0
	for b := range resamples {
		if b&15 == 0 {
			if err := ctx.Err(); err != nil {
				return math.NaN(), err
			}
		}
		s := 0.0
		for _, v := range vals {
			m := abs[v]
			k := distuv.Binomial{N: float64(m), P: 0.5, Src: src}.Rand()
			s += v * (2*k - float64(m))
		}
		if math.Abs(s) >= t-tol {
			extreme++
		}
	}
	return float64(1+extreme) / float64(resamples+1), nil
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
