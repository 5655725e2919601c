package publish

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/github"
	"github.com/retrieval-gate/retrieval-gate/internal/gitlab"
	"github.com/retrieval-gate/retrieval-gate/internal/httpretry"
)

// Target is where a command's publication goes: GitHub Actions (Publisher) or
// a GitLab merge request (GitLabPublisher), chosen from the environment. A
// command builds one Publication and hands it to its target; nothing else
// differs between the two.
type Target interface {
	// Publish publishes pub and returns what it could not do (never an error:
	// publishing does not change the exit code, but for a run that SIGINT or
	// SIGTERM ends while it publishes, which exits 2: cli.RunFactory).
	Publish(ctx context.Context, pub Publication) []Warning
	// Fail reports an input error where the CI shows it; false means the
	// caller prints it on stderr.
	Fail(f Failure) bool
}

var (
	_ Target = (*Publisher)(nil)
	_ Target = (*GitLabPublisher)(nil)
)

// MaxNoteBytes keeps a merge-request note under GitLab's 1,000,000-character
// limit (GitLab's "Notes API": a note's body), in bytes as MaxCommentBytes is;
// the footer (the CI job's link) is counted within it.
const MaxNoteBytes = 1000000 - 536

// GitLabPublisher publishes in a GitLab CI job: the sticky merge-request note,
// created once and then edited in place (only the token's own notes), under the
// same comment flags, keys, markers and policies as GitHub's PR comment
// (UpsertPolicy). GitLab has no step outputs, job summary or workflow
// commands: the reports are files (--junit, --codequality, --markdown), and a
// warning is a line on stderr.
type GitLabPublisher struct {
	CI     gitlab.CI
	Stderr io.Writer
	// Policy is the client's retry policy; the zero value is gitlab.DefaultPolicy.
	Policy httpretry.Policy
	// Sleep waits between create attempts; nil is httpretry.Sleep.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Fail prints nothing: the caller prints the error on stderr, GitLab's log.
func (p *GitLabPublisher) Fail(Failure) bool { return false }

// Publish keeps the merge request's note of pub.Key.
func (p *GitLabPublisher) Publish(ctx context.Context, pub Publication) []Warning {
	token := p.CI.Token
	var warnings []Warning
	warn := func(layout string, args ...any) {
		msg := httpretry.RedactText(fmt.Sprintf(layout, args...), token, p.CI.JobToken)
		warnings = append(warnings, Warning(msg))
		fmt.Fprintf(p.Stderr, "retrieval-gate: warning: %s\n", format.Clean(msg))
	}
	if pub.Markdown == "" || pub.When == WhenOff {
		return nil
	}
	marker := MarkerOf(pub.Markdown)
	if marker == "" {
		marker = Marker(pub.Key)
	}
	iid := p.CI.MRIID
	if pub.PR > 0 {
		iid = pub.PR
	}
	switch pub.Mode {
	case ModeNever:
		return nil
	case ModeAuto, "":
		if p.CI.InCI && iid == 0 && p.CI.BadMRIID != "" {
			warn("%s: pass --pr N. The MR note was not posted.", badIID(p.CI.BadMRIID))
			return warnings
		}
		if !p.CI.InCI || iid == 0 {
			return nil
		}
		if token == "" {
			fmt.Fprintf(p.Stderr, "retrieval-gate: no MR note: GITLAB_TOKEN is not set. Give the job a project or group access token with the api scope in a masked CI/CD variable GITLAB_TOKEN (CI_JOB_TOKEN may not write notes); see %s\n", gitlabDocs)
			return nil
		}
	case ModeAlways:
		switch {
		case iid == 0 && p.CI.BadMRIID != "":
			warn("--comment always, but %s: pass --pr N. The MR note was not posted.", badIID(p.CI.BadMRIID))
			return warnings
		case iid == 0:
			warn("--comment always, but no merge request is known (CI_MERGE_REQUEST_IID is not set): pass --pr N. The MR note was not posted.")
			return warnings
		case token == "":
			warn("--comment always, but GITLAB_TOKEN is not set. The MR note was not posted.")
			return warnings
		}
	default:
		warn("unknown --comment mode %q. The MR note was not posted.", pub.Mode)
		return warnings
	}
	// The variable that is missing or wrong, by name (the one it was read
	// from: CI_SERVER_URL, CI_MERGE_REQUEST_PROJECT_ID).
	if err := p.CI.Problem(); err != nil {
		warn("cannot post the MR note: %v. The MR note was not posted.", err)
		return warnings
	}
	footer := jobFooter(p.CI.JobURL)
	note := "\n\n> **Note**\n> This note was shortened to fit GitLab's 1,000,000-character note limit; write the whole report with `--markdown FILE`.\n"
	var render func(int) string
	if pub.Render != nil {
		render = func(n int) string { return withMarker(pub.Render(n), marker) }
	}
	body := Fit(withMarker(pub.Markdown, marker), render, MaxNoteBytes, note, footer)

	policy := p.Policy
	if policy.Attempts == 0 {
		policy = gitlab.DefaultPolicy
	}
	c, err := gitlab.NewClient(p.CI.APIURL, p.CI.ProjectID, token, false, policy)
	if err != nil {
		warn("cannot post the MR note: %v. The MR note was not posted.", err)
		return warnings
	}
	sleep := p.Sleep
	if sleep == nil {
		sleep = httpretry.Sleep
	}
	cctx, cancel := context.WithTimeout(ctx, commentTimeout)
	defer cancel()
	if pub.Author != "" {
		// GitLab's GET /user answers every token, project and group access
		// tokens' bot users included: there is nothing to override.
		warn("--comment-author %s applies to GitHub's PR comments only: a note is the token's own when its author is the token's user (GitLab's GET /user), which is what is used.", pub.Author)
	}
	notes := &gitlabNotes{c: c, iid: iid, url: p.CI.ProjectURL, marker: marker}
	res, err := UpsertPolicy(cctx, notes, iid, marker, body, Policy{When: pub.When, Failed: pub.Failed}, sleep)
	if err != nil {
		if ctx.Err() != nil {
			warn("%s", interruptedComment("MR note"))
			return warnings
		}
		warn("%s", explainGitLab(err, p.CI, iid))
		return warnings
	}
	switch {
	case res.Skipped == SkipIncomplete:
		warn("%s. No note of key %s is among them, so no new note was posted: one may be further on, and a new note on every run would pile up. The exit code reflects only the gates; the whole report is written by --markdown FILE.", incompleteWhy(res.Incomplete, "merge request", "notes", "note"), keyOf(marker))
		return warnings
	case res.Skipped == SkipUnchanged:
		fmt.Fprintf(p.Stderr, "retrieval-gate: MR note unchanged (--comment-mode %s): %s\n", pub.When, format.Clean(res.URL))
	case res.Skipped == SkipPassing:
		fmt.Fprintf(p.Stderr, "retrieval-gate: no MR note: the verdict is pass and there is no earlier note to update (--comment-mode failures)\n")
	case res.Created:
		fmt.Fprintf(p.Stderr, "retrieval-gate: MR note created: %s\n", format.Clean(res.URL))
	default:
		fmt.Fprintf(p.Stderr, "retrieval-gate: MR note updated: %s\n", format.Clean(res.URL))
	}
	if n := res.Hidden + res.Removed; n > 0 {
		fmt.Fprintf(p.Stderr, "retrieval-gate: deleted %s with the same key (concurrent runs)\n", format.Count(n, "duplicate MR note", "duplicate MR notes"))
	}
	if res.Incomplete != nil {
		warn("%s. The note found among them was updated; a duplicate of it further on, if any, was not looked for.", incompleteWhy(res.Incomplete, "merge request", "notes", "note"))
	}
	if res.Unsettled != nil {
		warn("the MR note was created, but the notes could not be listed again to look for a duplicate from a concurrent run (%v); the next run removes any", res.Unsettled)
	}
	return warnings
}

// badIID says that CI_MERGE_REQUEST_IID is set to what is not a merge
// request's iid (its value quoted, as set).
func badIID(v string) string {
	return fmt.Sprintf("CI_MERGE_REQUEST_IID %q is not a merge request iid (a positive integer)", v)
}

// gitlabDocs is where the GitLab setup is described.
const gitlabDocs = "https://github.com/retrieval-gate/retrieval-gate/blob/main/docs/ci.md#gitlab-merge-requests"

// jobFooter links the note to the CI job that wrote it ("" without CI_JOB_URL).
func jobFooter(jobURL string) string {
	u, err := url.Parse(jobURL)
	if jobURL == "" || err != nil || (u.Scheme != "https" && u.Scheme != "http") || strings.ContainsAny(jobURL, "()[] \n") {
		return ""
	}
	return fmt.Sprintf("\n<sub>retrieval-gate · [CI job](%s)</sub>\n", jobURL)
}

// gitlabNotes is the merge request's notes as the Comments of UpsertPolicy:
// the note's author is its login, and GitLab, which cannot hide a note,
// refuses MinimizeComment, so a duplicate is deleted instead.
type gitlabNotes struct {
	c      *gitlab.Client
	iid    int
	url    string // CI_PROJECT_URL, for the notes' links
	marker string // the note's marker: of the notes listed, only the body of our own note with it is kept
	self   string // the token's user, once Self has asked
}

func (n *gitlabNotes) Self(ctx context.Context) (github.Identity, error) {
	u, err := n.c.Self(ctx)
	if err != nil {
		return github.Identity{}, asAPIError(err)
	}
	n.self = u.Username
	return github.Identity{Login: u.Username}, nil
}

// keep is what the listing keeps of a note's body: the whole body of the
// first note of ours with the marker (the upsert keeps it, and compares its
// report under --comment-mode changes or failures), of any other note only the
// marker on its first line, if any, which is all the upsert reads of it. A
// page of a hundred notes of 1,000,000 characters each then costs one note
// at a time.
func (n *gitlabNotes) keep() func(gitlab.Note) string {
	kept := false
	return func(note gitlab.Note) string {
		m := MarkerOf(note.Body)
		if m == "" || note.System {
			return ""
		}
		if !kept && m == n.marker && (n.self == "" || strings.EqualFold(note.Author, n.self)) {
			kept = true
			return note.Body
		}
		return m
	}
}

func (n *gitlabNotes) comment(note gitlab.Note) github.IssueComment {
	link := ""
	if n.url != "" {
		link = fmt.Sprintf("%s/-/merge_requests/%d#note_%d", strings.TrimSuffix(n.url, "/"), n.iid, note.ID)
	}
	return github.IssueComment{ID: note.ID, Login: note.Author, Body: note.Body, URL: link, CreatedAt: note.CreatedAt}
}

// ListComments is the merge request's notes but for GitLab's system notes;
// past the listing's bound (gitlab.MaxPages pages) the oldest notes with a
// *github.IncompleteError.
func (n *gitlabNotes) ListComments(ctx context.Context, _ int) ([]github.IssueComment, error) {
	notes, err := n.c.ListNotes(ctx, n.iid, n.keep())
	var cut *gitlab.TruncatedError
	if err != nil && !errors.As(err, &cut) {
		return nil, asAPIError(err)
	}
	out := make([]github.IssueComment, 0, len(notes))
	for _, note := range notes {
		if !note.System {
			out = append(out, n.comment(note))
		}
	}
	if cut != nil {
		return out, &github.IncompleteError{Object: "MR notes", Read: cut.Read, Pages: cut.Pages, PerPage: gitlab.PerPage}
	}
	return out, nil
}

func (n *gitlabNotes) CreateComment(ctx context.Context, _ int, body string) (github.IssueComment, error) {
	note, err := n.c.CreateNote(ctx, n.iid, body)
	if err != nil {
		return github.IssueComment{}, asAPIError(err)
	}
	return n.comment(note), nil
}

func (n *gitlabNotes) EditComment(ctx context.Context, id int64, body string) (github.IssueComment, error) {
	note, err := n.c.EditNote(ctx, n.iid, id, body)
	if err != nil {
		return github.IssueComment{}, asAPIError(err)
	}
	return n.comment(note), nil
}

func (n *gitlabNotes) DeleteComment(ctx context.Context, id int64) error {
	return asAPIError(n.c.DeleteNote(ctx, n.iid, id))
}

func (n *gitlabNotes) MinimizeComment(context.Context, string) error {
	return &github.APIError{Op: "hide", Object: "MR note", Service: "GitLab", Kind: github.KindForbidden, Message: "GitLab cannot hide a note"}
}

// asAPIError is a GitLab error in the upsert's terms (its kinds decide retries
// and cleanup).
func asAPIError(err error) error {
	var ge *gitlab.APIError
	if err == nil || !errors.As(err, &ge) {
		return err
	}
	kinds := map[gitlab.ErrorKind]github.ErrorKind{
		gitlab.KindForbidden: github.KindForbidden, gitlab.KindNotFound: github.KindNotFound, gitlab.KindUnauthorized: github.KindUnauthorized,
		gitlab.KindRateLimited: github.KindRateLimited, gitlab.KindServer: github.KindServer, gitlab.KindNetwork: github.KindNetwork,
		gitlab.KindScope: github.KindForbidden,
	}
	// The object the call was about: the token's user of GET /user is not the
	// note ("failed to identify the MR note" named the wrong thing).
	obj := "MR note"
	if (ge.Op == "identify" || ge.Op == "list") && ge.Object != "" { // the token's user; the MR notes
		obj = ge.Object
	}
	ae := &github.APIError{Op: ge.Op, Object: obj, Service: "GitLab", Kind: kinds[ge.Kind], Status: ge.Status, Message: ge.Message}
	if ge.Kind == gitlab.KindScope {
		return &scopeError{APIError: ae, scope: cmp.Or(ge.Scope, "api")}
	}
	return ae
}

// scopeError is a call GitLab refused because the token lacks a scope (403
// insufficient_scope): a forbidden call to the upsert, and to the warning a
// token to give that scope rather than a role.
type scopeError struct {
	*github.APIError
	scope string // the scope GitLab named ("api")
}

func (e *scopeError) Unwrap() error { return e.APIError }

// explainGitLab is the warning of a note that could not be posted: why, and
// what to do; the exit code is never affected.
func explainGitLab(err error, ci gitlab.CI, iid int) string {
	const keep = "The exit code reflects only the gates."
	var se *scopeError
	if errors.As(err, &se) {
		return fmt.Sprintf("retrieval-gate could not post the MR note: %v. GITLAB_TOKEN lacks the %s scope, which GitLab wants for this call (a read_api token may read the notes but not write them): give the token the api scope. %s", strings.TrimSuffix(se.APIError.Error(), "."), se.scope, keep)
	}
	var ae *github.APIError
	if !errors.As(err, &ae) {
		return fmt.Sprintf("retrieval-gate could not post the MR note: %v. %s", err, keep)
	}
	switch ae.Kind {
	case github.KindUnauthorized:
		return fmt.Sprintf("retrieval-gate could not post the MR note: %v. GitLab rejected GITLAB_TOKEN: it must be a project, group or personal access token with the api scope (CI_JOB_TOKEN may not write notes). %s", ae, keep)
	case github.KindForbidden:
		return fmt.Sprintf("retrieval-gate could not post the MR note: %v. The token may not comment on this merge request: give its user at least the Reporter role in the project. %s", ae, keep)
	case github.KindNotFound:
		if ae.Op == "identify" {
			// GET /user is every API's: a 404 there is a URL that does not
			// lead to GitLab's REST API, whatever the project or the iid.
			return fmt.Sprintf("retrieval-gate could not post the MR note: %v. %s does not lead to GitLab's REST API (it has no /user): check it. %s", ae, apiURLVar(ci), keep)
		}
		// GitLab answers 404 for a project or merge request that does not
		// exist and for one the token's user may not see: name both, and
		// where each number came from.
		iidFrom := "CI_MERGE_REQUEST_IID"
		if ci.MRIID != iid {
			iidFrom = "--pr"
		}
		return fmt.Sprintf("retrieval-gate could not post the MR note: %v. Project %s has no merge request !%d that the token can see: check %s and %s, and give the token's user at least the Reporter role in the project. %s",
			ae, ci.ProjectID, iid, iidFrom, cmp.Or(ci.ProjectIDVar, "CI_PROJECT_ID"), keep)
	case github.KindRateLimited:
		return fmt.Sprintf("retrieval-gate could not post the MR note: %v. GitLab's rate limit is exhausted. %s", ae, keep)
	case github.KindServer:
		return fmt.Sprintf("retrieval-gate could not post the MR note: %v (after retries). GitLab may be having trouble; retry the job later. %s", ae, keep)
	case github.KindNetwork:
		return fmt.Sprintf("retrieval-gate could not post the MR note: %v. Check %s and the runner's network. %s", ae, apiURLVar(ci), keep)
	}
	return fmt.Sprintf("retrieval-gate could not post the MR note: %v. %s", ae, keep)
}

// apiURLVar is the variable the API's URL was read from: CI_API_V4_URL, or
// CI_SERVER_URL when that was the one set.
func apiURLVar(ci gitlab.CI) string { return cmp.Or(ci.APIURLVar, "CI_API_V4_URL") }
