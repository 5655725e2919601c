package compare

import "github.com/retrieval-gate/retrieval-gate/internal/metrics"

// MaxDCGLevel is the relevance level of the largest DCG@k possible on this
// run's scale: the highest level judged in the qrels (at least 1).
func (r *Result) MaxDCGLevel() int { return max(r.MaxLevel, 1) }

// MaxDCG is the largest DCG@k possible at the run's k and gain: every one of
// the k results at MaxDCGLevel (31.80 at k = 10, exp gain, levels 0–3). Every
// report prints each DCG@k with it ("9.85 of 31.80").
func (r *Result) MaxDCG() float64 { return metrics.MaxDCG(r.K, r.MaxDCGLevel(), r.Gain) }

// Buckets are the strategy's judged top-k documents in the seed's three
// relevance buckets (highly relevant: 3 and above, relevant+: ≥ 2, not
// relevant: ≤ 1, negative judgments included there), over the judged
// query–result pairs (Retrieved − Unjudged), as mean relevance is: an unjudged
// document is in no bucket (its share is the distribution's unjudged).
func (s *Strategy) Buckets() metrics.Buckets {
	judged := append([]int(nil), s.ByLevel...)
	if len(judged) > 0 {
		judged[0] -= s.Unjudged
	}
	return metrics.RelevanceBuckets(judged)
}
