//go:build unix

package signals

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestServiceSignals: every wait on a service (an embedder, Chroma, a
// reranker, a chat server, GitHub's and GitLab's APIs) stops within a second
// of SIGINT or SIGTERM, exit 2, nothing written, whether the server never
// answers or sends its headers and then stalls the body. The signal comes once
// the stand-in has the command's request: the command is then waiting on it.
func TestServiceSignals(t *testing.T) {
	demo := demoDir(t)
	cases, kb := filepath.Join(demo, "cases.jsonl"), filepath.Join(demo, "kb")
	retrieve := func(out string, extra ...string) []string {
		return append([]string{"retrieve", "--kb", kb, "--cases", cases, "--out", filepath.Join(out, "run.jsonl")}, extra...)
	}
	check := func(out string, extra ...string) []string {
		return append([]string{"check", "--cases", cases, "--kb", kb, "--json", filepath.Join(out, "agg.json"),
			"--markdown", filepath.Join(out, "r.md"), "--comment", "never"}, extra...)
	}
	type scenario struct {
		name    string
		sig     syscall.Signal
		headers bool // the stand-in sends its headers, then stalls the body
		setup   func(t *testing.T, dir, out, url string) ([]string, []string)
	}
	scenarios := []scenario{
		{"retrieve/embedder-never-answers", syscall.SIGINT, false, func(t *testing.T, dir, out, url string) ([]string, []string) {
			return retrieve(out, "--embedder", "openai", "--embedder-url", url, "--embedder-model", "m"), nil
		}},
		{"retrieve/embedder-body-stalls", syscall.SIGTERM, true, func(t *testing.T, dir, out, url string) ([]string, []string) {
			return retrieve(out, "--embedder", "ollama", "--embedder-url", url, "--embedder-model", "m"), nil
		}},
		{"retrieve/chroma-never-answers", syscall.SIGTERM, false, func(t *testing.T, dir, out, url string) ([]string, []string) {
			return retrieve(out, "--chroma-url", url), nil
		}},
		{"retrieve/reranker-body-stalls", syscall.SIGINT, true, func(t *testing.T, dir, out, url string) ([]string, []string) {
			return retrieve(out, "--rerank-url", url), nil
		}},
		{"generate/server-body-stalls", syscall.SIGTERM, true, func(t *testing.T, dir, out, url string) ([]string, []string) {
			return []string{"generate", "--kb", kb, "--out", filepath.Join(out, "cases.jsonl"), "--generator-url", url, "--generator-model", "m"}, nil
		}},
		{"judge/server-body-stalls", syscall.SIGINT, true, func(t *testing.T, dir, out, url string) ([]string, []string) {
			return []string{"judge", "--kb", kb, "--k", "2", "--run", "demo=" + cases, "--judge-url", url, "--judge-model", "m", "--cache", "none",
				"--qrels", filepath.Join(out, "out.qrels"), "--json", filepath.Join(out, "report.json")}, nil
		}},
		{"check/baseline-auto-github-body-stalls", syscall.SIGINT, true, func(t *testing.T, dir, out, url string) ([]string, []string) {
			return check(out, "--baseline", "auto"), githubEnv(t, dir, url, "pull_request", `{"number":7,"pull_request":{"number":7,"base":{"ref":"main"}}}`)
		}},
		{"check/baseline-auto-gitlab-never-answers", syscall.SIGTERM, false, func(t *testing.T, dir, out, url string) ([]string, []string) {
			return check(out, "--baseline", "auto"), []string{"GITLAB_CI=true", "CI_API_V4_URL=" + url + "/api/v4", "CI_PROJECT_ID=7",
				"CI_MERGE_REQUEST_TARGET_BRANCH_NAME=main", "CI_JOB_TOKEN=job-token-0123456789", "GITLAB_TOKEN="}
		}},
		{
			// The history branch is read (for the trend) before the outputs
			// are written: a signal during that read was taken for a branch
			// that could not be read, a warning, and check went on to write
			// its reports and exit 0.
			"check/history-branch-read-never-answers", syscall.SIGINT, false, func(t *testing.T, dir, out, url string) ([]string, []string) {
				return check(out, "--history-branch", "rg-history"), githubEnv(t, dir, url, "push", `{"repository":{"default_branch":"main"}}`)
			},
		},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			const after = 200 * time.Millisecond // after the stand-in has the request
			for attempt := 1; ; attempt++ {
				if !signalLaunch(t, func(t *testing.T, dir, out string) launch {
					url, ready := stallServer(t, sc.headers)
					args, env := sc.setup(t, dir, out, url)
					return launch{args: args, env: env, ready: ready}
				}, sc.sig, after, attempt == 4) {
					return
				}
				t.Logf("attempt %d: killed by %v before its handler was installed", attempt, sc.sig)
			}
		})
	}
}

// githubEnv is a GitHub Actions run of event (its payload, written to dir)
// on the default branch main of octo/repo, whose API is at api. The runner's
// files are unset: a test run inside Actions writes nothing to its own.
func githubEnv(t *testing.T, dir, api, event, payload string) []string {
	t.Helper()
	ev := filepath.Join(dir, "event.json")
	writeFile(t, ev, payload)
	return []string{"GITHUB_ACTIONS=true", "GITHUB_API_URL=" + api, "GITHUB_REPOSITORY=octo/repo", "GITHUB_TOKEN=ghs_signals0123456789",
		"GITHUB_EVENT_NAME=" + event, "GITHUB_EVENT_PATH=" + ev, "GITHUB_REF=refs/heads/main", "GITHUB_REF_NAME=main", "GITHUB_BASE_REF=main",
		"GITHUB_SHA=0123456789abcdef0123456789abcdef01234567", "GITHUB_RUN_ID=5", "GITHUB_WORKFLOW=ci",
		"GITHUB_STEP_SUMMARY=", "GITHUB_OUTPUT=", "GITHUB_ENV=", "GITHUB_STATE=", "INPUT_GITHUB-TOKEN="}
}

// stallServer is a stand-in that never finishes an answer: it reads each
// request and then either never answers (headers false) or answers 200 with
// its headers and the start of a JSON body, then sends nothing more. ready is
// closed at the first request.
func stallServer(t *testing.T, headers bool) (url string, ready <-chan struct{}) {
	t.Helper()
	got, done := make(chan struct{}), make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { close(got) })
		if headers {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write([]byte(`{"data": [`))
			w.(http.Flusher).Flush()
		}
		select {
		case <-r.Context().Done():
		case <-done:
		}
	}))
	t.Cleanup(func() { close(done); srv.Close() })
	return srv.URL, got
}
