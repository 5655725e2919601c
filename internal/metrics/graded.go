package metrics

import (
	"math"
	"strconv"
)

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
	if rel < len(expGains) {
		return expGains[rel]
	}
	return math.Exp2(float64(rel)) - 1
}

// expGains caches 2^rel − 1 for small levels (exactly math.Exp2(rel) − 1: both are exact).
var expGains = func() (t [16]float64) {
	for r := range t {
		t[r] = float64(uint64(1)<<r) - 1
	}
	return t
}()

// Graded holds one query's graded metrics, indexed like QueryMeasures.
type Graded [NumGraded]float64

// GradedDCG is DCG@k = Σ_{r=1..min(k,len)} gain(rel_r) / log2(r + 1) (Järvelin & Kekäläinen 2002).
func GradedDCG(rels []int, k int, g Gain) float64 {
	s := 0.0
	for i, rel := range rels {
		if i >= k {
			break
		}
		if rel > 0 {
			s += g.Of(rel) / log2RankPlus1(i+1)
		}
	}
	return s
}

// log2RankPlus1 is log2(rank + 1) for a 1-based rank, cached for small ranks
// (the same float64 as computing it: DCG sums keep their exact value).
func log2RankPlus1(rank int) float64 {
	if rank < len(log2Ranks) {
		return log2Ranks[rank]
	}
	return math.Log2(float64(rank) + 1)
}

var log2Ranks = func() (t [65]float64) {
	for r := 1; r < len(t); r++ {
		t[r] = math.Log2(float64(r) + 1)
	}
	return t
}()

// IdealDCG is the DCG@k of the ideal ranking of all judged documents: levels[l]
// documents of level l, highest levels first.
func IdealDCG(levels []int, k int, g Gain) float64 {
	s := 0.0
	r := 0
	for l := len(levels) - 1; l > 0 && r < k; l-- {
		for c := 0; c < levels[l] && r < k; c++ {
			s += g.Of(l) / log2RankPlus1(r+1)
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

// GradedAtK computes every measure of QueryMeasures for one query. With no
// relevant document, recall and MAP are 0 (such queries are excluded from means
// by the caller).
func GradedAtK(in *QueryInput) Graded {
	var m Graded
	for i := range QueryMeasures {
		m[i] = QueryMeasures[i].Of(in)
	}
	return m
}

// relevantInTopK is |{r ≤ k : rel_r ≥ relevantLevel}|.
func relevantInTopK(in *QueryInput) int {
	found := 0
	for i, rel := range in.Rels {
		if i >= in.K {
			break
		}
		if rel >= in.RelevantLevel {
			found++
		}
	}
	return found
}

// firstRelevant is the 1-based rank of the first relevant document within k, 0 when none.
func firstRelevant(in *QueryInput) int {
	for i, rel := range in.Rels {
		if i >= in.K {
			break
		}
		if rel >= in.RelevantLevel {
			return i + 1
		}
	}
	return 0
}

// DCGAtK is the dcg_at_k measure: GradedDCG of the query's ranking at k.
func DCGAtK(in *QueryInput) float64 { return GradedDCG(in.Rels, in.K, in.Gain) }

// GradedNDCGAtK is nDCG@k = DCG@k / IDCG@k, the ideal from all judged documents (0 when IDCG = 0).
func GradedNDCGAtK(in *QueryInput) float64 {
	if ideal := IdealDCG(in.Levels, in.K, in.Gain); ideal > 0 {
		return GradedDCG(in.Rels, in.K, in.Gain) / ideal
	}
	return 0
}

// PrecisionAtK is P@k = |relevant ∩ top k| / k (trec_eval P_k divides by k even when fewer are retrieved).
func PrecisionAtK(in *QueryInput) float64 {
	return float64(relevantInTopK(in)) / float64(in.K)
}

// GradedRecallAtK is R@k = |relevant ∩ top k| / |relevant| (trec_eval recall_k; 0 without relevant documents).
func GradedRecallAtK(in *QueryInput) float64 {
	if nrel := NumRelevant(in.Levels, in.RelevantLevel); nrel > 0 {
		return float64(relevantInTopK(in)) / float64(nrel)
	}
	return 0
}

// APAtK is AP@k = Σ_{relevant r ≤ k} P@r / |relevant| (trec_eval map_cut_k; 0 without relevant documents).
func APAtK(in *QueryInput) float64 {
	nrel := NumRelevant(in.Levels, in.RelevantLevel)
	if nrel == 0 {
		return 0
	}
	found, sumPrec := 0, 0.0
	for i, rel := range in.Rels {
		if i >= in.K {
			break
		}
		if rel >= in.RelevantLevel {
			found++
			sumPrec += float64(found) / float64(i+1)
		}
	}
	return sumPrec / float64(nrel)
}

// RRAtK is RR@k = 1 / rank of the first relevant document within k, else 0 (trec_eval recip_rank with -M k).
func RRAtK(in *QueryInput) float64 {
	if r := firstRelevant(in); r > 0 {
		return 1 / float64(r)
	}
	return 0
}

// GradedHitAtK is Hit@k = 1 when a relevant document is within k, else 0 (trec_eval success_k).
func GradedHitAtK(in *QueryInput) float64 {
	if firstRelevant(in) > 0 {
		return 1
	}
	return 0
}

// MeanRelevance is the average relevance of the judged results in the top k,
// Σ_{judged r ≤ k} max(rel_r, 0) / |{judged r ≤ k}| (the seed's "mean
// relevance", the average judged relevance over the judged query–result pairs:
// two judged results of relevance 3 give 3, whatever k); NaN when the top k
// has no judged result (no result at all, or every one unjudged).
func MeanRelevance(in *QueryInput) float64 {
	n := min(in.K, len(in.Rels))
	sum, judged := 0, 0
	for r, rel := range in.Rels[:n] {
		if r < len(in.Unjudged) && in.Unjudged[r] {
			continue
		}
		sum += max(rel, 0)
		judged++
	}
	if judged == 0 {
		return math.NaN()
	}
	return float64(sum) / float64(judged)
}

// MeanRelevanceAtK is Σ_{r ≤ k} max(rel_r, 0) / k (missing ranks count 0, like precision).
func MeanRelevanceAtK(in *QueryInput) float64 {
	sum := 0
	for i, rel := range in.Rels {
		if i >= in.K {
			break
		}
		sum += max(rel, 0)
	}
	return float64(sum) / float64(in.K)
}

// RBP is the rbp_at_k measure with persistence p, the probability that the
// user goes on from one rank to the next: Rank-Biased Precision (Moffat & Zobel
// 2008), binary (a document is relevant at rel ≥ the relevant level, as in the
// original and ir_measures' RBP(rel=L)), truncated at k (ir_measures' cutoff).
func RBP(p float64) Measure[QueryInput] {
	return Measure[QueryInput]{
		Info: Info{Key: "rbp_at_k", Label: "RBP",
			Definition: "(1 − p) Σ_{relevant r ≤ k} p^(r − 1), p = " + strconv.FormatFloat(p, 'g', -1, 64),
			Params:     ParamK | ParamRelevantLevel, HigherIsBetter: true, Scale: ScaleUnit,
			Own: []Parameter{{Name: "p", Value: p, Doc: "persistence: the probability of going on to the next rank"}}},
		Of: func(in *QueryInput) float64 { return RBPAtK(in, p) },
	}
}

// RBPAtK is RBP@k = (1 − p) Σ_{r ≤ k, rel_r ≥ relevant level} p^(r − 1) (Moffat & Zobel 2008, binary, truncated at k).
func RBPAtK(in *QueryInput, p float64) float64 {
	sum, w := 0.0, 1.0 // w = p^(r − 1)
	for i, rel := range in.Rels {
		if i >= in.K {
			break
		}
		if rel >= in.RelevantLevel {
			sum += w
		}
		w *= p
	}
	return (1 - p) * sum
}
