package ghbranch_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/history"
	"github.com/retrieval-gate/retrieval-gate/internal/history/ghbranch"
)

func TestReportName(t *testing.T) {
	rec := history.Record{Command: "check", Commit: "ABCDEF0123456789", Time: "2026-03-04T05:06:07+02:00"}
	assert.Equal(t, "reports/20260304T030607Z-abcdef012345-check.html", ghbranch.ReportName(rec))
	assert.Equal(t, "reports/00000000T000000Z-nocommit-compare.html", ghbranch.ReportName(history.Record{Command: "compare", Commit: "zz", Time: "later"}))
}

// fakeBranch records what it is asked to append.
type fakeBranch struct {
	runs   []ghbranch.Run
	res    ghbranch.Result
	err    error
	found  bool
	reader io.Reader
}

func (f *fakeBranch) Read(context.Context, string) (io.Reader, bool, error) {
	return f.reader, f.found, f.err
}
func (f *fakeBranch) Append(_ context.Context, _ string, run ghbranch.Run) (ghbranch.Result, error) {
	f.runs = append(f.runs, run)
	return f.res, f.err
}

func TestWriteRun(t *testing.T) {
	dir := t.TempDir()
	event := filepath.Join(dir, "event.json")
	require.NoError(t, os.WriteFile(event, []byte(`{"repository":{"default_branch":"main","fork":false}}`), 0o600))
	html := filepath.Join(dir, "report.html")
	require.NoError(t, os.WriteFile(html, []byte("<html></html>"), 0o600))
	env := map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": "push", "GITHUB_REF": "refs/heads/main",
		"GITHUB_REPOSITORY": "octo/repo", "GITHUB_EVENT_PATH": event}
	getenv := func(k string) string { return env[k] }
	rec := history.Record{Command: "check", Commit: "0123456789abcdef", Time: "2026-03-04T05:06:07Z", Document: []byte(`{}`)}
	w := ghbranch.Write{Branch: "hist", Record: rec, HTML: html, Token: "t"}

	fb := &fakeBranch{res: ghbranch.Result{Created: true, Commits: 1, Recorded: true}}
	open := func(d ghbranch.Deps) (ghbranch.Branch, error) {
		assert.Equal(t, "octo/repo", d.Repo)
		assert.Equal(t, "t", d.Token)
		return fb, nil
	}
	out := ghbranch.WriteRun(context.Background(), getenv, open, w)
	assert.Empty(t, out.Warnings)
	assert.Empty(t, out.Notices)
	assert.Equal(t, `retrieval-gate: history: branch "hist" created, with the run in history.jsonl (1 commit)`, out.Done)
	require.Len(t, fb.runs, 1)
	assert.Equal(t, "reports/20260304T050607Z-0123456789ab-check.html", fb.runs[0].ReportPath)
	assert.Equal(t, "retrieval-gate: check 0123456789ab", fb.runs[0].Message)
	assert.Contains(t, string(fb.runs[0].Line), `"report":"reports/20260304T050607Z-0123456789ab-check.html"`)

	// No token: a warning, nothing opened.
	noToken := w
	noToken.Token = ""
	out = ghbranch.WriteRun(context.Background(), getenv, func(ghbranch.Deps) (ghbranch.Branch, error) { t.Fatal("opened"); return nil, nil }, noToken)
	require.Len(t, out.Warnings, 1)
	assert.Contains(t, out.Warnings[0], "there is no token")

	// A pull request may not write: one notice.
	env["GITHUB_EVENT_NAME"] = "pull_request"
	out = ghbranch.WriteRun(context.Background(), getenv, open, w)
	require.Len(t, out.Notices, 1)
	assert.True(t, strings.HasPrefix(out.Notices[0], `retrieval-gate: the history branch "hist" was not written: `), out.Notices[0])
	assert.Empty(t, out.Done)

	// A failed append: a warning that the verdict is unchanged.
	env["GITHUB_EVENT_NAME"] = "push"
	fb.err, fb.res = errors.New("boom"), ghbranch.Result{}
	out = ghbranch.WriteRun(context.Background(), getenv, open, w)
	require.Len(t, out.Warnings, 1)
	assert.Equal(t, `retrieval-gate: the run was not appended to the history branch "hist": boom. The verdict is unchanged`, out.Warnings[0])
}

func TestReadHistory(t *testing.T) {
	_, err := ghbranch.ReadHistory(context.Background(), &fakeBranch{}, "hist")
	require.ErrorIs(t, err, ghbranch.ErrNoHistory)
	r, err := ghbranch.ReadHistory(context.Background(), &fakeBranch{found: true, reader: strings.NewReader("x")}, "hist")
	require.NoError(t, err)
	b, _ := io.ReadAll(r)
	assert.Equal(t, "x", string(b))
}
