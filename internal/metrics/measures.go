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
// A measure is a value: its key (one per measure, the same in every output),
// its label, its definition, the run settings it reads (Settings: the cutoff k,
// the gain, the relevant level, which are one per run and set by the command's
// flags) and the parameters it owns (Own: RBP's persistence p, one value per
// registered measure, like ir_measures' RBP(p=0.8)). Adding a measure is one
// entry here (a literal, or a constructor such as RBP(0.8)), its pure function
// (triad.go or graded.go, with its one-line definition comment) and its test;
// every command, document and table takes it from these tables.

// Keys of the measures other code refers to by name.
const (
	KeyHit    = "retrieval_hit_at_k"
	KeyRecall = "retrieval_recall_at_k"
	KeyNDCG   = "retrieval_ndcg_at_k"
	KeyDCG    = "dcg_at_k"
	// KeyGradedHit is compare's hit (a relevant document at or above the
	// relevant level within k): the queries it counts are those with a document
	// at the relevant level.
	KeyGradedHit = "hit_at_k"
	// KeyMeanRel is compare's mean relevance as the seed defines it: the average
	// relevance of the judged results in the top k (not divided by k; unjudged
	// results left out, a query without a judged result undefined).
	KeyMeanRel = "mean_relevance"
	// KeyRelPerK is the relevance of the top k divided by k (missing ranks count
	// 0): the former mean_relevance_at_k, kept under its key with its own label.
	KeyRelPerK = "mean_relevance_at_k"
	// KeyNDCGGraded is compare's nDCG.
	KeyNDCGGraded = "ndcg_at_k"
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

// Param is a bit set of the run settings a measure reads. They belong to the run
// (one --k, --gain, --relevant-level per command), not to the measure; what a
// measure owns is its Own parameters.
type Param uint8

const (
	ParamK             Param = 1 << iota // the cutoff k
	ParamGain                            // the DCG gain (exp or linear)
	ParamRelevantLevel                   // the binary relevance threshold
)

// Parameter is a parameter a measure owns, with the value of this measure
// (RBP's persistence p = 0.8).
type Parameter struct {
	Name  string
	Value float64
	Doc   string // what it means, one line
}

// Info describes a measure.
type Info struct {
	Key string // the JSON key, e.g. retrieval_hit_at_k
	// Label is the measure's name as every report prints it, display-ready
	// ("DCG", "precision", "mean relevance"), followed by the cutoff: Label@k.
	// It is the one source of measure names: no renderer renames a measure.
	Label          string
	Definition     string // one line, for reports and docs
	Params         Param  // the run settings it reads (k, gain, relevant level)
	HigherIsBetter bool
	Scale          Scale
	Own            []Parameter // the parameters it owns, with their values
	// OverJudged says the measure averages the judged results only: a query
	// whose top k has no judged result is undefined (NaN) for it. Which
	// queries are undefined depends on the ranking, so its n is per run, and a
	// paired comparison uses the queries both runs define.
	OverJudged bool
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
// identities (casefile.TopKIdentities), its distinct gold ids (AppendDedupGold), and k.
// Relevant is the case's set of every relevant card when it carries
// relevant_ids (AppendDedupGold of gold and relevant_ids), else nil: recall and
// nDCG are then computed against it (real recall), hit always against Gold.
type CaseInput struct {
	TopK, Gold, Relevant []string
	K                    int
	// Keys, when set, are equality keys of the ids, one per id of TopK, Gold
	// and Relevant (kbfile.KB.Keys): two ids are equal exactly when their
	// keys are and either key is not 0 or the strings are equal. They spare
	// ScoreCase comparing the strings; nil: the strings are compared.
	TopKKeys, GoldKeys, RelevantKeys []uint64

	// Set by ScoreCase for its measures, once for all of them (at most 64
	// ids in TopK): bit i of inGold (inJudged) is whether TopK[i] is in Gold
	// (Judged()). Unset, each measure compares the strings itself.
	marked           bool
	inGold, inJudged uint64
}

// mark sets inGold and inJudged, when TopK has at most 64 ids.
func (in *CaseInput) mark() {
	if len(in.TopK) > 64 {
		return
	}
	var g, j uint64
	if in.TopKKeys != nil && len(in.TopKKeys) == len(in.TopK) && len(in.GoldKeys) == len(in.Gold) && len(in.RelevantKeys) == len(in.Relevant) {
		for i, key := range in.TopKKeys {
			if containsKeyed(in.Gold, in.GoldKeys, in.TopK[i], key) {
				g |= 1 << i
			}
			if len(in.Relevant) > 0 && containsKeyed(in.Relevant, in.RelevantKeys, in.TopK[i], key) {
				j |= 1 << i
			}
		}
	} else {
		for i, id := range in.TopK {
			if containsID(in.Gold, id) {
				g |= 1 << i
			}
			if len(in.Relevant) > 0 && containsID(in.Relevant, id) {
				j |= 1 << i
			}
		}
	}
	if len(in.Relevant) == 0 {
		j = g
	}
	in.marked, in.inGold, in.inJudged = true, g, j
}

// containsKeyed reports whether xs (keyed by keys) holds s (keyed by key):
// equal keys are equal ids, but for key 0, whose ids are compared as strings.
func containsKeyed(xs []string, keys []uint64, s string, key uint64) bool {
	for j, kj := range keys {
		if kj == key && (key != 0 || xs[j] == s) {
			return true
		}
	}
	return false
}

// goldAt reports whether TopK[i] is in Gold; judgedAt whether it is in Judged().
func (in *CaseInput) goldAt(i int) bool {
	if in.marked {
		return in.inGold>>i&1 != 0
	}
	return contains(in.Gold, in.TopK[i])
}

func (in *CaseInput) judgedAt(i int) bool {
	if in.marked {
		return in.inJudged>>i&1 != 0
	}
	return contains(in.Judged(), in.TopK[i])
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
// (unjudged = 0), which of its results are unjudged (Unjudged[r] for rank r+1;
// nil: every result is judged), the number of judged documents at each level,
// and the settings.
type QueryInput struct {
	Rels, Levels  []int
	Unjudged      []bool
	K             int
	Gain          Gain
	RelevantLevel int
}

// CaseMeasures are check's measures, in report order.
var CaseMeasures = [...]Measure[CaseInput]{
	{Info{Key: KeyHit, Label: "hit", Definition: "1 if any gold card is in the top k, else 0 (the success number)",
		Params: ParamK, HigherIsBetter: true, Scale: ScaleBinary}, HitAtK},
	{Info{Key: KeyRecall, Label: "recall", Definition: "|relevant ∩ top k| / |relevant| over relevant_ids ∪ gold when given (real recall), else over gold (a lower bound under disjunctive gold)",
		Params: ParamK, HigherIsBetter: true, Scale: ScaleUnit}, RecallAtK},
	{Info{Key: KeyNDCG, Label: "nDCG", Definition: "binary-gain DCG of the top k / DCG of min(|relevant|, k) relevant cards at the top (relevant: relevant_ids ∪ gold when given, else gold)",
		Params: ParamK, HigherIsBetter: true, Scale: ScaleUnit}, NDCGAtK},
}

// QueryMeasures are compare's measures, in report order.
var QueryMeasures = [...]Measure[QueryInput]{
	{Info{Key: KeyDCG, Label: "DCG", Definition: "Σ_{r ≤ k} gain(rel_r) / log2(r + 1)",
		Params: ParamK | ParamGain, HigherIsBetter: true, Scale: ScaleUnbounded}, DCGAtK},
	{Info{Key: KeyNDCGGraded, Label: "nDCG", Definition: "DCG@k / DCG@k of the ideal ranking of all judged documents",
		Params: ParamK | ParamGain, HigherIsBetter: true, Scale: ScaleUnit}, GradedNDCGAtK},
	{Info{Key: "precision_at_k", Label: "precision", Definition: "relevant documents in the top k / k",
		Params: ParamK | ParamRelevantLevel, HigherIsBetter: true, Scale: ScaleUnit}, PrecisionAtK},
	{Info{Key: "recall_at_k", Label: "recall", Definition: "relevant documents in the top k / relevant documents",
		Params: ParamK | ParamRelevantLevel, HigherIsBetter: true, Scale: ScaleUnit}, GradedRecallAtK},
	{Info{Key: "map_at_k", Label: "MAP", Definition: "Σ_{relevant r ≤ k} P@r / relevant documents",
		Params: ParamK | ParamRelevantLevel, HigherIsBetter: true, Scale: ScaleUnit}, APAtK},
	{Info{Key: "mrr_at_k", Label: "MRR", Definition: "1 / rank of the first relevant document within k, else 0",
		Params: ParamK | ParamRelevantLevel, HigherIsBetter: true, Scale: ScaleUnit}, RRAtK},
	{Info{Key: KeyGradedHit, Label: "hit", Definition: "1 if a relevant document is within k, else 0",
		Params: ParamK | ParamRelevantLevel, HigherIsBetter: true, Scale: ScaleBinary}, GradedHitAtK},
	{Info{Key: KeyMeanRel, Label: "mean relevance", Definition: "Σ_{judged r ≤ k} max(rel_r, 0) / |{judged r ≤ k}|: the average relevance of the judged results in the top k (unjudged left out; no judged result: undefined, the query is left out)",
		Params: ParamK, HigherIsBetter: true, Scale: ScaleUnbounded, OverJudged: true}, MeanRelevance},
	{Info{Key: KeyRelPerK, Label: "relevance/k", Definition: "Σ_{r ≤ k} max(rel_r, 0) / k (missing ranks count 0)",
		Params: ParamK, HigherIsBetter: true, Scale: ScaleUnbounded}, MeanRelevanceAtK},
	RBP(0.8),
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
