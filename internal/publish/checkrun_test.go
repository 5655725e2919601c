package publish

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/github"
	"github.com/retrieval-gate/retrieval-gate/internal/github/githubtest"
)

const headSHA = "0123456789abcdef0123456789abcdef01234567"

// checkRunner is a pull_request step whose event names the PR's head commit,
// with GITHUB_SHA the merge commit (as on GitHub).
func checkRunner(t *testing.T, srv *githubtest.Server) *runner {
	t.Helper()
	r := newRunner(t, srv, "pull_request", fmt.Sprintf(`{"number":7,"pull_request":{"number":7,"head":{"sha":%q,"repo":{"full_name":"octo/repo"}},"base":{"repo":{"full_name":"octo/repo"}}}}`, headSHA))
	r.env["GITHUB_SHA"] = "fedcba9876543210fedcba9876543210fedcba98"
	return r
}

// problems is a publication of check with n integrity problems.
func problems(n int, failed bool) Publication {
	pub := pubFor(DefaultKey, "a report")
	pub.CheckRun, pub.CheckTitle, pub.Failed = CheckRunName(DefaultKey), "retrieval-gate: fail (integrity)", failed
	for i := range n {
		pub.Annotations = append(pub.Annotations, Annotation{File: "eval/cases.jsonl", Line: i + 1, Title: "retrieval-gate: dataset integrity",
			Message: fmt.Sprintf("case c%d: gold id \"x%d\": unknown card", i, i)})
	}
	pub.AnnotationsTotal = int64(n)
	return pub
}

func checkRequests(srv *githubtest.Server) []string {
	var out []string
	for _, r := range srv.Requests() {
		if strings.Contains(r.Path, "check-runs") {
			out = append(out, r.Method+" "+r.Path)
		}
	}
	return out
}

// 140 problems: one check run with all of them, created with 50 and given the
// rest 50 at a time; no workflow-command annotation.
func TestCheckRunEveryAnnotation(t *testing.T) {
	srv := githubtest.New("octo", "repo", actionsTestToken, prNumber)
	defer srv.Close()
	r := checkRunner(t, srv)
	assert.Empty(t, r.publish(problems(140, true)))
	runs := srv.CheckRuns()
	require.Len(t, runs, 1)
	run := runs[0]
	assert.Equal(t, "retrieval-gate", run.Name)
	assert.Equal(t, headSHA, run.HeadSHA, "on the pull request's head commit, not the merge commit")
	assert.Equal(t, "completed", run.Status)
	assert.Equal(t, "failure", run.Conclusion)
	assert.Equal(t, "retrieval-gate: fail (integrity)", run.Title)
	assert.True(t, strings.HasPrefix(run.Summary, Marker(DefaultKey)+"\n## retrieval-gate: pass"), "the summary is the comment's report")
	require.Len(t, run.Annotations, 140)
	assert.Equal(t, githubtest.CheckAnnotation{Path: "eval/cases.jsonl", StartLine: 140, EndLine: 140, AnnotationLevel: "failure",
		Message: `case c139: gold id "x139": unknown card`, Title: "retrieval-gate: dataset integrity"}, run.Annotations[139])
	assert.Equal(t, 3, run.Requests, "a create and two updates")
	assert.Equal(t, []string{"GET /repos/octo/repo/commits/" + headSHA + "/check-runs", "POST /repos/octo/repo/check-runs",
		fmt.Sprintf("PATCH /repos/octo/repo/check-runs/%d", run.ID), fmt.Sprintf("PATCH /repos/octo/repo/check-runs/%d", run.ID)}, checkRequests(srv))
	assert.NotContains(t, r.stdout.String(), "::error")
	assert.Contains(t, r.stderr.String(), "retrieval-gate: check run created: https://github.com/octo/repo/runs/")
	assert.Contains(t, r.stderr.String(), "(140 annotations)")
	r.assertNoToken(t, srv, 1)

	// A rerun on the same commit updates the same run and adds no duplicate.
	r2 := checkRunner(t, srv)
	assert.Empty(t, r2.publish(problems(140, false)))
	runs = srv.CheckRuns()
	require.Len(t, runs, 1, "one check run per key and commit")
	assert.Len(t, runs[0].Annotations, 140)
	assert.Equal(t, "success", runs[0].Conclusion)
	assert.Contains(t, r2.stderr.String(), "retrieval-gate: check run updated")

	// A rerun with a problem fewer: a check run's annotations cannot be removed,
	// so a new run replaces the old one (GitHub shows the newest of a name).
	r3 := checkRunner(t, srv)
	assert.Empty(t, r3.publish(problems(139, true)))
	runs = srv.CheckRuns()
	require.Len(t, runs, 2)
	assert.Len(t, runs[1].Annotations, 139)
	assert.Contains(t, r3.stderr.String(), "had annotations this run no longer has")

	// Another key, another check run.
	r4 := checkRunner(t, srv)
	pub := problems(1, false)
	pub.Key, pub.CheckRun = "nightly", CheckRunName("nightly")
	pub.Markdown = Marker("nightly") + "\nreport\n"
	assert.Empty(t, r4.publish(pub))
	runs = srv.CheckRuns()
	require.Len(t, runs, 3)
	assert.Equal(t, "retrieval-gate/nightly", runs[2].Name)
}

// Without checks: write GitHub answers 403 "Resource not accessible by
// integration": the annotations are workflow commands, as before, and a
// notice says so once; the exit code and the comment are unaffected.
func TestCheckRunForbiddenFallsBack(t *testing.T) {
	srv := githubtest.New("octo", "repo", actionsTestToken, prNumber)
	defer srv.Close()
	srv.DenyChecks(true)
	r := checkRunner(t, srv)
	assert.Empty(t, r.publish(problems(60, true)))
	assert.Empty(t, srv.CheckRuns())
	out := r.stdout.String()
	assert.Equal(t, 1, strings.Count(out, "::notice::retrieval-gate: no check run: the token may not write checks (failed to create the check run: GitHub answered 403 Resource not accessible by integration); give the job `permissions: checks: write`."), out)
	assert.Equal(t, MaxAnnotations, strings.Count(out, "::error file=eval/cases.jsonl"), "the workflow commands, as many as before")
	assert.Contains(t, out, "10 more problems not annotated")
	require.Len(t, srv.Comments(prNumber), 1, "the comment is still posted")
	r.assertNoToken(t, srv, 1)
}

// A fork's read-only token: no request for a check run at all.
func TestCheckRunForkFallsBack(t *testing.T) {
	srv := githubtest.New("octo", "repo", actionsTestToken, prNumber)
	defer srv.Close()
	srv.ReadOnly = true
	r := checkRunner(t, srv)
	r.env["GITHUB_EVENT_PATH"] = r.eventFile
	require.NoError(t, writeFile(r.eventFile, fmt.Sprintf(`{"number":7,"pull_request":{"number":7,"head":{"sha":%q,"repo":{"full_name":"fork/repo"}},"base":{"repo":{"full_name":"octo/repo"}}}}`, headSHA)))
	r.publish(problems(3, true))
	assert.Empty(t, checkRequests(srv))
	assert.Equal(t, 1, strings.Count(r.stdout.String(), "::notice::retrieval-gate: no check run: this pull request comes from a fork (fork/repo)"))
	assert.Equal(t, 3, strings.Count(r.stdout.String(), "::error file=eval/cases.jsonl"))
}

// --check-run never, and a report without a check run (calibrate, compare
// without a gate): the workflow commands, no request.
func TestCheckRunOff(t *testing.T) {
	srv := githubtest.New("octo", "repo", actionsTestToken, prNumber)
	defer srv.Close()
	for _, pub := range []Publication{func() Publication { p := problems(2, true); p.CheckMode = CheckRunNever; return p }(),
		func() Publication { p := problems(2, true); p.CheckRun = ""; return p }()} {
		r := checkRunner(t, srv)
		r.publish(pub)
		assert.Equal(t, 2, strings.Count(r.stdout.String(), "::error file=eval/cases.jsonl"))
	}
	assert.Empty(t, checkRequests(srv))
}

// A server error on a later batch: the run keeps what it got, a warning says
// how many, and the workflow commands carry the annotations too.
func TestCheckRunPartial(t *testing.T) {
	srv := githubtest.New("octo", "repo", actionsTestToken, prNumber)
	defer srv.Close()
	for range github.DefaultPolicy.Attempts {
		srv.Queue(githubtest.Fault{Method: http.MethodPatch, Status: http.StatusBadGateway, Body: `{"message":"Bad Gateway"}`})
	}
	r := checkRunner(t, srv)
	w := r.publish(problems(70, true))
	require.Len(t, w, 1)
	assert.Contains(t, string(w[0]), "has 50 of its 70 annotations: failed to update the check run: GitHub answered 502 Bad Gateway")
	require.Len(t, srv.CheckRuns(), 1)
	assert.Len(t, srv.CheckRuns()[0].Annotations, 50)
	assert.Equal(t, MaxAnnotations, strings.Count(r.stdout.String(), "::error file=eval/cases.jsonl"))
}

// The summary is fitted to GitHub's 65,535 characters the way the comment is.
func TestCheckRunSummaryFitted(t *testing.T) {
	srv := githubtest.New("octo", "repo", actionsTestToken, prNumber)
	defer srv.Close()
	r := checkRunner(t, srv)
	pub := problems(1, true)
	row := "| case | gold | why |\n|---|---|---|\n" + strings.Repeat("| c | ü | unknown card (relevant_ids) |\n", 4000)
	pub.Markdown = Marker(DefaultKey) + "\n## retrieval-gate: fail\n\n" + row
	assert.Empty(t, r.publish(pub))
	runs := srv.CheckRuns()
	require.Len(t, runs, 1)
	assert.LessOrEqual(t, len(runs[0].Summary), github.MaxCheckSummary)
	assert.Contains(t, runs[0].Summary, "more rows not shown")
	assert.Contains(t, runs[0].Summary, "65,535-character check-run summary limit")
}

func TestUpsertCheckRunBatches(t *testing.T) {
	for _, n := range []int{0, 1, 50, 51, 100, 101, 250} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			srv := githubtest.New("octo", "repo", actionsTestToken)
			defer srv.Close()
			c, err := github.NewClient(srv.APIURL(), "octo/repo", actionsTestToken, github.DefaultPolicy)
			require.NoError(t, err)
			spec := CheckRunSpec{Name: "retrieval-gate", SHA: headSHA, Conclusion: "success", Title: "t", Summary: "s"}
			for i := range n {
				spec.Annotations = append(spec.Annotations, github.CheckAnnotation{Path: "a", Line: i, Level: "failure", Message: fmt.Sprint(i)})
			}
			res, err := UpsertCheckRun(context.Background(), c, spec)
			require.NoError(t, err)
			assert.Equal(t, n, res.Added)
			run := srv.CheckRuns()[0]
			assert.Len(t, run.Annotations, n)
			assert.Equal(t, max(1, (n+49)/50), run.Requests)
		})
	}
}

func writeFile(path, s string) error { return os.WriteFile(path, []byte(s), 0o644) }

// GitHub takes an annotation's message up to 64 KB and its title up to 255
// characters (REST API, "Create a check run": output.annotations[].message,
// .title) and refuses the whole request with 422 for one longer field: a case
// id of 70 KB cost the check run every annotation. They are cut, "…" marking
// the cut, and a rerun compares the cut forms, so it replaces nothing.
func TestCheckRunLongAnnotationFitted(t *testing.T) {
	srv := githubtest.New("octo", "repo", actionsTestToken, prNumber)
	defer srv.Close()
	long := func() Publication {
		pub := problems(3, true)
		pub.Annotations[1].Message = "case c" + strings.Repeat("é", 40000) + ": unknown card"
		pub.Annotations[2].Title = strings.Repeat("t", 300)
		return pub
	}
	r := checkRunner(t, srv)
	assert.Empty(t, r.publish(long()))
	runs := srv.CheckRuns()
	require.Len(t, runs, 1)
	anns := runs[0].Annotations
	require.Len(t, anns, 3)
	assert.Equal(t, `case c0: gold id "x0": unknown card`, anns[0].Message, "a short message as it was")
	assert.LessOrEqual(t, len(anns[1].Message), 64000+len("…"))
	assert.True(t, utf8.ValidString(anns[1].Message), "cut at a character boundary")
	assert.True(t, strings.HasPrefix(anns[1].Message, "case cé") && strings.HasSuffix(anns[1].Message, "é…"), "the cut is marked")
	assert.Equal(t, 255, utf8.RuneCountInString(anns[2].Title))
	assert.NotContains(t, r.stdout.String(), "::error", "the check run carries them, no workflow command")

	r2 := checkRunner(t, srv)
	assert.Empty(t, r2.publish(long()))
	runs = srv.CheckRuns()
	require.Len(t, runs, 1, "the rerun updates the run: the cut annotations are the same")
	assert.Len(t, runs[0].Annotations, 3)
	assert.NotContains(t, r2.stderr.String(), "had annotations this run no longer has")
}

// A workflow job is itself a check run, named after the job, made by the same
// GitHub Actions app as the workflow token, which may update it (REST API,
// "Update a check run"). A job named retrieval-gate has the name of check's
// check run: the step found the job's own run, in progress, and completed it
// with the report's conclusion, title and summary while the job still ran.
// The check runs retrieval-gate creates carry its external_id, and only those
// are updated; any other run of the name is left alone.
func TestCheckRunLeavesTheJobsRunAlone(t *testing.T) {
	srv := githubtest.New("octo", "repo", actionsTestToken, prNumber)
	defer srv.Close()
	st := srv.Export()
	job := githubtest.CheckRun{ID: 1, Name: "retrieval-gate", HeadSHA: headSHA, Status: "in_progress", ExternalID: "5264e576-3c6f-51f6-f055-fab409685f20", Title: "job"}
	st.CheckRuns = append(st.CheckRuns, job)
	srv.Import(st)

	r := checkRunner(t, srv)
	assert.Empty(t, r.publish(problems(3, true)))
	runs := srv.CheckRuns()
	require.Len(t, runs, 2, "a check run of its own")
	assert.Equal(t, job, runs[0], "the job's run as it was")
	assert.Equal(t, "failure", runs[1].Conclusion)
	assert.Len(t, runs[1].Annotations, 3)
	assert.Contains(t, r.stderr.String(), "retrieval-gate: check run created")

	// The rerun updates its own run (the newest of the name), not the job's.
	r2 := checkRunner(t, srv)
	assert.Empty(t, r2.publish(problems(3, false)))
	runs = srv.CheckRuns()
	require.Len(t, runs, 2)
	assert.Equal(t, job, runs[0])
	assert.Equal(t, "success", runs[1].Conclusion)
	assert.Contains(t, r2.stderr.String(), "retrieval-gate: check run updated")
}

// On issue_comment GITHUB_SHA is the default branch's last commit ("Events
// that trigger workflows", issue_comment), whatever the workflow checked out
// (a command in a pull request's comments checks out its head): the check run
// went there, with the pull request's verdict, and updated the default
// branch's own check run of the name. No check run is made on issue_comment:
// a notice says why, and the annotations are workflow commands; the PR comment
// is still posted.
func TestCheckRunNotOnIssueComment(t *testing.T) {
	srv := githubtest.New("octo", "repo", actionsTestToken, prNumber)
	defer srv.Close()
	r := newRunner(t, srv, "issue_comment", `{"issue":{"number":7,"pull_request":{"url":"https://api.github.com/repos/octo/repo/pulls/7"}}}`)
	r.env["GITHUB_SHA"] = "fedcba9876543210fedcba9876543210fedcba98"
	assert.Empty(t, r.publish(problems(3, true)))
	assert.Empty(t, checkRequests(srv))
	out := r.stdout.String()
	assert.Equal(t, 1, strings.Count(out, "::notice::retrieval-gate: no check run: an issue_comment event names no commit"), out)
	assert.Equal(t, 3, strings.Count(out, "::error file=eval/cases.jsonl"))
	require.Len(t, srv.Comments(prNumber), 1, "the comment is still posted")
}

// A review (pull_request_review) or a review comment
// (pull_request_review_comment) carries the pull request as pull_request does,
// and GITHUB_SHA is its merge commit there too ("Events that trigger
// workflows"): the check run goes on the head commit, where the pull request
// shows it, and the comment on the pull request. They were read as no pull
// request: no comment, and a check run on the merge commit, which the pull
// request does not show.
func TestCheckRunOnReviewEvents(t *testing.T) {
	for _, event := range []string{"pull_request_review", "pull_request_review_comment"} {
		t.Run(event, func(t *testing.T) {
			srv := githubtest.New("octo", "repo", actionsTestToken, prNumber)
			defer srv.Close()
			r := newRunner(t, srv, event, fmt.Sprintf(`{"action":"submitted","pull_request":{"number":7,"head":{"sha":%q,"repo":{"full_name":"octo/repo"}},"base":{"repo":{"full_name":"octo/repo"}}}}`, headSHA))
			r.env["GITHUB_SHA"] = "fedcba9876543210fedcba9876543210fedcba98"
			assert.Empty(t, r.publish(problems(3, true)))
			runs := srv.CheckRuns()
			require.Len(t, runs, 1)
			assert.Equal(t, headSHA, runs[0].HeadSHA)
			require.Len(t, srv.Comments(prNumber), 1)
		})
	}
}

// A check run can be updated only by the GitHub App that created it: GitHub
// answers 403 "Invalid app_id `15368` - check run can only be modified by the
// GitHub App that created it." ("Update a check run"). A rerun on the same
// commit with another app's token (the workflow token's run, then a GitHub
// App's token from actions/create-github-app-token; or back) creates its own
// run of that name with every annotation, which GitHub shows as the newest,
// instead of giving up with a notice that the token may not write checks; the
// next run of that token updates its own run. A token that may not write
// checks at all still gets the notice (its create is refused too).
func TestCheckRunOfAnotherApp(t *testing.T) {
	srv := githubtest.New("octo", "repo", actionsTestToken, prNumber)
	defer srv.Close()
	r := checkRunner(t, srv)
	assert.Empty(t, r.publish(problems(60, true)))
	require.Len(t, srv.CheckRuns(), 1)
	assert.Equal(t, "github-actions", srv.CheckRuns()[0].App)

	srv.BotLogin = "my-app[bot]"
	for run := 1; run <= 2; run++ {
		r = checkRunner(t, srv)
		assert.Empty(t, r.publish(problems(60, false)), "run %d", run)
		out := r.stdout.String()
		assert.NotContains(t, out, "::notice::retrieval-gate: no check run", "run %d", run)
		assert.NotContains(t, out, "::error file=", "run %d: the check run carries the annotations", run)
		runs := srv.CheckRuns()
		require.Len(t, runs, 2, "run %d: one run of the App's next to the workflow token's", run)
		assert.Equal(t, "my-app", runs[1].App)
		assert.Equal(t, "success", runs[1].Conclusion)
		assert.Len(t, runs[1].Annotations, 60, "run %d: every annotation, once", run)
		assert.Equal(t, "failure", runs[0].Conclusion, "the other app's run is left as it was")
		if run == 1 {
			assert.Contains(t, r.stderr.String(), "retrieval-gate: check run created")
			assert.Contains(t, r.stderr.String(), `the commit's check run "retrieval-gate" was made by another GitHub App (another token), which alone may update it: this new run replaces it`)
		} else {
			assert.Contains(t, r.stderr.String(), "retrieval-gate: check run updated")
		}
	}

	// An App's token without checks: write: refused on the update and on the
	// create, the notice as before.
	srv.BotLogin = "other-app[bot]"
	srv.DenyChecks(true)
	r = checkRunner(t, srv)
	assert.Empty(t, r.publish(problems(3, true)))
	assert.Contains(t, r.stdout.String(), "::notice::retrieval-gate: no check run: the token may not write checks")
	assert.Len(t, srv.CheckRuns(), 2)
}

// A check run's annotation shows its path, title and message on the pull
// request's diff: a bidi control there (a hostile file name, a server's text
// in a message) is shown, (U+202E), as in the workflow commands
// (github.CommandText), and the rerun compares what it sent: the same run is
// updated, nothing replaced. At the base commit the controls reached GitHub.
func TestCheckRunAnnotationsShowBidiControls(t *testing.T) {
	srv := githubtest.New("octo", "repo", actionsTestToken, prNumber)
	defer srv.Close()
	pub := func() Publication {
		p := problems(1, true)
		p.Annotations[0].File = "eval/a\u202egnp.jsonl"
		p.Annotations[0].Title = "gold \u2067id\u2069"
		p.Annotations[0].Message = "case c1: \u200fgold id \"\u061cg\" \x1b[8mx"
		return p
	}
	r := checkRunner(t, srv)
	assert.Empty(t, r.publish(pub()))
	runs := srv.CheckRuns()
	require.Len(t, runs, 1)
	require.Len(t, runs[0].Annotations, 1)
	a := runs[0].Annotations[0]
	assert.Equal(t, "eval/a(U+202E)gnp.jsonl", a.Path)
	assert.Equal(t, "gold (U+2067)id(U+2069)", a.Title)
	assert.Equal(t, `case c1: (U+200F)gold id "(U+061C)g" \x1b[8mx`, a.Message)

	r2 := checkRunner(t, srv)
	assert.Empty(t, r2.publish(pub()))
	runs = srv.CheckRuns()
	require.Len(t, runs, 1, "the rerun updates the run")
	assert.Len(t, runs[0].Annotations, 1)
	assert.NotContains(t, r2.stderr.String(), "had annotations this run no longer has")
}
