package metrics

import (
	"math"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestHolm(t *testing.T) {
	// Textbook example: p = 0.01, 0.04, 0.03, 0.005 (m = 4).
	// Sorted 0.005·4 = 0.02, 0.01·3 = 0.03, 0.03·2 = 0.06, 0.04·1 = 0.04 → max-accumulated 0.06.
	got := Holm([]float64{0.01, 0.04, 0.03, 0.005})
	want := []float64{0.03, 0.06, 0.06, 0.02}
	for i := range want {
		assert.InDelta(t, want[i], got[i], 1e-12)
	}
	assert.Equal(t, []float64{1, 1}, Holm([]float64{0.7, 0.9}))
	assert.Empty(t, Holm(nil))
}

func randomColumns(n, cols int, seed uint64) []float64 {
	r := NewRand(seed)
	x := make([]float64, n*cols)
	for i := range x {
		x[i] = r.Float64() * float64(1+i%cols)
	}
	return x
}

func TestBootstrapMeansCI95(t *testing.T) {
	const n, cols = 200, 3
	x := randomColumns(n, cols, 9)
	ci := BootstrapMeansCI95(x, n, cols, 2000, DefaultSeed)
	for c := range cols {
		col := make([]float64, n)
		mean := 0.0
		for i := range n {
			col[i] = x[i*cols+c]
			mean += col[i]
		}
		mean /= n
		assert.Less(t, ci[c][0], mean)
		assert.Greater(t, ci[c][1], mean)
		// Same width as the single-series bootstrap, within Monte Carlo error.
		ref := meanCI95Items(col, 2000, DefaultSeed)
		assert.InDelta(t, ref[1]-ref[0], ci[c][1]-ci[c][0], 0.1*(ref[1]-ref[0]))
		// And as the large-sample approximation.
		approx := MeanCI95Normal(col)
		assert.InDelta(t, approx[0], ci[c][0], 0.1*(ref[1]-ref[0]))
		assert.InDelta(t, approx[1], ci[c][1], 0.1*(ref[1]-ref[0]))
	}
	// A constant series has a zero-width interval.
	assert.Equal(t, [2]float64{2, 2}, BootstrapMeansCI95([]float64{2, 2, 2}, 3, 1, 100, 1)[0])
	assert.True(t, math.IsNaN(BootstrapMeansCI95(nil, 0, 1, 100, 1)[0][0]))
}

func TestResamplingDeterministicAcrossGOMAXPROCS(t *testing.T) {
	const n, cols = 150, 4
	x := randomColumns(n, cols, 5)
	d := make([]float64, len(x))
	for i := range x {
		d[i] = x[i] - 1.2
	}
	prev := runtime.GOMAXPROCS(1)
	ci1 := BootstrapMeansCI95(x, n, cols, 1000, 7)
	p1 := SignFlipPValues(d, n, cols, 1000, 7)
	runtime.GOMAXPROCS(4)
	ci4 := BootstrapMeansCI95(x, n, cols, 1000, 7)
	p4 := SignFlipPValues(d, n, cols, 1000, 7)
	runtime.GOMAXPROCS(prev)
	assert.Equal(t, ci1, ci4)
	assert.Equal(t, p1, p4)
	assert.NotEqual(t, ci1, BootstrapMeansCI95(x, n, cols, 1000, 8), "the seed matters")
}

func TestSignFlipPValues(t *testing.T) {
	// d = (1, 2, 3): of the 8 sign patterns, |Σ s d| ≥ 6 for 2, so the exact p is 0.25.
	p := SignFlipPValues([]float64{1, 2, 3}, 3, 1, 20000, DefaultSeed)[0]
	assert.InDelta(t, 0.25, p, 0.01)
	// All-zero differences: p = 1.
	assert.Equal(t, 1.0, SignFlipPValues([]float64{0, 0, 0, 0}, 4, 1, 500, 1)[0])
	// A consistent shift over 60 queries: every flip is less extreme, p = 1/(B+1).
	shift := make([]float64, 60)
	for i := range shift {
		shift[i] = 0.5 + float64(i%3)/10
	}
	assert.Equal(t, 1.0/1001, SignFlipPValues(shift, 60, 1, 1000, 1)[0])
	// Two columns share the sign vector but are tested separately.
	two := []float64{1, 0, 2, 0, 3, 0}
	ps := SignFlipPValues(two, 3, 2, 20000, DefaultSeed)
	assert.InDelta(t, 0.25, ps[0], 0.01)
	assert.Equal(t, 1.0, ps[1])
}

func TestMeanCI95NormalSkew(t *testing.T) {
	// Right-skewed data: the interval leans right of the symmetric one.
	xs := make([]float64, 500)
	for i := range xs {
		if i%10 == 0 {
			xs[i] = 10
		}
	}
	ci := MeanCI95Normal(xs)
	mean := 1.0
	assert.Greater(t, ci[1]-mean, mean-ci[0])
	mc := meanCI95Items(xs, 20000, DefaultSeed)
	assert.InDelta(t, mc[0], ci[0], 0.03)
	assert.InDelta(t, mc[1], ci[1], 0.03)
	assert.True(t, ResamplingIsExact(2000, 10000))
	assert.False(t, ResamplingIsExact(2001, 10000))
}

// meanCI95Items is the textbook percentile bootstrap of a mean, resampling items
// (O(len(xs)·resamples)): the independent reference the fast bootstraps are checked against.
func meanCI95Items(xs []float64, resamples int, seed uint64) [2]float64 {
	n := len(xs)
	r := NewRand(seed)
	stats := make([]float64, resamples)
	for b := range stats {
		s := 0.0
		for range n {
			s += xs[r.IntN(n)]
		}
		stats[b] = s / float64(n)
	}
	return percentileCI95(stats)
}
