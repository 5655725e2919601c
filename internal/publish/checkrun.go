package publish

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/github"
	"github.com/retrieval-gate/retrieval-gate/internal/httpretry"
)

// Check-run modes (--check-run).
const (
	CheckRunAuto  = "auto"  // inside Actions, with a token that may write checks
	CheckRunNever = "never" // annotations as workflow commands, as before check runs
)

// Checks is the GitHub API the check run needs (github.Client implements it;
// tests use the same client against githubtest).
type Checks interface {
	FindCheckRun(ctx context.Context, sha, name string) (github.CheckRun, bool, error)
	CheckRunAnnotations(ctx context.Context, id int64) ([]github.CheckAnnotation, error)
	CreateCheckRun(ctx context.Context, name, sha, conclusion string, out github.CheckOutput) (github.CheckRun, error)
	UpdateCheckRun(ctx context.Context, id int64, name, conclusion string, out github.CheckOutput) (github.CheckRun, error)
}

// ChecksFactory builds the check-run client for apiURL, repository and token.
type ChecksFactory func(apiURL, repository, token string) (Checks, error)

// GitHubChecks is the ChecksFactory of the real API (github.Client), retrying
// under policy.
func GitHubChecks(policy httpretry.Policy) ChecksFactory {
	return func(apiURL, repository, token string) (Checks, error) {
		return github.NewClient(apiURL, repository, token, policy)
	}
}

// CheckRunName is the name of the check run of comment key key: one check run
// per key and commit ("retrieval-gate" for check's default key).
func CheckRunName(key string) string {
	if key == DefaultKey || key == "" {
		return "retrieval-gate"
	}
	return "retrieval-gate/" + key
}

// MaxCheckSummaryBytes keeps a check run's summary under GitHub's 65,535-character
// limit (REST API, "Create a check run": output.summary), counted in bytes as
// MaxCommentBytes is.
const MaxCheckSummaryBytes = github.MaxCheckSummary - 535

// checkRunTimeout bounds everything the check run may take (listing, up to
// 10,000 annotations in batches of 50, retries).
const checkRunTimeout = 4 * time.Minute

// CheckRunSpec is the check run of one report on one commit.
type CheckRunSpec struct {
	Name, SHA   string
	Conclusion  string // success or failure
	Title       string
	Summary     string
	Annotations []github.CheckAnnotation
}

// CheckRunResult is the check run after UpsertCheckRun.
type CheckRunResult struct {
	URL     string
	Created bool // a new check run (false: the commit's run of that name was updated)
	// Replaced: the commit had a run of that name with annotations this report
	// no longer has; a check run's annotations cannot be removed, so a new run
	// replaces it (GitHub shows the newest run of a name).
	Replaced bool
	// Foreign: the commit's run of that name was made by another GitHub App
	// (another token), which alone may update it (GitHub answers 403 "Invalid
	// app_id … check run can only be modified by the GitHub App that created
	// it"): a new run of this token's app replaces it.
	Foreign bool
	Added   int // annotations sent by this upsert
	Kept    int // annotations the updated run already had
}

// UpsertCheckRun keeps one check run per name and commit: the commit's most
// recent run of that name is updated (title, summary, conclusion) and given the
// annotations it does not have yet, so a rerun adds no duplicate; none, or one
// carrying annotations this report no longer has, means a new run. Annotations
// go MaxCheckAnnotations a request: the first batch with the create or update,
// each further batch in an update (the API appends them). An update refused
// with 403 (the run is another app's: only the app that created a check run
// may update it) creates a new run instead; a token that may not write checks
// is refused that create too, and that is the error.
func UpsertCheckRun(ctx context.Context, c Checks, spec CheckRunSpec) (CheckRunResult, error) {
	var res CheckRunResult
	existing, found, err := c.FindCheckRun(ctx, spec.SHA, spec.Name)
	if err != nil {
		return res, err
	}
	all := make([]github.CheckAnnotation, len(spec.Annotations))
	for i, a := range spec.Annotations {
		all[i] = fitAnnotation(a)
	}
	anns := all
	if found {
		have, err := c.CheckRunAnnotations(ctx, existing.ID)
		if err != nil {
			return res, err
		}
		missing, stale := missingAnnotations(have, anns)
		if stale {
			found, res.Replaced = false, true
		} else {
			anns, res.Kept = missing, len(have)
		}
	}
	first := anns[:min(len(anns), github.MaxCheckAnnotations)]
	out := github.CheckOutput{Title: spec.Title, Summary: spec.Summary, Annotations: first}
	var run github.CheckRun
	var ae *github.APIError
	if found {
		run, err = c.UpdateCheckRun(ctx, existing.ID, spec.Name, spec.Conclusion, out)
		if err != nil && errors.As(err, &ae) && ae.Kind == github.KindForbidden {
			found, res.Foreign, res.Kept = false, true, 0
			anns = all
			first = anns[:min(len(anns), github.MaxCheckAnnotations)]
			out.Annotations = first
		}
	}
	if !found {
		run, err = c.CreateCheckRun(ctx, spec.Name, spec.SHA, spec.Conclusion, out)
		res.Created = err == nil
	}
	if err != nil {
		return res, err
	}
	res.URL, res.Added = run.URL, len(first)
	for rest := anns[len(first):]; len(rest) > 0; {
		batch := rest[:min(len(rest), github.MaxCheckAnnotations)]
		if _, err := c.UpdateCheckRun(ctx, run.ID, spec.Name, "", github.CheckOutput{Title: spec.Title, Summary: spec.Summary, Annotations: batch}); err != nil {
			return res, err
		}
		res.Added += len(batch)
		rest = rest[len(batch):]
	}
	return res, nil
}

// fitAnnotation writes an annotation's path, title and message as the
// workflow commands do, bidi controls and the other invisible characters
// visible (format.Visible: the diff's annotation reads as it says), then cuts
// the message and the title to what GitHub takes (one longer field refuses the
// whole request, and with it the check run), "…" marking the cut; the JSON
// report keeps them whole. It is applied before the comparison with a run's
// annotations, which GitHub returns as they were sent.
func fitAnnotation(a github.CheckAnnotation) github.CheckAnnotation {
	a.Path = format.Visible(a.Path)
	a.Message = format.CutBytes(format.Visible(a.Message), github.MaxCheckAnnotationMessage)
	a.Title, _ = format.Shorten(format.Visible(a.Title), github.MaxCheckAnnotationTitle)
	return a
}

// missingAnnotations is want less the annotations have already holds (as a
// multiset); stale reports whether have holds one that want does not.
func missingAnnotations(have, want []github.CheckAnnotation) (missing []github.CheckAnnotation, stale bool) {
	key := func(a github.CheckAnnotation) github.CheckAnnotation {
		a.Line = max(a.Line, 1)
		return a
	}
	count := map[github.CheckAnnotation]int{}
	for _, a := range have {
		count[key(a)]++
	}
	for _, a := range want {
		if k := key(a); count[k] > 0 {
			count[k]--
			continue
		}
		missing = append(missing, a)
	}
	for _, n := range count {
		if n > 0 {
			return missing, true
		}
	}
	return missing, false
}

// checkRun publishes pub's check run with every annotation. It returns true
// when the check run carries them all, so that no workflow command repeats
// them; false falls back to the workflow commands (GitHub shows 10 of them per
// step), and says why once: a notice when the token may not write checks (a
// fork's read-only token, a job without `checks: write`), a warning for any
// other failure. No check run is tried outside Actions, without a token or a
// commit, on issue_comment (no commit of its own), or with --check-run never.
func (p *Publisher) checkRun(ctx context.Context, act *github.Actions, pub Publication, token, body string, warn func(string, ...any)) bool {
	if pub.CheckRun == "" || pub.CheckMode == CheckRunNever || !act.InActions || token == "" || act.Repository == "" || act.SHA == "" {
		return false
	}
	const fallback = "The annotations are workflow commands instead, of which GitHub shows at most 10 per step; the job summary lists every problem."
	if act.ReadOnlyToken() {
		act.Notice(fmt.Sprintf("retrieval-gate: no check run: this pull request comes from a fork (%s), and GitHub gives such runs a read-only token. %s", orUnknown(act.HeadRepo), fallback))
		return false
	}
	if act.EventName == "issue_comment" {
		// GITHUB_SHA is the default branch's last commit here, whatever the
		// workflow checked out: a check run there would carry this run's
		// verdict to a commit it may not have checked.
		act.Notice("retrieval-gate: no check run: an issue_comment event names no commit (GITHUB_SHA is the default branch's last commit, whatever the workflow checked out). " + fallback)
		return false
	}
	factory := p.Checks
	if factory == nil {
		factory = GitHubChecks(github.DefaultPolicy)
	}
	c, err := factory(act.APIURL, act.Repository, token)
	if err != nil {
		warn("no check run: %v. %s", err, fallback)
		return false
	}
	spec := CheckRunSpec{Name: pub.CheckRun, SHA: act.SHA, Conclusion: "success", Title: pub.CheckTitle, Summary: body}
	if pub.Failed {
		spec.Conclusion = "failure"
	}
	if spec.Title == "" {
		spec.Title = pub.CheckRun
	}
	for _, a := range pub.Annotations {
		spec.Annotations = append(spec.Annotations, github.CheckAnnotation{Path: act.RelPath(a.File), Line: a.Line, Level: "failure", Title: a.Title, Message: a.Message})
	}
	ctx, cancel := context.WithTimeout(ctx, checkRunTimeout)
	defer cancel()
	res, err := UpsertCheckRun(ctx, c, spec)
	if err != nil {
		var ae *github.APIError
		switch {
		case res.URL != "":
			warn("the check run %s has %d of its %s: %v. %s", format.Clean(res.URL), res.Kept+res.Added, format.Count(len(spec.Annotations), "annotation", "annotations"), err, fallback)
		case errors.As(err, &ae) && (ae.Kind == github.KindForbidden || ae.Kind == github.KindNotFound):
			act.Notice(httpretry.RedactText(fmt.Sprintf("retrieval-gate: no check run: the token may not write checks (%v); give the job `permissions: checks: write`. %s", err, fallback), token))
		default:
			warn("no check run: %v. %s", err, fallback)
		}
		return false
	}
	what := "updated"
	if res.Created {
		what = "created"
	}
	fmt.Fprintf(p.Stderr, "retrieval-gate: check run %s: %s (%s)\n", what, format.Clean(res.URL), format.Count(len(spec.Annotations), "annotation", "annotations"))
	if res.Foreign {
		fmt.Fprintf(p.Stderr, "retrieval-gate: the commit's check run %q was made by another GitHub App (another token), which alone may update it: this new run replaces it\n", spec.Name)
	}
	if res.Replaced {
		fmt.Fprintf(p.Stderr, "retrieval-gate: the commit's earlier check run %q had annotations this run no longer has (GitHub cannot remove them): this new run replaces it\n", spec.Name)
	}
	return true
}

// checkTitle is a check run's title: the verdict and the failed gates.
func checkTitle(failed []string) string {
	if len(failed) == 0 {
		return "retrieval-gate: pass"
	}
	t := "retrieval-gate: fail (" + strings.Join(failed, ", ") + ")"
	if short, ok := format.Shorten(t, 200); !ok {
		return short + ")"
	}
	return t
}
