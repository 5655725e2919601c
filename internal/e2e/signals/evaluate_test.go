//go:build unix

package signals

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/llm/llmtest"
)

// TestEvaluateSignals: evaluate, which no other scenario ran, stops within a
// second of SIGINT or SIGTERM in any stage, exit 2. Its stages are not one
// set of outputs (docs/formats.md, "output files"): DIR keeps stages.txt and
// the files of the stages that ended (the runs, when the judge is the one
// interrupted), and nothing of the interrupted stage, no temporary file
// either; the dashboard (--html) is not written and the history (--history)
// is as it was.
func TestEvaluateSignals(t *testing.T) {
	demo := demoDir(t)
	// history is a --history of one record, check's on the demo (evaluate
	// reads it before its stages, for the trend).
	seedDir := t.TempDir()
	seed := exec.Command("retrieval-gate", "check", "--cases", filepath.Join(demo, "cases.jsonl"), "--kb", filepath.Join(demo, "kb"),
		"--history", filepath.Join(seedDir, "history.jsonl"), "--json", filepath.Join(seedDir, "agg.json"), "--comment", "never")
	seed.Env = append(os.Environ(), "GITHUB_ACTIONS=", "CI=")
	outb, err := seed.CombinedOutput()
	require.NoError(t, err, "%s", outb)
	rec, err := os.ReadFile(filepath.Join(seedDir, "history.jsonl"))
	require.NoError(t, err)
	history := string(rec)
	for _, sc := range []struct {
		name string
		sig  syscall.Signal
		// args are the arguments after the KB, the outputs and the history,
		// the stalled server (its first request: the stage's wait) at url;
		// stays the files DIR keeps.
		args  func(url string) []string
		stays []string
	}{
		{"evaluate/judge-never-answers", syscall.SIGINT, func(url string) []string {
			return []string{"--cases", filepath.Join(demo, "cases.jsonl"), "--judge-url", url, "--judge-model", "fake"}
		}, []string{"run-dense.jsonl", "run-hybrid.jsonl", "run-lexical.jsonl", "stages.txt"}},
		{"evaluate/generator-never-answers", syscall.SIGTERM, func(url string) []string {
			return []string{"--generator-url", url, "--generator-model", "fake", "--judge-url", url, "--judge-model", "fake"}
		}, []string{"stages.txt"}},
	} {
		t.Run(sc.name, func(t *testing.T) {
			for attempt := 1; ; attempt++ {
				var ev, hist string
				if !signalLaunch(t, func(t *testing.T, dir, out string) launch {
					ev, hist = filepath.Join(dir, "ev"), filepath.Join(dir, "history.jsonl")
					writeFile(t, hist, history)
					url, ready := stallServer(t, false)
					return launch{args: append([]string{"evaluate", "--kb", filepath.Join(demo, "kb"), "--out", ev, "--html", filepath.Join(out, "dashboard.html"),
						"--history", hist}, sc.args(url)...), ready: ready}
				}, sc.sig, 200*time.Millisecond, attempt == 4) {
					entries, err := os.ReadDir(ev)
					require.NoError(t, err)
					var names []string
					for _, e := range entries {
						names = append(names, e.Name())
					}
					sort.Strings(names)
					assert.Equal(t, sc.stays, names, "DIR keeps the ended stages' files alone")
					for _, n := range names {
						assert.NotContains(t, n, ".tmp-", "no temporary file")
					}
					got, err := os.ReadFile(hist)
					require.NoError(t, err)
					assert.Equal(t, history, string(got), "the history as it was")
					return
				}
				t.Logf("attempt %d: killed by %v before its handler was installed", attempt, sc.sig)
			}
		})
	}
}

// TestGenerateBatchSignals: generate --batch, which no other scenario ran,
// stops within a second of SIGINT or SIGTERM while it waits for its batch
// (a poll an hour away), exit 2: no cases file and no temporary file (the
// requests' upload) beside it, and the state file kept for a rerun to pick
// the batch up (docs/judge.md, "Resuming").
func TestGenerateBatchSignals(t *testing.T) {
	demo := demoDir(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			for attempt := 1; ; attempt++ {
				var dir string
				if !signalLaunch(t, func(t *testing.T, d, _ string) launch {
					dir = filepath.Join(d, "gen")
					srv := llmtest.New(llmtest.Options{Batch: llmtest.BatchOptions{PollsPerStatus: 1 << 20}})
					t.Cleanup(srv.Close)
					return launch{args: []string{"generate", "--kb", filepath.Join(demo, "kb"), "--out", filepath.Join(dir, "cases.jsonl"), "--generator-url", srv.URL,
						"--generator-model", "fake", "--batch", "--batch-poll", "1h"}, ready: appears(t, filepath.Join(dir, "cases.jsonl.batch.json"))}
				}, sig, 200*time.Millisecond, attempt == 4) {
					entries, err := os.ReadDir(dir)
					require.NoError(t, err)
					var names []string
					for _, e := range entries {
						names = append(names, e.Name())
					}
					assert.Equal(t, []string{"cases.jsonl.batch.json"}, names, "the state file alone")
					return
				}
				t.Logf("attempt %d: killed by %v before its handler was installed", attempt, sig)
			}
		})
	}
}

// appears is closed once path exists (the batch submitted: its state file
// written), polled every 10 ms until the test ends.
func appears(t *testing.T, path string) <-chan struct{} {
	t.Helper()
	ready, done := make(chan struct{}), make(chan struct{})
	t.Cleanup(func() { close(done) })
	go func() {
		for {
			if _, err := os.Stat(path); err == nil {
				close(ready)
				return
			}
			select {
			case <-done:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	return ready
}
