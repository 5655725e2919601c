package input

import (
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
		b, err := ReadLineAt(strings.NewReader(body), n)
		require.NoError(t, err)
		assert.Equal(t, want, string(b), "line %d", n)
	}
	for _, n := range []int{7, 8} {
		b, err := ReadLineAt(strings.NewReader(body), n)
		require.NoError(t, err)
		assert.Nil(t, b, "line %d", n)
	}
	b, err := ReadLineAt(strings.NewReader("a\n"), 2)
	require.NoError(t, err)
	assert.Nil(t, b, "after the last newline")
}
