package metrics

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestHolmWithin(t *testing.T) {
	// Two strategies × two measures. Adjusting over all four (Holm) makes the
	// primary measure's 0.02 → 0.06 (not significant at 0.05); within the primary
	// family of two strategies it is 0.04.
	p := []float64{0.02, 0.03, 0.001, 0.5}
	fam := []string{"dcg_at_k", "dcg_at_k", "p_at_k", "p_at_k"}
	assert.InDeltaSlice(t, []float64{0.04, 0.04, 0.002, 0.5}, HolmWithin(p, fam), 1e-15)
	assert.InDeltaSlice(t, []float64{0.06, 0.06, 0.004, 0.5}, Holm(p), 1e-15)
	// One family is plain Holm.
	assert.Equal(t, Holm(p), HolmWithin(p, []string{"a", "a", "a", "a"}))
	assert.Empty(t, HolmWithin(nil, nil))
	assert.Panics(t, func() { HolmWithin(p, fam[:2]) })
}
