package metrics

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Reference values: statsmodels 0.13.5 NormalIndPower().solve_power(nobs1=n,
// alpha=0.05, power=0.8, ratio=0) (the one-sample normal test) gives the effect size
// in sd units; it also counts the far tail, which moves the 4th digit at most.
func TestMDDMean(t *testing.T) {
	tests := []struct {
		n    int64
		want float64
	}{{29, 0.5202405640845448}, {100, 0.2801568334667266}, {2500, 0.056029829945018796}}
	for _, tt := range tests {
		assert.InDelta(t, tt.want, MDDMean(1, tt.n, DefaultAlpha, DefaultPower), 1e-4, "n = %d", tt.n)
		assert.InDelta(t, 2.8015852181129683/math.Sqrt(float64(tt.n)), MDDMean(1, tt.n, DefaultAlpha, DefaultPower), 1e-12)
	}
	assert.InDelta(t, 2*2.8015852181129683/10, MDDMean(2, 100, DefaultAlpha, DefaultPower), 1e-12, "scales with sd")
	assert.True(t, math.IsNaN(MDDMean(1, 0, DefaultAlpha, DefaultPower)))
}

func TestHistogramSampleSD(t *testing.T) {
	h := NewHistogram()
	for _, v := range []float64{2, 4, 4, 4, 5, 5, 7, 9} {
		h.Add(v)
	}
	assert.InDelta(t, math.Sqrt(32.0/7), h.SampleSD(), 1e-15) // Σ(x−5)² = 32
	one := NewHistogram()
	one.Add(1)
	assert.True(t, math.IsNaN(one.SampleSD()))
}

// Reference values: the same equations solved with scipy 1.10.1 optimize.brentq
// (xtol 1e-15). Exact binomial power at p0 − down (scipy binomtest rejection region):
// 0.744 (0.8, 29), 0.769 (0.7, 100), 0.815 (0.9, 20), 0.794 (0.5, 2500).
func TestMDDProportion(t *testing.T) {
	tests := []struct {
		p0       float64
		n        int64
		down, up float64
	}{
		{0.8, 29, 0.22278768619634948, 0.17156080558641523},
		{0.7, 100, 0.1315011276550168, 0.122009261810768},
		{0.9, 20, 0.21920790164887743, math.NaN()}, // no p1 ≤ 1 is detectable above 0.9 with 20
		{0.5, 2500, 0.02800264270269525, 0.02800264270269525},
	}
	for _, tt := range tests {
		down, up := MDDProportion(tt.p0, tt.n, DefaultAlpha, DefaultPower)
		assert.InDelta(t, tt.down, down, 1e-12, "p0=%v n=%d down", tt.p0, tt.n)
		if math.IsNaN(tt.up) {
			assert.True(t, math.IsNaN(up), "p0=%v n=%d up", tt.p0, tt.n)
		} else {
			assert.InDelta(t, tt.up, up, 1e-12, "p0=%v n=%d up", tt.p0, tt.n)
		}
	}
	down, up := MDDProportion(0.5, 0, DefaultAlpha, DefaultPower)
	assert.True(t, math.IsNaN(down) && math.IsNaN(up))
}

// A direction in which the exact binomial test of the floor cannot reject at
// α, even when all n items fall on that side (two-sided p 2·p0ⁿ above the
// floor, 2·(1 − p0)ⁿ below), detects no difference, whatever the normal
// approximation says: one case above a floor of 0.05 read "n = 1 detects
// differences of ±0.758" (p = 0.1 at best), and two cases above 0.2 likewise
// (p = 0.08 at best).
func TestMDDProportionNeedsAnExactRejection(t *testing.T) {
	_, up := MDDProportion(0.05, 1, DefaultAlpha, DefaultPower)
	assert.True(t, math.IsNaN(up), "n = 1 above 0.05: %v", up)
	_, up = MDDProportion(0.2, 2, DefaultAlpha, DefaultPower)
	assert.True(t, math.IsNaN(up), "n = 2 above 0.2: %v", up)
	down, _ := MDDProportion(0.95, 1, DefaultAlpha, DefaultPower)
	assert.True(t, math.IsNaN(down), "n = 1 below 0.95: %v", down)
	for n := int64(1); n <= 12; n++ {
		for i := 1; i < 100; i++ {
			p0 := float64(i) / 100
			down, up := MDDProportion(p0, n, DefaultAlpha, DefaultPower)
			if 2*math.Pow(p0, float64(n)) >= DefaultAlpha {
				assert.True(t, math.IsNaN(up), "p0=%v n=%d up %v", p0, n, up)
			}
			if 2*math.Pow(1-p0, float64(n)) >= DefaultAlpha {
				assert.True(t, math.IsNaN(down), "p0=%v n=%d down %v", p0, n, down)
			}
		}
	}
	// Where the exact test can reject, the normal-theory figure stands.
	_, up = MDDProportion(0.05, 2, DefaultAlpha, DefaultPower)
	assert.False(t, math.IsNaN(up))
}

// connorAt is Connor's (1987) McNemar formula at the observed discordant
// proportion ψ alone (what the reports used before issue 34): the δ in (0, ψ]
// solving √n·δ = z_{0.975}·√ψ + z_{0.8}·√(ψ − δ²), NaN when even δ = ψ is not
// detectable.
func connorAt(psi float64, n int64) float64 {
	za, zb, rn := NormalQuantile(0.975), NormalQuantile(0.8), math.Sqrt(float64(n))
	f := func(d float64) float64 { return rn*d - za*math.Sqrt(psi) - zb*math.Sqrt(max(0, psi-d*d)) }
	if psi <= 0 || f(psi) < 0 {
		return math.NaN()
	}
	return bisect(f, 0, psi)
}

func TestMDDMcNemarAtObservedDiscordance(t *testing.T) {
	tests := []struct {
		psi  float64
		n    int64
		want float64 // Connor's formula at ψ
	}{
		{0.02, 2500, 0.00792034341848792},
		{0.1, 100, 0.08755348893461398},
		{0.2, 29, math.NaN()},   // about 6 discordant pairs: even all one way is not detectable at ψ
		{0.01, 100, math.NaN()}, // one discordant pair
		{0, 100, math.NaN()},
	}
	for _, tt := range tests {
		at := connorAt(tt.psi, tt.n)
		got := MDDMcNemar(tt.psi, tt.n, DefaultAlpha, DefaultPower)
		if math.IsNaN(tt.want) {
			assert.True(t, math.IsNaN(at), "psi=%v n=%d: %v", tt.psi, tt.n, at)
			// The discordance grows with δ: a drop larger than ψ is detectable.
			assert.Greater(t, got, tt.psi, "psi=%v n=%d", tt.psi, tt.n)
		} else {
			assert.InDelta(t, tt.want, at, 1e-12, "psi=%v n=%d", tt.psi, tt.n)
			assert.InDelta(t, tt.want, got, 1e-12, "psi=%v n=%d", tt.psi, tt.n)
		}
	}
}

// MDDMcNemar lets the discordant share grow with the difference: the demo's
// adversarial hit@5 (n = 28, six pairs lost, none gained: ψ = 6/28) had no
// detectable difference by Connor's formula at the observed ψ (MDD "—") while
// the exact test rejected (p = 0.031); with ψ_δ = max(ψ, δ) the drop detected
// four times in five is 0.258 (the 0.214 observed was detected with less
// power).
func TestMDDMcNemar(t *testing.T) {
	za, zb := NormalQuantile(0.975), NormalQuantile(0.8)
	psi := 6.0 / 28
	assert.True(t, math.IsNaN(connorAt(psi, 28)))
	d := MDDMcNemar(psi, 28, 0.05, 0.8)
	assert.Greater(t, d, psi)
	// At δ > ψ the discordant share is δ itself.
	assert.InDelta(t, math.Sqrt(28)*d, za*math.Sqrt(d)+zb*math.Sqrt(d-d*d), 1e-9)
	assert.InDelta(t, 0.2575, d, 1e-4)
	// Where Connor's formula at ψ answers, the two agree.
	for _, c := range []struct {
		psi float64
		n   int64
	}{{0.1, 500}, {0.3, 200}, {0.05, 10000}} {
		assert.InDelta(t, connorAt(c.psi, c.n), MDDMcNemar(c.psi, c.n, 0.05, 0.8), 1e-9)
	}
	// Below six pairs the exact test cannot reject: no difference is detectable.
	assert.True(t, math.IsNaN(MDDMcNemar(0.5, 5, 0.05, 0.8)))
	assert.False(t, math.IsNaN(MDDMcNemar(0, 6, 0.05, 0.8)))
}
