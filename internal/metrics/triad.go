package metrics

import (
	"context"
	"math"
	"slices"
)

// AppendDedupGold appends to dst the distinct gold ids of gold in first-occurrence
// order (empty ids dropped; dst must not alias gold): gold is a set, so a repeated
// gold id counts once.
func AppendDedupGold(dst, gold []string) []string {
	start := len(dst)
	for _, g := range gold {
		if g != "" && !contains(dst[start:], g) {
			dst = append(dst, g)
		}
	}
	return dst
}

// AppendRelevant appends to dst the distinct ids of gold ∪ relevant (gold
// first, empty ids dropped; dst must alias neither) when relevant has a
// non-empty id, else nothing: the set CaseInput.Relevant of a case with
// relevant_ids (a gold card is relevant by definition, listed there or not).
func AppendRelevant(dst, gold, relevant []string) []string {
	if !slices.ContainsFunc(relevant, func(id string) bool { return id != "" }) {
		return dst
	}
	start := len(dst)
	for _, ids := range [2][]string{gold, relevant} {
		for _, id := range ids {
			if id != "" && !contains(dst[start:], id) {
				dst = append(dst, id)
			}
		}
	}
	return dst
}

// HitAtK is hit@k = 1 if any gold card is among the deduplicated top-k identities, else 0.
func HitAtK(in *CaseInput) float64 {
	for i := range in.TopK {
		if in.goldAt(i) {
			return 1
		}
	}
	return 0
}

// RecallAtK is recall@k = |R ∩ topk| / |R| over distinct ids, R = in.Judged() (0 when R is empty).
func RecallAtK(in *CaseInput) float64 {
	rel := in.Judged()
	if len(rel) == 0 {
		return 0
	}
	found := 0
	for i := range in.TopK {
		if in.judgedAt(i) {
			found++
		}
	}
	return float64(found) / float64(len(rel))
}

// NDCGAtK is binary-gain nDCG@k = DCG/IDCG with DCG = Σ_{i=1..k} rel_i / log2(i+1),
// rel_i = 1 when card i is in R = in.Judged(), and IDCG the DCG of min(|R|, k)
// relevant cards at the top; never above 1.
func NDCGAtK(in *CaseInput) float64 {
	k := in.K
	rel := in.Judged()
	ideal := min(len(rel), k)
	if ideal <= 0 {
		return 0
	}
	dcg := 0.0
	for i := range in.TopK {
		if i >= k {
			break
		}
		if in.judgedAt(i) {
			dcg += discount(i + 1)
		}
	}
	idcg := 0.0
	for i := 1; i <= ideal; i++ {
		idcg += discount(i)
	}
	return min(dcg/idcg, 1)
}

// discount is the DCG position discount 1 / log2(rank + 1), rank 1-based.
func discount(rank int) float64 {
	if rank < len(discounts) {
		return discounts[rank]
	}
	return 1 / math.Log2(float64(rank)+1)
}

// discounts caches discount for small ranks.
var discounts = func() (d [65]float64) {
	for r := 1; r < len(d); r++ {
		d[r] = 1 / math.Log2(float64(r)+1)
	}
	return d
}()

// ScoreCase sets scores[i] to CaseMeasures[i] of the case in.
func ScoreCase(scores *[NumCase]float64, in *CaseInput) {
	in.mark() // which of the top k are gold, once for every measure
	for i := range CaseMeasures {
		scores[i] = CaseMeasures[i].Of(in)
	}
	in.marked = false
}

// Summary is a per-case metric over a group of cases: n, mean and the 95%
// interval of the mean (Histogram.MeanCI95: Wilson (continuity-corrected) for 0/1 values, else BCa),
// its method, and whether n < ReliableMinN makes it unreliable (NaN when n = 0).
type Summary struct {
	N          int64
	Mean       float64
	CI95       [2]float64
	Method     string
	Unreliable bool
}

// SummarizeContext is the mean and 95% interval of the values in h, a measure
// with per-case range [lo, hi] (the range the interval widens to when all
// values are equal). It ends with ctx.Err() soon after ctx ends
// (MeanCI95Context).
func SummarizeContext(ctx context.Context, h *Histogram, resamples int, seed uint64, lo, hi float64) (Summary, error) {
	if h == nil || h.N() == 0 {
		return Summary{Mean: math.NaN(), CI95: [2]float64{math.NaN(), math.NaN()}, Unreliable: true}, nil
	}
	iv, err := h.MeanCI95Context(ctx, resamples, seed, lo, hi)
	if err != nil {
		return Summary{}, err
	}
	return Summary{N: h.N(), Mean: h.Mean(), CI95: iv.CI(), Method: iv.Method, Unreliable: iv.Unreliable}, nil
}

// Range is the per-item range of a measure of this scale: [0, 1], or [0, +Inf).
func (s Scale) Range() (lo, hi float64) {
	if s == ScaleUnbounded {
		return 0, math.Inf(1)
	}
	return 0, 1
}

// KeyRange is the per-item range of the measure named key: its scale's range
// when it is registered, else unknown: (−Inf, +Inf).
func KeyRange(key string) (lo, hi float64) {
	if info, ok := Lookup(key); ok {
		return info.Scale.Range()
	}
	return math.Inf(-1), math.Inf(1)
}

// containsID is contains with the last bytes compared before the strings:
// ids of one length mostly differ there (card-1007, card-1008), and most
// pairs are told apart without a call of the runtime's comparison.
func containsID(xs []string, s string) bool {
	if s == "" {
		return contains(xs, s)
	}
	last := s[len(s)-1]
	for _, x := range xs {
		if len(x) == len(s) && x[len(x)-1] == last && x == s {
			return true
		}
	}
	return false
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}
