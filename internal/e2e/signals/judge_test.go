//go:build unix

package signals

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/llm/llmtest"
)

// TestJudgeSignals (issue 33 item 6): every wait of judge stops within a
// second of SIGINT or SIGTERM, exit 2, nothing written: an input that is a
// FIFO nobody writes to (or that stays silent), a cache that is a FIFO
// (refused before anything is read), a cache whose lock another run holds,
// a chat server that does not answer,
// and the status polls of a batch on each provider's batch API.
func TestJudgeSignals(t *testing.T) {
	demo := demoDir(t)
	cases := filepath.Join(demo, "cases.jsonl")
	base := func(out string, extra ...string) []string {
		return append([]string{"judge", "--kb", filepath.Join(demo, "kb"), "--k", "2", "--judge-model", "fake",
			"--qrels", filepath.Join(out, "out.qrels"), "--json", filepath.Join(out, "report.json")}, extra...)
	}
	// server is a stand-in whose chat answers take an hour; batch: one whose
	// batches stay in progress (polled, answered at once, never ending).
	server := func(t *testing.T) string {
		srv := llmtest.New(llmtest.Options{Delay: time.Hour})
		t.Cleanup(srv.Close)
		return srv.URL
	}
	batch := func(t *testing.T) string {
		srv := llmtest.New(llmtest.Options{Batch: llmtest.BatchOptions{PollsPerStatus: 1 << 20}})
		t.Cleanup(srv.Close)
		return srv.URL
	}
	type scenario struct {
		name  string
		sig   syscall.Signal
		after time.Duration
		setup func(t *testing.T, dir, out string) ([]string, *os.File)
	}
	scenarios := []scenario{
		{"judge/cache-fifo-without-writer", syscall.SIGTERM, 300 * time.Millisecond, func(t *testing.T, dir, out string) ([]string, *os.File) {
			return base(out, "--run", "demo="+cases, "--judge-url", server(t), "--cache", fifoNoWriter(t, dir, "cache.jsonl")), nil
		}},
		{"judge/cache-silent-fifo", syscall.SIGINT, 300 * time.Millisecond, func(t *testing.T, dir, out string) ([]string, *os.File) {
			return base(out, "--run", "demo="+cases, "--judge-url", server(t), "--cache", fifo(t, dir, "cache.jsonl", "")), nil
		}},
		{"judge/run-fifo-without-writer", syscall.SIGTERM, 300 * time.Millisecond, func(t *testing.T, dir, out string) ([]string, *os.File) {
			return base(out, "--run", "demo="+fifoNoWriter(t, dir, "run.jsonl"), "--judge-url", server(t), "--cache", "none"), nil
		}},
		{"judge/prompt-silent-fifo", syscall.SIGINT, 300 * time.Millisecond, func(t *testing.T, dir, out string) ([]string, *os.File) {
			return base(out, "--run", "demo="+cases, "--judge-url", server(t), "--cache", "none", "--prompt", fifo(t, dir, "prompt.txt", "{{query}}")), nil
		}},
		{"judge/known-qrels-fifo-without-writer", syscall.SIGTERM, 300 * time.Millisecond, func(t *testing.T, dir, out string) ([]string, *os.File) {
			return base(out, "--run", "demo="+cases, "--judge-url", server(t), "--cache", "none", "--known-qrels", fifoNoWriter(t, dir, "known.qrels")), nil
		}},
		{"judge/batch-in-silent-fifo", syscall.SIGINT, 300 * time.Millisecond, func(t *testing.T, dir, out string) ([]string, *os.File) {
			return base(out, "--run", "demo="+cases, "--cache", "none", "--batch-in", fifo(t, dir, "results.jsonl", "")), nil
		}},
		{"judge/server-never-answers", syscall.SIGTERM, 500 * time.Millisecond, func(t *testing.T, dir, out string) ([]string, *os.File) {
			return base(out, "--run", "demo="+cases, "--judge-url", server(t), "--cache", filepath.Join(dir, "cache.jsonl")), nil
		}},
		{
			// Another run sharing the cache holds its lock (it appends under it):
			// this run's first judgment waits for it, and the wait stops on the
			// signal. The cache stays as it was.
			"judge/cache-lock-held", syscall.SIGTERM, 500 * time.Millisecond, func(t *testing.T, dir, out string) ([]string, *os.File) {
				srv := llmtest.New(llmtest.Options{})
				t.Cleanup(srv.Close)
				cache := filepath.Join(dir, "cache.jsonl")
				holder, err := os.OpenFile(cache, os.O_RDWR|os.O_CREATE, 0o644)
				require.NoError(t, err)
				t.Cleanup(func() {
					st, err := holder.Stat()
					require.NoError(t, err)
					assert.Zero(t, st.Size(), "the cache as it was")
					_ = holder.Close()
				})
				require.NoError(t, syscall.Flock(int(holder.Fd()), syscall.LOCK_EX))
				return base(out, "--run", "demo="+cases, "--judge-url", srv.URL, "--cache", cache), nil
			},
		},
		{"judge/batch-openai-polls", syscall.SIGINT, time.Second, func(t *testing.T, dir, out string) ([]string, *os.File) {
			return base(out, "--run", "demo="+cases, "--judge-url", batch(t), "--cache", filepath.Join(dir, "cache.jsonl"), "--batch", "--batch-poll", "20ms"), nil
		}},
		{"judge/batch-anthropic-polls", syscall.SIGTERM, time.Second, func(t *testing.T, dir, out string) ([]string, *os.File) {
			return base(out, "--run", "demo="+cases, "--judge-url", batch(t), "--cache", filepath.Join(dir, "cache.jsonl"), "--batch", "--batch-api", "anthropic", "--batch-poll", "20ms"), nil
		}},
		{"judge/batch-gemini-polls", syscall.SIGINT, time.Second, func(t *testing.T, dir, out string) ([]string, *os.File) {
			return base(out, "--run", "demo="+cases, "--judge-url", batch(t), "--cache", filepath.Join(dir, "cache.jsonl"), "--batch", "--batch-api", "gemini", "--batch-poll", "20ms"), nil
		}},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			after := sc.after
			for attempt := 1; ; attempt++ {
				if !signalAttempt(t, sc.setup, sc.sig, after, attempt == 4) {
					return
				}
				t.Logf("attempt %d: killed by %v before its handler was installed; again with %v", attempt, sc.sig, 2*after)
				after *= 2
			}
		})
	}
}
