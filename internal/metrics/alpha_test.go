package metrics

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// unitsOf turns a reliability data matrix (rows: raters, columns: units; 0 =
// missing, else the value v ≥ 1 as category v−1) into each unit's values.
func unitsOf(rows [][]int) [][]int {
	units := make([][]int, len(rows[0]))
	for _, r := range rows {
		for u, v := range r {
			if v > 0 {
				units[u] = append(units[u], v-1)
			}
		}
	}
	return units
}

// The published examples of Krippendorff (2011), "Computing Krippendorff's
// Alpha-Reliability", and of Wikipedia's "Krippendorff's alpha" article, to the
// three decimals they are published with.
func TestKrippendorffAlphaPublished(t *testing.T) {
	// Krippendorff 2011, C: 4 observers, 12 units, missing values; unit 12
	// has a single value and is not pairable.
	fourObservers := unitsOf([][]int{
		{1, 2, 3, 3, 2, 1, 4, 1, 2, 0, 0, 0},
		{1, 2, 3, 3, 2, 2, 4, 1, 2, 5, 0, 3},
		{0, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, 0},
		{1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, 0},
	})
	// Krippendorff 2011, A: two observers, binary data.
	binary := unitsOf([][]int{
		{1, 2, 1, 1, 1, 1, 1, 1, 2, 1},
		{2, 2, 2, 1, 1, 2, 1, 1, 1, 1},
	})
	// Wikipedia's computational example: 3 coders, 15 units.
	wikipedia := unitsOf([][]int{
		{0, 0, 0, 0, 0, 3, 4, 1, 2, 1, 1, 3, 3, 0, 3},
		{1, 0, 2, 1, 3, 3, 4, 3, 0, 0, 0, 0, 0, 0, 0},
		{0, 0, 2, 1, 3, 4, 4, 0, 2, 1, 1, 3, 3, 0, 4},
	})
	ordinal := func(units [][]int, k int) [][]float64 {
		a := NewAlphaUnits(k)
		for _, u := range units {
			a.Add(u)
		}
		o := a.Coincidences()
		tot := make([]float64, k)
		for c := range o {
			for _, v := range o[c] {
				tot[c] += v
			}
		}
		return OrdinalDelta(tot)
	}
	for _, tc := range []struct {
		name  string
		units [][]int
		k     int
		delta [][]float64
		want  float64
	}{
		{"four observers, nominal", fourObservers, 5, NominalDelta(5), 0.743},
		{"four observers, ordinal", fourObservers, 5, ordinal(fourObservers, 5), 0.815},
		{"four observers, interval", fourObservers, 5, IntervalDelta(5), 0.849},
		{"binary, nominal", binary, 2, NominalDelta(2), 0.095},
		{"wikipedia, nominal", wikipedia, 4, NominalDelta(4), 0.691},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := KrippendorffAlpha(tc.units, tc.k, tc.delta)
			assert.InDelta(t, tc.want, got, 0.0005, "alpha %v", got)
		})
	}
}

func TestKrippendorffAlphaCounts(t *testing.T) {
	a := NewAlphaUnits(5)
	for _, u := range unitsOf([][]int{
		{1, 2, 3, 3, 2, 1, 4, 1, 2, 0, 0, 0},
		{1, 2, 3, 3, 2, 2, 4, 1, 2, 5, 0, 3},
		{0, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, 0},
		{1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, 0},
	}) {
		a.Add(u)
	}
	// 11 pairable units, 40 pairable values (Krippendorff's n..).
	assert.Equal(t, int64(11), a.Units())
	assert.Equal(t, int64(40), a.Values())
	// The coincidence matrix of the paper: n_1 = 9, n_2 = 13, n_3 = 10, n_4 = 5, n_5 = 3
	// (the row sums), and o_11 = 6, o_12 = 4/3 (2 values of unit 6 ... etc.).
	o := a.Coincidences()
	wantTotals := []float64{9, 13, 10, 5, 3}
	for c, row := range o {
		var s float64
		for _, v := range row {
			s += v
		}
		assert.InDelta(t, wantTotals[c], s, 1e-12, "n_%d", c+1)
	}
	assert.InDelta(t, 7.0, o[0][0]+o[0][1]-4.0/3, 1e-12) // o_11 = 7, o_12 = 4/3
}

func TestKrippendorffAlphaEdges(t *testing.T) {
	for _, tc := range []struct {
		name  string
		units [][]int
		want  float64 // NaN: undefined
	}{
		{"no pairable unit", [][]int{{0}, {1}}, math.NaN()},
		{"one category only", [][]int{{1, 1}, {1, 1, 1}}, math.NaN()},
		{"perfect agreement", [][]int{{0, 0}, {1, 1, 1}, {2, 2}}, 1},
		// Two raters who always disagree, 0 against 1: n = 4 values, D_o = 4/4 = 1,
		// D_e = (2·2 + 2·2)/(4·3) = 2/3, α = 1 − 3/2.
		{"systematic disagreement", [][]int{{0, 1}, {1, 0}}, -0.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := KrippendorffAlpha(tc.units, 3, NominalDelta(3))
			if math.IsNaN(tc.want) {
				assert.True(t, math.IsNaN(got), "got %v", got)
				return
			}
			assert.InDelta(t, tc.want, got, 1e-12)
		})
	}
}

// With two raters, no missing values and the nominal metric, alpha is Scott's pi
// with Krippendorff's small-sample correction: α = 1 − (n−1)/n · (1 − A_o)/(1 − P_e)
// where n is the number of values and P_e = Σ_c (n_c/n)² (the pooled margins).
func TestKrippendorffAlphaTwoRatersIsCorrectedScottsPi(t *testing.T) {
	units := [][]int{{0, 0}, {0, 1}, {1, 1}, {2, 2}, {2, 1}, {0, 0}, {1, 2}, {2, 2}}
	var agree float64
	tot := make([]float64, 3)
	for _, u := range units {
		if u[0] == u[1] {
			agree++
		}
		tot[u[0]]++
		tot[u[1]]++
	}
	n := float64(2 * len(units))
	ao := agree / float64(len(units))
	var pe float64
	for _, c := range tot {
		pe += (c / n) * (c / n)
	}
	want := 1 - (n-1)/n*(1-ao)/(1-pe)
	assert.InDelta(t, want, KrippendorffAlpha(units, 3, NominalDelta(3)), 1e-12)
	// The lock's weights are any scale of a metric: alpha does not change with the scale.
	assert.InDelta(t, KrippendorffAlpha(units, 3, IntervalDelta(3)), KrippendorffAlpha(units, 3, KappaWeights(3, KappaQuadratic)), 1e-12)
}

func TestAlphaCI95(t *testing.T) {
	ctx := context.Background()
	a := NewAlphaUnits(3)
	// 40 units of three raters: mostly agreeing, some one-off disagreements.
	for i := range 40 {
		switch i % 5 {
		case 0:
			a.Add([]int{0, 0, 1})
		case 1:
			a.Add([]int{2, 2, 2})
		case 2:
			a.Add([]int{1, 1, 1})
		case 3:
			a.Add([]int{1, 2, 2})
		default:
			a.Add([]int{0, 0, 0})
		}
	}
	w := KappaWeights(3, KappaQuadratic)
	alpha := a.Alpha(w)
	iv, err := AlphaCI95Context(ctx, a, w, 2000, DefaultSeed)
	require.NoError(t, err)
	assert.Equal(t, MethodAlphaBCa, iv.Method)
	assert.Equal(t, int64(40), iv.N)
	assert.False(t, iv.Unreliable)
	assert.Less(t, iv.Lo, alpha)
	assert.Greater(t, iv.Hi, alpha)
	assert.LessOrEqual(t, iv.Hi, 1.0)
	// Deterministic.
	iv2, err := AlphaCI95Context(ctx, a, w, 2000, DefaultSeed)
	require.NoError(t, err)
	assert.Equal(t, iv, iv2)

	// No disagreement at all: the bootstrap is a point, so no interval.
	p := NewAlphaUnits(3)
	p.Add([]int{0, 0})
	p.Add([]int{1, 1})
	p.Add([]int{2, 2})
	iv, err = AlphaCI95Context(ctx, p, w, 500, DefaultSeed)
	require.NoError(t, err)
	assert.True(t, math.IsNaN(iv.Lo) && math.IsNaN(iv.Hi))
	assert.Empty(t, iv.Method)

	// A cancelled context stops it.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = AlphaCI95Context(cctx, a, w, 2000, DefaultSeed)
	require.ErrorIs(t, err, context.Canceled)
}
