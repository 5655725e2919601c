package generate_test

import (
	"context"
	"io"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/generate"
	"github.com/retrieval-gate/retrieval-gate/internal/input/inputtest"
	"github.com/retrieval-gate/retrieval-gate/internal/judge"
)

// A --batch-in results file in a regular file was read to its end after the
// context ended: the scan never looked at it (a regular file is read as it
// is). It now checks the context every 1,024 lines: given a cancelled
// context, of 200,000 blank lines (20 MB) less than 1 MiB is read.
func TestGenerateBatchInStopsOnCancel(t *testing.T) {
	p := inputtest.BlankLines(t, "results.jsonl", 200_000, "")
	f, err := os.Open(p)
	require.NoError(t, err)
	defer f.Close()

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	o, in := genOptions(t, io.Discard)
	o.BatchIn, in.BatchResults = p, judge.Reader{Name: p, R: f}
	_, err = generate.Run(ctx, in, *o)
	require.ErrorIs(t, err, context.Canceled)
	off, err := f.Seek(0, io.SeekCurrent)
	require.NoError(t, err)
	assert.Less(t, off, int64(1<<20), "read %d bytes after the context ended", off)
}
