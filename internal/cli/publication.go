package cli

// What each command hands to GitHub (internal/publish) at its end: the step
// outputs, annotations, the Markdown for the job summary and the sticky PR comment
// under the command's own key. Publishing never changes a command's exit code.

import (
	"flag"
	"fmt"
	"strconv"

	"github.com/retrieval-gate/retrieval-gate/internal/calibrate"
	"github.com/retrieval-gate/retrieval-gate/internal/gate"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/publish"
	"github.com/retrieval-gate/retrieval-gate/internal/report/checkreport"
)

// The comment keys of the commands' defaults: one per command, so that check,
// calibrate and compare on one pull request never overwrite each other's comment.
const (
	checkCommentKey     = publish.DefaultKey // "default", as before commands had keys
	calibrateCommentKey = "calibrate"
)

// commentFlags are the flags of a command that keeps a PR comment.
type commentFlags struct {
	mode, key string
	pr        int
}

// register adds --comment, --comment-key (default key) and --pr to fs.
func (c *commentFlags) register(fs *flag.FlagSet, key string) {
	fs.StringVar(&c.mode, "comment", publish.ModeAuto, "PR comment: auto, always or never")
	fs.StringVar(&c.key, "comment-key", key, "key of the PR comment, so several gates keep one comment each")
	fs.IntVar(&c.pr, "pr", 0, "pull request number for the comment (default: from the GitHub event)")
}

// commentInputs are the Action inputs of commentFlags.
func commentInputs(in actionInputs) actionInputs {
	in["comment"], in["comment-key"], in["pr"] = "", "", ""
	return in
}

// validate checks the comment flags of command cmd.
func (c *commentFlags) validate(cmd string) error {
	if err := publish.ValidMode(c.mode); err != nil {
		return usagef("%s: %v", cmd, err)
	}
	if !publish.ValidKey(c.key) {
		return usagef("%s: --comment-key must be 1-100 characters of A-Z a-z 0-9 . _ / -, got %q", cmd, publish.Clean(c.key))
	}
	return nil
}

// checkPublication is what `check` publishes: the outputs of the contract (verdict,
// n, hit, recall, ndcg, json), the integrity problems as annotations, and the
// Markdown report (re-rendered with fewer listed cases when it must be shorter).
func checkPublication(r *gate.Result, doc *checkreport.Document, c commentFlags, jsonPath string) publish.Publication {
	outputs := map[string]string{
		"verdict": string(r.Verdict()),
		"n":       strconv.FormatInt(r.Overall.N, 10),
		"hit":     metricOutput(r.Overall, metrics.KeyHit),
		"recall":  metricOutput(r.Overall, metrics.KeyRecall),
		"ndcg":    metricOutput(r.Overall, metrics.KeyNDCG),
		"json":    jsonPath,
	}
	anns := make([]publish.Annotation, 0, min(len(r.Integrity.Problems), publish.MaxAnnotations))
	for _, p := range r.Integrity.Problems {
		if len(anns) == publish.MaxAnnotations {
			break
		}
		anns = append(anns, publish.Annotation{
			File:    p.File,
			Line:    p.Line,
			Title:   "retrieval-gate: dataset integrity",
			Message: fmt.Sprintf("case %s: gold id %q: %s", p.CaseID, p.GoldID, p.Reason),
		})
	}
	return publish.Publication{
		Key:              c.key,
		Markdown:         doc.Markdown(checkreport.MarkdownOptions{Key: c.key}),
		Render:           func(n int) string { return doc.Markdown(checkreport.MarkdownOptions{Key: c.key, MaxListed: n}) },
		Outputs:          outputs,
		PathOutputs:      []string{"json"},
		Annotations:      anns,
		AnnotationsTotal: max(r.Integrity.ProblemsTotal, int64(len(r.Integrity.Problems))),
		Mode:             c.mode,
		PR:               c.pr,
	}
}

// metricOutput is a group's mean of key as a step output; "" when the group has
// no such metric (no gold-carrying case).
func metricOutput(g gate.Group, key string) string {
	m, ok := g.Metric(key)
	if !ok || g.N == 0 {
		return ""
	}
	return strconv.FormatFloat(m.Mean, 'f', -1, 64)
}

// calibratePublication hands the calibration to GitHub: the Markdown for the job
// summary and the sticky PR comment under its own key, the step outputs `verdict`
// and `json`, and one annotation per violating label.
func calibratePublication(r *calibrate.Result, md string, c commentFlags, jsonPath string) publish.Publication {
	var anns []publish.Annotation
	var total int64
	for _, d := range r.Dimensions {
		for _, v := range d.Violations {
			total++
			if len(anns) < publish.MaxAnnotations {
				anns = append(anns, publish.Annotation{File: v.File, Line: v.Line, Title: "retrieval-gate: calibrate " + string(d.Status),
					Message: fmt.Sprintf("%s, case %s: %s", d.Name, v.CaseID, v.Reason)})
			}
		}
	}
	return publish.Publication{
		Key:              c.key,
		Markdown:         md,
		Outputs:          map[string]string{"verdict": string(r.Verdict()), "json": jsonPath},
		PathOutputs:      []string{"json"},
		Annotations:      anns,
		AnnotationsTotal: total,
		Mode:             c.mode,
		PR:               c.pr,
	}
}
