package input_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
)

// A directory of shards was walked whole (a partitioned dataset may hold a
// million files: seconds) with no look at the context, before the first
// shard was opened. The walk now ends with the context's error, as does the
// check of a pattern's matches; OpenSharded walks with its context.
func TestExpandShardsStopsOnCancel(t *testing.T) {
	dir := t.TempDir()
	for i := range 100 {
		p := filepath.Join(dir, fmt.Sprintf("locale=l%d", i), "part-0.jsonl")
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(`{"id":"c"}`+"\n"), 0o644))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, path := range []string{dir, filepath.Join(dir, "*", "part-0.jsonl")} {
		files, err := input.ExpandShardsContext(ctx, path)
		require.ErrorIs(t, err, context.Canceled, path)
		assert.Nil(t, files)
		_, err = input.OpenSharded(ctx, path)
		require.ErrorIs(t, err, context.Canceled, path)

		files, err = input.ExpandShardsContext(context.Background(), path)
		require.NoError(t, err)
		assert.Len(t, files, 100)
	}
}
