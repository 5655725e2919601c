package metrics

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// enumerateSignFlip is the exact two-sided sign-flip p-value by listing all 2ⁿ
// sign vectors.
func enumerateSignFlip(d []float64) float64 {
	obs := 0.0
	for _, v := range d {
		obs += v
	}
	obs = math.Abs(obs)
	hits := 0
	for s := range 1 << len(d) {
		t := 0.0
		for i, v := range d {
			if s>>i&1 == 1 {
				t -= v
			} else {
				t += v
			}
		}
		if math.Abs(t) >= obs-1e-9 {
			hits++
		}
	}
	return float64(hits) / float64(int(1)<<len(d))
}

func TestPairedExactPAgainstEnumeration(t *testing.T) {
	r := NewRand(5)
	for trial := range 200 {
		n := 1 + trial%14
		d := make([]float64, n)
		for i := range d {
			switch trial % 3 {
			case 0: // 0/1 measure: McNemar
				d[i] = float64(r.IntN(3) - 1)
			case 1: // precision at k = 10
				d[i] = float64(r.IntN(7)-3) / 10
			default: // MRR at k = 5
				a, b := r.IntN(6), r.IntN(6)
				rr := func(x int) float64 {
					if x == 0 {
						return 0
					}
					return 1 / float64(x)
				}
				d[i] = rr(a) - rr(b)
			}
		}
		p, method, ok := PairedExactP(d)
		require.True(t, ok, "%v", d)
		want := enumerateSignFlip(d)
		assert.InDelta(t, want, p, 1e-12, "%v (%s)", d, method)
	}
}

// The issue's example: 2,500 queries, 15 vs 35 discordant misses of a 0/1
// measure. The exact McNemar p is 0.0066 at any n; the normal shortcut gave 0.0047.
func TestMcNemarIssueExample(t *testing.T) {
	d := make([]float64, 2500)
	for i := range 15 {
		d[i] = 1
	}
	for i := 15; i < 50; i++ {
		d[i] = -1
	}
	p, method, ok := PairedExactP(d)
	require.True(t, ok)
	assert.Equal(t, PMethodMcNemar, method)
	assert.InDelta(t, 0.0066, p, 5e-5)
	// In the issue's family of 8 tests the Holm-adjusted exact p is 0.053: no
	// winner (the normal shortcut's 0.0047 gave 0.037, a winner).
	assert.Greater(t, Holm([]float64{p, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5})[0], 0.05)
}

func TestSignFlipEnumerate(t *testing.T) {
	r := NewRand(13)
	for n := range 13 {
		d := make([]float64, n)
		for i := range d {
			d[i] = r.NormFloat64()
			if i%4 == 3 {
				d[i] = 0
			}
		}
		p, ok := SignFlipEnumerate(d)
		require.True(t, ok)
		assert.InDelta(t, enumerateSignFlip(d), p, 1e-12, "%v", d)
	}
	// n = 2, both favouring one run: the smallest p there is 0.5.
	p, method, ok := PairedExactP([]float64{0.7, 1.3})
	require.True(t, ok)
	assert.Equal(t, PMethodSignFlipExact, method)
	assert.Equal(t, 0.5, p)
	_, ok = SignFlipEnumerate(make([]float64, 0, 30))
	assert.True(t, ok)
	big := make([]float64, SignFlipEnumerateMax+1)
	for i := range big {
		big[i] = math.Pi * float64(i+1)
	}
	_, ok = SignFlipEnumerate(big)
	assert.False(t, ok)
}

func TestColumnCI95(t *testing.T) {
	// 0/1: Wilson with continuity correction, never a point, covering at every n.
	iv := ColumnCI95([]float64{1, 1, 1, 1, 1}, nil, 0, 1)
	assert.Equal(t, MethodWilson, iv.Method)
	assert.False(t, iv.Unreliable)
	assert.Less(t, iv.Lo, 0.6)
	assert.Equal(t, 1.0, iv.Hi)
	// One distinct value off 0/1: bounded Wilson over the range.
	iv = ColumnCI95([]float64{0.5, 0.5, 0.5}, []float64{0.5, 0.5}, 0, 1)
	assert.Equal(t, MethodBoundedWilson, iv.Method)
	assert.Less(t, iv.Lo, 0.5)
	assert.Greater(t, iv.Hi, 0.5)
	// Varied values below 30: hall-t, unreliable below 20, with or without
	// replicates.
	xs := []float64{0.1, 0.2, 0.3, 0.5, 0.9, 0.4, 0.3, 0.2, 0.1, 0.6, 0.7, 0.2}
	stats := BootstrapMeans(xs, len(xs), 1, 2000, 1)[0]
	iv = ColumnCI95(xs, stats, 0, 1)
	assert.Equal(t, MethodHallT, iv.Method)
	assert.True(t, iv.Unreliable, "hall-t below 20")
	assert.Less(t, iv.Lo, 0.375)
	assert.Greater(t, iv.Hi, 0.375)
	assert.Equal(t, MethodHallT, ColumnCI95(xs, nil, 0, 1).Method)
	// From 30: BCa from the replicates; Cornish–Fisher without.
	xs40 := append(append(append([]float64(nil), xs...), xs...), xs...)
	xs40 = append(xs40, 0.8, 0.05, 0.45, 0.35)
	stats = BootstrapMeans(xs40, len(xs40), 1, 2000, 1)[0]
	iv = ColumnCI95(xs40, stats, 0, 1)
	assert.Equal(t, MethodBCa, iv.Method)
	assert.False(t, iv.Unreliable)
	assert.Equal(t, MethodCornishFisher, ColumnCI95(xs40, nil, 0, 1).Method)
	// Paired differences that vary, below 50 pairs of a bounded measure: hall-t
	// united with the betting interval, never unreliable, containing hall-t.
	iv = PairedCI95(xs40, 1, false)
	assert.Equal(t, MethodHallTBetting, iv.Method)
	assert.False(t, iv.Unreliable)
	ht := hallTFromValues(xs40, -1, 1)
	assert.LessOrEqual(t, iv.Lo, ht[0])
	assert.GreaterOrEqual(t, iv.Hi, ht[1])
	assert.Greater(t, iv.Hi-iv.Lo, ht[1]-ht[0], "the betting half is wider here")
	// An unbounded measure keeps hall-t, unreliable below 50.
	iv = PairedCI95(xs40, math.Inf(1), false)
	assert.Equal(t, MethodHallT, iv.Method)
	assert.True(t, iv.Unreliable)
	// From 50 pairs: hall-t, reliable, summed in the order given.
	xs60 := append(append([]float64(nil), xs40...), xs[:10]...)
	iv = PairedCI95(xs60, 1, false)
	assert.Equal(t, MethodHallT, iv.Method)
	assert.False(t, iv.Unreliable)
	assert.Equal(t, hallTFromValues(xs60, -1, 1), iv.CI())
	// Paired differences all equal: the rule of three at every n (issue 34),
	// around the value and not a point: 60 identical pairs give ±(1 − 0.05^{1/59})
	// of the range's half-width, where bounded Wilson gave ±0.261.
	iv = PairedCI95([]float64{0.2, 0.2}, 1, false)
	assert.Equal(t, MethodRuleOfThree, iv.Method)
	assert.Less(t, iv.Lo, 0.2)
	assert.Greater(t, iv.Hi, 0.2)
	same60 := make([]float64, 60)
	iv = PairedCI95(same60, 31.8, false)
	assert.Equal(t, MethodRuleOfThree, iv.Method)
	assert.InDelta(t, -(1-math.Pow(0.05, 1.0/59))*31.8, iv.Lo, 1e-12)
	assert.InDelta(t, (1-math.Pow(0.05, 1.0/59))*31.8, iv.Hi, 1e-12)
	assert.False(t, iv.Unreliable)
	// A 0/1 measure gets the interval inverted from McNemar's test.
	iv = PairedCI95([]float64{-1, -1, 0, 0, 1, -1, 0, 0, -1, -1, -1}, 1, true)
	assert.Equal(t, MethodMcNemarInverted, iv.Method)
	assert.Equal(t, McNemarCI95(6, 1, 11), iv)
	// …and the rule of three when no pair is discordant.
	assert.Equal(t, MethodRuleOfThree, PairedCI95(same60, 1, true).Method)
}

func TestQueryRange(t *testing.T) {
	dcg := QueryMeasures[QueryIndex(KeyDCG)].Info
	lo, hi := QueryRange(dcg, 2, GainExp, 3)
	assert.Equal(t, 0.0, lo)
	assert.InDelta(t, 7+7/math.Log2(3), hi, 1e-12)
	_, hi = QueryRange(QueryMeasures[QueryIndex("mean_relevance_at_k")].Info, 10, GainExp, 3)
	assert.Equal(t, 3.0, hi)
	_, hi = QueryRange(QueryMeasures[QueryIndex("ndcg_at_k")].Info, 10, GainExp, 3)
	assert.Equal(t, 1.0, hi)
}

// TestColumnCI95ZeroOneValuesOfAWiderRange: a series whose values happen to be
// 0 and 1 is a proportion only when the measure's range is [0, 1]. compare's
// relevance/k@k and mean relevance (range [0, max level]) and DCG (range [0,
// max DCG]) take the value 1 often (a judged result of relevance 1 at rank 1),
// and the Wilson interval of such a series ends at 1: six queries at 1 read
// [0.517, 1] for a measure whose queries reach 3. Over the two-point
// population 1 (probability 0.85) and 3 (0.15), mean 1.3, the interval of ten
// queries depends only on how many are 3, so its coverage is exact:
// Σ_j Binomial(j; 10, 0.15)·1[1.3 ∈ CI(j)]. With the Wilson interval for the
// all-ones samples (19.7% of them) it was at most 0.803.
func TestColumnCI95ZeroOneValuesOfAWiderRange(t *testing.T) {
	iv := ColumnCI95([]float64{1, 1, 1, 1, 1, 1}, nil, 0, 3)
	assert.NotEqual(t, MethodWilson, iv.Method)
	assert.Greater(t, iv.Hi, 1.0, "a measure whose values reach 3 is not bounded by the observed 1")
	iv = ColumnCI95([]float64{0, 1, 1, 0, 1, 1}, nil, 0, 3)
	assert.Equal(t, MethodHallT, iv.Method)
	// Still Wilson on [0, 1].
	assert.Equal(t, MethodWilson, ColumnCI95([]float64{1, 1, 1, 1, 1, 1}, nil, 0, 1).Method)

	const n, p3, mean = 10, 0.15, 1*0.85 + 3*0.15
	coverage := 0.0
	for j := range n + 1 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = 1
			if i < j {
				xs[i] = 3
			}
		}
		iv := ColumnCI95(xs, nil, 0, 3)
		if iv.Lo <= mean && mean <= iv.Hi {
			coverage += math.Exp(lchoose(n, j) + float64(j)*math.Log(p3) + float64(n-j)*math.Log1p(-p3))
		}
	}
	assert.GreaterOrEqual(t, coverage, 0.95)
}

// lchoose is log C(n, k).
func lchoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}
