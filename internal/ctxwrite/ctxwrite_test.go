package ctxwrite

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/e2e/e2etest"
)

// chunkWriter records what it is given, one entry per write.
type chunkWriter struct {
	bytes.Buffer
	writes []int
}

func (w *chunkWriter) Write(p []byte) (int, error) {
	w.writes = append(w.writes, len(p))
	return w.Buffer.Write(p)
}

// TestUntil: standard output or error under a run's context writes
// through to the writer as it is (in chunks of at most Chunk) and stops
// waiting on a writer that does not take its data once the context ends.
func TestUntil(t *testing.T) {
	t.Run("a context that never ends gives the writer itself", func(t *testing.T) {
		var b bytes.Buffer
		assert.Same(t, &b, Until(context.Background(), &b))
	})
	big := bytes.Repeat([]byte("0123456789abcdef"), 3*Chunk/16+5) // three chunks and 80 bytes
	for _, tt := range []struct {
		name      string
		cancelled bool // the context has ended before the write
		data      []byte
		writes    []int
	}{
		{"one write", false, []byte("hello\n"), []int{6}},
		{"a large write, in chunks", false, big, []int{Chunk, Chunk, Chunk, 80}},
		{"a write that goes through after the signal is made", true, []byte("::error::interrupted\n"), []int{21}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.cancelled {
				cancel()
			}
			var got chunkWriter
			n, err := Until(ctx, &got).Write(tt.data)
			require.NoError(t, err)
			assert.Equal(t, len(tt.data), n)
			assert.Equal(t, tt.data, got.Bytes())
			assert.Equal(t, tt.writes, got.writes)
		})
	}
	t.Run("the writer's error is the write's", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		_, err := Until(ctx, e2etest.FailingWriter{}).Write([]byte("x"))
		require.EqualError(t, err, "no space left on device")
	})
	t.Run("a blocked write is given up once the context ends", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		stuck := e2etest.NewStuckWriter(t)
		w := Until(ctx, stuck)
		type result struct {
			n   int
			err error
		}
		done := make(chan result, 1)
		go func() {
			n, err := w.Write(bytes.Repeat([]byte("x"), 1<<20))
			done <- result{n, err}
		}()
		<-stuck.Started
		select {
		case r := <-done:
			t.Fatalf("the write returned before the context ended: %d, %v", r.n, r.err)
		case <-time.After(50 * time.Millisecond):
		}
		cancel()
		start := time.Now()
		var r result
		select {
		case r = <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("the write still waits 5 s after the context ended")
		}
		assert.Less(t, time.Since(start), time.Second, "given up within a second")
		assert.Zero(t, r.n)
		require.ErrorIs(t, r.err, context.Canceled)
		require.ErrorIs(t, r.err, ErrInterrupted)
		require.EqualError(t, r.err, "interrupted while the write waited for its reader: context canceled")
		// The writer still belongs to the given-up write: a later write fails
		// at once (the given-up write's error, not a wait of its own) and
		// never reaches it.
		_, err := w.Write([]byte("retrieval-gate: interrupted\n"))
		require.ErrorIs(t, err, context.Canceled)
		assert.Same(t, r.err, err, "the given-up write's error")
		assert.Equal(t, 1, stuck.Count())
	})
}
