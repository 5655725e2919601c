package ghartifact

import (
	"archive/zip"
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/baseline/ciartifact"
)

// countingWriter counts the bytes written.
type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}

// An artifact's baseline file is inflated from its zip (up to 256 MiB,
// seconds) with no look at the context: a signal during check --baseline
// auto waited for it. It stops now at the next read: given a cancelled
// context, the baseline is unavailable as a cancelled search, nothing of a
// 64 MiB entry written.
func TestExtractStopsOnCancel(t *testing.T) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.Create(ciartifact.FileName)
	require.NoError(t, err)
	_, err = io.Copy(w, io.LimitReader(zeros{}, 64<<20))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	data := buf.Bytes()

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out countingWriter
	un := extract(ctx, bytes.NewReader(data), int64(len(data)), 1, &out)
	require.NotNil(t, un)
	assert.Equal(t, ciartifact.Network, un.Reason)
	assert.Contains(t, un.Message, "cancelled")
	assert.Zero(t, out.n, "inflated after the context ended")

	out = countingWriter{}
	require.Nil(t, extract(context.Background(), bytes.NewReader(data), int64(len(data)), 1, &out))
	assert.EqualValues(t, 64<<20, out.n)
}

// zeros is an endless reader of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
