package cli

// Glue between the commands and GitHub: every command that reports calls publish
// once, at its end, with a publication. Inside GitHub Actions it sets the step
// outputs, annotates problems, appends the report to the job summary and keeps the
// sticky PR comment; outside Actions it only posts a comment when asked to
// (--comment always with --pr, GITHUB_REPOSITORY and GITHUB_TOKEN). Nothing here
// changes a command's exit code: failures become warnings.
//
// How a command uses it (check does so through checkPublication):
//
//	var af actionFlags
//	af.register(fs) // --pr N (Action input `pr`)
//	...
//	// calibrate: its own comment, under its own marker
//	publish(ctx, env, publication{Key: key, Markdown: md, CommentMode: mode, PR: af.pr,
//		Outputs: map[string]string{"verdict": res.Verdict}})
//	// compare: the job summary only
//	publish(ctx, env, publication{Markdown: md, CommentMode: commentNever})
//
// The comment is found by the marker on the first line of Markdown
// (<!-- retrieval-gate:KEY -->); without one, github.Marker(Key) is prepended.

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/retrieval-gate/retrieval-gate/internal/gate"
	"github.com/retrieval-gate/retrieval-gate/internal/github"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/report"
)

// Comment modes (--comment).
const (
	commentAuto   = "auto"
	commentAlways = "always"
	commentNever  = "never"
)

// validCommentMode checks a --comment value; commands call it while parsing flags.
func validCommentMode(mode string) error {
	switch mode {
	case commentAuto, commentAlways, commentNever:
		return nil
	}
	return usagef("--comment must be auto, always or never, not %q", mode)
}

// actionFlags are the flags every publishing command shares beyond its own.
type actionFlags struct {
	pr int
}

// register adds --pr (Action input `pr`) to fs.
func (a *actionFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&a.pr, "pr", 0, "pull request number for the comment (default: from the GitHub event)")
}

// annotation is a problem at a file and line, shown on the PR diff.
type annotation struct {
	File    string
	Line    int
	Title   string
	Message string
}

// warning is something publish could not do; it never changes the exit code.
type warning string

// publication is what a command hands to GitHub.
type publication struct {
	// Key is the comment key (--comment-key). The comment is found again by the
	// marker on the first line of Markdown, or github.Marker(Key) when it has none.
	Key string
	// Markdown is the full report for the job summary and the comment.
	Markdown string
	// Fit, when set, renders the report within limit bytes by listing fewer cases
	// (report.FitMarkdown); without it an oversize report is cut.
	Fit func(limit int) string
	// Outputs are the step outputs (GITHUB_OUTPUT).
	Outputs map[string]string
	// Annotations become ::error file=…,line=…:: commands, at most
	// github.MaxAnnotations of them; AnnotationsTotal (when larger) counts the
	// problems Annotations was cut from.
	Annotations      []annotation
	AnnotationsTotal int64
	// CommentMode is auto, always or never; "" is auto.
	CommentMode string
	// PR overrides the pull request of the event (--pr); 0 keeps the event's.
	PR int
	// NoSummary leaves the job summary alone.
	NoSummary bool
}

// commentTimeout bounds everything the PR comment may take (listing, retries, waits).
const commentTimeout = 3 * time.Minute

// commenterOptions are extra options for the comment client; tests set them to
// avoid real sleeps between retries.
var commenterOptions []github.Option

// actionToken is the API token: the `github-token` Action input inside Actions
// (the workflow token by default), else $GITHUB_TOKEN.
func actionToken(env *Env) string {
	if env.Getenv("GITHUB_ACTIONS") == "true" {
		if v, ok := actionInput(env, "github-token"); ok {
			return v
		}
	}
	return strings.TrimSpace(env.Getenv("GITHUB_TOKEN"))
}

// publish sends p to GitHub and returns what it could not do. Each warning is also
// printed: as ::warning:: inside Actions, on stderr outside.
func publish(ctx context.Context, env *Env, p publication) []warning {
	token := actionToken(env)
	act, evErr := github.ReadActions(env.Getenv, env.Stdout)
	act.Mask(token)

	var warnings []warning
	warn := func(format string, args ...any) {
		msg := redact(fmt.Sprintf(format, args...), token)
		warnings = append(warnings, warning(msg))
		if act.InActions {
			act.Warning(msg)
		} else {
			fmt.Fprintf(env.Stderr, "retrieval-gate: warning: %s\n", msg)
		}
	}
	if evErr != nil {
		warn("%v; no pull request is known from the event. The report is still written to the job summary.", evErr)
	}

	// The comment needs a marker to be found again; the summary does not.
	md := p.Markdown
	marker := firstLineMarker(md)
	if marker == "" && md != "" {
		marker = github.Marker(keyOr(p.Key))
		md = marker + "\n" + md
	}

	if act.InActions {
		outputs := map[string]string{}
		for k, v := range p.Outputs {
			outputs[k] = v
		}
		if v, ok := outputs["json"]; ok && v != "" {
			outputs["json"] = act.RelPath(v)
		}
		if err := act.SetOutputs(outputs); err != nil {
			warn("%v", err)
		}
		if len(p.Annotations) > 0 {
			anns := make([]github.Annotation, len(p.Annotations))
			for i, a := range p.Annotations {
				anns[i] = github.Annotation{File: a.File, Line: a.Line, Title: a.Title, Message: a.Message}
			}
			act.Annotate("error", anns, p.AnnotationsTotal, github.MaxAnnotations, "the job summary lists them")
		}
		if !p.NoSummary && p.Markdown != "" {
			note := "\n\n> [!NOTE]\n> This report was shortened to fit GitHub's 1 MiB job-summary limit; write the whole report with `--markdown FILE`.\n"
			if err := act.AppendSummary(fitReport(p.Markdown, p.Fit, act.SummaryRoom(), note)); err != nil {
				warn("%v", err)
			}
		}
	}

	if md != "" {
		comment(ctx, env, act, p, md, marker, token, warn)
	}
	return warnings
}

// comment decides whether to post and keeps the sticky comment.
func comment(ctx context.Context, env *Env, act *github.Actions, p publication, md, marker, token string, warn func(string, ...any)) {
	mode := p.CommentMode
	if mode == "" {
		mode = commentAuto
	}
	kept := "."
	if act.InActions {
		kept = "; the report is in the job summary."
	}
	pr := act.PR
	if p.PR > 0 {
		pr = p.PR
	}
	switch mode {
	case commentNever:
		return
	case commentAuto:
		if !act.InActions || pr == 0 {
			return
		}
		if token == "" {
			act.Notice("retrieval-gate: no PR comment: the `github-token` input is empty. The report is in the job summary.")
			return
		}
		if act.ReadOnlyToken() {
			act.Notice(fmt.Sprintf("retrieval-gate: no PR comment: this pull request comes from a fork (%s), and GitHub gives "+
				"such runs a read-only token. The report is in the job summary, and any dataset problems are annotated. To get the "+
				"comment on fork PRs, post it from a separate workflow triggered by `workflow_run` (README: \"Comments on "+
				"pull requests from forks\").", orUnknown(act.HeadRepo)))
			return
		}
	case commentAlways:
		switch {
		case pr == 0:
			warn("--comment always, but no pull request is known (event %q): pass --pr N (Action input `pr`). The PR comment was not posted%s", orUnknown(act.EventName), kept)
			return
		case token == "":
			warn("--comment always, but there is no token (Action input `github-token`, or GITHUB_TOKEN). The PR comment was not posted%s", kept)
			return
		case act.Repository == "":
			warn("--comment always, but GITHUB_REPOSITORY (owner/name) is not set. The PR comment was not posted%s", kept)
			return
		}
	default:
		warn("unknown --comment mode %q. The PR comment was not posted%s", mode, kept)
		return
	}

	body := md + runFooter(env)
	note := "\n\n> [!NOTE]\n> This comment was shortened to fit GitHub's 65,536-character comment limit; the job summary has the whole report.\n"
	body = fitReport(body, func(limit int) string {
		if p.Fit == nil {
			return md
		}
		// The shorter rendering keeps the marker, or gets it like md did.
		s := p.Fit(limit - len(runFooter(env)) - len(marker) - 1)
		if firstLineMarker(s) != marker {
			s = marker + "\n" + s
		}
		return s + runFooter(env)
	}, github.MaxCommentBytes, note)

	c, err := github.NewClient(act.APIURL, act.Repository, token, commenterOptions...)
	if err != nil {
		warn("cannot post the PR comment: %v. The PR comment was not posted%s", err, kept)
		return
	}
	// Retries are bounded per request; this bounds the whole exchange too.
	ctx, cancel := context.WithTimeout(ctx, commentTimeout)
	defer cancel()
	res, err := c.Upsert(ctx, pr, marker, body)
	if err != nil {
		warn("%s", github.Explain(err))
		return
	}
	verb := "updated"
	if res.Created {
		verb = "created"
	}
	fmt.Fprintf(env.Stderr, "retrieval-gate: PR comment %s: %s\n", verb, res.URL)
}

// fitReport returns md whole when it fits in limit bytes; else the command's own
// shorter rendering (fit) with note appended; else md cut, with note.
func fitReport(md string, fit func(limit int) string, limit int, note string) string {
	if len(md) <= limit {
		return md
	}
	if fit != nil && limit > len(note) {
		if s := fit(limit - len(note)); s != "" && len(s) <= limit-len(note) {
			return s + note
		}
	}
	return github.Truncate(md, limit, note)
}

// runFooter links the comment to the run that wrote it.
func runFooter(env *Env) string {
	server, repo, run := env.Getenv("GITHUB_SERVER_URL"), env.Getenv("GITHUB_REPOSITORY"), env.Getenv("GITHUB_RUN_ID")
	if server == "" || repo == "" || run == "" {
		return ""
	}
	if _, err := strconv.ParseInt(run, 10, 64); err != nil {
		return ""
	}
	return fmt.Sprintf("\n<sub>retrieval-gate · [workflow run](%s/%s/actions/runs/%s)</sub>\n", strings.TrimSuffix(server, "/"), repo, run)
}

// firstLineMarker is the report's marker line, or "" when it does not start with one.
func firstLineMarker(md string) string {
	line, _, _ := strings.Cut(strings.TrimLeft(md, " \t\r\n"), "\n")
	line = strings.TrimSpace(line)
	if strings.HasPrefix(line, "<!-- retrieval-gate:") && strings.HasSuffix(line, "-->") {
		return line
	}
	return ""
}

func keyOr(key string) string {
	if key == "" {
		return "default"
	}
	return key
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// redact removes the token from a message, whatever produced it.
func redact(msg, token string) string {
	if len(token) < 4 {
		return msg
	}
	return strings.ReplaceAll(msg, token, "***")
}

// checkPublication is what `check` publishes: the outputs of the contract (verdict,
// n, hit, recall, ndcg, json), the integrity problems as annotations, and the
// Markdown report (re-rendered with fewer listed cases when it must be shorter).
func checkPublication(r *gate.Result, key, mode, jsonPath string, af actionFlags) publication {
	outputs := map[string]string{
		"verdict": r.Verdict,
		"n":       strconv.FormatInt(r.Overall.N, 10),
		"hit":     metricOutput(r.Overall, metrics.KeyHit),
		"recall":  metricOutput(r.Overall, metrics.KeyRecall),
		"ndcg":    metricOutput(r.Overall, metrics.KeyNDCG),
		"json":    jsonPath,
	}
	anns := make([]annotation, 0, min(len(r.Integrity.Problems), github.MaxAnnotations))
	for _, p := range r.Integrity.Problems {
		if len(anns) == github.MaxAnnotations {
			break
		}
		anns = append(anns, annotation{
			File:    p.File,
			Line:    p.Line,
			Title:   "retrieval-gate: dataset integrity",
			Message: fmt.Sprintf("case %s: gold id %q: %s", p.CaseID, p.GoldID, p.Reason),
		})
	}
	return publication{
		Key:              key,
		Markdown:         report.Markdown(r, report.MarkdownOptions{Key: key}),
		Fit:              func(limit int) string { return report.FitResultMarkdown(r, key, limit) },
		Outputs:          outputs,
		Annotations:      anns,
		AnnotationsTotal: max(r.Integrity.ProblemsTotal, int64(len(r.Integrity.Problems))),
		CommentMode:      mode,
		PR:               af.pr,
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
