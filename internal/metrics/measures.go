package metrics

import (
	"slices"
	"strconv"
)

// The measure registry: every measure retrieval-gate computes is one entry of
// CaseMeasures (check: one gold-carrying case against its disjunctive gold ids)
// or QueryMeasures (compare: one query against graded judgments). Commands,
// documents and reports iterate these tables; none lists measures of its own.
//
// Adding a measure is one entry here, its pure function (triad.go or graded.go,
// with its one-line definition comment) and its test.

// Keys of the measures other code refers to by name.
const (
	KeyHit    = "retrieval_hit_at_k"
	KeyRecall = "retrieval_recall_at_k"
	KeyNDCG   = "retrieval_ndcg_at_k"
	KeyDCG    = "dcg_at_k"
)

// Scale is the range of a measure's per-case (per-query) value.
type Scale uint8

const (
	// ScaleBinary values are 0 or 1 (a proportion when averaged).
	ScaleBinary Scale = iota
	// ScaleUnit values lie in [0, 1].
	ScaleUnit
	// ScaleUnbounded values are ≥ 0 with no fixed upper bound (DCG, mean relevance).
	ScaleUnbounded
)

// String names the scale.
func (s Scale) String() string {
	switch s {
	case ScaleBinary:
		return "binary"
	case ScaleUnit:
		return "unit"
	}
	return "unbounded"
}

// InRange reports whether v is a possible value of a measure of this scale
// (for precomputed scores, where a 0/1 measure may arrive as a fraction: [0, 1]).
func (s Scale) InRange(v float64) bool {
	if s == ScaleUnbounded {
		return v >= 0
	}
	return v >= 0 && v <= 1
}

// Param is a bit set of the settings a measure depends on.
type Param uint8

const (
	ParamK             Param = 1 << iota // the cutoff k
	ParamGain                            // the DCG gain (exp or linear)
	ParamRelevantLevel                   // the binary relevance threshold
)

// Info describes a measure.
type Info struct {
	Key            string // the JSON key, e.g. retrieval_hit_at_k
	Label          string // the short label reports print with the cutoff: Label@k
	Definition     string // one line, for reports and docs
	Params         Param
	HigherIsBetter bool
	Scale          Scale
}

// LabelAt is the report label at cutoff k, e.g. "hit@5".
func (i Info) LabelAt(k int) string { return i.Label + "@" + strconv.Itoa(k) }

// Measure is a registered measure: its description and its pure function of one
// input (a case of check, a query of compare).
type Measure[In any] struct {
	Info
	Of func(in *In) float64
}

// CaseInput is one gold-carrying case of check: its deduplicated top-k card
// identities (TopKIdentities), its distinct gold ids (AppendDedupGold), and k.
// Relevant is the case's set of every relevant card when it carries
// relevant_ids (AppendDedupGold of gold and relevant_ids), else nil: recall and
// nDCG are then computed against it (real recall), hit always against Gold.
type CaseInput struct {
	TopK, Gold, Relevant []string
	K                    int
}

// Judged is what recall and nDCG count as relevant: Relevant when the case
// carries relevant_ids, else Gold (a lower bound under disjunctive gold).
func (in *CaseInput) Judged() []string {
	if len(in.Relevant) > 0 {
		return in.Relevant
	}
	return in.Gold
}

// QueryInput is one query of compare: the relevance of its ranking best first
// (unjudged = 0), the number of judged documents at each level, and the settings.
type QueryInput struct {
	Rels, Levels  []int
	K             int
	Gain          Gain
	RelevantLevel int
}

// CaseMeasures are check's measures, in report order.
var CaseMeasures = [...]Measure[CaseInput]{
	{Info{KeyHit, "hit", "1 if any gold card is in the top k, else 0 (the success number)",
		ParamK, true, ScaleBinary}, HitAtK},
	{Info{KeyRecall, "recall", "|relevant ∩ top k| / |relevant| over relevant_ids ∪ gold when given (real recall), else over gold (a lower bound under disjunctive gold)",
		ParamK, true, ScaleUnit}, RecallAtK},
	{Info{KeyNDCG, "nDCG", "binary-gain DCG of the top k / DCG of min(|relevant|, k) relevant cards at the top (relevant: relevant_ids ∪ gold when given, else gold)",
		ParamK, true, ScaleUnit}, NDCGAtK},
}

// QueryMeasures are compare's measures, in report order.
var QueryMeasures = [...]Measure[QueryInput]{
	{Info{KeyDCG, "dcg", "Σ_{r ≤ k} gain(rel_r) / log2(r + 1)",
		ParamK | ParamGain, true, ScaleUnbounded}, DCGAtK},
	{Info{"ndcg_at_k", "nDCG", "DCG@k / DCG@k of the ideal ranking of all judged documents",
		ParamK | ParamGain, true, ScaleUnit}, GradedNDCGAtK},
	{Info{"precision_at_k", "P", "relevant documents in the top k / k",
		ParamK | ParamRelevantLevel, true, ScaleUnit}, PrecisionAtK},
	{Info{"recall_at_k", "R", "relevant documents in the top k / relevant documents",
		ParamK | ParamRelevantLevel, true, ScaleUnit}, GradedRecallAtK},
	{Info{"map_at_k", "MAP", "Σ_{relevant r ≤ k} P@r / relevant documents",
		ParamK | ParamRelevantLevel, true, ScaleUnit}, APAtK},
	{Info{"mrr_at_k", "MRR", "1 / rank of the first relevant document within k, else 0",
		ParamK | ParamRelevantLevel, true, ScaleUnit}, RRAtK},
	{Info{"hit_at_k", "hit", "1 if a relevant document is within k, else 0",
		ParamK | ParamRelevantLevel, true, ScaleBinary}, GradedHitAtK},
	{Info{"mean_relevance_at_k", "rel", "Σ_{r ≤ k} rel_r / k",
		ParamK, true, ScaleUnbounded}, MeanRelevanceAtK},
}

// NumCase and NumGraded are the sizes of the two tables.
const (
	NumCase   = len(CaseMeasures)
	NumGraded = len(QueryMeasures)
)

// CaseIndex is the index of key in CaseMeasures, or -1.
func CaseIndex(key string) int {
	for i := range CaseMeasures {
		if CaseMeasures[i].Key == key {
			return i
		}
	}
	return -1
}

// QueryIndex is the index of key in QueryMeasures, or -1.
func QueryIndex(key string) int {
	for i := range QueryMeasures {
		if QueryMeasures[i].Key == key {
			return i
		}
	}
	return -1
}

// Lookup finds a registered measure of either table by key.
func Lookup(key string) (Info, bool) {
	if i := CaseIndex(key); i >= 0 {
		return CaseMeasures[i].Info, true
	}
	if i := QueryIndex(key); i >= 0 {
		return QueryMeasures[i].Info, true
	}
	return Info{}, false
}

// CaseKeys and GradedKeys are the keys of the two tables, in report order.
var (
	CaseKeys   = keysOf(CaseMeasures[:])
	GradedKeys = keysOf(QueryMeasures[:])
)

// CaseKeysSorted and GradedSorted are the table indexes in key order (the order
// of sorted-key JSON output).
var (
	CaseKeysSorted = sortedIndexes(CaseKeys)
	GradedSorted   = sortedIndexes(GradedKeys)
)

func keysOf[In any](ms []Measure[In]) []string {
	out := make([]string, len(ms))
	for i := range ms {
		out[i] = ms[i].Key
	}
	return out
}

func sortedIndexes(keys []string) []int {
	idx := make([]int, len(keys))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		if keys[a] < keys[b] {
			return -1
		}
		return 1
	})
	return idx
}
