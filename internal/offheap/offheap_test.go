package offheap

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAllocFree(t *testing.T) {
	for i, n := range []int{0, 1, 4095, 4096, 1 << 20, 0, 1, 4095, 4096, 1 << 20} {
		alloc := Alloc
		if i >= 5 {
			alloc = AllocPopulated
		}
		b, ok := alloc(n)
		require.Len(t, b, n)
		for i := range b {
			if b[i] != 0 {
				t.Fatalf("byte %d of %d not zero", i, n)
			}
		}
		if n > 0 {
			b[0], b[n-1] = 1, 2
			assert.Equal(t, byte(2), b[n-1])
		}
		if ok {
			Free(b)
		}
	}
}
