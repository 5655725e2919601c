package metrics

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The 3×3 table of 1,000 pairs used against statsmodels.
var kappaTable = [][]int{{300, 40, 10}, {30, 200, 50}, {5, 45, 320}}

// Reference values: statsmodels 0.13.5 inter_rater.cohens_kappa(table, wt=...):
// kappa and its asymptotic 95% interval. At n = 1,000 the bootstrap interval of the
// counts and the asymptotic one agree to a few thousandths.
func TestKappaCI95AgainstStatsmodels(t *testing.T) {
	tests := []struct {
		scheme        string
		kappa, lo, hi float64
	}{
		{KappaUnweighted, 0.7282403563070883, 0.6925652457346763, 0.7639154668795003},
		{KappaQuadratic, 0.8430086519676249, 0.8162715923865328, 0.8697457115487169},
		{KappaLinear, 0.7878820841944958, 0.7580347741973934, 0.8177293941915982},
	}
	for _, tt := range tests {
		w := KappaWeights(3, tt.scheme)
		assert.InDelta(t, tt.kappa, WeightedKappa(kappaTable, w), 1e-12, tt.scheme)
		for _, method := range []string{MethodPercentile, MethodBCa} {
			iv := KappaCI95(kappaTable, w, 20000, DefaultSeed, method)
			assert.Equal(t, method, iv.Method)
			assert.Equal(t, int64(1000), iv.N)
			assert.InDelta(t, tt.lo, iv.Lo, 0.004, "%s %s lo", tt.scheme, method)
			assert.InDelta(t, tt.hi, iv.Hi, 0.004, "%s %s hi", tt.scheme, method)
		}
	}
}

// Resampling the counts is resampling the pairs: the same interval as the pairs
// bootstrap (WeightedKappaCI95), within Monte Carlo error.
func TestKappaCI95CountsEqualsPairs(t *testing.T) {
	var first, second []int
	small := [][]int{{3, 1, 0}, {0, 5, 1}, {1, 0, 4}}
	for i := range small {
		for j, c := range small[i] {
			for range c {
				first, second = append(first, i), append(second, j)
			}
		}
	}
	w := KappaWeights(3, KappaQuadratic)
	assert.InDelta(t, 0.664179104477612, WeightedKappa(small, w), 1e-12) // statsmodels
	pairs := WeightedKappaCI95(first, second, 3, w, 40000, 3)
	counts := KappaCI95(small, w, 40000, 5, MethodPercentile)
	assert.InDelta(t, pairs[0], counts.Lo, 0.02)
	assert.InDelta(t, pairs[1], counts.Hi, 0.02)
	assert.True(t, counts.Unreliable, "percentile below 100 pairs")
}

func TestKappaCI95PerfectAgreementWidens(t *testing.T) {
	// Two agreeing pairs: κ = 1, and every resample too. Not [1, 1].
	m := [][]int{{1, 0}, {0, 1}}
	w := KappaWeights(2, KappaUnweighted)
	require.Equal(t, 1.0, WeightedKappa(m, w))
	iv := KappaCI95(m, w, 1000, DefaultSeed, MethodPercentile)
	assert.Equal(t, MethodWilsonDisagreement, iv.Method)
	assert.Equal(t, 1.0, iv.Hi)
	// D_e = 1/2, U = z²/(2 + z²): lo = 1 − 2U, floored at −1.
	z2 := Z95 * Z95
	assert.InDelta(t, max(-1, 1-2*z2/(2+z2)), iv.Lo, 1e-15)
	assert.True(t, iv.Unreliable)
	// 100 agreeing pairs, balanced: 1 − 2·z²/(100 + z²) ≈ 0.926.
	iv = KappaCI95([][]int{{50, 0}, {0, 50}}, w, 1000, DefaultSeed, MethodBCa)
	assert.InDelta(t, 1-2*z2/(100+z2), iv.Lo, 1e-15)
	assert.False(t, iv.Unreliable)
}

func TestKappaCI95Undefined(t *testing.T) {
	w := KappaWeights(2, KappaUnweighted)
	iv := KappaCI95([][]int{{0, 0}, {0, 4}}, w, 100, DefaultSeed, MethodPercentile)
	assert.True(t, math.IsNaN(iv.Lo) && math.IsNaN(iv.Hi), "one bin on both sides: undefined")
	iv = KappaCI95(kappaTable, KappaWeights(3, KappaLinear), 0, DefaultSeed, MethodPercentile)
	assert.True(t, math.IsNaN(iv.Lo), "no resamples")
}

// The interval depends on the counts only: scaling n by 1000 keeps the cost (and
// it narrows by about √1000).
func TestKappaCI95FlatInN(t *testing.T) {
	w := KappaWeights(3, KappaQuadratic)
	big := make([][]int, 3)
	for i := range big {
		big[i] = make([]int, 3)
		for j := range big[i] {
			big[i][j] = kappaTable[i][j] * 1000
		}
	}
	a := KappaCI95(big, w, 2000, DefaultSeed, MethodPercentile)
	b := KappaCI95(big, w, 2000, DefaultSeed, MethodPercentile)
	assert.Equal(t, a, b, "deterministic")
	small := KappaCI95(kappaTable, w, 2000, DefaultSeed, MethodPercentile)
	ratio := (small.Hi - small.Lo) / (a.Hi - a.Lo)
	assert.InDelta(t, math.Sqrt(1000), ratio, 0.1*math.Sqrt(1000))
}

// BenchmarkKappaCI95: 10,000 resamples of a 3×3 table, 1,000 vs 1,000,000 pairs:
// the same cost.
func BenchmarkKappaCI95(b *testing.B) {
	w := KappaWeights(3, KappaQuadratic)
	for _, scale := range []int{1, 1000} {
		m := make([][]int, 3)
		for i := range m {
			m[i] = make([]int, 3)
			for j := range m[i] {
				m[i][j] = kappaTable[i][j] * scale
			}
		}
		b.Run(fmt.Sprintf("pairs=%d", 1000*scale), func(b *testing.B) {
			for b.Loop() {
				KappaCI95(m, w, 10000, DefaultSeed, KappaCIMethod)
			}
		})
	}
}

// TestKappaCI95ContextStops: the largest lock (256 bins, every cell filled) at the
// resample maximum takes minutes; a cancelled context ends it within a second, in
// the resampling and in the jackknife.
func TestKappaCI95ContextStops(t *testing.T) {
	const k = 256
	m := make([][]int, k)
	for i := range m {
		m[i] = make([]int, k)
		for j := range m[i] {
			m[i][j] = 1 + (i*7+j*3)%5
		}
		m[i][i] += 50
	}
	w := KappaWeights(k, KappaQuadratic)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, err := KappaCI95Context(ctx, m, w, MaxResamples, DefaultSeed, MethodBCa)
	require.ErrorIs(t, err, context.Canceled)
	// Uncancelled these take minutes: the bound proves the cancellation is honoured,
	// with room for -race on a loaded machine (the command's one-second rule is
	// TestSignals', on the built binary).
	assert.Less(t, time.Since(start), 10*time.Second)

	// The jackknife alone (no resampling left to interrupt): 65,536 kappas of 65,536 cells.
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start = time.Now()
	_, _, err = kappaJackknife(ctx, m, w)
	require.ErrorIs(t, err, context.Canceled)
	assert.Less(t, time.Since(start), 10*time.Second)

	iv, err := KappaCI95Context(context.Background(), kappaTable, KappaWeights(3, KappaQuadratic), 2000, DefaultSeed, MethodBCa)
	require.NoError(t, err)
	assert.Equal(t, KappaCI95(kappaTable, KappaWeights(3, KappaQuadratic), 2000, DefaultSeed, MethodBCa), iv)
}

// KappaCI95 (test helper) is KappaCI95Context without a context.
func KappaCI95(m [][]int, w [][]float64, resamples int, seed uint64, method string) Interval {
	iv, _ := KappaCI95Context(context.Background(), m, w, resamples, seed, method)
	return iv
}

// The example: 10 cases, the human all in bin 0, the judge cycling
// 0/1/2: κ = 0 in every resample, so the bootstrap gave [0, 0]. The interval now
// comes from the Wilson interval of the observed disagreement (6 of 10).
func TestKappaCI95ConstantRaterNotAPoint(t *testing.T) {
	human := make([]int, 10)
	judge := []int{0, 1, 2, 0, 1, 2, 0, 1, 2, 0}
	m := ConfusionMatrix(human, judge, 3)
	for _, scheme := range []string{KappaUnweighted, KappaLinear, KappaQuadratic} {
		w := KappaWeights(3, scheme)
		require.Equal(t, 0.0, WeightedKappa(m, w), scheme)
		iv := KappaCI95(m, w, 2000, DefaultSeed, KappaCIMethod)
		assert.Equal(t, MethodWilsonDisagreement, iv.Method, scheme)
		assert.Less(t, iv.Lo, 0.0, scheme)
		assert.Greater(t, iv.Hi, 0.0, scheme)
	}
	// Unweighted: D_o = D_e = 0.6, Wilson(6, 10) = [0.3127, 0.8318].
	iv := KappaCI95(m, KappaWeights(3, KappaUnweighted), 2000, DefaultSeed, KappaCIMethod)
	wl := plainWilson(6, 10)
	assert.InDelta(t, 1-wl[1]/0.6, iv.Lo, 1e-12)
	assert.InDelta(t, 1-wl[0]/0.6, iv.Hi, 1e-12)
}

// A random sweep over small and degenerate label sets (constant raters, a
// single disagreeing pair, n ≤ 5, perfect inverses, and random sets up to
// n = 12, K = 2, 3, 5, every weighting): every defined kappa has an interval of
// positive width that contains it.
func TestKappaCI95SweepNeverZeroWidth(t *testing.T) {
	r := NewRand(77)
	defined, fallback := 0, 0
	for trial := range 350 {
		k := []int{2, 3, 5}[trial%3]
		n := 1 + r.IntN(12)
		if trial%5 == 0 {
			n = 1 + r.IntN(5)
		}
		human, judge := make([]int, n), make([]int, n)
		for i := range n {
			human[i], judge[i] = r.IntN(k), r.IntN(k)
		}
		switch trial % 7 {
		case 0: // constant human
			clear(human)
		case 1: // constant judge
			for i := range judge {
				judge[i] = k - 1
			}
		case 2: // perfect inverse
			for i := range judge {
				judge[i] = k - 1 - human[i]
			}
		}
		m := ConfusionMatrix(human, judge, k)
		for _, scheme := range []string{KappaUnweighted, KappaLinear, KappaQuadratic} {
			w := KappaWeights(k, scheme)
			kappa := WeightedKappa(m, w)
			iv := KappaCI95(m, w, 100, uint64(trial), KappaCIMethod)
			if math.IsNaN(kappa) {
				assert.True(t, math.IsNaN(iv.Lo))
				continue
			}
			defined++
			if iv.Method == MethodWilsonDisagreement {
				fallback++
			}
			assert.Greater(t, iv.Hi, iv.Lo, "k=%d %s human %v judge %v κ %g", k, scheme, human, judge, kappa)
			assert.LessOrEqual(t, iv.Lo, kappa+1e-12)
			assert.GreaterOrEqual(t, iv.Hi, kappa-1e-12)
		}
	}
	t.Logf("%d defined intervals, %d from the Wilson disagreement fallback", defined, fallback)
}

// A kappa interval is marked unreliable at any n when a side used one bin only,
// or a bin fewer than KappaMinBinLabels times (docs/statistics.md, "Interval
// coverage": the BCa interval of a two-bin kappa with a rare bin covered 0.901
// at 50 pairs and 0.915 at 100, TestKappaCoverageRareBin).
func TestKappaCI95SparseMargins(t *testing.T) {
	tests := []struct {
		name       string
		m          [][]int // [human][judge]
		method     string
		unreliable bool
	}{
		{"rare bin used twice by each side, n = 50", [][]int{{1, 1}, {1, 47}}, KappaCIMethod, true},
		{"rare bin used twice by the judge, n = 200", [][]int{{2, 3}, {0, 195}}, KappaCIMethod, true},
		{"every bin used 3 times, n = 50", [][]int{{2, 1}, {1, 46}}, KappaCIMethod, false},
		{"a third bin used once by the human, n = 70", [][]int{{20, 2, 0}, {3, 40, 4}, {0, 1, 0}}, KappaCIMethod, true},
		{"3 bins all used often, n = 120", [][]int{{20, 3, 0}, {3, 40, 4}, {0, 1, 49}}, KappaCIMethod, false},
		{"human one bin, n = 60", [][]int{{0, 0}, {20, 40}}, MethodWilsonDisagreement, true},
		{"no disagreement, balanced, n = 100", [][]int{{50, 0}, {0, 50}}, MethodWilsonDisagreement, false},
		{"no disagreement, a bin used twice, n = 100", [][]int{{2, 0}, {0, 98}}, MethodWilsonDisagreement, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, scheme := range []string{KappaUnweighted, KappaQuadratic} {
				w := KappaWeights(len(tt.m), scheme)
				iv := KappaCI95(tt.m, w, 1000, DefaultSeed, KappaCIMethod)
				require.False(t, math.IsNaN(iv.Lo), scheme)
				assert.Equal(t, tt.method, iv.Method, scheme)
				assert.Equal(t, tt.unreliable, iv.Unreliable, scheme)
			}
		})
	}
}

// Coverage where the margins are sparse: two bins, the first rare. Every
// interval not marked unreliable must cover at least CoverageFloor; before
// kappaSparse none was marked at these n and they covered 0.901 (50 pairs)
// and 0.915 (100 pairs) over these 600 samples each; now the 222 and 314 not
// marked cover 0.986 and 0.968.
func TestKappaCoverageRareBin(t *testing.T) {
	skipSimulationUnderRace(t)
	tests := []struct {
		p [][]float64
		n int
	}{
		{[][]float64{{0.03, 0.02}, {0.03, 0.92}}, 50},
		{[][]float64{{0.02, 0.01}, {0.02, 0.95}}, 100},
	}
	for _, tt := range tests {
		w := KappaWeights(2, KappaUnweighted)
		truth := trueWeightedKappa(tt.p, w)
		r := NewRand(31)
		covered, reliable := 0, 0
		for rep := range 600 {
			m := [][]int{{0, 0}, {0, 0}}
			for range tt.n {
				u, c := r.Float64(), 0
				for acc := tt.p[0][0]; c < 3 && u >= acc; {
					c++
					acc += tt.p[c/2][c%2]
				}
				m[c/2][c%2]++
			}
			iv := KappaCI95(m, w, 500, uint64(rep)+1, KappaCIMethod)
			if math.IsNaN(iv.Lo) || iv.Unreliable {
				continue
			}
			reliable++
			if iv.Lo <= truth && truth <= iv.Hi {
				covered++
			}
		}
		require.Greater(t, reliable, 100, "n = %d", tt.n)
		cov := float64(covered) / float64(reliable)
		t.Logf("n = %d: %d intervals not marked, coverage %.3f", tt.n, reliable, cov)
		assertCoverage(t, covered, reliable, "n = %d", tt.n)
	}
}
