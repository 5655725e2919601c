package compare_test

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

	"github.com/retrieval-gate/retrieval-gate/internal/compare"
)

// bigFile writes n lines of line(i) to a file and returns it open: a regular
// file, which input.Reader reads as it is (only the readers' own checks of
// the context stop them).
func bigFile(t *testing.T, n int, line func(i int) string) (*os.File, int64) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "in.txt")
	f, err := os.Create(p)
	require.NoError(t, err)
	w := bufio.NewWriterSize(f, 1<<20)
	for i := range n {
		_, _ = w.WriteString(line(i))
		_ = w.WriteByte('\n')
	}
	require.NoError(t, w.Flush())
	st, err := f.Stat()
	require.NoError(t, err)
	require.NoError(t, f.Close())
	r, err := os.Open(p)
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	return r, st.Size()
}

// readSoFar is how far f has been read.
func readSoFar(t *testing.T, f *os.File) int64 {
	t.Helper()
	off, err := f.Seek(0, io.SeekCurrent)
	require.NoError(t, err)
	return off
}

// A clusters file and a queries TSV in regular files were read to their end
// after the context ended (the scans never looked at it; a signal was heeded
// once the file was read, seconds on a large one). A cancelled context now
// stops them within their first 1,024 lines: 200,000 lines, of which at most
// the first 1 MiB is read.
func TestClustersAndQueriesStopOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()

	f, size := bigFile(t, 200_000, func(i int) string { return fmt.Sprintf("q%07d cluster-%d", i, i/10) })
	_, err := compare.ReadClusters(ctx, f, "clusters.txt")
	require.ErrorIs(t, err, context.Canceled)
	assert.Less(t, readSoFar(t, f), int64(1<<20), "clusters: read %d of %d bytes after the context ended", readSoFar(t, f), size)

	f, size = bigFile(t, 200_000, func(i int) string { return fmt.Sprintf("q%07d\tthe text of query %d", i, i) })
	_, err = compare.ReadQueries(ctx, f, "queries.tsv")
	require.ErrorIs(t, err, context.Canceled)
	assert.Less(t, readSoFar(t, f), int64(1<<20), "queries: read %d of %d bytes after the context ended", readSoFar(t, f), size)
}
