package compare

import "github.com/retrieval-gate/retrieval-gate/internal/metrics"

// MaxDCGLevel is the relevance level of the largest DCG@k possible on this
// run's scale: the highest level judged in the qrels (at least 1).
func (r *Result) MaxDCGLevel() int { return max(r.MaxLevel, 1) }

// MaxDCG is the largest DCG@k possible at the run's k and gain: every one of
// the k results at MaxDCGLevel (31.80 at k = 10, exp gain, levels 0–3). Every
// report prints each DCG@k with it ("9.85 of 31.80").
func (r *Result) MaxDCG() float64 { return metrics.MaxDCG(r.K, r.MaxDCGLevel(), r.Gain) }

// Buckets are the strategy's top-k documents in the seed's three relevance
// buckets (highly relevant: 3 and above, relevant+: ≥ 2, not relevant: ≤ 1,
// unjudged and negative judgments included there), over Retrieved documents.
func (s *Strategy) Buckets() metrics.Buckets { return metrics.RelevanceBuckets(s.ByLevel) }
