package publish

// What each command hands to GitHub at its end: the step outputs, the
// annotations and the Markdown for the job summary and the sticky PR comment.
// The comment flags (key, mode, when, pr) are set by the command's wiring.

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/baseline"
	"github.com/retrieval-gate/retrieval-gate/internal/calibrate"
	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/gate"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
)

// PathOutputs is a publication of step outputs that are paths (made relative
// to the workspace), in the order of their names (the warnings of paths
// outside the workspace follow it); empty paths are left out.
func PathOutputs(paths map[string]string) Publication {
	pub := Publication{Outputs: map[string]string{}}
	for _, k := range slices.Sorted(maps.Keys(paths)) {
		if v := paths[k]; v != "" {
			pub.Outputs[k] = v
			pub.PathOutputs = append(pub.PathOutputs, k)
		}
	}
	return pub
}

// Check is what `check` publishes: the outputs of the contract (verdict, n,
// hit, recall, ndcg, json), the integrity problems as annotations (every
// problem the result lists: the check run takes them all), its title, and the
// Markdown report markdown writes with at most maxListed listed cases (0: as
// many as it lists by default), re-rendered shorter when it must fit; reason
// words a problem's kind (checkreport.ProblemReason).
func Check(r *gate.Result, markdown func(maxListed int) string, jsonPath string, reason func(gate.ProblemKind) string) Publication {
	outputs := map[string]string{
		"verdict": string(r.Verdict()),
		"n":       strconv.FormatInt(r.Overall.N, 10),
		"hit":     metricOutput(r.Overall, metrics.KeyHit),
		"recall":  metricOutput(r.Overall, metrics.KeyRecall),
		"ndcg":    metricOutput(r.Overall, metrics.KeyNDCG),
		"json":    jsonPath,
	}
	anns := make([]Annotation, 0, len(r.Integrity.Problems))
	for _, p := range r.Integrity.Problems {
		anns = append(anns, Annotation{
			File:    p.File,
			Line:    p.Line,
			Title:   "retrieval-gate: dataset integrity",
			Message: format.CaseGold(p.CaseID, p.GoldID) + ": " + reason(p.Kind),
		})
	}
	var warnings []string
	if u := r.Integrity.Unknown; u.Entries > 0 {
		warnings = append(warnings, StaleIndexWarning(u))
	}
	return Publication{
		Markdown:         markdown(0),
		Render:           markdown,
		Outputs:          outputs,
		PathOutputs:      []string{"json"},
		Annotations:      anns,
		AnnotationsTotal: max(r.Integrity.ProblemsTotal, int64(len(r.Integrity.Problems))),
		Failed:           len(r.Failed()) > 0,
		ActionWarnings:   warnings,
		CheckTitle:       checkTitle(r.Failed()),
	}
}

// CompareCheck is compare's check-run title when it gates (--gate-strategy with
// a gate); "" when it does not, and no check run is made.
func CompareCheck(gates int, failed []string) string {
	if gates == 0 {
		return ""
	}
	return checkTitle(failed)
}

// StaleIndexWarning is the ::warning:: of retrieved entries that are not cards
// of the KB. Outside Actions the text report says it (once); inside, the
// annotation does, and the text report leaves it out.
func StaleIndexWarning(u gate.UnknownRetrieved) string {
	msg := fmt.Sprintf("retrieval-gate: %s in %s are not cards of the knowledge base (a stale index?)",
		format.Count(u.Entries, "retrieved entry", "retrieved entries"), format.Count(u.Cases, "case", "cases"))
	if len(u.Examples) > 0 {
		msg += ", e.g. " + format.Clean(strings.Join(u.Examples, ", "))
	}
	return msg + ". This is a warning, not a failure."
}

// metricOutput is a group's mean of key as a step output; "" when the group
// has no such metric (no gold-carrying case).
func metricOutput(g gate.Group, key string) string {
	m, ok := g.Metric(key)
	if !ok || g.N == 0 {
		return ""
	}
	return strconv.FormatFloat(m.Mean, 'f', -1, 64)
}

// BaselineOutputs adds the step outputs of check's comparison: regression
// (pass, fail, off) and the overall deltas (delta-hit, delta-recall,
// delta-ndcg; "" without one); churn (the churn gates: pass, fail, off), the
// overall mean-rbo and churn-share ("" without a top k to compare).
func BaselineOutputs(out map[string]string, c *baseline.Comparison) {
	out["regression"] = string(outcome.Off)
	out["churn"] = string(outcome.Off)
	out["mean-rbo"], out["churn-share"] = "", ""
	for _, gm := range baseline.GateMeasures {
		out["delta-"+strings.TrimPrefix(gm.Name, "max_drop_")] = ""
	}
	if c == nil {
		return
	}
	out["regression"] = string(c.Regression)
	out["churn"] = string(c.ChurnStatus)
	if g := c.Churn.Overall; c.Available && g.N > 0 {
		out["mean-rbo"] = strconv.FormatFloat(g.RBO.Mean, 'g', -1, 64)
		out["churn-share"] = strconv.FormatFloat(g.Share.Mean, 'g', -1, 64)
	}
	for _, gm := range baseline.GateMeasures {
		for _, s := range c.Overall.Stats {
			if s.Key == gm.Key {
				out["delta-"+strings.TrimPrefix(gm.Name, "max_drop_")] = strconv.FormatFloat(s.Delta, 'g', -1, 64)
			}
		}
	}
}

// Calibrate is what `calibrate` publishes: the Markdown for the job summary
// and the PR comment, the step outputs verdict and json, and one annotation
// per violating label, worded by reason.
func Calibrate(r *calibrate.Result, md string, jsonPath string, reason func(calibrate.Violation) string) Publication {
	var anns []Annotation
	var total int64
	for _, d := range r.Dimensions {
		for _, v := range d.Violations {
			total++
			if len(anns) < MaxAnnotations {
				anns = append(anns, Annotation{File: v.File, Line: v.Line, Title: "retrieval-gate: calibrate " + string(d.Status),
					Message: format.SanitizeText(fmt.Sprintf("%s, case %s: %s", d.Name, v.CaseID, reason(v)))})
			}
		}
	}
	if b := r.Blind; b != nil {
		// A label not provably committed before its judge score (ADR-0028's
		// blind relabelling), at its line.
		for _, rb := range b.Raters {
			for _, v := range rb.Violations {
				total++
				if len(anns) < MaxAnnotations {
					anns = append(anns, Annotation{File: v.File, Line: v.Line, Title: "retrieval-gate: calibrate blind-labels",
						Message: fmt.Sprintf("%s, case %s, rater %s: not provably committed before its judge score (%s)",
							format.SanitizeText(v.Dimension), format.SanitizeText(v.CaseID), format.SanitizeText(rb.Rater), v.Code)})
				}
			}
		}
	}
	return Publication{
		Markdown:         md,
		Outputs:          map[string]string{"verdict": string(r.Verdict()), "json": jsonPath},
		PathOutputs:      []string{"json"},
		Annotations:      anns,
		AnnotationsTotal: total,
		Failed:           len(r.Failed()) > 0,
	}
}
