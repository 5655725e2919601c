package report

import (
	"io"
	"math"
	"strconv"

	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

// CmpFloat is a JSON number of the compare reports, rounded to 10 significant
// digits (deterministic text that does not depend on the last bit of a sum, no
// -0); NaN and infinities are null.
type CmpFloat float64

// MarshalJSON implements json.Marshaler.
func (f CmpFloat) MarshalJSON() ([]byte, error) { return appendCmpFloat(nil, float64(f)), nil }

func appendCmpFloat(dst []byte, v float64) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return append(dst, "null"...)
	}
	v, _ = strconv.ParseFloat(strconv.FormatFloat(v, 'g', 10, 64), 64)
	if v == 0 {
		v = 0 // no "-0"
	}
	return strconv.AppendFloat(dst, v, 'g', -1, 64)
}

func cmpCI(ci [2]float64) []CmpFloat { return []CmpFloat{CmpFloat(ci[0]), CmpFloat(ci[1])} }

func strs(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// CompareJSON writes the `compare --json` report: the contract's schema
// retrieval-gate/compare@1, keys sorted, numbers rounded to 10 significant
// digits, two-space indentation, a final newline. p_value is Holm-adjusted over
// all the paired comparisons. Beyond the contract's keys, "statistics" says how
// the intervals and p-values were computed (resampling or approximation), each
// paired comparison has its p_value_unadjusted, and "recommendation_test" is the
// comparison of the best two strategies behind "recommended" (null with one run).
func CompareJSON(w io.Writer, r *compare.Result) error {
	strategies := obj{}
	for i := range r.Strategies {
		s := &r.Strategies[i]
		ms := obj{}
		for m, key := range metrics.GradedKeys {
			ms[key] = obj{"mean": CmpFloat(s.Means[m]), "ci95": cmpCI(s.CI[m])}
		}
		d := s.Distribution()
		pos := make([]CmpFloat, len(s.ByPosition))
		for j, v := range s.ByPosition {
			pos[j] = CmpFloat(v)
		}
		strategies[s.Name] = obj{
			"n": s.N, "missing_from_run": s.Missing, "metrics": ms,
			"relevance_distribution": obj{"3": CmpFloat(d[0]), "2": CmpFloat(d[1]), "1": CmpFloat(d[2]), "0": CmpFloat(d[3]), "unjudged": CmpFloat(d[4])},
			"relevance_by_position":  pos,
			"failed_queries":         strs(s.Failed), "best_queries": strs(s.Best), "worst_queries": strs(s.Worst),
		}
	}
	paired := make([]any, 0, len(r.Paired))
	for _, p := range r.Paired {
		paired = append(paired, obj{
			"strategy": p.Strategy, "baseline": p.Baseline, "metric": p.Metric,
			"delta": CmpFloat(p.Delta), "ci95": cmpCI(p.CI), "p_value": CmpFloat(p.PHolm), "significant": p.Significant,
			"p_value_unadjusted": CmpFloat(p.P),
		})
	}
	// The evidence behind "recommended": the best mean dcg_at_k against the runner-up.
	var leader any
	if l := r.Leader; l != nil {
		leader = obj{
			"best": l.Strategy, "runner_up": l.Baseline, "metric": l.Metric,
			"delta": CmpFloat(l.Delta), "ci95": cmpCI(l.CI), "p_value": CmpFloat(l.PHolm),
			"p_value_unadjusted": CmpFloat(l.P), "significant": l.Significant,
		}
	}
	doc := obj{
		"schema": compare.Schema, "k": r.K, "gain": r.Gain.String(), "relevant_level": r.RelevantLevel,
		"queries":             obj{"judged": r.Judged, "with_relevant": r.N()},
		"strategies":          strategies,
		"paired":              paired,
		"recommended":         r.Recommended,
		"recommendation_test": leader,
		"statistics":          compareStatistics(r),
	}
	return writeIndentedJSON(w, doc)
}

// Methods of the intervals and p-values, as named in the JSON "statistics" object.
const (
	CIMethodBootstrap     = "percentile-bootstrap"
	CIMethodApproximation = "cornish-fisher-approximation"
	PMethodRandomization  = "sign-flip-randomization"
	PMethodApproximation  = "sign-flip-normal-approximation"
)

// compareStatistics says how the intervals and p-values were computed: by Monte
// Carlo resampling, or, when queries × resamples exceeds the budget, by the
// large-sample approximations (resampled false).
func compareStatistics(r *compare.Result) obj {
	ci, p := CIMethodBootstrap, PMethodRandomization
	if !r.Exact {
		ci, p = CIMethodApproximation, PMethodApproximation
	}
	return obj{
		"resampled": r.Exact, "ci95_method": ci, "p_value_method": p,
		"resamples": r.Resamples, "seed": r.Seed, "resampling_budget": metrics.ExactResamplingBudget,
		"p_adjustment": "holm", "alpha": CmpFloat(compare.Alpha),
	}
}

// ComparePerQuery writes one JSONL line per strategy and evaluated query,
// {"metrics": {…}, "query_id", "strategy"} (keys sorted), strategies in run
// order, queries by id; values are exact (shortest round-trip form).
func ComparePerQuery(w io.Writer, r *compare.Result) error {
	var line []byte
	for si := range r.Strategies {
		s := &r.Strategies[si]
		name := appendJSONString(nil, s.Name)
		for i, qid := range r.QueryIDs {
			line = append(line[:0], `{"metrics":{`...)
			// GradedKeys sorted: dcg, hit, map, mean_relevance, mrr, ndcg, precision, recall.
			for j, m := range sortedGraded {
				if j > 0 {
					line = append(line, ',')
				}
				line = append(line, '"')
				line = append(line, metrics.GradedKeys[m]...)
				line = append(line, `":`...)
				line = appendExactFloat(line, s.Values[i*metrics.NumGraded+m])
			}
			line = append(line, `},"query_id":`...)
			line = appendJSONString(line, qid)
			line = append(line, `,"strategy":`...)
			line = append(line, name...)
			line = append(line, "}\n"...)
			if _, err := w.Write(line); err != nil {
				return err
			}
		}
	}
	return nil
}

// sortedGraded lists the metric indexes in key order.
var sortedGraded = func() []int {
	idx := make([]int, metrics.NumGraded)
	for i := range idx {
		idx[i] = i
	}
	for i := 1; i < len(idx); i++ {
		for j := i; j > 0 && metrics.GradedKeys[idx[j]] < metrics.GradedKeys[idx[j-1]]; j-- {
			idx[j], idx[j-1] = idx[j-1], idx[j]
		}
	}
	return idx
}()
