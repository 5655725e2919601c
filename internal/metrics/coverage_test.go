package metrics

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"gonum.org/v1/gonum/stat/distuv"
)

// Coverage of the 95% intervals. For a proportion the coverage is computed exactly
// over the data: an interval depends on the number of successes k only, so
// coverage(p, n) = Σ_k Binomial(k; n, p)·1[p ∈ CI(k)] (the bootstrap methods still
// resample inside CI(k)). For a continuous measure and for kappa it is simulated.
//
//	go test ./internal/metrics -run TestCoverageTable -v -print-coverage
//
// prints the README's table.

var printCoverage = flag.Bool("print-coverage", false, "print the coverage table of the 95% intervals")

// proportionCoverage is the exact coverage of ci at proportion p over n trials.
func proportionCoverage(p float64, n int64, ci func(k, n int64) [2]float64) float64 {
	bin := distuv.Binomial{N: float64(n), P: p}
	cov := 0.0
	for k := int64(0); k <= n; k++ {
		iv := ci(k, n)
		if iv[0] <= p && p <= iv[1] {
			cov += bin.Prob(float64(k))
		}
	}
	return cov
}

func binaryHistogram(k, n int64) *Histogram {
	h := NewHistogram()
	for i := range n {
		if i < k {
			h.Add(1)
		} else {
			h.Add(0)
		}
	}
	return h
}

func wilsonCI(k, n int64) [2]float64 { return WilsonCCInterval(k, n, Z95) }

// plainWilson is the Wilson (1927) score interval without continuity correction,
// (p̂ + z²/2n ± z·√(p̂(1−p̂)/n + z²/4n²)) / (1 + z²/n), which the reports used
// before: for the coverage table's comparison (statsmodels' proportion_confint
// method="wilson" gives 5/5 → [0.5655175352168252, 1]).
func plainWilson(k, n int64) [2]float64 {
	p, nf, z2 := float64(k)/float64(n), float64(n), Z95*Z95
	den := 1 + z2/nf
	mid := (p + z2/(2*nf)) / den
	half := Z95 * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf)) / den
	lo, hi := max(0, mid-half), min(1, mid+half)
	if k == 0 {
		lo = 0
	}
	if k == n {
		hi = 1
	}
	return [2]float64{lo, hi}
}

// The interval of every 0/1 measure covers at least 0.945 at every p on a grid of
// 10⁴ points, exactly over the binomial, at n = 1, 2, 3, 5, 10, 20, 30, 50, 132
// (the demo), 200, 500 and 1,000 (every n from 1 to 200 too with
// RETRIEVAL_GATE_FULL_SIMULATION=1); the plain score interval falls to about 0.84
// near p = 1/n at every one of those n from 20 (Brown, Cai and DasGupta 2001;
// below 0.93 on this grid).
func TestWilsonCCCoverageEveryP(t *testing.T) {
	skipSimulationUnderRace(t)
	ns := []int64{1, 2, 3, 5, 10, 20, 30, 50, 132, 200, 500, 1000}
	if fullSimulation() {
		ns = ns[:0]
		for n := int64(1); n <= 200; n++ {
			ns = append(ns, n)
		}
		ns = append(ns, 500, 1000)
	}
	for _, n := range ns {
		worstCC, worstPlain := 1.0, 1.0
		for i := 1; i < 10000; i++ {
			p := float64(i) / 10000
			worstCC = min(worstCC, proportionCoverage(p, n, wilsonCI))
			if n >= 20 {
				worstPlain = min(worstPlain, proportionCoverage(p, n, plainWilson))
			}
		}
		assert.GreaterOrEqual(t, worstCC, 0.945, "n = %d", n)
		if n >= 20 {
			assert.Less(t, worstPlain, 0.93, "n = %d: the plain score interval's dip", n)
		}
	}
}

func percentileCI(resamples int) func(k, n int64) [2]float64 {
	return func(k, n int64) [2]float64 {
		return binaryHistogram(k, n).CI95(resamples, DefaultSeed+uint64(k))
	}
}

func bcaCI(resamples int) func(k, n int64) [2]float64 {
	return func(k, n int64) [2]float64 {
		return binaryHistogram(k, n).BCaCI95(resamples, DefaultSeed+uint64(k), 0, 1).CI()
	}
}

func TestWilsonCoverage(t *testing.T) {
	skipSimulationUnderRace(t)
	// Issue 11: at least 0.90 for p = 0.9 at n = 20 (the percentile bootstrap has 0.876
	// there and 0.401 at n = 5).
	assert.GreaterOrEqual(t, proportionCoverage(0.9, 20, wilsonCI), 0.90)
	for _, c := range []struct {
		p float64
		n int64
	}{{0.9, 5}, {0.95, 20}, {0.5, 10}, {0.7, 29}, {0.9, 100}} {
		assert.GreaterOrEqual(t, proportionCoverage(c.p, c.n, wilsonCI), 0.90, "p=%v n=%d", c.p, c.n)
	}
	// And the percentile bootstrap does not: the failure the issue reports.
	assert.Less(t, proportionCoverage(0.9, 5, percentileCI(1000)), 0.5)
	assert.Less(t, proportionCoverage(0.95, 20, percentileCI(1000)), 0.7)
}

// mixture draws from a continuous nDCG-like measure: 0 with probability 0.3, 1 with
// 0.2, else Beta(2, 5); its mean is 0.2 + 0.5·2/7.
type mixture struct{ beta distuv.Beta }

func newMixture(seed uint64) mixture {
	return mixture{distuv.Beta{Alpha: 2, Beta: 5, Src: rand.NewPCG(seed, 11)}}
}

const mixtureMean = 0.2 + 0.5*2.0/7

func (m mixture) draw(u float64) float64 {
	switch {
	case u < 0.3:
		return 0
	case u < 0.5:
		return 1
	}
	return m.beta.Rand()
}

// skewed draws right-skewed scores: 0 with probability 0.7, else 1 − √U (density
// 2(1 − x) on [0, 1]); its mean is 0.3·⅓ = 0.1.
func skewed(u, v float64) float64 {
	if u < 0.7 {
		return 0
	}
	return 1 - math.Sqrt(v)
}

const skewedMean = 0.1

// meanCoverage simulates the coverage of the percentile and BCa intervals of the
// mixture's mean at n, over reps samples.
func meanCoverage(n, reps, resamples int, seed uint64) (pct, bca float64) {
	r := NewRand(seed)
	m := newMixture(seed)
	return meanCoverageOf(func() float64 { return m.draw(r.Float64()) }, mixtureMean, n, reps, resamples)
}

// skewedCoverage is meanCoverage of the right-skewed scores (skewed).
func skewedCoverage(n, reps, resamples int, seed uint64) (pct, bca float64) {
	r := NewRand(seed)
	return meanCoverageOf(func() float64 { return skewed(r.Float64(), r.Float64()) }, skewedMean, n, reps, resamples)
}

func meanCoverageOf(draw func() float64, mean float64, n, reps, resamples int) (pct, bca float64) {
	var cp, cb int
	for rep := range reps {
		h := NewHistogram()
		for range n {
			h.Add(draw())
		}
		s := uint64(rep) + 1
		if ci := h.CI95(resamples, s); ci[0] <= mean && mean <= ci[1] {
			cp++
		}
		if iv := h.BCaCI95(resamples, s, 0, 1); iv.Lo <= mean && mean <= iv.Hi {
			cb++
		}
	}
	return float64(cp) / float64(reps), float64(cb) / float64(reps)
}

// fullSimulation reports whether the full simulations run
// (RETRIEVAL_GATE_FULL_SIMULATION=1: the coverage tables of docs/statistics.md and
// the 2·10⁶-draw check of the saddlepoint p); the normal suite and CI run reduced
// ones, seeded alike (the full ones take longer than go test's 10-minute limit
// under -race).
func fullSimulation() bool { return os.Getenv("RETRIEVAL_GATE_FULL_SIMULATION") != "" }

// The BCa interval at the expanded level covers at least 0.93 on the nDCG-like
// mixture from n = 20 and on right-skewed scores (70% zeros) from n = 30, the n
// from which it is not flagged (at n = 20 it gave 0.923 and 0.947 with two seeds
// of 1,000 samples; plain BCa was reported at 0.928 there). The normal suite
// simulates 200 samples with 500 resamples (seeded, so the result is fixed); the
// heavy suite 2,000 samples with 1,000 resamples at more n.
func TestBCaCoverageContinuous(t *testing.T) {
	skipSimulationUnderRace(t)
	reps, resamples, mixN, skewN := 200, 500, []int{20}, []int{30}
	if fullSimulation() {
		reps, resamples, mixN, skewN = 2000, 1000, []int{20, 30, 50}, []int{30, 50}
	}
	for _, n := range mixN {
		_, bca := meanCoverage(n, reps, resamples, 3)
		assertCoverage(t, int(math.Round(bca*float64(reps))), reps, "mixture, n = %d", n)
	}
	for _, n := range skewN {
		_, bca := skewedCoverage(n, reps, resamples, 4)
		assertCoverage(t, int(math.Round(bca*float64(reps))), reps, "right-skewed, n = %d", n)
	}
	assert.False(t, UnreliableFor(MethodBCa, ReliableMinN))
	assert.True(t, UnreliableFor(MethodBCa, ReliableMinN-1))
	assert.False(t, UnreliableFor(MethodWilson, 1))
	assert.True(t, UnreliableFor(MethodWilsonDisagreement, 49))
}

func TestKappaCoverage(t *testing.T) {
	skipSimulationUnderRace(t)
	reps, ns := 200, []int{20}
	if fullSimulation() {
		reps, ns = 1000, []int{20, 50, 100}
	}
	for _, n := range ns {
		cov, undefined := kappaCoverage(n, reps, 500, KappaCIMethod, 5)
		assertCoverage(t, int(math.Round(cov*float64(reps-undefined))), reps-undefined, "kappa interval at n = %d", n)
		assert.Zero(t, undefined)
	}
}

// kappaTruth is a 3-bin joint distribution of (human, judge) bins with about 0.8
// agreement.
var kappaTruth = [][]float64{{0.25, 0.04, 0.01}, {0.04, 0.20, 0.05}, {0.01, 0.05, 0.35}}

func trueWeightedKappa(p [][]float64, w [][]float64) float64 {
	k := len(p)
	rows, cols := make([]float64, k), make([]float64, k)
	for i := range p {
		for j := range p[i] {
			rows[i] += p[i][j]
			cols[j] += p[i][j]
		}
	}
	var o, e float64
	for i := range p {
		for j := range p[i] {
			o += w[i][j] * p[i][j]
			e += w[i][j] * rows[i] * cols[j]
		}
	}
	return 1 - o/e
}

// kappaCoverage simulates the coverage of KappaCI95 (method) of the quadratic
// weighted kappa of kappaTruth at n pairs; samples with undefined kappa are left
// out (and counted).
func kappaCoverage(n, reps, resamples int, method string, seed uint64) (cov float64, undefined int) {
	w := KappaWeights(3, KappaQuadratic)
	truth := trueWeightedKappa(kappaTruth, w)
	var flat []float64
	for _, row := range kappaTruth {
		flat = append(flat, row...)
	}
	cum := make([]float64, len(flat))
	acc := 0.0
	for i, v := range flat {
		acc += v
		cum[i] = acc
	}
	r := NewRand(seed)
	covered, defined := 0, 0
	m := [][]int{make([]int, 3), make([]int, 3), make([]int, 3)}
	for rep := range reps {
		for i := range m {
			clear(m[i])
		}
		for range n {
			u := r.Float64() * acc
			c := 0
			for c < len(cum)-1 && u >= cum[c] {
				c++
			}
			m[c/3][c%3]++
		}
		iv := KappaCI95(m, w, resamples, uint64(rep)+1, method)
		if math.IsNaN(iv.Lo) {
			undefined++
			continue
		}
		defined++
		if iv.Lo <= truth && truth <= iv.Hi {
			covered++
		}
	}
	return float64(covered) / float64(defined), undefined
}

func TestCoverageTable(t *testing.T) {
	skipSimulationUnderRace(t)
	if !*printCoverage {
		t.Skip("run with -print-coverage to print the coverage table")
	}
	const resamples = 2000
	b := &lineWriter{}
	fmt.Fprintf(b, "Proportion (0/1 measure), exact over the data, %d bootstrap resamples:\n\n", resamples)
	fmt.Fprintf(b, "| p | n | percentile bootstrap | BCa | Wilson | Wilson-cc |\n|---:|---:|---:|---:|---:|---:|\n")
	for _, p := range []float64{0.5, 0.7, 0.9, 0.95} {
		for _, n := range []int64{5, 10, 20, 50, 100} {
			fmt.Fprintf(b, "| %.2f | %d | %.3f | %.3f | %.3f | %.3f |\n", p, n,
				proportionCoverage(p, n, percentileCI(resamples)), proportionCoverage(p, n, bcaCI(resamples)),
				proportionCoverage(p, n, plainWilson), proportionCoverage(p, n, wilsonCI))
		}
	}
	const reps, simResamples = 1000, 1000
	fmt.Fprintf(b, "\nContinuous measure (0 w.p. 0.3, 1 w.p. 0.2, else Beta(2,5); mean %.4f), %d simulated samples, %d resamples:\n\n", mixtureMean, reps, simResamples)
	fmt.Fprintf(b, "| n | percentile bootstrap | BCa (expanded level) |\n|---:|---:|---:|\n")
	for _, n := range []int{5, 10, 15, 20, 30, 50} {
		pct, bca := meanCoverage(n, reps, simResamples, 3)
		fmt.Fprintf(b, "| %d | %.3f | %.3f |\n", n, pct, bca)
	}
	fmt.Fprintf(b, "\nRight-skewed scores (0 w.p. 0.7, else density 2(1 − x); mean %.1f), %d simulated samples, %d resamples:\n\n", skewedMean, reps, simResamples)
	fmt.Fprintf(b, "| n | percentile bootstrap | BCa (expanded level) |\n|---:|---:|---:|\n")
	for _, n := range []int{5, 10, 15, 20, 30, 50} {
		pct, bca := skewedCoverage(n, reps, simResamples, 4)
		fmt.Fprintf(b, "| %d | %.3f | %.3f |\n", n, pct, bca)
	}
	w := KappaWeights(3, KappaQuadratic)
	fmt.Fprintf(b, "\nQuadratic weighted kappa (3 bins, true kappa %.4f), %d simulated samples, %d resamples of the counts:\n\n", trueWeightedKappa(kappaTruth, w), reps, simResamples)
	fmt.Fprintf(b, "| n | percentile | BCa |\n|---:|---:|---:|\n")
	for _, n := range []int{20, 50, 100} {
		pc, u1 := kappaCoverage(n, reps, simResamples, MethodPercentile, 5)
		bc, _ := kappaCoverage(n, reps, simResamples, MethodBCa, 5)
		fmt.Fprintf(b, "| %d | %.3f | %.3f |", n, pc, bc)
		if u1 > 0 {
			fmt.Fprintf(b, " (%d samples with undefined kappa left out)", u1)
		}
		fmt.Fprintf(b, "\n")
	}
}

// lineWriter prints the table as it is computed (go test -v shows it).
type lineWriter struct{ strings.Builder }

func (w *lineWriter) Write(p []byte) (int, error) { return os.Stdout.Write(p) }
