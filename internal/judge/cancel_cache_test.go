package judge_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/judge"
)

// A judge cache kept from run to run grows; opening it read every entry with
// no look at the context (a million entries take seconds), so a signal was
// heeded once it was read. OpenCacheContext ends with the context's error;
// given a live one it loads what OpenCache loads.
func TestOpenCacheContextStopsOnCancel(t *testing.T) {
	p := filepath.Join(t.TempDir(), "cache.jsonl")
	f, err := os.Create(p)
	require.NoError(t, err)
	w := bufio.NewWriter(f)
	const n = 20_000
	for i := range n {
		fmt.Fprintf(w, `{"key":"k%d","grade":%d,"reason":"r","model":"m","prompt_hash":"h","repeat":0,"answer_format":"json","prompt_tokens":1,"completion_tokens":1}`+"\n", i, i%4)
	}
	require.NoError(t, w.Flush())
	require.NoError(t, f.Close())

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c, err := judge.OpenCacheContext(ctx, p)
	require.ErrorIs(t, err, context.Canceled)
	assert.Nil(t, c)

	c, err = judge.OpenCacheContext(context.Background(), p)
	require.NoError(t, err)
	defer c.Close()
	assert.Equal(t, n, c.Loaded())
}
