package check

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The run's k is read from its first case, after the blank lines before it,
// which were read past with no look at the context when the cases are a
// regular file: gigabytes of them took seconds after a signal. They are read
// through the context now: given a cancelled one, peekRunK ends with its
// error, where it read all 20 MB of blank lines and found no case.
func TestPeekRunKStopsOnCancel(t *testing.T) {
	p := filepath.Join(t.TempDir(), "cases.jsonl")
	w, err := os.Create(p)
	require.NoError(t, err)
	bw := bufio.NewWriterSize(w, 1<<20)
	blank := strings.Repeat(" ", 99) + "\n"
	for range 200_000 {
		_, _ = bw.WriteString(blank)
	}
	_, _ = bw.WriteString(`{"id": "c1", "retrieval": {"k": 7}}` + "\n")
	require.NoError(t, bw.Flush())
	require.NoError(t, w.Close())
	f, err := os.Open(p)
	require.NoError(t, err)
	defer f.Close()

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, _, err = peekRunK(ctx, f)
	require.ErrorIs(t, err, context.Canceled)

	k, line, _, err := peekRunK(context.Background(), f)
	require.NoError(t, err)
	require.Equal(t, 7, k)
	require.Equal(t, 200_001, line)
}
