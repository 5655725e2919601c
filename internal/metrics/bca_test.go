package metrics

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var bcaSample = []float64{0.2, 0.2, 0.5, 0.9, 0.9, 0.9, 1.0, 0.0, 0.3, 0.7, 0.7, 0.4}

func TestJackknifeAccelerationOverDistinctValues(t *testing.T) {
	// Reference: numpy, the brute-force jackknife over all 12 items,
	// a = Σ(θ̄−θ_(i))³ / (6 (Σ(θ̄−θ_(i))²)^1.5) = -0.009070941952110176.
	h := NewHistogram()
	for _, v := range bcaSample {
		h.Add(v)
	}
	vals, cnt := h.sorted()
	sum := 0.0
	for _, v := range bcaSample {
		sum += v
	}
	jack := make([]float64, len(vals))
	for i, v := range vals {
		jack[i] = (sum - v) / float64(len(bcaSample)-1)
	}
	assert.InDelta(t, -0.009070941952110176, JackknifeAcceleration(jack, cnt), 1e-15)
	assert.Equal(t, 0.0, JackknifeAcceleration([]float64{1, 1}, []int64{3, 4}))
}

func TestBCaCI95MatchesScipy(t *testing.T) {
	// Reference: scipy 1.10.1 stats.bootstrap(method="BCa", n_resamples=200000)
	// gives [0.36666666666666664, 0.7333333333333333]; the percentile method
	// [0.375, 0.7416666666666666]. Means of 12 of these values lie on the lattice
	// 1/120, so Monte Carlo error shows as a jump of a lattice step: the ends must be
	// the same lattice points (tolerance half a step).
	h := NewHistogram()
	for _, v := range bcaSample {
		h.Add(v)
	}
	// Plain BCa (nominal 2.5% tails) is scipy's; the reports' BCaCI95 takes the
	// quantiles at the small-sample expanded level, strictly wider.
	vals, cnt := h.sorted()
	var sum float64
	for _, v := range bcaSample {
		sum += v
	}
	jack := make([]float64, len(vals))
	for i, v := range vals {
		jack[i] = (sum - v) / float64(len(bcaSample)-1)
	}
	stats, err := resampleHistogramMeans(context.Background(), vals, cnt, h.n, 200000, DefaultSeed)
	require.NoError(t, err)
	plain := BCaFromReplicates(stats, sum/12, JackknifeAcceleration(jack, cnt))
	assert.InDelta(t, 0.36666666666666664, plain[0], 1.0/240)
	assert.InDelta(t, 0.7333333333333333, plain[1], 1.0/240)
	iv := h.BCaCI95(200000, DefaultSeed, 0, 1)
	assert.Equal(t, MethodBCa, iv.Method)
	assert.Less(t, iv.Lo, plain[0])
	assert.Greater(t, iv.Hi, plain[1])
	pct := h.CI95(200000, DefaultSeed)
	assert.InDelta(t, 0.375, pct[0], 1.0/240)
	assert.InDelta(t, 0.7416666666666666, pct[1], 1.0/240)
	assert.Equal(t, int64(12), iv.N)
	assert.True(t, iv.Unreliable, "BCa below 30 items")
}

func TestBCaFromReplicatesWithoutBiasIsPercentile(t *testing.T) {
	// θ̂ at the median of symmetric replicates and a = 0: z₀ = 0, the levels are
	// exactly 0.025 and 0.975.
	stats := make([]float64, 1001)
	for i := range stats {
		stats[i] = float64(i)
	}
	ci := BCaFromReplicates(stats, 500, 0)
	assert.InDelta(t, 25, ci[0], 1e-9)
	assert.InDelta(t, 975, ci[1], 1e-9)
	// Positive acceleration shifts both ends up.
	ci = BCaFromReplicates(stats, 500, 0.1)
	assert.Greater(t, ci[0], 25.0)
	assert.Greater(t, ci[1], 975.0)
}

func TestBCaCollapsedWidens(t *testing.T) {
	h := NewHistogram()
	for range 7 {
		h.Add(0.4)
	}
	iv := h.BCaCI95(1000, DefaultSeed, 0, 1)
	assert.Equal(t, MethodBoundedWilson, iv.Method)
	ref := BoundedWilsonCI95(0.4, 7, 0, 1)
	assert.Equal(t, ref, iv)
	assert.Less(t, iv.Lo, 0.4)
	assert.Greater(t, iv.Hi, 0.4)
	assert.True(t, iv.Unreliable)
}

func TestBCaFlatMemoryDeterministic(t *testing.T) {
	// A million few-valued items: the histogram holds 4 entries and the result
	// depends on the seed only.
	h := NewHistogram()
	for i := range 1_000_000 {
		h.Add(float64(i%4) / 3)
	}
	assert.Equal(t, 4, h.Distinct())
	a := h.BCaCI95(2000, 7, 0, 1)
	b := h.BCaCI95(2000, 7, 0, 1)
	assert.Equal(t, a, b)
	assert.Less(t, a.Lo, 0.5)
	assert.Greater(t, a.Hi, 0.5)
}

// BCaFromReplicates is the BCa 95% interval from bootstrap replicates stats (sorted
// in place), the estimate theta and the acceleration a: the type-7 quantiles of the
// replicates at the BCa-adjusted levels of 0.025 and 0.975.
func BCaFromReplicates(stats []float64, theta, a float64) [2]float64 {
	return bcaAt(stats, theta, a, 0.025)
}
