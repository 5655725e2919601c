package metrics

import "math"

// Graded-relevance retrieval metrics at a cutoff k, per query, with trec_eval's
// conventions. The input of one query is its ranking as relevance levels, best
// first (an unjudged document counts as 0), and the number of judged documents of
// the query at each level (for the ideal ranking and the number of relevant ones).

// Gain maps a relevance level to its DCG gain.
type Gain int

const (
	// GainExp is 2^rel - 1 (Burges et al. 2005), the default.
	GainExp Gain = iota
	// GainLinear is rel itself (Järvelin & Kekäläinen 2002; trec_eval's ndcg_cut).
	GainLinear
)

// String is the flag spelling of the gain.
func (g Gain) String() string {
	if g == GainLinear {
		return "linear"
	}
	return "exp"
}

// Of is the gain of relevance level rel: 2^rel − 1 (exp) or rel (linear).
func (g Gain) Of(rel int) float64 {
	if rel <= 0 {
		return 0
	}
	if g == GainLinear {
		return float64(rel)
	}
	return math.Exp2(float64(rel)) - 1
}

// GradedKeys names the per-query graded metrics, in report order.
var GradedKeys = [...]string{
	"dcg_at_k", "ndcg_at_k", "precision_at_k", "recall_at_k",
	"map_at_k", "mrr_at_k", "hit_at_k", "mean_relevance_at_k",
}

// NumGraded is the number of graded metrics.
const NumGraded = len(GradedKeys)

// Graded holds one query's graded metrics, indexed like GradedKeys.
type Graded [NumGraded]float64

// Indexes into Graded.
const (
	GDCG = iota
	GNDCG
	GPrecision
	GRecall
	GMAP
	GMRR
	GHit
	GMeanRel
)

// RankDiscount is the DCG discount of 1-based rank r: 1 / log2(r + 1).
func RankDiscount(r int) float64 { return 1 / math.Log2(float64(r+1)) }

// GradedDCG is DCG@k = Σ_{r=1..min(k,len)} gain(rel_r) / log2(r + 1) (Järvelin & Kekäläinen 2002).
func GradedDCG(rels []int, k int, g Gain) float64 {
	s := 0.0
	for i, rel := range rels {
		if i >= k {
			break
		}
		if rel > 0 {
			s += g.Of(rel) / math.Log2(float64(i+2))
		}
	}
	return s
}

// IdealDCG is the DCG@k of the ideal ranking of all judged documents: levels[l]
// documents of level l, highest levels first.
func IdealDCG(levels []int, k int, g Gain) float64 {
	s := 0.0
	r := 0
	for l := len(levels) - 1; l > 0 && r < k; l-- {
		for c := 0; c < levels[l] && r < k; c++ {
			s += g.Of(l) / math.Log2(float64(r+2))
			r++
		}
	}
	return s
}

// NumRelevant is the number of judged documents with level ≥ relevantLevel.
func NumRelevant(levels []int, relevantLevel int) int {
	n := 0
	for l := max(relevantLevel, 0); l < len(levels); l++ {
		n += levels[l]
	}
	return n
}

// GradedAtK computes every graded metric of one query at cutoff k. rels is the
// ranking best first (unjudged = 0), levels the judged documents per level,
// relevantLevel the binary threshold (relevant = rel ≥ relevantLevel).
// With no relevant document, recall and MAP are 0 (such queries are excluded
// from means by the caller).
func GradedAtK(rels []int, levels []int, k int, g Gain, relevantLevel int) Graded {
	var m Graded
	nrel := NumRelevant(levels, relevantLevel)
	found := 0     // relevant documents seen so far
	sumPrec := 0.0 // Σ precision@r over relevant ranks r
	sumRel := 0
	firstRel := 0
	for i, rel := range rels {
		if i >= k {
			break
		}
		sumRel += max(rel, 0)
		if rel >= relevantLevel {
			found++
			sumPrec += float64(found) / float64(i+1)
			if firstRel == 0 {
				firstRel = i + 1
			}
		}
	}
	m[GDCG] = GradedDCG(rels, k, g)
	// nDCG@k = DCG@k / IDCG@k, the ideal from all judged documents (0 when IDCG = 0).
	if ideal := IdealDCG(levels, k, g); ideal > 0 {
		m[GNDCG] = m[GDCG] / ideal
	}
	// P@k = |relevant ∩ top k| / k (trec_eval P_k divides by k even when fewer are retrieved).
	m[GPrecision] = float64(found) / float64(k)
	if nrel > 0 {
		// R@k = |relevant ∩ top k| / |relevant| (trec_eval recall_k).
		m[GRecall] = float64(found) / float64(nrel)
		// AP@k = Σ_{relevant r ≤ k} P@r / |relevant| (trec_eval map_cut_k).
		m[GMAP] = sumPrec / float64(nrel)
	}
	// RR@k = 1 / rank of the first relevant document within k, else 0 (trec_eval recip_rank with -M k).
	if firstRel > 0 {
		m[GMRR] = 1 / float64(firstRel)
		// Hit@k = 1 when a relevant document is within k (trec_eval success_k).
		m[GHit] = 1
	}
	// Mean relevance@k = Σ_{r ≤ k} rel_r / k (missing ranks count 0, like precision).
	m[GMeanRel] = float64(sumRel) / float64(k)
	return m
}
