package metrics

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/stat/distuv"
)

// hallByBisection solves Hall's g(t) = u, g(t) = t + γt²/(3√n) + γ²t³/(27n) +
// γ/(6√n), by bisection: a check of the closed-form inverse that shares no code
// with it.
func hallByBisection(u, skew float64, n int64) float64 {
	rn := math.Sqrt(float64(n))
	g := func(t float64) float64 {
		return t + skew*t*t/(3*rn) + skew*skew*t*t*t/(27*float64(n)) + skew/(6*rn)
	}
	lo, hi := -1e3, 1e3
	for range 200 {
		mid := (lo + hi) / 2
		if g(mid) < u {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

func TestHallTInterval(t *testing.T) {
	q19 := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: 19}.Quantile(0.975)
	for _, c := range []struct {
		name              string
		theta, s, skew    float64
		n                 int64
		lo, hi            float64
		wantLo, wantHi    float64
		clippedLo, clipHi bool
	}{
		// No skewness: the t interval x̄ ± t_{0.975,19}·s/√20.
		{name: "symmetric", theta: 0.5, s: 0.3, skew: 0, n: 20, lo: 0, hi: 1,
			wantLo: 0.5 - q19*0.3/math.Sqrt(20), wantHi: 0.5 + q19*0.3/math.Sqrt(20)},
		// Right skew: Hall's interval lies higher; the union keeps the t interval's
		// lower end and takes Hall's upper one.
		{name: "right-skewed", theta: 0.1, s: 0.2, skew: 2.1, n: 20, lo: math.Inf(-1), hi: math.Inf(1),
			wantLo: 0.1 - q19*0.2/math.Sqrt(20),
			wantHi: 0.1 - 0.2/math.Sqrt(20)*hallByBisection(-q19, 2.1, 20)},
		{name: "left-skewed", theta: 0.9, s: 0.2, skew: -2.1, n: 20, lo: math.Inf(-1), hi: math.Inf(1),
			wantLo: 0.9 - 0.2/math.Sqrt(20)*hallByBisection(q19, -2.1, 20),
			wantHi: 0.9 + q19*0.2/math.Sqrt(20)},
		// Clipped to the measure's range.
		{name: "clipped", theta: 0.05, s: 0.2, skew: 4, n: 20, lo: 0, hi: 1, clippedLo: true,
			wantHi: 0.05 - 0.2/math.Sqrt(20)*hallByBisection(-q19, 4, 20)},
	} {
		t.Run(c.name, func(t *testing.T) {
			ci := HallTInterval(c.theta, c.s, c.skew, c.n, c.lo, c.hi)
			if c.clippedLo {
				assert.Equal(t, c.lo, ci[0])
			} else {
				assert.InDelta(t, c.wantLo, ci[0], 1e-9)
			}
			assert.InDelta(t, c.wantHi, ci[1], 1e-9)
			assert.Less(t, ci[0], c.theta)
			assert.Greater(t, ci[1], c.theta)
		})
	}
	// Hall's interval alone moves both ends up on right-skewed data: the union
	// is wider than the t interval on the upper side only.
	assert.Greater(t, 0.1-0.2/math.Sqrt(20)*hallByBisection(q19, 2.1, 20), 0.1-q19*0.2/math.Sqrt(20))
	ci := HallTInterval(0.1, 0.2, 2.1, 20, math.Inf(-1), math.Inf(1))
	assert.Greater(t, ci[1]-0.1, q19*0.2/math.Sqrt(20))
}

// Below SmallSampleMaxN items a mean that varies gets MethodHallT, from it on
// BCa alone as before; the compare path (ColumnCI95 over the values and their
// replicates) gives the same interval.
func TestContinuousCI95ChoosesByN(t *testing.T) {
	r := NewRand(9)
	for _, n := range []int{2, 5, 20, 29, 30, 50} {
		h := NewHistogram()
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = skewed(r.Float64(), r.Float64())
			if i == 0 {
				xs[i] = 0.5 // at least two distinct values
			}
			h.Add(xs[i])
		}
		iv := h.MeanCI95(DefaultResamples, DefaultSeed, 0, 1)
		stats := BootstrapMeans(xs, n, 1, 2000, DefaultSeed)[0]
		col := ColumnCI95(xs, stats, 0, 1)
		if n < SmallSampleMaxN {
			assert.Equal(t, MethodHallT, iv.Method, "n = %d", n)
			assert.Equal(t, n < HallTReliableMinN, iv.Unreliable, "n = %d", n)
			vals, cnt := h.sorted()
			ci := hallTFromCounts(vals, cnt, int64(n), 0, 1)
			assert.Equal(t, ci, iv.CI())
			assert.Equal(t, MethodHallT, col.Method)
			assert.InDelta(t, iv.Lo, col.Lo, 1e-12)
			assert.InDelta(t, iv.Hi, col.Hi, 1e-12)
		} else {
			assert.Equal(t, h.BCaCI95(DefaultResamples, DefaultSeed, 0, 1), iv, "n = %d", n)
			assert.Equal(t, MethodBCa, col.Method)
		}
		assert.Equal(t, iv.Unreliable, col.Unreliable, "n = %d", n)
		assert.GreaterOrEqual(t, iv.Lo, 0.0)
		assert.LessOrEqual(t, iv.Hi, 1.0)
		assert.Less(t, iv.Lo, h.Mean())
		assert.Greater(t, iv.Hi, h.Mean())
	}
	// Values that do not vary keep the bounded interval.
	h := NewHistogram()
	for range 20 {
		h.Add(0.4)
	}
	assert.Equal(t, MethodBoundedWilson, h.MeanCI95(DefaultResamples, DefaultSeed, 0, 1).Method)
	assert.Equal(t, MethodBoundedWilson, ColumnCI95([]float64{0.4, 0.4, 0.4}, []float64{0.4, 0.4}, 0, 1).Method)
	assert.False(t, UnreliableFor(MethodHallT, 20))
	assert.True(t, UnreliableFor(MethodHallT, 19))
}

// The interval of a mean at small n (hall-t) and of paired differences costs a
// pass over the distinct values; BCa costs resamples × distinct values.
func BenchmarkMeanIntervalSmallN(b *testing.B) {
	r := NewRand(3)
	h := NewHistogram()
	for range 25 {
		h.Add(skewed(r.Float64(), r.Float64()))
	}
	b.Run("hall-t", func(b *testing.B) {
		for b.Loop() {
			_ = h.MeanCI95(DefaultResamples, DefaultSeed, 0, 1)
		}
	})
	b.Run("bca", func(b *testing.B) {
		for b.Loop() {
			_ = h.BCaCI95(DefaultResamples, DefaultSeed, 0, 1)
		}
	})
}

func BenchmarkDifferenceInterval(b *testing.B) {
	r := NewRand(4)
	h := NewHistogram()
	for range 1_000_000 {
		h.Add(float64(r.IntN(21)-10) / 10)
	}
	b.Run("hall-t", func(b *testing.B) {
		for b.Loop() {
			_ = h.DifferenceCI95(-1, 1)
		}
	})
	b.Run("bca", func(b *testing.B) {
		for b.Loop() {
			_ = h.BCaCI95(DefaultResamples, DefaultSeed, -1, 1)
		}
	})
}

// At LargeSampleMinN items the interval of a mean is MethodHallT instead of
// BCa: both are second-order accurate, and on the simulation's distributions
// (values rounded to 0.01, as per-case scores are few-valued; MRR-like has 11
// values) their endpoints agree within 3% of the interval's width (BCa from
// 10,000 resamples, the reports' default; the largest difference seen is
// printed with -v).
func TestHallTMatchesBCaAtLargeN(t *testing.T) {
	skipSimulationUnderRace(t)
	n := LargeSampleMinN
	for di, d := range scoreDists() {
		switch d.name {
		case "mixture", "right-skewed", "MRR-like", "uniform", "sparse difference":
		default:
			continue
		}
		draw := d.newDraw(uint64(900 + di))
		h := NewHistogram()
		for range n {
			h.Add(math.Round(draw()*100) / 100)
		}
		used := h.ContinuousCI95(DefaultResamples, DefaultSeed, d.lo, d.hi)
		require.Equal(t, MethodHallT, used.Method, d.name)
		assert.False(t, used.Unreliable)
		bca := h.BCaCI95(DefaultResamples, DefaultSeed, d.lo, d.hi)
		w := bca.Hi - bca.Lo
		dl, dh := math.Abs(used.Lo-bca.Lo)/w, math.Abs(used.Hi-bca.Hi)/w
		t.Logf("%s: hall-t [%.5f, %.5f], BCa [%.5f, %.5f]: ends differ by %.2f%% and %.2f%% of the width", d.name, used.Lo, used.Hi, bca.Lo, bca.Hi, 100*dl, 100*dh)
		assert.Less(t, dl, 0.03, d.name)
		assert.Less(t, dh, 0.03, d.name)
	}
	// Just below the threshold: BCa.
	h := NewHistogram()
	draw := scoreDists()[0].newDraw(1)
	for range n - 1 {
		h.Add(math.Round(draw()*100) / 100)
	}
	assert.Equal(t, MethodBCa, h.ContinuousCI95(2000, 1, 0, 1).Method)
}

// A sample symmetric about its mean has skewness 0, and its interval must be
// Student's t: before issue 34 a skewness of rounding noise (about 1e-16)
// made Hall's inverse cancel catastrophically ((1 + 1e-16)^⅓ − 1, divided by
// the tiny skewness) and widened one side by up to two standard errors.
func TestHallTSymmetricIsStudentT(t *testing.T) {
	tInterval := func(xs []float64) [2]float64 {
		n := float64(len(xs))
		m := 0.0
		for _, v := range xs {
			m += v
		}
		m /= n
		ss := 0.0
		for _, v := range xs {
			ss += (v - m) * (v - m)
		}
		h := t975(int64(len(xs))-1) * math.Sqrt(ss/(n-1)) / math.Sqrt(n)
		return [2]float64{m - h, m + h}
	}
	for _, c := range []struct {
		name   string
		xs     []float64
		lo, hi float64 // the t interval, to 1e-4
	}{
		// Was [0.0951, 0.1925]: the lower end 0.75 standard errors too low.
		{"six values about 0.15", []float64{0.1, 0.11, 0.15, 0.15, 0.19, 0.2}, 0.1075, 0.1925},
		// Was [0.2168, 0.2949]: the upper end 0.9 standard errors too high.
		{"six values about 0.25", []float64{0.21, 0.22, 0.25, 0.25, 0.28, 0.29}, 0.2168, 0.2832},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := hallTFromValues(c.xs, 0, 1)
			want := tInterval(c.xs)
			assert.InDelta(t, c.lo, want[0], 1e-4)
			assert.InDelta(t, c.hi, want[1], 1e-4)
			assert.InDelta(t, want[0], got[0], 1e-12)
			assert.InDelta(t, want[1], got[1], 1e-12)
		})
	}
	// Random samples mirrored about a random centre, n = 4 … 29 and 10,000
	// (the sizes MethodHallT serves): t's interval to 1e-9 standard errors.
	r := NewRand(34)
	for _, half := range []int{2, 3, 5, 8, 11, 14, 5000} {
		for range 50 {
			c := 0.2 + 0.6*r.Float64()
			xs := make([]float64, 0, 2*half)
			for range half {
				d := math.Round(r.Float64()*20) / 100
				xs = append(xs, c-d, c+d)
			}
			if same(xs) {
				continue
			}
			got, want := hallTFromValues(xs, math.Inf(-1), math.Inf(1)), tInterval(xs)
			se := (want[1] - want[0]) / (2 * t975(int64(len(xs))-1))
			require.InDelta(t, want[0], got[0], 1e-9*se, "%v", xs)
			require.InDelta(t, want[1], got[1], 1e-9*se, "%v", xs)
		}
	}
}

// hallInverse agrees with the bisection solution of g(t) = u on skewed data
// too (the stable form is the same function).
func TestHallInverseStable(t *testing.T) {
	for _, skew := range []float64{-4, -2.1, -0.3, -1e-16, 1e-16, 1e-9, 0.3, 2.1, 4} {
		for _, u := range []float64{-2.1, -1, 0, 1, 2.1} {
			got := hallInverse(u, skew, math.Sqrt(20))
			assert.InDelta(t, hallByBisection(u, skew, 20), got, 1e-9, "skew %g u %g", skew, u)
		}
	}
}
