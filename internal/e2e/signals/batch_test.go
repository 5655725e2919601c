//go:build unix

package signals

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/e2e/e2etest"
	"github.com/retrieval-gate/retrieval-gate/internal/llm/llmtest"
)

// TestJudgeBatchResume runs the real binary with judge --batch against the
// fake's Batch API, signals it once the batch is submitted (the state file
// exists), and checks that it stops within a second, exit 2, nothing written,
// the state file kept; the rerun picks the batch up (no second upload or
// batch) and writes the labels.
func TestJudgeBatchResume(t *testing.T) {
	demo := demoDir(t)
	srv := llmtest.New(llmtest.Options{APIKey: "sk-resume-0123456789abcdef", Batch: llmtest.BatchOptions{PollsPerStatus: 2}})
	defer srv.Close()
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache", "judge.jsonl")
	args := func(poll string) []string {
		return []string{"judge", "--batch", "--batch-poll", poll, "--kb", filepath.Join(demo, "kb"), "--run", "demo=" + filepath.Join(demo, "cases.jsonl"),
			"--k", "2", "--judge-url", srv.URL, "--judge-model", "fake", "--cache", cache, "--qrels", filepath.Join(dir, "out.qrels"), "--json", filepath.Join(dir, "report.json")}
	}
	env := append(os.Environ(), "GITHUB_ACTIONS=", "CI=", "RETRIEVAL_GATE_LLM_API_KEY=sk-resume-0123456789abcdef")

	cmd := exec.Command("retrieval-gate", args("1h")...)
	cmd.Dir, cmd.Env = dir, env
	var stderr e2etest.LockedBuffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	state := cache + ".batch.json"
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(stderr.String(), "in_progress") && !strings.Contains(stderr.String(), "validating") {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("no batch submitted: %s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	require.FileExists(t, state)
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	sent := time.Now()
	var werr error
	select {
	case werr = <-exited:
	case <-time.After(5 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("still running after SIGINT: %s", stderr.String())
	}
	assert.LessOrEqual(t, time.Since(sent), signalDeadline)
	assert.Equal(t, 2, e2etest.ExitCode(werr), stderr.String())
	assert.Contains(t, stderr.String(), "rerun to pick it up")
	assert.FileExists(t, state, "the batch id is kept")
	assert.NoFileExists(t, filepath.Join(dir, "out.qrels"))
	assert.Equal(t, 1, srv.Batches())

	cmd2 := exec.Command("retrieval-gate", args("10ms")...)
	cmd2.Dir, cmd2.Env = dir, env
	out, err := cmd2.CombinedOutput()
	require.NoError(t, err, string(out))
	assert.Contains(t, string(out), "resuming batch batch_fake1")
	assert.Contains(t, string(out), "batch (api, openai) batch_fake1 (resumed), completed")
	assert.Equal(t, 1, srv.Batches(), "no second batch")
	assert.Equal(t, 1, srv.Uploads(), "no second upload")
	assert.NoFileExists(t, state)
	assert.FileExists(t, filepath.Join(dir, "out.qrels"))
	assert.NotContains(t, string(out), "sk-resume")
}
