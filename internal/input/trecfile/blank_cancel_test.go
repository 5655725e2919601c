package trecfile

import (
	"context"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// blankRun is a run of size bytes of white space with positioned reads, which
// counts the bytes it gives.
type blankRun struct {
	size, read int64
}

func (b *blankRun) ReadAt(p []byte, off int64) (int, error) {
	if off >= b.size {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), b.size-off))
	for i := range p[:n] {
		p[i] = ' '
	}
	b.read += int64(n)
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (b *blankRun) Read([]byte) (int, error) { return 0, io.EOF }
func (b *blankRun) Size() int64              { return b.size }

// A run's format is told by its first byte that is not white space, found
// 4 KiB at a time with no look at the context: gigabytes of white space
// took seconds after a signal. The search now ends with the context's
// error: given a cancelled context, nothing of 1 GiB is read.
func TestFirstByteStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := &blankRun{size: 1 << 30}
	_, err := ReadRunFrom(ctx, r, "run.trec", 10, RunOptions{})
	require.ErrorIs(t, err, context.Canceled)
	_, ok := SequentialTREC(ctx, r)
	assert.False(t, ok)
	assert.Zero(t, r.read, "read after the context ended")

	small := &blankRun{size: 64 << 10}
	_, err = ReadRunFrom(context.Background(), small, "run.trec", 10, RunOptions{})
	require.ErrorContains(t, err, "empty run")
	assert.EqualValues(t, 64<<10, small.read)
}
