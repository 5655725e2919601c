package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fastjson"

	"github.com/retrieval-gate/retrieval-gate/internal/github/githubtest"
	"github.com/retrieval-gate/retrieval-gate/internal/history"
	"github.com/retrieval-gate/retrieval-gate/internal/history/ghbranch"
	"github.com/retrieval-gate/retrieval-gate/internal/llm/llmtest"
)

const branchToken = "ghs_branchS3cret"

// branchRun runs args as a step of a workflow run: the event (name and payload),
// GITHUB_REF, the fake's API; it returns the exit code, the raw stdout (the
// workflow commands) and stderr.
func branchRun(t *testing.T, srv *githubtest.Server, event, ref, payload string, extra map[string]string, args ...string) (int, string, string) {
	t.Helper()
	env, _, _ := actionsEnv(t, map[string]string{"GITHUB_EVENT_NAME": event, "GITHUB_REF": ref, "GITHUB_API_URL": srv.APIURL(),
		"GITHUB_TOKEN": branchToken, "INPUT_GITHUB-TOKEN": branchToken, "GITHUB_REF_NAME": strings.TrimPrefix(ref, "refs/heads/")})
	for k, v := range extra {
		env[k] = v
	}
	require.NoError(t, os.WriteFile(env["GITHUB_EVENT_PATH"], []byte(payload), 0o644))
	var out, errb bytes.Buffer
	f := NewFactory(&Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return env[k] }})
	f.Sleep = func(context.Context, time.Duration) error { return nil }
	code := RunFactory(context.Background(), f, args)
	return code, out.String(), errb.String()
}

func pushPayload(fork bool) string {
	return fmt.Sprintf(`{"ref":"refs/heads/main","repository":{"full_name":"octo/repo","default_branch":"main","fork":%t}}`, fork)
}

// Two pushes to the default branch append to the history branch (the first
// creates it); report --history renders the fetched file; the page on the
// branch lists both runs with links to their reports.
func TestHistoryBranchEndToEnd(t *testing.T) {
	srv := githubtest.New("octo", "repo", branchToken)
	defer srv.Close()
	dir := t.TempDir()
	cases, kb := writeCheckFixture(t, dir, 200)
	var codes []int
	for i, sha := range []string{"1111111111111111111111111111111111111111", "2222222222222222222222222222222222222222"} {
		html := filepath.Join(dir, fmt.Sprintf("r%d.html", i))
		code, stdout, stderr := branchRun(t, srv, "push", "refs/heads/main", pushPayload(false),
			map[string]string{"GITHUB_SHA": sha, "SOURCE_DATE_EPOCH": fmt.Sprint(1767225600 + 86400*i)},
			"check", "--cases", cases, "--kb", kb, "--json", filepath.Join(dir, fmt.Sprintf("a%d.json", i)), "--html", html, "--history-branch", ghbranch.DefaultBranch)
		codes = append(codes, code)
		assert.NotContains(t, stdout, "history branch", "no warning about the branch (run %d)", i)
		assert.Contains(t, stderr, `retrieval-gate: history: branch "retrieval-gate-history"`)
		assert.NotContains(t, strings.ReplaceAll(stdout, "::add-mask::"+branchToken, "")+stderr, branchToken)
	}
	assert.Equal(t, codes[0], codes[1])

	files := srv.Files(ghbranch.DefaultBranch)
	assert.Equal(t, []string{".nojekyll", "history.jsonl", "index.html",
		"reports/20260101T000000Z-111111111111-check.html", "reports/20260102T000000Z-222222222222-check.html"}, files)
	assert.Len(t, srv.Commits(ghbranch.DefaultBranch), 1+3, "one commit creating the branch, then report, history, page")

	h, ok := srv.File(ghbranch.DefaultBranch, "history.jsonl")
	require.True(t, ok)
	var reports []string
	require.NoError(t, history.ScanReader(context.Background(), "history.jsonl", bytes.NewReader(h), func(r history.Record, _ *fastjson.Value) error {
		reports = append(reports, r.Report)
		assert.Equal(t, "main", r.Branch)
		return nil
	}))
	assert.Equal(t, []string{"reports/20260101T000000Z-111111111111-check.html", "reports/20260102T000000Z-222222222222-check.html"}, reports)
	rep, _ := srv.File(ghbranch.DefaultBranch, reports[1])
	local, err := os.ReadFile(filepath.Join(dir, "r1.html"))
	require.NoError(t, err)
	assert.Equal(t, local, rep, "the run's --html report, stored as written")

	// The fetched file is a history report --history reads.
	fetched := filepath.Join(dir, "fetched", "history.jsonl")
	require.NoError(t, os.MkdirAll(filepath.Dir(fetched), 0o755))
	require.NoError(t, os.WriteFile(fetched, h, 0o644))
	env, out, errb := checkEnv("")
	page := filepath.Join(dir, "history.html")
	require.Equal(t, 0, Run(context.Background(), env, []string{"report", "--history", fetched, "--html", page}), errb.String())
	assert.Contains(t, out.String(), "2 runs of check")
	idx, _ := srv.File(ghbranch.DefaultBranch, "index.html")
	assert.Contains(t, string(idx), `<a href="reports/20260102T000000Z-222222222222-check.html">report</a>`)
	assert.Contains(t, string(idx), `<a href="reports/20260101T000000Z-111111111111-check.html">report</a>`)
	// The branch's page is the page report --history renders, but for the
	// file it names and the report links.
	own, err := os.ReadFile(page)
	require.NoError(t, err)
	assert.Contains(t, string(own), "2 runs of check")

	// A pull request's comment shows the trend of the base branch's runs, read
	// from the history branch (reads are fine from pull requests); it writes nothing.
	before := srv.Commits(ghbranch.DefaultBranch)
	md := filepath.Join(dir, "pr.md")
	prPayload := `{"number":7,"pull_request":{"number":7,"head":{"repo":{"full_name":"fork/repo"}},"base":{"repo":{"full_name":"octo/repo"}}},"repository":{"default_branch":"main"}}`
	code, stdout, _ := branchRun(t, srv, "pull_request", "refs/pull/7/merge", prPayload,
		map[string]string{"GITHUB_SHA": strings.Repeat("3", 40), "GITHUB_BASE_REF": "main", "GITHUB_HEAD_REF": "feature"},
		"check", "--cases", cases, "--kb", kb, "--json", filepath.Join(dir, "pr.json"), "--markdown", md, "--comment", "never", "--history-branch", ghbranch.DefaultBranch)
	assert.Equal(t, codes[0], code)
	prMD, err := os.ReadFile(md)
	require.NoError(t, err)
	assert.Contains(t, string(prMD), "Trend on main: the last 2 runs of check")
	assert.Contains(t, stdout, `::notice::retrieval-gate: the history branch "retrieval-gate-history" was not written: the event is "pull_request"`)
	assert.Equal(t, before, srv.Commits(ghbranch.DefaultBranch), "nothing written from a pull request")

	// A history branch that cannot be read: no trend, a warning, the same exit code.
	code, stdout, _ = branchRun(t, srv, "pull_request", "refs/pull/7/merge", prPayload,
		map[string]string{"GITHUB_BASE_REF": "main", "GITHUB_REPOSITORY": "octo/gone"},
		"check", "--cases", cases, "--kb", kb, "--json", filepath.Join(dir, "pr2.json"), "--markdown", md, "--comment", "never", "--history-branch", ghbranch.DefaultBranch)
	assert.Equal(t, codes[0], code)
	assert.Contains(t, stdout, `::warning::retrieval-gate: no trend: the history branch "retrieval-gate-history" could not be read: --history-branch: could not read the repository: GitHub answered 404 Not Found`)
	prMD, err = os.ReadFile(md)
	require.NoError(t, err)
	assert.NotContains(t, string(prMD), "Trend on")

	// report --history-branch reads the branch itself, outside Actions too
	// (reading needs no default-branch run), and says so when there is none.
	vars := map[string]string{"GITHUB_REPOSITORY": "octo/repo", "GITHUB_API_URL": srv.APIURL(), "GITHUB_TOKEN": branchToken}
	env2, out2, errb2 := checkEnv("")
	env2.Getenv = func(k string) string { return vars[k] }
	page2 := filepath.Join(dir, "branch.html")
	require.Equal(t, 0, Run(context.Background(), env2, []string{"report", "--history-branch", ghbranch.DefaultBranch, "--html", page2}), errb2.String())
	assert.Contains(t, out2.String(), "retrieval-gate report: 2 runs of check")
	b2, err := os.ReadFile(page2)
	require.NoError(t, err)
	assert.Equal(t, strings.Replace(string(own), filepath.Clean(fetched), "retrieval-gate-history:history.jsonl", 1), string(b2),
		"the same page as from the fetched file, but for the name of the history")
	env3, _, errb3 := checkEnv("")
	env3.Getenv = env2.Getenv
	assert.NotEqual(t, 0, Run(context.Background(), env3, []string{"report", "--history-branch", "nope", "--html", filepath.Join(dir, "n.html")}))
	assert.Contains(t, errb3.String(), `--history-branch: octo/repo has no branch "nope" holding history.jsonl`)
	assert.NoFileExists(t, filepath.Join(dir, "n.html"))
}

// Pull requests, forks and other branches write nothing and say why once; a
// read-only token is a warning; neither changes the exit code.
func TestHistoryBranchGating(t *testing.T) {
	dir := t.TempDir()
	cases, kb := writeCheckFixture(t, dir, 50)
	args := []string{"check", "--cases", cases, "--kb", kb, "--comment", "never", "--json", filepath.Join(dir, "agg.json"), "--history-branch", "hist"}
	env, _, _ := checkEnv("")
	want := Run(context.Background(), env, []string{"check", "--cases", cases, "--kb", kb})
	for _, tc := range []struct {
		name, event, ref, payload string
		readOnly                  bool
		notice, warning           string
	}{
		{"pull request", "pull_request", "refs/pull/7/merge", `{"number":7,"pull_request":{"number":7,"head":{"repo":{"full_name":"octo/repo"}},"base":{"repo":{"full_name":"octo/repo"}}},"repository":{"default_branch":"main"}}`, false,
			`::notice::retrieval-gate: the history branch "hist" was not written: the event is "pull_request"`, ""},
		{"fork pull request", "pull_request", "refs/pull/8/merge", `{"number":8,"pull_request":{"number":8,"head":{"repo":{"full_name":"evil/repo"}},"base":{"repo":{"full_name":"octo/repo"}}},"repository":{"default_branch":"main"}}`, false,
			"never by pull requests", ""},
		{"push to a feature branch", "push", "refs/heads/feature", `{"repository":{"default_branch":"main","fork":false}}`, false,
			"not the default branch refs/heads/main", ""},
		{"a fork's push", "push", "refs/heads/main", pushPayload(true), false, "this repository is a fork", ""},
		{"read-only token", "push", "refs/heads/main", pushPayload(false), true, "",
			`::warning::retrieval-gate: the run was not appended to the history branch "hist": could not create branch hist: GitHub answered 403 Resource not accessible by integration; give the job `},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := githubtest.New("octo", "repo", branchToken)
			defer srv.Close()
			srv.ReadOnly = tc.readOnly
			code, stdout, _ := branchRun(t, srv, tc.event, tc.ref, tc.payload, nil, args...)
			assert.Equal(t, want, code, "the exit code is the gate's")
			assert.Nil(t, srv.Files("hist"))
			if tc.notice != "" {
				assert.Contains(t, stdout, tc.notice)
				assert.Equal(t, 1, strings.Count(stdout, "retrieval-gate: the history branch"), "said once")
				for _, r := range srv.Requests() {
					assert.Equal(t, "GET", r.Method, "nothing is written (the trend reads): %s %s", r.Method, r.Path)
				}
			}
			if tc.warning != "" {
				assert.Contains(t, stdout, tc.warning)
				assert.Contains(t, stdout, "permissions: contents: write")
			}
			assert.NotContains(t, strings.ReplaceAll(stdout, "::add-mask::"+branchToken, ""), branchToken)
		})
	}
}

// Outside Actions --history-branch is a usage error (exit 2), nothing written;
// a bad branch name too.
func TestHistoryBranchRefused(t *testing.T) {
	dir := t.TempDir()
	cases, kb := writeCheckFixture(t, dir, 10)
	js := filepath.Join(dir, "a.json")
	env, _, errb := checkEnv("")
	assert.Equal(t, ExitInput, Run(context.Background(), env, []string{"check", "--cases", cases, "--kb", kb, "--json", js, "--history-branch", "retrieval-gate-history"}))
	assert.Contains(t, errb.String(), "check: --history-branch writes the history through GitHub's API from a GitHub Actions run on the default branch, and this is not one")
	assert.NoFileExists(t, js)

	srv := githubtest.New("octo", "repo", branchToken)
	defer srv.Close()
	code, stdout, _ := branchRun(t, srv, "push", "refs/heads/main", pushPayload(false), nil, "compare", "--qrels", "x", "--run", "a=y", "--history-branch", "bad..name")
	assert.Equal(t, ExitInput, code)
	assert.Contains(t, stdout, `compare: --history-branch: "bad..name" is not a branch name`)
	assert.Empty(t, srv.Requests())
}

// evaluate --history-branch: a push run appends its record (command evaluate,
// the compare stage's document) with its dashboard as the run's report, and
// --html writes the same dashboard; a pull request's run writes nothing and
// says so once.
func TestEvaluateHistoryBranch(t *testing.T) {
	srv := githubtest.New("octo", "repo", branchToken)
	defer srv.Close()
	llm := llmtest.New(llmtest.Options{})
	defer llm.Close()
	dir := t.TempDir()
	kb := filepath.Join(dir, "kb.jsonl")
	require.NoError(t, os.WriteFile(kb, []byte(evaluateKB), 0o644))
	args := func(out, html string) []string {
		return []string{"evaluate", "--kb", kb, "--out", out, "--judge-url", llm.URL, "--judge-model", "fake", "--per-locale", "2", "--k", "3",
			"--bootstrap", "100", "--comment", "never", "--html", html, "--history-branch", ghbranch.DefaultBranch}
	}
	out, html := filepath.Join(dir, "out"), filepath.Join(dir, "dash.html")
	code, stdout, stderr := branchRun(t, srv, "push", "refs/heads/main", pushPayload(false),
		map[string]string{"GITHUB_SHA": strings.Repeat("4", 40), "SOURCE_DATE_EPOCH": "1767225600", "GITHUB_WORKSPACE": dir}, args(out, html)...)
	require.Equal(t, 0, code, stdout+stderr)
	assert.Contains(t, stderr, `retrieval-gate: history: branch "retrieval-gate-history" created, with the run in history.jsonl (1 commit)`)
	assert.NotContains(t, stdout, "::warning::")

	dash, err := os.ReadFile(filepath.Join(out, "compare.html"))
	require.NoError(t, err)
	own, err := os.ReadFile(html)
	require.NoError(t, err)
	assert.Equal(t, dash, own, "--html is the dashboard")
	assert.Equal(t, []string{".nojekyll", "history.jsonl", "index.html", "reports/20260101T000000Z-444444444444-evaluate.html"}, srv.Files(ghbranch.DefaultBranch))
	rep, _ := srv.File(ghbranch.DefaultBranch, "reports/20260101T000000Z-444444444444-evaluate.html")
	assert.Equal(t, dash, rep, "the dashboard is the run's report")
	h, _ := srv.File(ghbranch.DefaultBranch, "history.jsonl")
	var cmds []string
	require.NoError(t, history.ScanReader(context.Background(), "history.jsonl", bytes.NewReader(h), func(r history.Record, doc *fastjson.Value) error {
		cmds = append(cmds, r.Command)
		assert.Equal(t, "retrieval-gate/compare@1", string(doc.GetStringBytes("schema")))
		assert.Equal(t, "reports/20260101T000000Z-444444444444-evaluate.html", r.Report)
		assert.NotEmpty(t, r.Fingerprint.Params["judge-prompt"])
		return nil
	}))
	assert.Equal(t, []string{"evaluate"}, cmds)
	idx, _ := srv.File(ghbranch.DefaultBranch, "index.html")
	assert.Contains(t, string(idx), "1 run of evaluate")

	before := srv.Commits(ghbranch.DefaultBranch)
	prPayload := `{"number":7,"pull_request":{"number":7,"head":{"repo":{"full_name":"octo/repo"}},"base":{"repo":{"full_name":"octo/repo"}}},"repository":{"default_branch":"main"}}`
	code, stdout, stderr = branchRun(t, srv, "pull_request", "refs/pull/7/merge", prPayload, map[string]string{"GITHUB_BASE_REF": "main", "GITHUB_HEAD_REF": "f"},
		args(filepath.Join(dir, "out2"), filepath.Join(dir, "dash2.html"))...)
	require.Equal(t, 0, code, stdout+stderr)
	assert.Equal(t, 1, strings.Count(stdout, `::notice::retrieval-gate: the history branch "retrieval-gate-history" was not written: the event is "pull_request"`), stdout)
	assert.Equal(t, before, srv.Commits(ghbranch.DefaultBranch), "nothing written from a pull request")
	assert.FileExists(t, filepath.Join(dir, "dash2.html"))
}
