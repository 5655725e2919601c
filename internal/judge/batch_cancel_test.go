package judge_test

import (
	"context"
	"io"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/input/inputtest"
	"github.com/retrieval-gate/retrieval-gate/internal/judge"
)

// A --batch-in results file in a regular file was read to its end after the
// context ended (a batch of 100,000 results takes seconds to parse): the
// loop looked at the context only when a read failed, and a regular file is
// read as it is. It now checks the context every 1,024 lines: given a
// cancelled context, of 200,000 blank lines (20 MB) less than 2 MiB is read
// (the reader's buffer is 1 MiB).
func TestBatchInStopsOnCancel(t *testing.T) {
	p := inputtest.BlankLines(t, "results.jsonl", 200_000, "")
	f, err := os.Open(p)
	require.NoError(t, err)
	defer f.Close()

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	pairs := []judge.Pair{{QueryID: "q1", Query: "q", DocID: "d1", Document: "doc"}}
	_, err = runBatch(ctx, pairs, batchOpts(t, ""), "", &judge.BatchOptions{ResultsIn: judge.Reader{Name: p, R: f}}, nil)
	require.ErrorIs(t, err, context.Canceled)
	off, err := f.Seek(0, io.SeekCurrent)
	require.NoError(t, err)
	assert.Less(t, off, int64(2<<20), "read %d bytes after the context ended", off)
}
