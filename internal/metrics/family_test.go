package metrics

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

// TestHolmOrder: the adjusted p-values do not depend on the order of the
// tests (each p keeps its adjusted value wherever it stands), ties included:
// equal p-values get one adjusted value, not one per position.
func TestHolmOrder(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    []float64
		fam  []string
	}{
		{"distinct", []float64{0.01, 0.04, 0.03, 0.2, 0.5}, []string{"a", "a", "a", "a", "a"}},
		{"ties", []float64{0.004, 0.004, 0.004, 0.02, 0.02}, []string{"a", "a", "a", "a", "a"}},
		{"ties at the cap", []float64{0.3, 0.3, 0.3, 0.01, 1}, []string{"a", "a", "a", "a", "a"}},
		{"families", []float64{0.004, 0.004, 0.01, 0.004, 0.03, 0.004}, []string{"a", "b", "a", "b", "a", "b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := HolmWithin(tc.p, tc.fam)
			r := rand.New(rand.NewPCG(1, 2))
			for range 50 {
				perm := r.Perm(len(tc.p))
				p, fam := make([]float64, len(perm)), make([]string, len(perm))
				for i, j := range perm {
					p[i], fam[i] = tc.p[j], tc.fam[j]
				}
				got := HolmWithin(p, fam)
				for i, j := range perm {
					require.Equal(t, want[j], got[i], "order %v, test %d", perm, j)
				}
			}
		})
	}
}
