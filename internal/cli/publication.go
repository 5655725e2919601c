package cli

// What each command hands to GitHub (internal/publish) at its end: the step
// outputs, annotations, the Markdown for the job summary and the sticky PR comment
// under the command's own key. Publishing never changes a command's exit code.

import (
	"flag"
	"fmt"
	"strconv"
	"strings"

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
	compareCommentKey   = "compare"
	evaluateCommentKey  = "evaluate" // evaluate's compare stage, never a compare step's comment
)

// commentKeys are the default comment keys, one per command that comments.
var commentKeys = map[string]string{"check": checkCommentKey, "calibrate": calibrateCommentKey, "compare": compareCommentKey, "evaluate": evaluateCommentKey}

// pathOutputs is a publication of step outputs that are paths (made relative to
// the workspace); empty paths are left out.
func pathOutputs(paths map[string]string) publish.Publication {
	pub := publish.Publication{Outputs: map[string]string{}}
	for k, v := range paths {
		if v != "" {
			pub.Outputs[k] = v
			pub.PathOutputs = append(pub.PathOutputs, k)
		}
	}
	return pub
}

// commentFlags are the flags of a command that keeps a PR comment: --comment says
// whether the run may comment at all, --comment-mode when it does.
type commentFlags struct {
	mode, when, key string
	pr              int
}

// register adds --comment, --comment-mode, --comment-key (default key) and --pr to fs.
func (c *commentFlags) register(fs *flag.FlagSet, key string) {
	enumVar(fs, &c.mode, "comment", publish.ModeAuto, []string{publish.ModeAuto, publish.ModeAlways, publish.ModeNever},
		"whether to comment on the PR: auto (on a pull request inside Actions, with a token), always (also with --pr elsewhere) or never")
	enumVar(fs, &c.when, "comment-mode", publish.WhenAlways, []string{publish.WhenAlways, publish.WhenChanges, publish.WhenFailures, publish.WhenOff},
		"when to post or update the comment: always, changes (only when the report differs from the comment's), failures (only a failing report; a pass updates an earlier comment) or off")
	fs.StringVar(&c.key, "comment-key", key, "key of the PR comment, so several gates keep one comment each")
	fs.IntVar(&c.pr, "pr", 0, "pull request number for the comment (default: from the GitHub event)")
}

// commentInputs are the Action inputs of commentFlags.
func commentInputs(in actionInputs) actionInputs {
	in["comment"], in["comment-mode"], in["comment-key"], in["pr"] = "", "", "", ""
	return in
}

// publication applies the comment flags to pub.
func (c *commentFlags) publication(pub publish.Publication) publish.Publication {
	pub.Key, pub.Mode, pub.When, pub.PR = c.key, c.mode, c.when, c.pr
	return pub
}

// validate checks the comment flags of command cmd.
func (c *commentFlags) validate(cmd string, src *sources) error {
	if err := publish.ValidMode(c.mode); err != nil {
		return usagef("%s: %v", cmd, err)
	}
	if err := publish.ValidWhen(c.when); err != nil {
		return usagef("%s: %v", cmd, err)
	}
	if c.pr < 0 {
		return src.refuse(cmd, "pr", "must be a pull request number")
	}
	if !publish.ValidKey(c.key) {
		return src.refuse(cmd, "comment-key", "must be 1-100 characters of A-Z a-z 0-9 . _ / -")
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
	var warnings []string
	if u := r.Integrity.Unknown; u.Entries > 0 {
		warnings = append(warnings, staleIndexWarning(u))
	}
	return c.publication(publish.Publication{
		Markdown: doc.Markdown(checkreport.MarkdownOptions{Marker: commentMarker(c.key)}),
		Render: func(n int) string {
			return doc.Markdown(checkreport.MarkdownOptions{Marker: commentMarker(c.key), MaxListed: n})
		},
		Outputs:          outputs,
		PathOutputs:      []string{"json"},
		Annotations:      anns,
		AnnotationsTotal: max(r.Integrity.ProblemsTotal, int64(len(r.Integrity.Problems))),
		Failed:           len(r.Failed()) > 0,
		ActionWarnings:   warnings,
	})
}

// staleIndexWarning is the ::warning:: of retrieved entries that are not cards of
// the KB. Outside Actions the text report says it (once); inside, the annotation
// does, and the text report leaves it out (textResult).
func staleIndexWarning(u gate.UnknownRetrieved) string {
	msg := fmt.Sprintf("retrieval-gate: %d retrieved %s in %d %s are not cards of the knowledge base (a stale index?)",
		u.Entries, pluralWord(u.Entries, "entry", "entries"), u.Cases, pluralWord(u.Cases, "case", "cases"))
	if len(u.Examples) > 0 {
		msg += ", e.g. " + publish.Clean(strings.Join(u.Examples, ", "))
	}
	return msg + ". This is a warning, not a failure."
}

// textResult is the result the terminal report is written from: inside Actions
// without the stale-index warning, which the ::warning:: annotation carries.
func textResult(r *gate.Result, inActions bool) *gate.Result {
	if !inActions || r.Integrity.Unknown.Entries == 0 {
		return r
	}
	cp := *r
	cp.Integrity.Unknown = gate.UnknownRetrieved{}
	return &cp
}

func pluralWord(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
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
	return c.publication(publish.Publication{
		Markdown:         md,
		Outputs:          map[string]string{"verdict": string(r.Verdict()), "json": jsonPath},
		PathOutputs:      []string{"json"},
		Annotations:      anns,
		AnnotationsTotal: total,
		Failed:           len(r.Failed()) > 0,
	})
}

// commentMarker is the hidden first line of a command's Markdown report, the
// marker its PR comment is found by; the reports receive it (they do not import
// publish).
func commentMarker(key string) string { return publish.Marker(key) }
