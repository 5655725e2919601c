package judge_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/judge"
	"github.com/retrieval-gate/retrieval-gate/internal/unixtest"
)

// Issue 33 item 6: a cache (or a batch state file) that is not a regular file
// is refused at once as an input error naming what it is. A named pipe was
// opened read-write and read without end (one SIGTERM did nothing), and
// /dev/null ended in "sync: invalid argument".
func TestCacheMustBeARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "cache.jsonl")
	unixtest.Mkfifo(t, fifo, 0o644)
	for _, tc := range []struct{ path, kind string }{
		{fifo, "a named pipe"},
		{"/dev/null", "a character device"},
		{dir, "a directory"},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			done := make(chan error, 1)
			go func() {
				c, err := judge.OpenCache(tc.path)
				if err == nil {
					c.Close()
				}
				done <- err
			}()
			select {
			case err := <-done:
				var ie *input.Error
				require.ErrorAs(t, err, &ie)
				assert.Contains(t, err.Error(), tc.path+": the judge cache must be a regular file, and this is "+tc.kind)
			case <-time.After(5 * time.Second):
				t.Fatal("OpenCache is still waiting")
			}
			_, err := judge.ReadBatchState(tc.path)
			require.ErrorContains(t, err, "the batch state file must be a regular file")
		})
	}
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, ents, 1, "nothing written beside it")
}

// A batch's state file is a few hundred bytes: one larger than its cap (here
// a valid state followed by 64 KiB of white space) is refused as an input
// error before it is read whole; it was read with os.ReadFile, without a cap.
func TestBatchStateCapped(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.batch.json")
	state := `{"schema":"` + judge.BatchStateSchema + `","batch_id":"b1"}`
	require.NoError(t, os.WriteFile(big, []byte(state+strings.Repeat(" ", 64<<10)), 0o644))
	_, err := judge.ReadBatchState(big)
	var ie *input.Error
	require.ErrorAs(t, err, &ie)
	assert.Contains(t, err.Error(), big+": larger than")

	small := filepath.Join(dir, "small.batch.json")
	require.NoError(t, os.WriteFile(small, []byte(state+"\n"), 0o644))
	st, err := judge.ReadBatchState(small)
	require.NoError(t, err)
	assert.Equal(t, "b1", st.BatchID)
	st, err = judge.ReadBatchState(filepath.Join(dir, "missing.batch.json"))
	require.NoError(t, err)
	assert.Nil(t, st)
}
