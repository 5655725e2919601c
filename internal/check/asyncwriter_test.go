package check

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type slowWriter struct {
	bytes.Buffer
	calls int
	fail  error
}

func (w *slowWriter) Write(p []byte) (int, error) {
	w.calls++
	if w.fail != nil && w.calls > 2 {
		return 0, w.fail
	}
	if w.calls%3 == 0 {
		time.Sleep(time.Millisecond)
	}
	return w.Buffer.Write(p)
}

func TestAsyncWriter(t *testing.T) {
	var want bytes.Buffer
	sw := &slowWriter{}
	aw := newAsyncWriter(sw)
	for i := range 200000 {
		line := []byte(fmt.Sprintf("line %d %s\n", i, strings.Repeat("x", i%97)))
		want.Write(line)
		n, err := aw.Write(line)
		require.NoError(t, err)
		require.Equal(t, len(line), n)
	}
	require.NoError(t, aw.Close())
	assert.Equal(t, want.Len(), sw.Len())
	assert.True(t, bytes.Equal(want.Bytes(), sw.Bytes()))

	boom := errors.New("disk full")
	fw := &slowWriter{fail: boom}
	aw = newAsyncWriter(fw)
	var werr error
	for range 200 {
		if _, werr = aw.Write(bytes.Repeat([]byte("y"), 600<<10)); werr != nil {
			break
		}
		time.Sleep(time.Millisecond)
	}
	require.ErrorIs(t, werr, boom, "Write reports the writer's failure so the stream stops early")
	assert.ErrorIs(t, aw.Close(), boom)
}
