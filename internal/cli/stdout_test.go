package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/retrieval-gate/retrieval-gate/internal/ctxwrite"
	"github.com/retrieval-gate/retrieval-gate/internal/e2e/e2etest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pageAtWrite fails every write, as e2etest.FailingWriter does, and notes
// whether page was there when it was written to.
type pageAtWrite struct {
	page              string
	writes, published int
}

func (w *pageAtWrite) Write([]byte) (int, error) {
	w.writes++
	if _, err := os.Stat(w.page); err == nil {
		w.published++
	}
	return 0, errors.New("no space left on device")
}

// stdoutRuns are the commands that print a report (or an output named "-") on
// standard output with files written beside it (dir: the test's inputs; out:
// where every file of the run goes, and nothing else).
func stdoutRuns(t *testing.T, dir string) []struct {
	name string
	args func(out string) []string
} {
	t.Helper()
	root := filepath.Join("..", "..", "testdata")
	demo, cal, cmp := filepath.Join(root, "demo"), filepath.Join(root, "calibrate"), filepath.Join(root, "compare")
	// A saved check report for report --from.
	saved := filepath.Join(dir, "check.json")
	env, _, errb := checkEnv("")
	require.Equal(t, ExitOK, Run(context.Background(), env, []string{"check", "--cases", filepath.Join(demo, "cases.jsonl"), "--kb", filepath.Join(demo, "kb"),
		"--json", saved, "--comment", "never"}), errb.String())
	return []struct {
		name string
		args func(out string) []string
	}{
		{"check", func(out string) []string {
			return []string{"check", "--cases", filepath.Join(demo, "cases.jsonl"), "--kb", filepath.Join(demo, "kb"), "--verbose", "--suggest-floors",
				"--json", filepath.Join(out, "agg.json"), "--markdown", filepath.Join(out, "r.md"), "--cases-out", filepath.Join(out, "cases.jsonl"),
				"--history", filepath.Join(out, "history.jsonl"), "--comment", "never"}
		}},
		{"compare", func(out string) []string {
			return []string{"compare", "--qrels", filepath.Join(cmp, "qrels.trec"), "--run", "bm25=" + filepath.Join(cmp, "bm25.trec"),
				"--run", "hybrid=" + filepath.Join(cmp, "hybrid.trec"), "--bootstrap", "200", "--json", filepath.Join(out, "cmp.json"),
				"--markdown", filepath.Join(out, "cmp.md"), "--history", filepath.Join(out, "history.jsonl"), "--comment", "never"}
		}},
		{"calibrate", func(out string) []string {
			return []string{"calibrate", "--human", filepath.Join(cal, "human.jsonl"), "--judge", filepath.Join(cal, "judge.jsonl"), "--lock", filepath.Join(cal, "lock.json"),
				"--bootstrap", "200", "--json", filepath.Join(out, "cal.json"), "--markdown", filepath.Join(out, "cal.md"), "--comment", "never"}
		}},
		{"report --from", func(out string) []string {
			return []string{"report", "--from", saved, "--verbose", "--markdown", filepath.Join(out, "r.md"), "--html", filepath.Join(out, "r.html")}
		}},
		{"import --out -", func(string) []string {
			return []string{"import", "--in", filepath.Join(root, "formats", "ragas.jsonl"), "--out", "-", "--parent-from-id", "#"}
		}},
	}
}

// TestStdoutBeforeFiles: what a command prints on standard output is written
// before its files are published, all or nothing with them: a standard output
// that fails, or that nobody reads when a signal comes, leaves no file (nor a
// history record), and the command exits 2.
func TestStdoutBeforeFiles(t *testing.T) {
	dir := t.TempDir()
	for _, run := range stdoutRuns(t, dir) {
		t.Run(run.name+"/ok", func(t *testing.T) {
			// The same run with a standard output that takes its text: it
			// prints and writes its files.
			out := filepath.Join(t.TempDir(), "out")
			env, stdout, errb := checkEnv("")
			code := Run(context.Background(), env, run.args(out))
			require.Contains(t, []int{ExitOK, ExitGateFailed}, code, errb.String())
			assert.NotEmpty(t, stdout.String())
			if !strings.HasPrefix(run.name, "import") {
				assert.NotEmpty(t, e2etest.Entries(t, out))
			}
		})
		t.Run(run.name+"/stdout-fails", func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			env, _, errb := checkEnv("")
			env.Stdout = e2etest.FailingWriter{}
			code := Run(context.Background(), env, run.args(out))
			assert.Equal(t, ExitInput, code)
			assert.Contains(t, errb.String(), "retrieval-gate: failed to write standard output: no space left on device")
			assert.NoDirExists(t, out, "no file written, no directory made")
		})
		t.Run(run.name+"/stdout-unread-at-the-signal", func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			env, _, errb := checkEnv("")
			stuck := e2etest.NewStuckWriter(t)
			env.Stdout = stuck
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			code := make(chan int, 1)
			go func() { code <- Run(ctx, env, run.args(out)) }()
			select {
			case <-stuck.Started:
			case c := <-code:
				t.Fatalf("exit %d before it wrote standard output: %s", c, errb.String())
			}
			cancel() // the signal
			start := time.Now()
			select {
			case c := <-code:
				assert.Less(t, time.Since(start), time.Second, "stopped within a second")
				assert.Equal(t, ExitInput, c)
			case <-time.After(5 * time.Second):
				t.Fatal("still waiting on standard output 5 s after the signal")
			}
			// calibrate words every error of an interrupted run as its own
			// ("calibrate: interrupted, nothing written").
			assert.Regexp(t, `^retrieval-gate: (failed to write standard output|calibrate): interrupted.*: context canceled\n$`, errb.String())
			assert.NoDirExists(t, out, "no file written, no directory made")
		})
	}
}

// TestStdoutSummaryAfterFiles: a summary that only says what was written
// (report --history's line) is printed after the files are published; one
// that cannot be printed changes neither the files nor the exit code.
func TestStdoutSummaryAfterFiles(t *testing.T) {
	dir := t.TempDir()
	demo := filepath.Join("..", "..", "testdata", "demo")
	hist := filepath.Join(dir, "history.jsonl")
	env, _, errb := checkEnv("")
	require.Equal(t, ExitOK, Run(context.Background(), env, []string{"check", "--cases", filepath.Join(demo, "cases.jsonl"), "--kb", filepath.Join(demo, "kb"),
		"--history", hist, "--comment", "never"}), errb.String())
	page := filepath.Join(dir, "out", "history.html")
	env, _, errb = checkEnv("")
	w := &pageAtWrite{page: page}
	env.Stdout = w
	assert.Equal(t, ExitOK, Run(context.Background(), env, []string{"report", "--history", hist, "--html", page}), errb.String())
	assert.FileExists(t, page)
	require.Positive(t, w.writes, "the summary was printed")
	assert.Equal(t, w.writes, w.published, "after the page was published")
}

// TestInterruptedWording: a run that the signal ends says so, whatever the
// command and wherever it was: "check: interrupted: …", or the command's own
// words where it has some ("calibrate: interrupted, nothing written").
func TestInterruptedWording(t *testing.T) {
	dir := t.TempDir()
	for _, run := range stdoutRuns(t, dir) {
		t.Run(run.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			env, _, errb := checkEnv("")
			ctx, cancel := context.WithCancelCause(context.Background())
			cancel(errors.New("terminated signal received"))
			assert.Equal(t, ExitInput, Run(ctx, env, run.args(out)))
			assert.Regexp(t, `^retrieval-gate: `+regexp.QuoteMeta(strings.Fields(run.name)[0])+`: interrupted`, errb.String())
			assert.NoDirExists(t, out, "no file written, no directory made")
		})
	}
}

// TestInterruptedWordsOnce: interrupted words a cancelled run's error once.
// An error that merely holds the word (a path) gets the command's prefix; a
// command's own wording (interruptedf) and a write given up on an unread
// stream (ctxwrite.ErrInterrupted) keep theirs; a run that was not cancelled
// keeps its error.
func TestInterruptedWordsOnce(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	args := []string{"check", "--cases", "x"}
	read := fmt.Errorf("failed to read /data/interrupted/cases.jsonl: %w", context.Canceled)
	require.EqualError(t, interrupted(ctx, args, read), "check: interrupted: failed to read /data/interrupted/cases.jsonl: context canceled")
	own := interruptedf("judge: interrupted, nothing written: %w", context.Canceled)
	assert.Equal(t, own, interrupted(ctx, []string{"judge"}, own))
	given := fmt.Errorf("failed to write standard output: %w", fmt.Errorf("%w: %w", ctxwrite.ErrInterrupted, context.Canceled))
	assert.Equal(t, given, interrupted(ctx, []string{"import"}, given))
	assert.Equal(t, read, interrupted(context.Background(), args, read))
}
