package judge_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/judge"
)

// A queries TSV in a regular file (judge --queries) was read to its end after
// the context ended: the scan never looked at it (input.Reader gives a
// regular file as it is). A cancelled context now stops it within its first
// 1,024 lines: of 200,000 lines, at most the first 1 MiB is read.
func TestReadQueriesTSVStopsOnCancel(t *testing.T) {
	p := filepath.Join(t.TempDir(), "queries.tsv")
	w, err := os.Create(p)
	require.NoError(t, err)
	bw := bufio.NewWriterSize(w, 1<<20)
	for i := range 200_000 {
		fmt.Fprintf(bw, "q%07d\tthe text of query %d\n", i, i)
	}
	require.NoError(t, bw.Flush())
	require.NoError(t, w.Close())
	f, err := os.Open(p)
	require.NoError(t, err)
	defer f.Close()

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = judge.ReadQueries(ctx, f, p)
	require.ErrorIs(t, err, context.Canceled)
	off, err := f.Seek(0, io.SeekCurrent)
	require.NoError(t, err)
	assert.Less(t, off, int64(1<<20), "read %d bytes after the context ended", off)
}
