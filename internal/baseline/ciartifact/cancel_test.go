package ciartifact

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingReader counts the bytes read from r.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// bigBaseline is a gzip baseline of n case lines that compress little.
func bigBaseline(t *testing.T, n int) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	fmt.Fprintln(w, `{"schema": "retrieval-gate/baseline@1"}`)
	x := uint64(1)
	for i := range n {
		x = x*6364136223846793005 + 1442695040888963407
		fmt.Fprintf(w, `{"id": "q%d", "h": "%x%x"}`+"\n", i, x, x*x)
	}
	require.NoError(t, w.Close())
	return b.Bytes()
}

// A fetched baseline is decoded whole to verify it (up to 4 GiB expanded,
// seconds), and the decoding never looked at the context: a signal during
// check --baseline auto waited for it. It stops now at the next 64 KiB of
// the decoded stream: given a cancelled context, the baseline is unavailable
// as a cancelled search, after less than 1 MiB of a file of several read.
func TestVerifyReaderStopsOnCancel(t *testing.T) {
	data := bigBaseline(t, 200_000)
	require.Greater(t, len(data), 4<<20)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := &countingReader{r: bytes.NewReader(data)}
	schema, u := VerifyReader(ctx, r, "it", DefaultLimits)
	require.NotNil(t, u)
	assert.Empty(t, schema)
	assert.Equal(t, Network, u.Reason)
	assert.Contains(t, u.Message, "cancelled")
	assert.Less(t, r.n, int64(1<<20), "read %d of %d bytes after the context ended", r.n, len(data))

	schema, u = VerifyReader(context.Background(), bytes.NewReader(data), "it", DefaultLimits)
	require.Nil(t, u)
	assert.Equal(t, "retrieval-gate/baseline@1", schema)
}
