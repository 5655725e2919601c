package input

import (
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadLineAt: a line is read whole without its line ending ("\n", and a
// "\r" before it), a BOM dropped on line 1 only, lines longer than the
// buffer skipped whole; past the end is nil.
func TestReadLineAt(t *testing.T) {
	long := strings.Repeat("x", 300<<10)
	body := "\ufeffone\r\n\n \r\n" + long + "\n\ufefffive\r\nsix"
	for n, want := range map[int]string{1: "one", 2: "", 3: " ", 4: long, 5: "\ufefffive", 6: "six"} {
		b, err := ReadLineAt(strings.NewReader(body), n, len(long))
		require.NoError(t, err)
		assert.Equal(t, want, string(b), "line %d", n)
	}
	for _, n := range []int{7, 8} {
		b, err := ReadLineAt(strings.NewReader(body), n, len(long))
		require.NoError(t, err)
		assert.Nil(t, b, "line %d", n)
	}
	b, err := ReadLineAt(strings.NewReader("a\n"), 2, 1)
	require.NoError(t, err)
	assert.Nil(t, b, "after the last newline")
}

// TestReadLineAtLimit: line n is held up to the limit (a BOM and a "\r\n"
// beside it), a longer one refused without reading it on, however long; the
// lines skipped before it have no limit.
func TestReadLineAtLimit(t *testing.T) {
	b, err := ReadLineAt(strings.NewReader("\ufeff"+strings.Repeat("x", 10)+"\r\n"), 1, 10)
	require.NoError(t, err)
	assert.Equal(t, strings.Repeat("x", 10), string(b))
	b, err = ReadLineAt(strings.NewReader(strings.Repeat("y", 1000)+"\n"+strings.Repeat("x", 10)), 2, 10)
	require.NoError(t, err)
	assert.Equal(t, strings.Repeat("x", 10), string(b), "a long line skipped")
	for _, body := range []string{strings.Repeat("x", 11), strings.Repeat("x", 11) + "\n", strings.Repeat("x", 13) + "\n"} {
		_, err = ReadLineAt(strings.NewReader(body), 1, 10)
		require.EqualError(t, err, "line 1 is longer than 10 bytes: the input changed since it was read", "%d bytes", len(body))
	}
	// A line far over the limit is not held: a 64 MiB line against a 1 MiB
	// limit allocates the reader's buffer and about the limit, not the line.
	const limit = 1 << 20
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = ReadLineAt(io.LimitReader(zeros{}, 64<<20), 1, limit)
	runtime.ReadMemStats(&after)
	require.Error(t, err)
	t.Logf("%d bytes allocated", after.TotalAlloc-before.TotalAlloc)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(4*limit), "bytes allocated")
}

// zeros reads as an endless run of 'x' (no newline).
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}
