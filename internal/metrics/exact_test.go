package metrics

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Reference values: scipy 1.10.1 stats.binomtest(b, b+c, 0.5).pvalue, equal to
// statsmodels mcnemar([[0, b], [c, 0]], exact=True).pvalue.
func TestMcNemarExactP(t *testing.T) {
	tests := []struct {
		b, c int64
		want float64
	}{
		{15, 35, 0.006600447966810918}, // issue 11: 2,500 queries, 15 vs 35 discordant
		{35, 15, 0.006600447966810918},
		{0, 5, 0.0625},
		{3, 9, 0.14599609375},
		{100, 130, 0.05561357778139239},
		{1, 1, 1},
		{0, 1, 1},
		{40, 40, 1},
		{0, 0, 1},
	}
	for _, tt := range tests {
		assert.InDelta(t, tt.want, McNemarExactP(tt.b, tt.c), 1e-13*max(1, tt.want), "b=%d c=%d", tt.b, tt.c)
	}
	assert.Panics(t, func() { McNemarExactP(-1, 2) })
}

// bruteSignFlip enumerates all 2ⁿ sign vectors: P(|Σ s d| ≥ |Σ d|), with the
// comparison made on the integer lattice 1/den so that it is exact.
func bruteSignFlip(d []float64, den float64) float64 {
	q := make([]int64, len(d))
	var obs int64
	for i, v := range d {
		q[i] = int64(math.Round(v * den))
		obs += q[i]
	}
	obs = max(obs, -obs)
	hits := 0
	for mask := range 1 << len(d) {
		var s int64
		for i, v := range q {
			if mask>>i&1 == 1 {
				s -= v
			} else {
				s += v
			}
		}
		if max(s, -s) >= obs {
			hits++
		}
	}
	return float64(hits) / float64(int(1)<<len(d))
}

func TestSignFlipExactPAgainstEnumeration(t *testing.T) {
	r := NewRand(42)
	// Differences of precision@5, of MRR@4 and of a 0/1 measure.
	p5 := func() float64 { return float64(r.IntN(6)-r.IntN(6)) / 5 }
	rr := []float64{0, 1, 0.5, 1.0 / 3, 0.25}
	mrr := func() float64 { return rr[r.IntN(5)] - rr[r.IntN(5)] }
	hit := func() float64 { return float64(r.IntN(2) - r.IntN(2)) }
	for _, gen := range []struct {
		name string
		f    func() float64
		den  float64
	}{{"precision@5", p5, 5}, {"mrr@4", mrr, 12}, {"hit", hit, 1}} {
		for n := 1; n <= 14; n++ {
			d := make([]float64, n)
			for i := range d {
				d[i] = gen.f()
			}
			got, ok := SignFlipExactP(d)
			require.True(t, ok, "%s n=%d", gen.name, n)
			assert.InDelta(t, bruteSignFlip(d, gen.den), got, 1e-12, "%s n=%d %v", gen.name, n, d)
		}
	}
}

func TestSignFlipExactPIssueExample(t *testing.T) {
	// 2,500 paired hits: 15 where the first run wins, 35 where the second does.
	d := make([]float64, 2500)
	for i := range 15 {
		d[i] = 1
	}
	for i := 15; i < 50; i++ {
		d[i] = -1
	}
	p, ok := SignFlipExactP(d)
	require.True(t, ok)
	assert.InDelta(t, 0.006600447966810918, p, 1e-13)
	pe, method, ok := PairedExactP(d)
	require.True(t, ok)
	assert.Equal(t, PMethodMcNemar, method)
	assert.InDelta(t, p, pe, 1e-13)

	// The same discordance at half the magnitude plus one pair of ±0.25 goes through
	// the convolution. Reference: exact rational enumeration in Python,
	// Σ C(50,K)·C(2,L)/2⁵² over |2(2K−50) + (2L−2)| ≥ 40 = 0.005600878839288725.
	for i := range 50 {
		d[i] *= 0.5
	}
	d[2000], d[2001] = 0.25, -0.25 // two more distinct values
	p2, ok := SignFlipExactP(d)
	require.True(t, ok)
	assert.InDelta(t, 0.005600878839288725, p2, 1e-14)
}

func TestSignFlipExactPLimits(t *testing.T) {
	p, ok := SignFlipExactP([]float64{0, 0})
	assert.True(t, ok)
	assert.Equal(t, 1.0, p)
	_, ok = SignFlipExactP([]float64{math.Pi / 10, 0.1, -0.3})
	assert.False(t, ok, "no common lattice: the caller falls back to Monte Carlo")
	big := make([]float64, 200_000)
	for i := range big {
		big[i] = float64(i%7) / 5040
	}
	_, ok = SignFlipExactP(big)
	assert.False(t, ok, "over the work budget")
}

func TestHistogramSignFlip(t *testing.T) {
	// d = (1, 1, 1, −0.5, 0): 2^4 sign vectors over the non-zero values; |T*| ≥ |T| =
	// 2.5 exactly when the three 1s share a sign (±3 ± 0.5): p = 4/16.
	h := NewHistogram()
	for _, v := range []float64{1, 1, 1, -0.5, 0} {
		h.Add(v)
	}
	p, ok := h.SignFlipExactP()
	require.True(t, ok)
	assert.InDelta(t, 4.0/16, p, 1e-12)
	pd, ok := SignFlipExactP([]float64{1, 1, 1, -0.5, 0})
	require.True(t, ok)
	assert.Equal(t, pd, p)
	// The randomization test estimates the same p.
	assert.InDelta(t, 4.0/16, h.SignFlipP(20000, 1), 0.01)
	// No non-zero difference: p = 1.
	z := NewHistogram()
	z.Add(0)
	assert.Equal(t, 1.0, z.SignFlipP(100, 1))

	_, _, ok = h.PairedDiscordant()
	assert.False(t, ok)
	bin := NewHistogram()
	for _, v := range []float64{-1, -1, -1, 0, 1} {
		bin.Add(v)
	}
	b, c, ok := bin.PairedDiscordant()
	require.True(t, ok)
	assert.Equal(t, [2]int64{3, 1}, [2]int64{b, c})
	// McNemar by hand: 2·P(X ≤ 1 | 4, ½) = 2·5/16.
	assert.InDelta(t, 10.0/16, McNemarExactP(b, c), 1e-12)
}

func TestFirstGoldRank(t *testing.T) {
	assert.Equal(t, 2, FirstGoldRank([]string{"a", "b", "c"}, []string{"c", "b"}))
	assert.Equal(t, 0, FirstGoldRank([]string{"a"}, []string{"z"}))
	assert.Equal(t, 0, FirstGoldRank(nil, []string{"z"}))
}

// TestHistogramSignFlipEnumerates: differences on no lattice (nDCG's
// logarithms) get the exact p by listing the sign vectors when at most
// SignFlipEnumerateMax are not 0, as compare's paired tests do, and none
// beyond (check --baseline then draws).
func TestHistogramSignFlipEnumerates(t *testing.T) {
	d := []float64{0, 0}
	for i := range SignFlipEnumerateMax {
		d = append(d, -1/math.Log2(float64(i)+2.5)) // mostly drops: a small p
	}
	d[2] = -d[2]
	_, lattice := SignFlipExactP(d)
	require.False(t, lattice, "the values share no lattice")
	h := NewHistogram()
	for _, v := range d {
		h.Add(v)
	}
	p, ok := h.SignFlipExactP()
	require.True(t, ok)
	want, ok := SignFlipEnumerate(d)
	require.True(t, ok)
	assert.Equal(t, want, p)
	assert.Less(t, p, 0.001)
	h.Add(-1 / math.Log2(30.5)) // one more not 0: past the listing's bound
	_, ok = h.SignFlipExactP()
	assert.False(t, ok)
}
