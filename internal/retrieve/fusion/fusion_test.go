package fusion

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRRF(t *testing.T) {
	got := RRF([]string{"a", "b", "c"}, []string{"c", "a", "d"})
	require.Len(t, got, 4)
	// a: 1/61 + 1/62; c: 1/63 + 1/61; b: 1/62; d: 1/63.
	assert.Equal(t, []string{"a", "c", "b", "d"}, ids(got))
	assert.InDelta(t, 1.0/61+1.0/62, got[0].Score, 1e-15)
	assert.InDelta(t, 1.0/63+1.0/61, got[1].Score, 1e-15)
	assert.InDelta(t, 1.0/62, got[2].Score, 1e-15)
	assert.InDelta(t, 1.0/63, got[3].Score, 1e-15)
}

func TestRRFTiesAndRepeats(t *testing.T) {
	// x and y both have 1/61 + 1/62; x has the better best rank? Both have rank 1: id order.
	got := RRF([]string{"y", "x"}, []string{"x", "y"})
	assert.Equal(t, []string{"x", "y"}, ids(got))
	// A repeat within one ranking counts once.
	got = RRF([]string{"a", "a", "b"})
	assert.Equal(t, []string{"a", "b"}, ids(got))
	assert.InDelta(t, 1.0/61, got[0].Score, 1e-15)
	assert.InDelta(t, 1.0/63, got[1].Score, 1e-15, "b keeps its position 3")
	assert.Empty(t, RRF())
}

func ids(fs []Fused) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.ID)
	}
	return out
}
