package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCalibrateSignals builds the real binary (main's signal wiring included),
// starts calibrate on inputs that keep it reading, blocked or bootstrapping, sends
// SIGTERM or SIGINT and checks that it exits with code 2 within a second and writes
// nothing (issue 10 item 11).
func TestCalibrateSignals(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and writes large inputs")
	}
	root, err := os.Getwd()
	require.NoError(t, err)
	bin := filepath.Join(t.TempDir(), "retrieval-gate")
	build := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", bin, ".")
	build.Dir = root
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	lock := filepath.Join(root, "testdata", "calibrate", "lock.json")
	humanLine := func(i int) string {
		return fmt.Sprintf(`{"case_id":"c%07d","dimension":"groundedness","bin":%d,"construct":"support","labeled_at":"2026-09-01T09:00:00Z"}`, i, i%3)
	}
	judgeLine := func(i int) string {
		return fmt.Sprintf(`{"case_id":"c%07d","dimension":"groundedness","score":%g,"construct":"support","judged_at":"2026-10-12T14:00:00Z"}`, i, float64((i*7)%100)/100)
	}

	tests := []struct {
		name  string
		sig   syscall.Signal
		after time.Duration
		setup func(t *testing.T, dir string) []string // the inputs' flags
	}{
		{"reading 500k labels", syscall.SIGTERM, time.Second, func(t *testing.T, dir string) []string {
			h, j := filepath.Join(dir, "human.jsonl"), filepath.Join(dir, "judge.jsonl")
			writeLines(t, h, 500_000, humanLine)
			writeLines(t, j, 500_000, judgeLine)
			return []string{"--human", h, "--judge", j, "--lock", lock}
		}},
		{"human labels on a silent FIFO", syscall.SIGINT, 300 * time.Millisecond, func(t *testing.T, dir string) []string {
			j := filepath.Join(dir, "judge.jsonl")
			writeLines(t, j, 10, judgeLine)
			return []string{"--human", silentFIFO(t, dir, "human.jsonl", humanLine(0)+"\n"), "--judge", j, "--lock", lock}
		}},
		{"lock on a FIFO nobody opens", syscall.SIGTERM, 300 * time.Millisecond, func(t *testing.T, dir string) []string {
			p := filepath.Join(dir, "lock.json")
			require.NoError(t, syscall.Mkfifo(p, 0o644))
			t.Cleanup(func() {
				if w, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					w.Close()
				}
			})
			return []string{"--human", filepath.Join(root, "testdata", "calibrate", "human.jsonl"), "--judge", filepath.Join(root, "testdata", "calibrate", "judge.jsonl"), "--lock", p}
		}},
		{"bootstrap of a 256-bin lock", syscall.SIGTERM, 1500 * time.Millisecond, func(t *testing.T, dir string) []string {
			edges := make([]string, 255)
			for i := range edges {
				edges[i] = fmt.Sprint(float64(i+1) / 256)
			}
			l := filepath.Join(dir, "lock.json")
			require.NoError(t, os.WriteFile(l, []byte(`{"dimensions": {"groundedness": {"construct": "support", "gated": true}}, "bins": [`+
				strings.Join(edges, ", ")+`], "kappa_weighting": "quadratic", "min_kappa": 0.6}`), 0o644))
			h, j := filepath.Join(dir, "human.jsonl"), filepath.Join(dir, "judge.jsonl")
			writeLines(t, h, 40_000, func(i int) string {
				return fmt.Sprintf(`{"case_id":"c%07d","dimension":"groundedness","score":%g,"construct":"support","labeled_at":"2026-09-01T09:00:00Z"}`, i, float64(i%256)/256)
			})
			writeLines(t, j, 40_000, func(i int) string {
				return fmt.Sprintf(`{"case_id":"c%07d","dimension":"groundedness","score":%g,"construct":"support","judged_at":"2026-10-12T14:00:00Z"}`, i, float64((i*7+i/256)%256)/256)
			})
			return []string{"--human", h, "--judge", j, "--lock", l, "--bootstrap", "100000"}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			outDir := filepath.Join(dir, "out")
			require.NoError(t, os.Mkdir(outDir, 0o755))
			args := append([]string{"calibrate"}, tt.setup(t, dir)...)
			args = append(args, "--json", filepath.Join(outDir, "cal.json"), "--markdown", filepath.Join(outDir, "cal.md"), "--comment", "never")
			cmd := exec.Command(bin, args...)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "GITHUB_ACTIONS=", "CI=")
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			require.NoError(t, cmd.Start())
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			t.Cleanup(func() {
				_ = cmd.Process.Kill()
			})
			select {
			case err := <-done:
				t.Fatalf("calibrate ended before the signal (%v): %s", err, stderr.String())
			case <-time.After(tt.after):
			}
			require.NoError(t, cmd.Process.Signal(tt.sig))
			sent := time.Now()
			var werr error
			select {
			case werr = <-done:
			case <-time.After(5 * time.Second):
				t.Fatalf("still running 5 s after %v", tt.sig)
			}
			took := time.Since(sent)
			assert.LessOrEqual(t, took, time.Second, "exited %v after %v", took.Round(time.Millisecond), tt.sig)
			var ee *exec.ExitError
			require.True(t, errors.As(werr, &ee), "%v", werr)
			assert.Equal(t, 2, ee.ExitCode(), "stderr: %s", stderr.String())
			assert.Contains(t, stderr.String(), "calibrate: interrupted, nothing written")
			assert.Empty(t, stdout.String(), "no report on stdout")
			es, err := os.ReadDir(outDir)
			require.NoError(t, err)
			assert.Empty(t, es, "no output file and no temp file")
		})
	}
}

// silentFIFO makes the named pipe dir/name, writes content into it and keeps the
// write end open until the test ends, so a reader blocks after the content.
func silentFIFO(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, syscall.Mkfifo(p, 0o644))
	f, err := os.OpenFile(p, os.O_RDWR, 0) // O_RDWR does not wait for a reader
	require.NoError(t, err)
	t.Cleanup(func() { _ = f.Close() })
	_, err = f.WriteString(content)
	require.NoError(t, err)
	return p
}

func writeLines(t *testing.T, path string, n int, line func(int) string) {
	t.Helper()
	f, err := os.Create(path)
	require.NoError(t, err)
	w := bufio.NewWriterSize(f, 1<<20)
	for i := range n {
		_, _ = w.WriteString(line(i))
		_ = w.WriteByte('\n')
	}
	require.NoError(t, w.Flush())
	require.NoError(t, f.Close())
}
