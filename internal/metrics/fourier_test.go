package metrics

import (
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The Fourier inversion of the sign-flip sum's characteristic function against
// every sign vector listed (exact), and against the exact convolution.
func TestSignFlipFourierExact(t *testing.T) {
	for _, c := range []struct {
		name string
		q, m []int64
		t    int64
		want float64
	}{
		{"three ones, all alike", []int64{1}, []int64{3}, 3, 0.25},
		{"1 and 2", []int64{1, 2}, []int64{1, 1}, 3, 0.5},
		{"1 and 2, t = 1", []int64{1, 2}, []int64{1, 1}, 1, 1},
		{"t = 0", []int64{5}, []int64{4}, 0, 1},
		{"beyond the support", []int64{1, 3}, []int64{2, 1}, 6, 0},
		{"1,1,3 at t = 5", []int64{1, 3}, []int64{2, 1}, 5, 0.25},
		{"1,1,3 at t = 3", []int64{1, 3}, []int64{2, 1}, 3, 0.75},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, ok := signFlipFourierP(c.q, c.m, c.t)
			require.True(t, ok)
			assert.InDelta(t, c.want, p, 1e-13)
		})
	}
	r := NewRand(8)
	for range 200 {
		k := 1 + r.IntN(14)
		x := make([]int64, k)
		cnt := map[int64]int64{}
		var sum int64
		for i := range x {
			x[i] = 1 + int64(r.IntN(9))
			if r.IntN(3) == 0 {
				x[i] = -x[i]
			}
			sum += x[i]
			cnt[max(x[i], -x[i])]++
		}
		var q, m []int64
		for v, c := range cnt {
			q, m = append(q, v), append(m, c)
		}
		tObs := max(sum, -sum)
		p, ok := signFlipFourierP(q, m, tObs)
		require.True(t, ok)
		xs := make([]float64, len(x))
		for i, v := range x {
			xs[i] = float64(v)
		}
		require.InDelta(t, bruteSignFlip(xs, 1), p, 1e-13, "%v", x)
	}
	// Against the convolution on precision-like differences (steps of 0.1) of
	// 60 to 1,500 queries, p from about 0.9 down to 1e-9.
	for trial := range 30 {
		n := []int{60, 300, 1500}[trial%3]
		d := make([]float64, n)
		for i := range d {
			if r.Float64() < 0.4 {
				continue
			}
			d[i] = math.Round((r.Float64()-0.5+0.02*float64(trial/3))*10) / 10
		}
		exact, ok := SignFlipExactP(d)
		require.True(t, ok)
		q, m, tObs := latticeCounts(t, d, 10)
		p, ok := signFlipFourierP(q, m, tObs)
		require.True(t, ok)
		if exact >= FourierMinP {
			assert.InDelta(t, 1, p/exact, 1e-6, "n %d: convolution %g, Fourier %g", n, exact, p)
		}
		assert.InDelta(t, exact, p, 1e-12)
	}
}

// latticeCounts puts d on the lattice 1/den: the distinct positive integers,
// their counts and |Σ|.
func latticeCounts(t *testing.T, d []float64, den float64) (q, m []int64, tObs int64) {
	t.Helper()
	cnt := map[int64]int64{}
	var sum int64
	for _, v := range d {
		x := int64(math.Round(v * den))
		require.InDelta(t, v*den, float64(x), 1e-9)
		sum += x
		if x != 0 {
			cnt[max(x, -x)]++
		}
	}
	for v := range cnt {
		q = append(q, v)
	}
	slices.Sort(q)
	for _, v := range q {
		m = append(m, cnt[v])
	}
	return q, m, max(sum, -sum)
}

// precisionDifferences are the paired differences of precision@10 over n
// queries (two correlated runs, the second better by about shift per slot).
func precisionDifferences(n int, shift float64, seed uint64) []float64 {
	r := NewRand(seed)
	d := make([]float64, n)
	for i := range d {
		pa := 0.2 + 0.3*r.Float64()
		x, y := 0, 0
		for range 10 {
			u := r.Float64()
			if u < pa {
				x++
			}
			if r.Float64() < 0.3 { // the same document in both runs
				if u < pa+shift {
					y++
				}
			} else if r.Float64() < pa+shift {
				y++
			}
		}
		d[i] = float64(y-x) / 10
	}
	return d
}

// Issue 34: precision@10 at 50,000 queries is beyond the convolution's budget
// and went to the saddlepoint, which was 1% below the exact p there (0.0952
// against 0.0961 on the data). The exact p is now computed by the
// Fourier inversion; the convolution confirms it with
// RETRIEVAL_GATE_FULL_SIMULATION=1 (2·10⁹ steps).
func TestPairedExactPAtLargeN(t *testing.T) {
	skipSimulationUnderRace(t)
	d := precisionDifferences(50_000, 0.0021, 34)
	q, m, tObs := latticeCounts(t, d, 10)
	var s int64
	for i := range q {
		s += q[i] * m[i]
	}
	require.Greater(t, float64(s)*float64(len(d)/2), float64(SignFlipExactBudget), "beyond the convolution's budget")
	p, method, ok := PairedExactP(d)
	require.True(t, ok)
	assert.Equal(t, PMethodSignFlipExact, method)
	fp, ok := signFlipFourierP(q, m, tObs)
	require.True(t, ok)
	assert.Equal(t, fp, p)
	assert.Greater(t, p, 0.05)
	assert.Less(t, p, 0.15)
	// The saddlepoint, where it is still used, is now on the conservative side.
	assert.GreaterOrEqual(t, SignFlipSaddlepointP(d), p)
	t.Logf("exact p %.6f, saddlepoint %.6f", p, SignFlipSaddlepointP(d))
	if fullSimulation() {
		exact := convolveSignFlip(q, m, tObs)
		assert.InDelta(t, 1, p/exact, 1e-6, "convolution %g, Fourier %g", exact, p)
	}
}

// convolveSignFlip is the convolution of SignFlipExactP without its budget.
func convolveSignFlip(q, m []int64, tObs int64) float64 {
	var support int64
	for i := range q {
		support += q[i] * m[i]
	}
	dist := make([]float64, 2*support+1)
	next := make([]float64, 2*support+1)
	dist[support] = 1
	reach := int64(0)
	for i := range q {
		for range m[i] {
			clear(next[support-reach-q[i] : support+reach+q[i]+1])
			for t := support - reach; t <= support+reach; t++ {
				if pr := dist[t]; pr != 0 {
					next[t-q[i]] += 0.5 * pr
					next[t+q[i]] += 0.5 * pr
				}
			}
			reach += q[i]
			dist, next = next, dist
		}
	}
	var tail float64
	for t := support; t >= tObs; t-- {
		tail += dist[support+t]
		if t != 0 {
			tail += dist[support-t]
		}
	}
	return min(1, tail)
}

// BenchmarkSignFlipFourier is the exact p of precision@10's paired
// differences at 50,000 queries by the Fourier inversion (beyond the
// convolution's budget).
func BenchmarkSignFlipFourier(b *testing.B) {
	d := precisionDifferences(50_000, 0.0021, 34)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, ok := PairedExactP(d); !ok {
			b.Fatal("no exact p")
		}
	}
}
