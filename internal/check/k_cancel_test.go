package check

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/input/inputtest"
)

// The run's k is read from its first case, after the blank lines before it,
// which were read past with no look at the context when the cases are a
// regular file: gigabytes of them took seconds after a signal. They are read
// through the context now: given a cancelled one, peekRunK ends with its
// error, where it read all 20 MB of blank lines and found no case.
func TestPeekRunKStopsOnCancel(t *testing.T) {
	p := inputtest.BlankLines(t, "cases.jsonl", 200_000, `{"id": "c1", "retrieval": {"k": 7}}`+"\n")
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
