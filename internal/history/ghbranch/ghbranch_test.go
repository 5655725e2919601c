package ghbranch_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/github"
	"github.com/retrieval-gate/retrieval-gate/internal/github/githubtest"
	"github.com/retrieval-gate/retrieval-gate/internal/history/ghbranch"
	"github.com/retrieval-gate/retrieval-gate/internal/httpretry"
)

const token = "ghs_s3cretT0ken"

func init() {
	// Conflicts wait a few milliseconds, not hundreds.
	ghbranch.Sleep = func(ctx context.Context, d time.Duration) error {
		return httpretry.Sleep(ctx, d/50)
	}
}

// fastPolicy is Policy without real waits between retries.
func fastPolicy() *httpretry.Policy {
	p := ghbranch.Policy
	p.Sleep = func(context.Context, time.Duration) error { return nil }
	return &p
}

func newClient(t *testing.T, srv *githubtest.Server, base http.RoundTripper) *ghbranch.Client {
	t.Helper()
	c, err := ghbranch.New(ghbranch.Deps{APIURL: srv.APIURL(), Repo: "octo/repo", Token: token, Policy: fastPolicy(), Base: base})
	require.NoError(t, err)
	return c
}

func kindOf(err error) ghbranch.Kind {
	var e *ghbranch.Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return ghbranch.KindOther
}

func fake(t *testing.T) *githubtest.Server {
	t.Helper()
	srv := githubtest.New("octo", "repo", token)
	t.Cleanup(srv.Close)
	return srv
}

func rec(i int) []byte {
	return fmt.Appendf(nil, `{"command":"check","commit":"%040x","document":{},"schema":"retrieval-gate/history@1","time":"2026-01-02T00:00:%02dZ"}`+"\n", i, i%60)
}

// page is a stand-in renderer whose output is the history itself, so a test
// can tell which history a page was rendered from.
func page(_ context.Context, h []byte) ([]byte, error) {
	return append([]byte("<!doctype html>\n"), h...), nil
}

func TestAppendCreatesOrphanBranchThenAppends(t *testing.T) {
	srv := fake(t)
	c := newClient(t, srv, nil)
	ctx := context.Background()

	r, found, err := c.Read(ctx, ghbranch.DefaultBranch)
	require.NoError(t, err)
	assert.False(t, found, "no branch yet: no history, not an error")
	b, _ := io.ReadAll(r)
	assert.Empty(t, b)

	res, err := c.Append(ctx, ghbranch.DefaultBranch, ghbranch.Run{Line: rec(1), Page: page, Message: "retrieval-gate: check 1"})
	require.NoError(t, err)
	assert.Equal(t, ghbranch.Result{Created: true, Commits: 1, Attempts: 1, Recorded: true}, res)
	assert.Equal(t, []string{".nojekyll", "history.jsonl", "index.html"}, srv.Files(ghbranch.DefaultBranch))
	commits := srv.Commits(ghbranch.DefaultBranch)
	require.Len(t, commits, 1)
	assert.Equal(t, 0, commits[0].Parents, "an orphan branch: nothing of the default branch")
	assert.Equal(t, []string{"README.md"}, srv.Files("main"), "the default branch is untouched")

	report := []byte("<!doctype html><title>run 2</title>")
	res, err = c.Append(ctx, ghbranch.DefaultBranch, ghbranch.Run{Line: bytes.TrimSuffix(rec(2), []byte("\n")), Page: page,
		ReportPath: "reports/20260102T000002Z-000000000002-check.html", Report: report, Message: "retrieval-gate: check 2"})
	require.NoError(t, err)
	assert.Equal(t, ghbranch.Result{Commits: 3, Attempts: 1, Recorded: true}, res)
	h, _ := srv.File(ghbranch.DefaultBranch, "history.jsonl")
	assert.Equal(t, string(rec(1))+string(rec(2)), string(h), "appended, the newline added")
	idx, _ := srv.File(ghbranch.DefaultBranch, "index.html")
	assert.Equal(t, "<!doctype html>\n"+string(h), string(idx), "the page renders the whole history")
	got, _ := srv.File(ghbranch.DefaultBranch, "reports/20260102T000002Z-000000000002-check.html")
	assert.Equal(t, report, got)
	var msgs []string
	for _, c := range srv.Commits(ghbranch.DefaultBranch) {
		msgs = append(msgs, c.Message)
	}
	assert.Equal(t, []string{"retrieval-gate: check 2 (page)", "retrieval-gate: check 2", "retrieval-gate: check 2 (report)", "retrieval-gate: check 1"}, msgs,
		"the report first, then the history, then the page")

	r, found, err = c.Read(ctx, ghbranch.DefaultBranch)
	require.NoError(t, err)
	assert.True(t, found)
	b, _ = io.ReadAll(r)
	assert.Equal(t, h, b)

	for _, req := range srv.Requests() {
		assert.Equal(t, "Bearer "+token, req.Auth, "%s %s", req.Method, req.Path)
	}
}

// A history over the contents API's 1 MB inline limit is read through the git
// blobs API (the fake's limit lowered to 200 bytes).
func TestAppendReadsLargeHistoryThroughBlobs(t *testing.T) {
	srv := fake(t)
	srv.SetContentsInlineMax(200)
	var seed []byte
	for i := range 5 {
		seed = append(seed, rec(i)...)
	}
	srv.PutFile(ghbranch.DefaultBranch, "history.jsonl", seed)
	c := newClient(t, srv, nil)
	_, err := c.Append(context.Background(), ghbranch.DefaultBranch, ghbranch.Run{Line: rec(9), Message: "m"})
	require.NoError(t, err)
	h, _ := srv.File(ghbranch.DefaultBranch, "history.jsonl")
	assert.Equal(t, string(seed)+string(rec(9)), string(h))
	blobs := 0
	for _, r := range srv.Requests() {
		if r.Method == http.MethodGet && strings.Contains(r.Path, "/git/blobs/") {
			blobs++
		}
	}
	assert.Equal(t, 1, blobs)
}

// Writers that run at the same time all land, once each, and the last page
// written holds them all.
func TestConcurrentWriters(t *testing.T) {
	srv := fake(t)
	ctx := context.Background()
	const writers = 4
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for i := range writers {
		wg.Go(func() {
			c := newClient(t, srv, nil)
			_, errs[i] = c.Append(ctx, ghbranch.DefaultBranch, ghbranch.Run{Line: rec(i), Page: page, Message: fmt.Sprintf("run %d", i)})
		})
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	h, _ := srv.File(ghbranch.DefaultBranch, "history.jsonl")
	for i := range writers {
		assert.Equal(t, 1, strings.Count(string(h), string(rec(i))), "record %d exactly once", i)
	}
	assert.Equal(t, writers, strings.Count(string(h), "\n"))
	idx, _ := srv.File(ghbranch.DefaultBranch, "index.html")
	assert.Equal(t, "<!doctype html>\n"+string(h), string(idx))
	conflicts := 0
	for _, r := range srv.Requests() {
		if r.Method == http.MethodPost && strings.HasSuffix(r.Path, "/git/refs") {
			conflicts++
		}
	}
	assert.GreaterOrEqual(t, conflicts, 1)
}

// hook is a transport that runs before on each request first.
type hook struct {
	before func(r *http.Request)
	after  func(r *http.Request, resp *http.Response) (*http.Response, error)
}

func (h *hook) RoundTrip(r *http.Request) (*http.Response, error) {
	if h.before != nil {
		h.before(r)
	}
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil && h.after != nil {
		return h.after(r, resp)
	}
	return resp, err
}

func isHistoryPut(r *http.Request) bool {
	return r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/contents/history.jsonl")
}

// Another run's commit between the read and the write: GitHub's 409, then a
// re-read and a re-append.
func TestConflictRereads(t *testing.T) {
	srv := fake(t)
	srv.PutFile(ghbranch.DefaultBranch, "history.jsonl", rec(0))
	n := 0
	c := newClient(t, srv, &hook{before: func(r *http.Request) {
		if isHistoryPut(r) && n == 0 {
			n++
			h, _ := srv.File(ghbranch.DefaultBranch, "history.jsonl")
			srv.PutFile(ghbranch.DefaultBranch, "history.jsonl", append(h, rec(1)...))
		}
	}})
	res, err := c.Append(context.Background(), ghbranch.DefaultBranch, ghbranch.Run{Line: rec(2), Message: "m"})
	require.NoError(t, err)
	assert.Equal(t, 2, res.Attempts)
	h, _ := srv.File(ghbranch.DefaultBranch, "history.jsonl")
	assert.Equal(t, string(rec(0))+string(rec(1))+string(rec(2)), string(h))
	var statuses []string
	for _, r := range srv.Requests() {
		if r.Method == http.MethodPut {
			statuses = append(statuses, r.Path)
		}
	}
	assert.Len(t, statuses, 2)
}

// A write whose answer is lost (502 after GitHub committed it) is retried by
// httpretry, refused as stale (409), and the re-read finds the line: not twice.
func TestLostAnswerIsNotDuplicated(t *testing.T) {
	srv := fake(t)
	srv.PutFile(ghbranch.DefaultBranch, "history.jsonl", rec(0))
	lost := false
	c := newClient(t, srv, &hook{after: func(r *http.Request, resp *http.Response) (*http.Response, error) {
		if isHistoryPut(r) && !lost {
			lost = true
			resp.Body.Close()
			return &http.Response{StatusCode: http.StatusBadGateway, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(`{"message":"Bad Gateway"}`)), Request: r}, nil
		}
		return resp, nil
	}})
	res, err := c.Append(context.Background(), ghbranch.DefaultBranch, ghbranch.Run{Line: rec(1), Message: "m"})
	require.NoError(t, err)
	assert.True(t, res.Already)
	h, _ := srv.File(ghbranch.DefaultBranch, "history.jsonl")
	assert.Equal(t, string(rec(0))+string(rec(1)), string(h))
}

func TestConflictEveryTimeGivesUp(t *testing.T) {
	srv := fake(t)
	srv.PutFile(ghbranch.DefaultBranch, "history.jsonl", rec(0))
	i := 100
	c := newClient(t, srv, &hook{before: func(r *http.Request) {
		if isHistoryPut(r) {
			i++
			h, _ := srv.File(ghbranch.DefaultBranch, "history.jsonl")
			srv.PutFile(ghbranch.DefaultBranch, "history.jsonl", append(h, rec(i)...))
		}
	}})
	res, err := c.Append(context.Background(), ghbranch.DefaultBranch, ghbranch.Run{Line: rec(1), Message: "m"})
	require.Error(t, err)
	assert.Equal(t, ghbranch.KindConflict, kindOf(err))
	assert.Equal(t, ghbranch.MaxAttempts, res.Attempts)
	assert.False(t, res.Recorded)
}

func TestFailures(t *testing.T) {
	ctx := context.Background()
	t.Run("read-only token", func(t *testing.T) {
		srv := fake(t)
		srv.ReadOnly = true
		srv.PutFile(ghbranch.DefaultBranch, "history.jsonl", rec(0))
		_, err := newClient(t, srv, nil).Append(ctx, ghbranch.DefaultBranch, ghbranch.Run{Line: rec(1), Message: "m"})
		require.Error(t, err)
		var e *ghbranch.Error
		require.ErrorAs(t, err, &e)
		assert.Equal(t, ghbranch.KindForbidden, e.Kind)
		assert.Equal(t, 403, e.Status)
		assert.Contains(t, e.Error(), "Resource not accessible by integration")
		assert.Contains(t, e.Fix(), "permissions: contents: write")
		assert.NotContains(t, e.Error(), token)
	})
	t.Run("read-only token, no branch yet", func(t *testing.T) {
		srv := fake(t)
		srv.ReadOnly = true
		_, err := newClient(t, srv, nil).Append(ctx, ghbranch.DefaultBranch, ghbranch.Run{Line: rec(1), Message: "m"})
		assert.Equal(t, ghbranch.KindForbidden, kindOf(err))
		assert.Nil(t, srv.Files(ghbranch.DefaultBranch))
	})
	t.Run("no such repository", func(t *testing.T) {
		srv := fake(t)
		c, err := ghbranch.New(ghbranch.Deps{APIURL: srv.APIURL(), Repo: "octo/other", Token: token, Policy: fastPolicy()})
		require.NoError(t, err)
		_, err = c.Append(ctx, ghbranch.DefaultBranch, ghbranch.Run{Line: rec(1), Message: "m"})
		assert.Equal(t, ghbranch.KindNotFound, kindOf(err), "%v", err)
		_, _, err = c.Read(ctx, ghbranch.DefaultBranch)
		assert.Equal(t, ghbranch.KindNotFound, kindOf(err), "a missing repository is not an empty history")
	})
	t.Run("bad token", func(t *testing.T) {
		srv := fake(t)
		c, err := ghbranch.New(ghbranch.Deps{APIURL: srv.APIURL(), Repo: "octo/repo", Token: "wrong-secret", Policy: fastPolicy()})
		require.NoError(t, err)
		_, err = c.Append(ctx, ghbranch.DefaultBranch, ghbranch.Run{Line: rec(1), Message: "m"})
		assert.Equal(t, ghbranch.KindUnauthorized, kindOf(err))
		assert.NotContains(t, err.Error(), "wrong-secret")
	})
	t.Run("secondary rate limit is waited out", func(t *testing.T) {
		srv := fake(t)
		srv.PutFile(ghbranch.DefaultBranch, "history.jsonl", rec(0))
		srv.Queue(githubtest.SecondaryRateLimit(http.MethodPut, http.StatusTooManyRequests, 1), githubtest.SecondaryRateLimit(http.MethodPut, http.StatusForbidden, 1))
		_, err := newClient(t, srv, nil).Append(ctx, ghbranch.DefaultBranch, ghbranch.Run{Line: rec(1), Message: "m"})
		require.NoError(t, err)
		h, _ := srv.File(ghbranch.DefaultBranch, "history.jsonl")
		assert.Equal(t, string(rec(0))+string(rec(1)), string(h))
	})
	t.Run("primary rate limit an hour away", func(t *testing.T) {
		srv := fake(t)
		srv.Queue(githubtest.PrimaryRateLimit(http.MethodGet, time.Now(), time.Hour))
		_, err := newClient(t, srv, nil).Append(ctx, ghbranch.DefaultBranch, ghbranch.Run{Line: rec(1), Message: "m"})
		assert.Equal(t, ghbranch.KindRateLimited, kindOf(err), "%v", err)
	})
	t.Run("server errors exhaust the retries", func(t *testing.T) {
		srv := fake(t)
		for range 4 {
			srv.Queue(githubtest.ServerError(http.MethodGet, http.StatusBadGateway))
		}
		_, err := newClient(t, srv, nil).Append(ctx, ghbranch.DefaultBranch, ghbranch.Run{Line: rec(1), Message: "m"})
		assert.Equal(t, ghbranch.KindServer, kindOf(err), "%v", err)
	})
	t.Run("a directory where the history should be", func(t *testing.T) {
		srv := fake(t)
		srv.PutFile(ghbranch.DefaultBranch, "history.jsonl/x", []byte("x"))
		_, err := newClient(t, srv, nil).Append(ctx, ghbranch.DefaultBranch, ghbranch.Run{Line: rec(1), Message: "m"})
		assert.Equal(t, ghbranch.KindInvalid, kindOf(err), "%v", err)
	})
	t.Run("an answer longer than a 100 MB file: refused before it is read", func(t *testing.T) {
		srv := fake(t)
		var read atomic.Int64
		base := roundTripper(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}}, Request: r,
				ContentLength: 1 << 40, Body: io.NopCloser(countingZeros{&read})}, nil
		})
		_, _, err := newClient(t, srv, base).Read(ctx, ghbranch.DefaultBranch)
		assert.Equal(t, ghbranch.KindTooLarge, kindOf(err), "%v", err)
		assert.Zero(t, read.Load(), "bytes read of the answer")
	})
	t.Run("not one line", func(t *testing.T) {
		srv := fake(t)
		_, err := newClient(t, srv, nil).Append(ctx, ghbranch.DefaultBranch, ghbranch.Run{Line: []byte("a\nb\n"), Message: "m"})
		require.Error(t, err)
		assert.Empty(t, srv.Requests())
	})
}

func TestValidBranch(t *testing.T) {
	for _, ok := range []string{"retrieval-gate-history", "gh-pages", "data/history", "v1.2_x"} {
		require.NoError(t, ghbranch.ValidBranch(ok), ok)
	}
	for _, bad := range []string{"", "a..b", "a//b", "-x", "/x", "x/", "x.", "x.lock", "a/.b", "a b", "a~b", "a^b", "a:b", "a?b", "a*b", "a[b", `a\b`, "a@{b", "HEAD", "ü", strings.Repeat("a", 201)} {
		assert.Error(t, ghbranch.ValidBranch(bad), bad)
	}
}

// The writer's gating, over the event payloads GitHub sends.
func TestWriteAllowed(t *testing.T) {
	repo := func(def string, fork bool) string {
		return fmt.Sprintf(`"repository":{"full_name":"octo/repo","default_branch":%q,"fork":%t}`, def, fork)
	}
	for _, tc := range []struct {
		name, event, ref, payload string
		actions                   bool
		ok                        bool
		why                       string
	}{
		{"push to the default branch", "push", "refs/heads/main", `{"ref":"refs/heads/main",` + repo("main", false) + `}`, true, true, ""},
		{"schedule", "schedule", "refs/heads/trunk", `{` + repo("trunk", false) + `}`, true, true, ""},
		{"workflow_dispatch on the default branch", "workflow_dispatch", "refs/heads/main", `{"ref":"refs/heads/main",` + repo("main", false) + `}`, true, true, ""},
		{"push to another branch", "push", "refs/heads/feature", `{"ref":"refs/heads/feature",` + repo("main", false) + `}`, true, false, `GITHUB_REF is "refs/heads/feature", not the default branch refs/heads/main`},
		{"workflow_dispatch on another branch", "workflow_dispatch", "refs/heads/dev", `{` + repo("main", false) + `}`, true, false, "not the default branch"},
		{"push of a tag", "push", "refs/tags/v1", `{` + repo("main", false) + `}`, true, false, "not the default branch"},
		{"pull request", "pull_request", "refs/pull/7/merge", `{"number":7,"pull_request":{"number":7,"head":{"repo":{"full_name":"octo/repo"}},"base":{"repo":{"full_name":"octo/repo"}}},` + repo("main", false) + `}`, true, false, `the event is "pull_request"`},
		{"pull request from a fork", "pull_request", "refs/pull/8/merge", `{"number":8,"pull_request":{"number":8,"head":{"repo":{"full_name":"fork/repo"}},"base":{"repo":{"full_name":"octo/repo"}}},` + repo("main", false) + `}`, true, false, "never by pull requests"},
		{"pull_request_target on the default branch", "pull_request_target", "refs/heads/main", `{"number":9,"pull_request":{"number":9},` + repo("main", false) + `}`, true, false, `the event is "pull_request_target"`},
		{"issue_comment", "issue_comment", "refs/heads/main", `{"issue":{"number":3},` + repo("main", false) + `}`, true, false, `the event is "issue_comment"`},
		{"merge queue", "merge_group", "refs/heads/gh-readonly-queue/main/pr-1", `{"merge_group":{"base_ref":"refs/heads/main"},` + repo("main", false) + `}`, true, false, `the event is "merge_group"`},
		{"a fork's own push to its default branch", "push", "refs/heads/main", `{"ref":"refs/heads/main",` + repo("main", true) + `}`, true, false, "this repository is a fork"},
		{"payload without a repository", "push", "refs/heads/main", `{}`, true, false, "names no default branch"},
		{"outside Actions", "push", "refs/heads/main", `{` + repo("main", false) + `}`, false, false, "not a GitHub Actions run"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := filepath.Join(t.TempDir(), "event.json")
			require.NoError(t, os.WriteFile(ev, []byte(tc.payload), 0o644))
			env := map[string]string{"GITHUB_EVENT_NAME": tc.event, "GITHUB_REF": tc.ref, "GITHUB_EVENT_PATH": ev}
			if tc.actions {
				env["GITHUB_ACTIONS"] = "true"
			}
			a, err := github.ReadActions(func(k string) string { return env[k] }, io.Discard)
			require.NoError(t, err)
			ok, why := ghbranch.WriteAllowed(a)
			assert.Equal(t, tc.ok, ok)
			if tc.why == "" {
				assert.Empty(t, why)
			} else {
				assert.Contains(t, why, tc.why)
			}
		})
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// countingZeros reads zeros for ever, counting them.
type countingZeros struct{ n *atomic.Int64 }

func (z countingZeros) Read(p []byte) (int, error) {
	clear(p)
	z.n.Add(int64(len(p)))
	return len(p), nil
}
