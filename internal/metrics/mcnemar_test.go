package metrics

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/stat/distuv"
)

func TestClopperPearson(t *testing.T) {
	for _, c := range []struct {
		k, n   int64
		lo, hi float64
	}{
		{0, 10, 0, 0.308497},  // 1 − 0.025^{1/10}
		{10, 10, 0.691503, 1}, // 0.025^{1/10}
		{6, 6, 0.540742, 1},   // 0.025^{1/6}
		{5, 10, 0.187086, 0.812914},
		{1, 20, 0.001265, 0.248733},
	} {
		ci := ClopperPearson(c.k, c.n, 0.05)
		assert.InDelta(t, c.lo, ci[0], 1e-6, "%d/%d", c.k, c.n)
		assert.InDelta(t, c.hi, ci[1], 1e-6, "%d/%d", c.k, c.n)
	}
	assert.Panics(t, func() { ClopperPearson(3, 2, 0.05) })
}

// The interval inverted from the exact McNemar test excludes 0 exactly when
// the test rejects at 0.05, for every (worse, better) at n up to 40.
func TestMcNemarCI95AgreesWithTest(t *testing.T) {
	for n := int64(1); n <= 40; n++ {
		for b := int64(0); b <= n; b++ {
			for c := int64(0); b+c <= n; c++ {
				iv := McNemarCI95(b, c, n)
				rejects := McNemarExactP(b, c) < 0.05
				excludes := iv.Lo > 0 || iv.Hi < 0
				require.Equal(t, rejects, excludes, "n %d, worse %d, better %d: p %g, interval %v", n, b, c, McNemarExactP(b, c), iv.CI())
				delta := float64(c-b) / float64(n)
				require.LessOrEqual(t, iv.Lo, delta+1e-15)
				require.GreaterOrEqual(t, iv.Hi, delta-1e-15)
				require.GreaterOrEqual(t, iv.Lo, -1.0)
				require.LessOrEqual(t, iv.Hi, 1.0)
				require.False(t, iv.Unreliable)
			}
		}
	}
	// The demo's adversarial type (n = 28, hit@5 0.929 → 0.714: six hits lost,
	// none gained): the exact McNemar p is 2·½⁶ = 0.03125 and the interval
	// [−0.410, −0.0068] excludes 0, where hall-t-betting gave [−0.491, +0.037].
	iv := McNemarCI95(6, 0, 28)
	assert.Equal(t, MethodMcNemarInverted, iv.Method)
	psi := ClopperPearson(6, 28, 0.05)
	pi := ClopperPearson(0, 6, 0.05)
	assert.Equal(t, 0.0, pi[0])
	assert.InDelta(t, -psi[1], iv.Lo, 1e-12)
	assert.InDelta(t, psi[0]*(2*pi[1]-1), iv.Hi, 1e-12)
	assert.InDelta(t, -0.4095, iv.Lo, 1e-4)
	assert.InDelta(t, -0.0068, iv.Hi, 1e-4)
	assert.InDelta(t, 0.03125, McNemarExactP(6, 0), 1e-15)
}

// mcnemarExactCoverage is the exact coverage and mean width of the interval
// ci(worse, better) of the mean paired difference of a 0/1 measure over n
// pairs, each pair −1 with probability pw, +1 with pb, else 0: the sum over
// every (worse, better) of its multinomial probability.
func mcnemarExactCoverage(n int64, pw, pb float64, ci [][]Interval) (cov, width float64) {
	lg := func(x int64) float64 { v, _ := math.Lgamma(float64(x + 1)); return v }
	delta, p0 := pb-pw, 1-pw-pb
	term := func(k int64, p float64) (float64, bool) {
		switch {
		case k == 0:
			return 0, true
		case p == 0:
			return 0, false
		}
		return float64(k) * math.Log(p), true
	}
	for b := int64(0); b <= n; b++ {
		for c := int64(0); b+c <= n; c++ {
			x, ok1 := term(b, pw)
			y, ok2 := term(c, pb)
			z, ok3 := term(n-b-c, p0)
			if !ok1 || !ok2 || !ok3 {
				continue
			}
			pr := math.Exp(lg(n) - lg(b) - lg(c) - lg(n-b-c) + x + y + z)
			iv := ci[b][c]
			if iv.Lo <= delta && delta <= iv.Hi {
				cov += pr
			}
			width += pr * (iv.Hi - iv.Lo)
		}
	}
	return cov, width
}

// mcnemarIntervals tabulates an interval of every (worse, better) at n.
func mcnemarIntervals(n int64, f func(b, c, n int64) Interval) [][]Interval {
	out := make([][]Interval, n+1)
	for b := range n + 1 {
		out[b] = make([]Interval, n+1-b)
		for c := range n + 1 - b {
			out[b][c] = f(b, c, n)
		}
	}
	return out
}

// before34Binary is the interval a 0/1 measure's differences got before issue
// 34 (differenceIntervalBefore34 of their histogram over [−1, 1]).
func before34Binary(b, c, n int64) Interval {
	h := NewHistogram()
	for range b {
		h.Add(-1)
	}
	for range c {
		h.Add(1)
	}
	for range n - b - c {
		h.Add(0)
	}
	vals, cnt := h.sorted()
	return differenceIntervalBefore34(vals, cnt, n, -1, 1)
}

// The exact coverage of McNemarCI95 over a grid of (p₁₀, p₀₁): the
// discordant proportion ψ from 0.005 to 1 and the share π of discordant
// pairs that improve from 0 to 1 in steps of 0.05. At least 0.95 at every
// point (the two Clopper–Pearson intervals are each at least 95%, and their
// errors rarely meet; Bonferroni alone would promise 0.90). The normal suite
// checks n = 6, 20, 28 and 50; RETRIEVAL_GATE_FULL_SIMULATION=1 adds 10, 100
// and 200 and prints docs/statistics.md's table with the interval used before
// beside it.
func TestMcNemarCI95Coverage(t *testing.T) {
	skipSimulationUnderRace(t)
	ns := []int64{6, 20, 28, 50}
	full := fullSimulation()
	if full {
		ns = []int64{6, 10, 20, 28, 50, 100, 200}
		fmt.Println("| n | after: lowest coverage (p₁₀, p₀₁) | before: lowest coverage (p₁₀, p₀₁) | mean width after / before at p₁₀ = 0.2, p₀₁ = 0 | at p₁₀ = p₀₁ = 0.05 | at p₁₀ = 0.1, p₀₁ = 0.05 |")
		fmt.Println("|---:|---:|---:|---:|---:|---:|")
	}
	psis := []float64{0.005, 0.01, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1}
	for _, n := range ns {
		after := mcnemarIntervals(n, McNemarCI95)
		var before [][]Interval
		if full {
			before = mcnemarIntervals(n, before34Binary)
		}
		worst, worstBefore := 1.0, 1.0
		var at, atBefore [2]float64
		for _, psi := range psis {
			for k := 0; k <= 20; k++ {
				pb := psi * float64(k) / 20
				pw := psi - pb
				cov, _ := mcnemarExactCoverage(n, pw, pb, after)
				if cov < worst {
					worst, at = cov, [2]float64{pw, pb}
				}
				if full {
					if cb, _ := mcnemarExactCoverage(n, pw, pb, before); cb < worstBefore {
						worstBefore, atBefore = cb, [2]float64{pw, pb}
					}
				}
			}
		}
		assert.GreaterOrEqual(t, worst, 0.95, "n %d: lowest coverage at p10 %g, p01 %g", n, at[0], at[1])
		if full {
			widths := ""
			for _, p := range [][2]float64{{0.2, 0}, {0.05, 0.05}, {0.1, 0.05}} {
				_, wa := mcnemarExactCoverage(n, p[0], p[1], after)
				_, wb := mcnemarExactCoverage(n, p[0], p[1], before)
				widths += fmt.Sprintf(" %.3f / %.3f |", wa, wb)
			}
			fmt.Printf("| %d | %.4f (%.3f, %.3f) | %.4f (%.3f, %.3f) |%s\n", n, worst, at[0], at[1], worstBefore, atBefore[0], atBefore[1], widths)
		}
	}
	_ = distuv.Beta{}
}
