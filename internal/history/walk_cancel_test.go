package history

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The fingerprint of a directory input (the KB, a directory of shards)
// walked the whole tree before hashing a file, and the walk never looked at
// the context: a large tree (a .git inside the KB holds every object) took
// seconds after a signal. The walk now stops with the context's error: a
// tree of directories alone (nothing to hash, so no read to stop at) gives
// context.Canceled, where it gave a fingerprint.
func TestHashPathWalkStopsOnCancel(t *testing.T) {
	dir := t.TempDir()
	for i := range 200 {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, fmt.Sprintf("d%d", i), "sub"), 0o755))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	h, err := hashPath(ctx, dir)
	require.ErrorIs(t, err, context.Canceled)
	assert.Empty(t, h)

	h, err = hashPath(context.Background(), dir)
	require.NoError(t, err)
	assert.NotEmpty(t, h)
}
