package metrics

import "math"

// The retrieval triad: the per-case keys `check` writes and aggregates.
const (
	KeyHit    = "retrieval_hit_at_k"
	KeyRecall = "retrieval_recall_at_k"
	KeyNDCG   = "retrieval_ndcg_at_k"
)

// TriadKeys lists the triad's keys in report order.
var TriadKeys = [3]string{KeyHit, KeyRecall, KeyNDCG}

// Triad is the three retrieval scores of one gold-carrying case.
type Triad struct {
	Hit, Recall, NDCG float64
}

// Get returns the score of a triad key (KeyHit, KeyRecall, KeyNDCG).
func (t Triad) Get(i int) float64 {
	switch i {
	case 0:
		return t.Hit
	case 1:
		return t.Recall
	default:
		return t.NDCG
	}
}

// TopKIdentities appends to dst the first k distinct card identities of ranked,
// best first: duplicates are removed by first occurrence before the top-k cut
// (several chunks of one parent card count once, at the rank of the best chunk).
// Empty identities are skipped. k <= 0 gives none.
func TopKIdentities(dst []string, ranked []string, k int) []string {
	start := len(dst)
	for _, id := range ranked {
		if len(dst)-start >= k {
			break
		}
		if id == "" || contains(dst[start:], id) {
			continue
		}
		dst = append(dst, id)
	}
	return dst
}

// DedupGold returns the distinct gold ids in first-occurrence order (a new slice;
// empty ids dropped): gold is a set, so a repeated gold id counts once.
func DedupGold(gold []string) []string {
	return AppendDedupGold(make([]string, 0, len(gold)), gold)
}

// AppendDedupGold is DedupGold appending to dst (which must not alias gold).
func AppendDedupGold(dst, gold []string) []string {
	start := len(dst)
	for _, g := range gold {
		if g != "" && !contains(dst[start:], g) {
			dst = append(dst, g)
		}
	}
	return dst
}

// HitAtK is hit@k: 1 if any gold card is among the deduplicated top-k identities, else 0.
func HitAtK(topk, gold []string) float64 {
	for _, id := range topk {
		if contains(gold, id) {
			return 1
		}
	}
	return 0
}

// RecallAtK is recall@k = |gold ∩ topk| / |gold| over distinct gold ids (0 when gold is empty).
func RecallAtK(topk, gold []string) float64 {
	if len(gold) == 0 {
		return 0
	}
	found := 0
	for _, id := range topk {
		if contains(gold, id) {
			found++
		}
	}
	return float64(found) / float64(len(gold))
}

// NDCGAtK is binary-gain nDCG@k = DCG/IDCG with DCG = Σ_{i=1..k} rel_i / log2(i+1)
// and IDCG the DCG of min(|gold|, k) relevant cards at the top; never above 1.
func NDCGAtK(topk, gold []string, k int) float64 {
	ideal := min(len(gold), k)
	if ideal <= 0 {
		return 0
	}
	dcg := 0.0
	for i, id := range topk {
		if i >= k {
			break
		}
		if contains(gold, id) {
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

// ScoreTriad scores one case: ranked identities (best first, duplicates allowed),
// gold ids (duplicates allowed, not empty) and the cut k. topk is scratch space
// (may be nil); the deduplicated top k is returned with the scores.
func ScoreTriad(topk, ranked, gold []string, k int) (Triad, []string) {
	topk = TopKIdentities(topk[:0], ranked, k)
	var buf [8]string
	g := AppendDedupGold(buf[:0], gold)
	return Triad{
		Hit:    HitAtK(topk, g),
		Recall: RecallAtK(topk, g),
		NDCG:   NDCGAtK(topk, g, k),
	}, topk
}

// Summary is a per-case metric over a group of cases: n, mean and the
// percentile-bootstrap 95% CI of the mean (NaN when n = 0).
type Summary struct {
	N    int64
	Mean float64
	CI95 [2]float64
}

// Summarize is the mean and bootstrap 95% CI of the values in h (Histogram.Mean, Histogram.CI95).
func Summarize(h *Histogram, resamples int, seed uint64) Summary {
	if h == nil || h.N() == 0 {
		return Summary{Mean: math.NaN(), CI95: [2]float64{math.NaN(), math.NaN()}}
	}
	return Summary{N: h.N(), Mean: h.Mean(), CI95: h.CI95(resamples, seed)}
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}
