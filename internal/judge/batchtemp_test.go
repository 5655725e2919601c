package judge_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/judge"
	"github.com/retrieval-gate/retrieval-gate/internal/llm"
	"github.com/retrieval-gate/retrieval-gate/internal/llm/llmtest"
	"github.com/retrieval-gate/retrieval-gate/internal/unixtest"
)

// deadPID returns the PID of a process that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	require.NoError(t, cmd.Run())
	pid := cmd.Process.Pid
	require.ErrorIs(t, unixtest.Signal0(t, pid), unixtest.NoProcess)
	return pid
}

// The scratch files of a batch (its requests, its downloaded results) of a
// run killed with SIGKILL are removed by the next batch run with that cache
// once the killed run's PID is gone, as atomicfile removes the temporary
// files of its outputs; a live run's are kept, and so are files not named
// so. The run leaves none of its own.
func TestBatchScratchFilesOfKilledRunsRemoved(t *testing.T) {
	pairs, grades := table(2)
	srv := llmtest.New(llmtest.Options{Grades: grades})
	defer srv.Close()
	dir := t.TempDir()
	cachePath := filepath.Join(dir, "cache.jsonl")
	dead, alive := strconv.Itoa(deadPID(t)), strconv.Itoa(os.Getpid())
	leftovers := map[string]bool{ // name: removed
		".cache.jsonl.batch.json.requests.tmp-p" + dead + "-123": true,
		".cache.jsonl.batch.json.results.tmp-p" + dead + "-456":  true,
		".cache.jsonl.batch.json.requests.tmp-p" + alive + "-1":  false, // a live run's
		".other.jsonl.batch.json.requests.tmp-p" + dead + "-1":   false, // another cache's
		"notes.txt": false,
	}
	for name := range leftovers {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o644))
	}
	bo := &judge.BatchOptions{API: providerService(t, srv, llm.ProviderOpenAI, false), Poll: llm.PollPolicy{Initial: time.Millisecond, Max: time.Millisecond}}
	_, err := runBatch(context.Background(), pairs, batchOpts(t, cachePath), cachePath, bo, nil)
	require.NoError(t, err)
	want := []string{"cache.jsonl"}
	for name, removed := range leftovers {
		if !removed {
			want = append(want, name)
		}
	}
	sort.Strings(want)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	assert.Equal(t, want, got)
}

// A run that resumes a batch writes no requests file, yet removes a killed
// run's: a batch interrupted in its wait (and killed) is resumed, and its
// requests file would otherwise stay forever.
func TestBatchScratchRemovedOnResume(t *testing.T) {
	pairs, grades := table(2)
	srv := llmtest.New(llmtest.Options{Grades: grades})
	defer srv.Close()
	dir := t.TempDir()
	cachePath := filepath.Join(dir, "cache.jsonl")
	bo := &judge.BatchOptions{API: providerService(t, srv, llm.ProviderOpenAI, false), Poll: llm.PollPolicy{Initial: time.Millisecond, Max: time.Millisecond}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := runBatch(ctx, pairs, batchOpts(t, cachePath), cachePath, bo, func(f string, _ ...any) {
		if strings.HasPrefix(f, "submitted batch") {
			cancel() // interrupted in the wait
		}
	})
	require.ErrorIs(t, err, context.Canceled)
	leftover := filepath.Join(dir, ".cache.jsonl.batch.json.requests.tmp-p"+strconv.Itoa(deadPID(t))+"-9")
	require.NoError(t, os.WriteFile(leftover, []byte("x"), 0o644))
	res, err := runBatch(context.Background(), pairs, batchOpts(t, cachePath), cachePath, bo, nil)
	require.NoError(t, err)
	require.True(t, res.Batch.Resumed)
	assert.NoFileExists(t, leftover)
}

// Earlier versions named a batch's scratch files ".batch-requests-N.jsonl"
// and ".batch-results-N.jsonl" beside the state file, and the files of a run
// killed with SIGKILL stayed for good: nothing in their names says whose they
// are. A batch run removes those provably left by one: exactly that name, a
// regular file in the state file's directory, last written more than
// OldScratchAge ago (longer than any batch lives, so an earlier version's run
// still waiting keeps its files). Anything else stays.
func TestBatchScratchOfEarlierVersionsRemoved(t *testing.T) {
	pairs, grades := table(2)
	srv := llmtest.New(llmtest.Options{Grades: grades})
	defer srv.Close()
	dir := t.TempDir()
	cachePath := filepath.Join(dir, "cache.jsonl")
	old := time.Now().Add(-judge.OldScratchAge - time.Hour)
	recent := time.Now().Add(-judge.OldScratchAge + time.Hour)
	leftovers := []struct {
		name    string
		mtime   time.Time
		removed bool
	}{
		{".batch-requests-1234567890.jsonl", old, true},
		{".batch-results-42.jsonl", old, true},
		{".batch-requests-777.jsonl", recent, false}, // a run of an earlier version may still wait on its batch
		{".batch-results-778.jsonl", recent, false},
		{".batch-requests-x1.jsonl", old, false}, // not the name os.CreateTemp gave
		{".batch-requests-.jsonl", old, false},
		{".batch-requests-12.jsonl.bak", old, false},
		{"batch-requests-12.jsonl", old, false},
		{".batch-prompts-12.jsonl", old, false},
		{"notes.txt", old, false},
	}
	for _, l := range leftovers {
		p := filepath.Join(dir, l.name)
		require.NoError(t, os.WriteFile(p, []byte("x"), 0o644))
		require.NoError(t, os.Chtimes(p, l.mtime, l.mtime))
	}
	// Not regular files: a directory and a link of the name are left alone,
	// and so is the file the link names; so is a file of the name elsewhere.
	require.NoError(t, os.Mkdir(filepath.Join(dir, ".batch-results-5.jsonl"), 0o755))
	elsewhere := filepath.Join(t.TempDir(), ".batch-requests-6.jsonl")
	require.NoError(t, os.WriteFile(elsewhere, []byte("x"), 0o644))
	require.NoError(t, os.Chtimes(elsewhere, old, old))
	require.NoError(t, os.Symlink(elsewhere, filepath.Join(dir, ".batch-requests-7.jsonl")))
	bo := &judge.BatchOptions{API: providerService(t, srv, llm.ProviderOpenAI, false), Poll: llm.PollPolicy{Initial: time.Millisecond, Max: time.Millisecond}}
	_, err := runBatch(context.Background(), pairs, batchOpts(t, cachePath), cachePath, bo, nil)
	require.NoError(t, err)
	want := []string{".batch-requests-7.jsonl", ".batch-results-5.jsonl", "cache.jsonl"}
	for _, l := range leftovers {
		if !l.removed {
			want = append(want, l.name)
		}
	}
	sort.Strings(want)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	assert.Equal(t, want, got)
	assert.FileExists(t, elsewhere)
}
