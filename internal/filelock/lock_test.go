//go:build unix

package filelock_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/filelock"
)

// open opens path anew: flock's locks belong to an open file, so two opens
// in one process contend as two processes do.
func open(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	require.NoError(t, err)
	t.Cleanup(func() { _ = f.Close() })
	return f
}

// A held lock is waited for until it is released, and the wait stops when
// its context ends (a blocking flock is restarted after a signal: SIGINT did
// not stop a history append waiting on another process's lock).
func TestLockWaitsAndStopsWithItsContext(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.jsonl")
	holder := open(t, path)
	unlock, err := filelock.Lock(context.Background(), holder)
	require.NoError(t, err)

	waiter := open(t, path)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = filelock.Lock(ctx, waiter)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), time.Second, "the wait stops within maxPoll of the context's end")

	// Released while another waits: the waiter takes it.
	got := make(chan error, 1)
	go func() {
		u, err := filelock.Lock(context.Background(), waiter)
		if err == nil {
			u()
		}
		got <- err
	}()
	time.Sleep(20 * time.Millisecond)
	unlock()
	select {
	case err := <-got:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("the lock was released and the waiter did not take it")
	}
}
