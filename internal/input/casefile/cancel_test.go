package casefile

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/unixtest"
)

// silentPipes are readers whose writer is open but never sends: a FIFO opened
// by name (pollable), an os.Pipe (pollable) and a blocking pipe wrapped by
// os.NewFile, as standard input is (not pollable).
func silentPipes(t *testing.T) map[string]io.Reader {
	t.Helper()
	out := map[string]io.Reader{}

	fifo := filepath.Join(t.TempDir(), "cases.jsonl")
	unixtest.Mkfifo(t, fifo, 0o644)
	// The writer's open blocks until the reader's: it runs on its own goroutine and
	// hands its error back (require may only fail the test on the test's goroutine).
	type opened struct {
		f   *os.File
		err error
	}
	w := make(chan opened, 1)
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		w <- opened{f, err}
	}()
	r, err := input.Open(context.Background(), fifo)
	require.NoError(t, err)
	o := <-w
	require.NoError(t, o.err)
	wf := o.f
	t.Cleanup(func() { wf.Close(); r.Close() })
	out["fifo"] = r

	pr, pw, err := os.Pipe()
	require.NoError(t, err)
	t.Cleanup(func() { pw.Close(); pr.Close() })
	out["os.Pipe"] = pr

	br, bw := unixtest.BlockingPipe(t)
	t.Cleanup(func() { bw.Close() })
	out["blocking pipe"] = br
	return out
}

// TestReadersStopOnCancelWhileAPipeIsSilent: issue 10 item 11. `--cases -` on a
// pipe that never sends must stop within a second of cancellation.
func TestReadersStopOnCancelWhileAPipeIsSilent(t *testing.T) {
	for name, r := range silentPipes(t) {
		for _, reader := range []string{"StreamCases", "MapCases"} {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(100*time.Millisecond, cancel)
			start := time.Now()
			var err error
			if reader == "StreamCases" {
				err = StreamCases(ctx, r, "-", func(*Case) error { return nil })
			} else {
				err = MapCases(ctx, r, "-", 2, func(*Case) (int, error) { return 0, nil }, func(int) error { return nil })
			}
			require.ErrorIs(t, err, context.Canceled, "%s %s", name, reader)
			assert.Less(t, time.Since(start), time.Second, "%s %s", name, reader)
		}
	}
}

// TestOpenFIFOWithoutWriterStopsOnCancel: opening a FIFO blocks until a writer
// comes; input.Open gives up with the context.
func TestOpenFIFOWithoutWriterStopsOnCancel(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "cases.jsonl")
	unixtest.Mkfifo(t, fifo, 0o644)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := input.Open(ctx, fifo)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), time.Second)
	// Unblock the abandoned open so that the test leaves nothing behind.
	if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
		w.Close()
	}
}
