package metrics

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Reference values: statsmodels 0.13.5 proportion_confint(k, n, alpha=0.05, method="wilson").
func TestWilsonInterval(t *testing.T) {
	tests := []struct {
		k, n   int64
		lo, hi float64
	}{
		{0, 1, 0.0, 0.7934506856227627},
		{1, 1, 0.2065493143772374, 1.0},
		{5, 5, 0.5655175352168252, 1.0},
		{4, 5, 0.3755346297625252, 0.9637758913675698},
		{18, 20, 0.6989663547715127, 0.9721335187862318},
		{0, 10, 0.0, 0.27753279986288926},
		{7, 29, 0.12218422442520083, 0.4210760161781134},
		{1000, 2500, 0.3809638995968933, 0.4193429456154632},
		{3, 7, 0.15821985525146964, 0.7495416354723428},
	}
	for _, tt := range tests {
		ci := WilsonInterval(tt.k, tt.n, Z95)
		assert.InDelta(t, tt.lo, ci[0], 1e-12, "%d/%d lo", tt.k, tt.n)
		assert.InDelta(t, tt.hi, ci[1], 1e-12, "%d/%d hi", tt.k, tt.n)
		assert.Less(t, ci[0], ci[1], "%d/%d: never a point for n >= 1", tt.k, tt.n)
	}
	ci := WilsonInterval(0, 0, Z95)
	assert.True(t, math.IsNaN(ci[0]) && math.IsNaN(ci[1]))
	assert.Panics(t, func() { WilsonInterval(3, 2, Z95) })

	iv := WilsonCI95(5, 5)
	assert.Equal(t, MethodWilson, iv.Method)
	assert.True(t, iv.Unreliable, "n = 5")
	assert.True(t, WilsonCI95(9, 10).Unreliable, "Wilson below 50")
	assert.False(t, WilsonCI95(45, 50).Unreliable)
}

func TestUnreliable(t *testing.T) {
	for n, want := range map[int64]bool{0: true, 1: true, 9: true, 29: true, 30: false, 1000: false} {
		assert.Equal(t, want, Unreliable(n), "n = %d", n)
	}
}

func TestBoundedWilson(t *testing.T) {
	// Five equal values 0.6 of a [0,1] measure: the Wilson interval at p = 0.6, n = 5
	// (statsmodels wilson for 3/5 is the same: p̂ = 0.6).
	iv := BoundedWilsonCI95(0.6, 5, 0, 1)
	ref := WilsonInterval(3, 5, Z95)
	assert.InDelta(t, ref[0], iv.Lo, 1e-15)
	assert.InDelta(t, ref[1], iv.Hi, 1e-15)
	assert.Equal(t, MethodBoundedWilson, iv.Method)
	// Rescaled to [0, 10]: the same interval times 10.
	iv = BoundedWilsonCI95(6, 5, 0, 10)
	assert.InDelta(t, 10*ref[0], iv.Lo, 1e-12)
	assert.InDelta(t, 10*ref[1], iv.Hi, 1e-12)
	// An unbounded measure cannot be widened from the data: its range.
	iv = BoundedWilsonCI95(3, 5, 0, math.Inf(1))
	assert.Equal(t, MethodRange, iv.Method)
	assert.Equal(t, [2]float64{0, math.Inf(1)}, iv.CI())
}

func TestHistogramMeanCI95ChoosesMethod(t *testing.T) {
	h := NewHistogram()
	for range 5 {
		h.Add(1)
	}
	require.True(t, h.IsBinary())
	iv := h.MeanCI95(1000, DefaultSeed, 0, 1)
	assert.Equal(t, MethodWilson, iv.Method, "5 hits out of 5 is a proportion")
	assert.InDelta(t, 0.5655175352168252, iv.Lo, 1e-12, "not the point [1, 1]")
	assert.Equal(t, 1.0, iv.Hi)
	assert.True(t, iv.Unreliable)

	h.Add(0.5)
	assert.False(t, h.IsBinary())
	iv = h.MeanCI95(2000, DefaultSeed, 0, 1)
	assert.Equal(t, MethodBCa, iv.Method)
	assert.Less(t, iv.Lo, iv.Hi)

	one := NewHistogram()
	one.Add(0.63)
	iv = one.MeanCI95(2000, DefaultSeed, 0, 1)
	assert.Equal(t, MethodBoundedWilson, iv.Method, "n = 1 widens, never [v, v]")
	assert.Less(t, iv.Lo, 0.63)
	assert.Greater(t, iv.Hi, 0.63)
	assert.False(t, NewHistogram().IsBinary())
}
