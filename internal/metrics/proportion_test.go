package metrics

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Reference values: Newcombe (1998), "Two-sided confidence intervals for the
// single proportion: comparison of seven methods", Table I, method 4 (score
// interval with continuity correction), to its 4 decimals; the rest to 1e-12 from
// the algebraically rearranged form (z·√(z² − 1/n + 4np̂(1−p̂) ± (4p̂ − 2)) ± 1)
// computed apart in double precision.
func TestWilsonCCInterval(t *testing.T) {
	published := []struct {
		k, n   int64
		lo, hi float64
	}{
		{81, 263, 0.2535, 0.3682},
		{15, 148, 0.0598, 0.1644},
		{0, 20, 0, 0.2005},
		{1, 29, 0.0018, 0.1963},
		{29, 29, 0.8544, 1},
	}
	for _, tt := range published {
		ci := WilsonCCInterval(tt.k, tt.n, Z95)
		assert.InDelta(t, tt.lo, ci[0], 0.00005, "%d/%d lo", tt.k, tt.n)
		assert.InDelta(t, tt.hi, ci[1], 0.00005, "%d/%d hi", tt.k, tt.n)
	}
	tests := []struct {
		k, n   int64
		lo, hi float64
	}{
		{0, 1, 0, 0.9453792444711481},
		{1, 1, 0.05462075552885201, 1},
		{5, 5, 0.4629439825324768, 1},
		{4, 5, 0.2987910540723935, 0.9894700456409835},
		{18, 20, 0.668722403162941, 0.9824873612265708},
		{0, 10, 0, 0.3445372183069226},
		{7, 29, 0.11017873564417013, 0.43925060704522545},
		{1000, 2500, 0.3807658046766657, 0.41954423367883287},
		{3, 7, 0.11808301126155256, 0.7976283063935146},
	}
	for _, tt := range tests {
		ci := WilsonCCInterval(tt.k, tt.n, Z95)
		assert.InDelta(t, tt.lo, ci[0], 1e-12, "%d/%d lo", tt.k, tt.n)
		assert.InDelta(t, tt.hi, ci[1], 1e-12, "%d/%d hi", tt.k, tt.n)
		assert.Less(t, ci[0], ci[1], "%d/%d: never a point for n >= 1", tt.k, tt.n)
	}
	ci := WilsonCCInterval(0, 0, Z95)
	assert.True(t, math.IsNaN(ci[0]) && math.IsNaN(ci[1]))
	assert.Panics(t, func() { WilsonCCInterval(3, 2, Z95) })

	iv := WilsonCI95(5, 5)
	assert.Equal(t, MethodWilson, iv.Method)
	assert.False(t, iv.Unreliable, "covers at least 0.945 at every n")
	assert.False(t, WilsonCI95(9, 10).Unreliable)
}

func TestUnreliable(t *testing.T) {
	for n, want := range map[int64]bool{0: true, 1: true, 9: true, 29: true, 30: false, 1000: false} {
		assert.Equal(t, want, Unreliable(n), "n = %d", n)
	}
}

func TestBoundedWilson(t *testing.T) {
	// Five equal values 0.6 of a [0,1] measure: the interval at p = 0.6, n = 5
	// (the one of 3/5: p̂ = 0.6).
	iv := BoundedWilsonCI95(0.6, 5, 0, 1)
	ref := WilsonCCInterval(3, 5, Z95)
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

// The interval of values that do not vary holds the value itself and grows
// with it, also where the value lies within 1/(2n) of a bound of the range:
// there the closed form of the continuity-corrected Wilson bound takes the
// wrong root of its quadratic, and two cases at nDCG 0.99 read [0.193, 0.956],
// 30 at 0.9999 [0.859, 0.997] (and 1 − RBO at 0.0001 the mirror image). The
// continuity-corrected score set |p̂ − μ| − 1/(2n) ≤ z·√(μ(1 − μ)/n) holds
// every μ between p̂ and the bound there, so that bound is the range's. At a
// whole count k = np̂ nothing changes (WilsonCCInterval).
func TestBoundedWilsonHoldsTheValue(t *testing.T) {
	for _, n := range []int64{1, 2, 3, 5, 10, 30, 100, 1000} {
		prev := [2]float64{-1, -1}
		for i := range 2001 {
			p := float64(i) / 2000
			iv := BoundedWilsonCI95(p, n, 0, 1)
			require.LessOrEqual(t, iv.Lo, p, "n = %d, p = %v: [%v, %v]", n, p, iv.Lo, iv.Hi)
			require.GreaterOrEqual(t, iv.Hi, p, "n = %d, p = %v: [%v, %v]", n, p, iv.Lo, iv.Hi)
			require.GreaterOrEqual(t, iv.Lo, prev[0]-1e-12, "n = %d, p = %v: the lower bound grows with p", n, p)
			require.GreaterOrEqual(t, iv.Hi, prev[1]-1e-12, "n = %d, p = %v: the upper bound grows with p", n, p)
			prev = [2]float64{iv.Lo, iv.Hi}
		}
		for k := range n + 1 {
			if n > 100 && k%97 != 0 {
				continue
			}
			w := WilsonCCInterval(k, n, Z95)
			iv := BoundedWilsonCI95(float64(k)/float64(n), n, 0, 1)
			assert.InDelta(t, w[0], iv.Lo, 1e-15, "n = %d, k = %d", n, k)
			assert.InDelta(t, w[1], iv.Hi, 1e-15, "n = %d, k = %d", n, k)
		}
	}
	iv := BoundedWilsonCI95(0.99, 2, 0, 1)
	assert.Equal(t, 1.0, iv.Hi)
	iv = BoundedWilsonCI95(0.0001, 30, 0, 1)
	assert.Equal(t, 0.0, iv.Lo)
}

func TestHistogramMeanCI95ChoosesMethod(t *testing.T) {
	h := NewHistogram()
	for range 5 {
		h.Add(1)
	}
	require.True(t, h.IsBinary())
	iv := h.MeanCI95(1000, DefaultSeed, 0, 1)
	assert.Equal(t, MethodWilson, iv.Method, "5 hits out of 5 is a proportion")
	assert.InDelta(t, 0.4629439825324768, iv.Lo, 1e-12, "not the point [1, 1]")
	assert.Equal(t, 1.0, iv.Hi)
	assert.False(t, iv.Unreliable)

	h.Add(0.5)
	assert.False(t, h.IsBinary())
	iv = h.MeanCI95(2000, DefaultSeed, 0, 1)
	assert.Equal(t, MethodHallT, iv.Method, "below 30 items")
	assert.Less(t, iv.Lo, iv.Hi)

	one := NewHistogram()
	one.Add(0.63)
	iv = one.MeanCI95(2000, DefaultSeed, 0, 1)
	assert.Equal(t, MethodBoundedWilson, iv.Method, "n = 1 widens, never [v, v]")
	assert.Less(t, iv.Lo, 0.63)
	assert.Greater(t, iv.Hi, 0.63)
	assert.False(t, NewHistogram().IsBinary())
}
