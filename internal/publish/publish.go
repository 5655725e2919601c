package publish

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/sethvargo/go-githubactions"

	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/github"
	"github.com/retrieval-gate/retrieval-gate/internal/guard"
	"github.com/retrieval-gate/retrieval-gate/internal/httpretry"
)

// Comment modes (--comment).
const (
	ModeAuto   = "auto"   // on a pull request inside Actions, when there is a token
	ModeAlways = "always" // also outside Actions or on other events, with --pr
	ModeNever  = "never"
)

// Annotation is a problem at a file and line, shown on the PR diff.
type Annotation = github.Annotation

// MaxAnnotations is how many annotations a publication issues before counting
// the rest.
const MaxAnnotations = github.MaxAnnotations

// Publication is what a command hands to GitHub.
type Publication struct {
	// Key is the comment key; its marker (Marker) is the first line of the comment.
	// Markdown that starts with a marker keeps it; other Markdown gets Marker(Key).
	Key string
	// Markdown is the full report for the job summary and the comment.
	Markdown string
	// Render, when set, renders the report listing at most maxListed items
	// (negative: none), so that Fit can shorten it before it cuts tables.
	Render func(maxListed int) string
	// Outputs are the step outputs (GITHUB_OUTPUT); those named in PathOutputs are
	// paths, made relative to the workspace.
	Outputs     map[string]string
	PathOutputs []string
	// Annotations go to the check run (CheckRun), every one of them; without a
	// check run they become ::error file=…,line=…:: commands, at most
	// MaxAnnotations of them. AnnotationsTotal (when larger) counts the problems
	// they came from.
	Annotations      []Annotation
	AnnotationsTotal int64
	// CheckRun names the report's check run ("" none; CheckRunName(key)):
	// inside Actions, with a token that may write checks, it carries the
	// conclusion, CheckTitle, the report as its summary and every annotation.
	CheckRun, CheckTitle string
	// CheckMode is CheckRunAuto ("" too) or CheckRunNever (--check-run).
	CheckMode string
	// Mode is auto, always or never; "" is auto: whether to comment at all.
	Mode string
	// When is the comment mode (WhenAlways, WhenChanges, WhenFailures, WhenOff;
	// "" is always): when a comment is posted or updated.
	When string
	// Failed is the report's verdict (WhenFailures posts only failing reports).
	Failed bool
	// ActionWarnings become ::warning:: commands inside Actions, once each; outside
	// Actions they are not printed (the command's text report says them).
	ActionWarnings []string
	// ActionNotices become ::notice:: commands inside Actions, once each (why
	// something was deliberately not done); outside Actions they are not printed.
	ActionNotices []string
	// PR overrides the pull request of the event (--pr); 0 keeps the event's.
	PR int
	// Author is the login whose comments are the run's own (--comment-author,
	// e.g. my-app[bot]); "" asks GitHub for the token's (GET /user, else
	// GraphQL's viewer). GitHub only: GitLab's notes always ask.
	Author string
	// NoSummary leaves the job summary alone.
	NoSummary bool
}

// Warning is something Publish could not do; it never changes the exit code.
type Warning string

// CommentsFactory builds the GitHub client for the API's endpoints (REST
// GITHUB_API_URL, GraphQL GITHUB_GRAPHQL_URL), repository and token.
type CommentsFactory func(api github.Endpoints, repository, token string) (Comments, error)

// GitHubComments is the CommentsFactory of the real API (github.Client), retrying
// under policy (github.DefaultPolicy).
func GitHubComments(policy httpretry.Policy) CommentsFactory {
	return func(api github.Endpoints, repository, token string) (Comments, error) {
		return github.NewClientAt(api, repository, token, policy)
	}
}

// Publisher publishes in the environment of one process.
type Publisher struct {
	Getenv func(string) string
	// Stdout receives the workflow commands (::warning:: ...), unfiltered: it must
	// be the process's real standard output, not a GuardWriter.
	Stdout io.Writer
	// Stderr receives the messages outside Actions and the comment's URL.
	Stderr io.Writer
	// Comments builds the GitHub client; nil is GitHubComments(github.DefaultPolicy).
	Comments CommentsFactory
	// Checks builds the check-run client; nil is GitHubChecks(github.DefaultPolicy).
	Checks ChecksFactory
	// Sleep waits between create attempts; nil is httpretry.Sleep.
	Sleep func(ctx context.Context, d time.Duration) error
}

// commentTimeout bounds everything the PR comment may take (identity, listing,
// retries, waits, duplicates).
const commentTimeout = 4 * time.Minute

// Token is the API token: the `github-token` Action input inside Actions (the
// workflow token by default), else $GITHUB_TOKEN.
func Token(getenv func(string) string) string {
	if getenv("GITHUB_ACTIONS") == "true" {
		if v := githubactions.New(githubactions.WithGetenv(getenv)).GetInput("github-token"); v != "" {
			return v
		}
	}
	return strings.TrimSpace(getenv("GITHUB_TOKEN"))
}

// Publish sends pub to GitHub and returns what it could not do. Each warning is
// also printed: as ::warning:: inside Actions, on stderr outside.
func (p *Publisher) Publish(ctx context.Context, pub Publication) []Warning {
	token := Token(p.Getenv)
	act, evErr := github.ReadActions(p.Getenv, p.Stdout)
	act.Mask(token)

	var warnings []Warning
	warn := func(layout string, args ...any) {
		msg := httpretry.RedactText(fmt.Sprintf(layout, args...), token)
		warnings = append(warnings, Warning(msg))
		if act.InActions {
			act.Warning(msg)
		} else {
			fmt.Fprintf(p.Stderr, "retrieval-gate: warning: %s\n", format.Clean(msg))
		}
	}
	if evErr != nil {
		warn("%v; no pull request is known from the event. The report is still written to the job summary.", evErr)
	}

	if act.InActions {
		outputs := map[string]string{}
		for k, v := range pub.Outputs {
			outputs[k] = v
		}
		for _, k := range pub.PathOutputs {
			if v := outputs[k]; v != "" {
				outputs[k] = act.RelPath(v)
				if act.Workspace != "" && !act.InWorkspace(v) {
					warn("the `%s` output %s is outside the workspace (GITHUB_WORKSPACE): a later step may not see it (a Docker action shares only the workspace); give a path relative to the workspace", k, format.Clean(outputs[k]))
				}
			}
		}
		if err := act.SetOutputs(outputs); err != nil {
			warn("%v", err)
		}
		for _, w := range pub.ActionWarnings {
			act.Warning(httpretry.RedactText(w, token))
		}
		for _, n := range pub.ActionNotices {
			act.Notice(httpretry.RedactText(n, token))
		}
		checked := false
		if pub.CheckRun != "" && pub.Markdown != "" {
			summary := Fit(withMarker(pub.Markdown, p.marker(pub)), p.withMarker(pub), MaxCheckSummaryBytes,
				"\n\n> [!NOTE]\n> This summary was shortened to fit GitHub's 65,535-character check-run summary limit; the job summary has the whole report.\n", "")
			checked = p.checkRun(ctx, act, pub, token, summary, warn)
		}
		if !checked && (len(pub.Annotations) > 0 || pub.AnnotationsTotal > 0) {
			act.Annotate("error", pub.Annotations, pub.AnnotationsTotal, MaxAnnotations, "the job summary lists them")
		}
		if !pub.NoSummary && pub.Markdown != "" {
			note := "\n\n> [!NOTE]\n> This report was shortened to fit GitHub's 1 MiB job-summary limit; write the whole report with `--markdown FILE`.\n"
			// Guarded before it is fitted: the fitting drops whole lines and rows,
			// which makes no command of the text left.
			render := pub.Render
			if render != nil {
				render = func(maxListed int) string { return guard.Text(pub.Render(maxListed)) }
			}
			if err := act.AppendSummary(Fit(guard.Text(pub.Markdown), render, act.SummaryRoom(), note, "")); err != nil {
				warn("%v", err)
			}
		}
	}
	if pub.Markdown != "" {
		p.comment(ctx, act, pub, token, warn)
	}
	return warnings
}

// withMarker is md starting with its marker: its own, or marker prepended.
func withMarker(md, marker string) string {
	if MarkerOf(md) == marker {
		return md
	}
	return marker + "\n" + md
}

// marker is the report's marker: the Markdown's own, else Marker(pub.Key).
func (p *Publisher) marker(pub Publication) string {
	if m := MarkerOf(pub.Markdown); m != "" {
		return m
	}
	return Marker(pub.Key)
}

// withMarker is pub.Render with the report's marker, for Fit (nil without Render).
func (p *Publisher) withMarker(pub Publication) func(int) string {
	if pub.Render == nil {
		return nil
	}
	marker := p.marker(pub)
	return func(n int) string { return withMarker(pub.Render(n), marker) }
}

// comment decides whether to post and keeps the sticky comment.
func (p *Publisher) comment(ctx context.Context, act *github.Actions, pub Publication, token string, warn func(string, ...any)) {
	marker := p.marker(pub)
	mode := pub.Mode
	if mode == "" {
		mode = ModeAuto
	}
	kept := "."
	if act.InActions {
		kept = "; the report is in the job summary."
	}
	pr := act.PR
	if pub.PR > 0 {
		pr = pub.PR
	}
	if pub.When == WhenOff {
		return
	}
	switch mode {
	case ModeNever:
		return
	case ModeAuto:
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
				"comment on fork PRs, post it from a separate workflow triggered by `workflow_run` (see %s).", orUnknown(act.HeadRepo), github.ForkCommentsDocs))
			return
		}
	case ModeAlways:
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

	footer := runFooter(p.Getenv)
	note := "\n\n> [!NOTE]\n> This comment was shortened to fit GitHub's 65,536-character comment limit; the job summary has the whole report.\n"
	var render func(int) string
	if pub.Render != nil {
		render = func(n int) string { return withMarker(pub.Render(n), marker) }
	}
	body := Fit(withMarker(pub.Markdown, marker), render, MaxCommentBytes, note, footer)

	factory := p.Comments
	if factory == nil {
		factory = GitHubComments(github.DefaultPolicy)
	}
	c, err := factory(github.Endpoints{REST: act.APIURL, GraphQL: act.GraphQLURL}, act.Repository, token)
	if err != nil {
		warn("cannot post the PR comment: %v. The PR comment was not posted%s", err, kept)
		return
	}
	sleep := p.Sleep
	if sleep == nil {
		sleep = httpretry.Sleep
	}
	cctx, cancel := context.WithTimeout(ctx, commentTimeout)
	defer cancel()
	res, err := UpsertPolicy(cctx, c, pr, marker, body, Policy{When: pub.When, Failed: pub.Failed, Author: pub.Author}, sleep)
	if err != nil {
		if ctx.Err() != nil {
			// A signal, not the API: the run exits 2 saying so, which
			// Explain's "the exit code reflects only the gates" contradicted.
			warn("%s", interruptedComment("PR comment"))
			return
		}
		warn("%s", github.Explain(err))
		return
	}
	if w := identityWarning(res, pub.Author); w != "" {
		warn("%s", w)
	}
	switch {
	case res.Skipped == SkipIncomplete:
		warn("%s. No comment of key %s is among them, so no new comment was posted: one may be further on, and a new comment on every run would pile up%s", incompleteWhy(res.Incomplete, "pull request", "comments", "comment"), keyOf(marker), kept)
		return
	case res.Skipped == SkipUnchanged:
		fmt.Fprintf(p.Stderr, "retrieval-gate: PR comment unchanged (--comment-mode %s): %s\n", pub.When, format.Clean(res.URL))
	case res.Skipped == SkipPassing:
		fmt.Fprintf(p.Stderr, "retrieval-gate: no PR comment: the verdict is pass and there is no earlier comment to update (--comment-mode failures)\n")
	case res.Created:
		fmt.Fprintf(p.Stderr, "retrieval-gate: PR comment created: %s\n", format.Clean(res.URL))
	default:
		fmt.Fprintf(p.Stderr, "retrieval-gate: PR comment updated: %s\n", format.Clean(res.URL))
	}
	switch {
	case res.Hidden > 0 && res.Probed:
		fmt.Fprintf(p.Stderr, "retrieval-gate: hid %s with the same key as outdated (the one posted while the token's login was unknown, or from concurrent runs)\n", format.Count(res.Hidden, "duplicate PR comment", "duplicate PR comments"))
	case res.Hidden > 0:
		fmt.Fprintf(p.Stderr, "retrieval-gate: hid %s with the same key as outdated (concurrent runs)\n", format.Count(res.Hidden, "duplicate PR comment", "duplicate PR comments"))
	}
	if res.Removed > 0 {
		fmt.Fprintf(p.Stderr, "retrieval-gate: deleted %s with the same key (GitHub refused to hide them)\n", format.Count(res.Removed, "duplicate PR comment", "duplicate PR comments"))
	}
	if res.Incomplete != nil {
		warn("%s. The comment found among them was updated; a duplicate of it further on, if any, was not looked for.", incompleteWhy(res.Incomplete, "pull request", "comments", "comment"))
	}
	if res.Unsettled != nil {
		warn("the PR comment was created, but the comments could not be listed again to look for a duplicate from a concurrent run (%v); the next run hides any", res.Unsettled)
	}
}

// identityWarning says when the login the comments were matched with may not
// be the token's, so that a later run would not find the comment this one
// wrote (and post another every run): the login was assumed (GitHub named
// none: GET /user refused, GraphQL's viewer failed), or the comment created
// has another author than the one given or assumed. author is
// --comment-author. "" when there is nothing to say.
func identityWarning(res Upserted, author string) string {
	const fix = "set the `comment-author` input (--comment-author) to the login that writes the comments"
	switch {
	case author != "" && res.PostedAs != "":
		return fmt.Sprintf("--comment-author is %s, but the PR comment was posted as %s: the next run, which looks for the comments of %s, will not find it and posts another. Set `comment-author` (--comment-author) to %s, or leave it empty to ask GitHub for the token's login.", author, res.PostedAs, author, res.PostedAs)
	case res.Assumed == nil:
		return ""
	}
	why := fmt.Sprintf("retrieval-gate could not learn the token's login (GET /user was refused, and %v), so it edited no earlier comment: it could only assume that those of %s were its own (another workflow's may carry the same marker)", res.Assumed, res.Self)
	if !res.Probed {
		return fmt.Sprintf("%s, and posted none. To update the comment, %s.", why, fix)
	}
	posted := cmp.Or(res.PostedAs, res.Self)
	kept := "."
	if !res.Created {
		kept = ", whose earlier comment with this key was then updated, and the new one hidden as outdated."
	}
	return fmt.Sprintf("%s. It posted a new PR comment instead, and GitHub named %s its author%s So that the next run updates its comment, set `comment-author` (--comment-author) to %s.", why, posted, kept, posted)
}

// runFooter links the comment to the run that wrote it.
func runFooter(getenv func(string) string) string {
	server, repo, run := getenv("GITHUB_SERVER_URL"), getenv("GITHUB_REPOSITORY"), getenv("GITHUB_RUN_ID")
	if server == "" || repo == "" || run == "" {
		return ""
	}
	if _, err := strconv.ParseInt(run, 10, 64); err != nil {
		return ""
	}
	return fmt.Sprintf("\n<sub>retrieval-gate · [workflow run](%s/%s/actions/runs/%s)</sub>\n", strings.TrimSuffix(server, "/"), repo, run)
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// interruptedComment is the warning of a comment (what: "PR comment", "MR
// note") that a signal (SIGINT, SIGTERM) cut short: not the API's fault, and
// the run's exit code is then 2, not the gates'.
func interruptedComment(what string) string {
	return fmt.Sprintf("retrieval-gate did not post the %s: the run was interrupted (SIGINT or SIGTERM) while it was being posted.", what)
}
