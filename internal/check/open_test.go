package check_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/baseline"
	"github.com/retrieval-gate/retrieval-gate/internal/check"
)

func TestOpenBaseline(t *testing.T) {
	ctx := context.Background()

	var in check.In
	why := &baseline.Unavailability{Code: baseline.NotInActions}
	b, err := check.OpenBaseline(ctx, check.BaselineSpec{Unavailable: why}, &in)
	require.NoError(t, err)
	assert.Nil(t, b, "nothing to open")
	assert.Equal(t, why, in.BaselineUnavailable)
	require.NoError(t, b.Close(), "a nil Baseline closes")

	cleaned := 0
	cleanup := func() error { cleaned++; return errors.New("busy") }
	in = check.In{}
	_, err = check.OpenBaseline(ctx, check.BaselineSpec{Path: filepath.Join(t.TempDir(), "missing.gz"), Cleanup: cleanup}, &in)
	require.ErrorContains(t, err, "failed to read the baseline")
	assert.Equal(t, 1, cleaned, "a downloaded file is removed when it cannot be opened")

	path := filepath.Join(t.TempDir(), "b.jsonl.gz")
	require.NoError(t, os.WriteFile(path, []byte("x"), 0o600))
	in, cleaned = check.In{}, 0
	src := map[string]string{"run_id": "7"}
	b, err = check.OpenBaseline(ctx, check.BaselineSpec{Path: path, Name: "artifact a", Source: src, Cleanup: cleanup, Write: true}, &in)
	require.NoError(t, err)
	assert.Equal(t, "artifact a", in.BaselineName)
	assert.Equal(t, src, in.BaselineSource)
	assert.NotNil(t, in.Baseline)
	assert.NotNil(t, in.BaselineBody)
	require.EqualError(t, b.Close(), "busy", "the removal's error is the caller's warning")
	assert.Equal(t, 1, cleaned)
	require.NoError(t, b.Close(), "removed once")
}
