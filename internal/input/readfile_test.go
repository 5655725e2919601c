package input

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ReadFile reads at most its cap: an endless file (/dev/zero as a prompt
// template) is refused having read one byte past it, not read until memory
// runs out; a file of exactly the cap is read.
func TestReadFileCap(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	_, err := ReadFile(context.Background(), "/dev/zero", 1<<20)
	var ie *Error
	require.ErrorAs(t, err, &ie)
	assert.Equal(t, "/dev/zero: larger than 1048576 bytes, the cap of this file", err.Error())
	p := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(p, []byte("abcd"), 0o644))
	b, err := ReadFile(context.Background(), p, 4)
	require.NoError(t, err)
	assert.Equal(t, "abcd", string(b))
	_, err = ReadFile(context.Background(), p, 3)
	require.ErrorAs(t, err, &ie)
}
