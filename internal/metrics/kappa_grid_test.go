package metrics

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var printKappaGrid = flag.Bool("print-kappa-grid", false, "print the coverage of the kappa intervals over the grid of joint distributions (docs/statistics.md)")

var kappaGridPart = flag.Int("kappa-grid-part", -1, "print only the margins of even (0) or odd (1) index of the kappa grid (two processes)")

var printKappaRule = flag.Bool("print-kappa-rule", false, "print the unweighted rows of the kappa grid again, 1,500 samples each at seed 12, with CoverageFloor's test (docs/statistics.md)")

// kappaGridMargins are the human's grade margins (0-3) of the grid: balanced,
// and skewed with a rare grade at 5% (lowest or highest) or 10%.
var kappaGridMargins = []struct {
	name string
	m    []float64
}{
	{"balanced", []float64{0.25, 0.25, 0.25, 0.25}},
	{"rare 0 at 5%", []float64{0.05, 0.15, 0.30, 0.50}},
	{"rare 0 at 10%", []float64{0.10, 0.20, 0.35, 0.35}},
	{"rare 3 at 5%", []float64{0.30, 0.40, 0.25, 0.05}},
}

// kappaGridAgreement: the judge gives the human's grade with probability a, a
// neighbouring grade with probability b (either neighbour alike), else a grade
// drawn from the human's margins.
var kappaGridAgreement = []struct {
	name string
	a, b float64
}{{"high", 0.8, 0.15}, {"moderate", 0.5, 0.3}, {"low", 0.2, 0.3}}

// kappaGridJoint is the 4×4 joint distribution of (human, judge) grades of
// human margins marg and agreement (a, b) as in kappaGridAgreement.
func kappaGridJoint(marg []float64, a, b float64) [][]float64 {
	k := len(marg)
	p := make([][]float64, k)
	for h := range p {
		p[h] = make([]float64, k)
		for j := range k {
			p[h][j] = marg[h] * (1 - a - b) * marg[j]
		}
		p[h][h] += marg[h] * a
		switch {
		case h == 0:
			p[h][1] += marg[h] * b
		case h == k-1:
			p[h][k-2] += marg[h] * b
		default:
			p[h][h-1] += marg[h] * b / 2
			p[h][h+1] += marg[h] * b / 2
		}
	}
	return p
}

// kappaGridResult is the simulated coverage of one method's kappa intervals
// that are not marked unreliable.
type kappaGridResult struct {
	covered, reliable, unreliable int
	width                         float64 // summed over the reliable intervals
}

func (r kappaGridResult) coverage() float64 { return float64(r.covered) / float64(r.reliable) }

// kappaGridCoverage draws reps samples of n pairs from p and returns, per
// method, the coverage of the true weighted kappa (scheme) by the intervals
// KappaCI95 does not mark unreliable (samples with undefined kappa left out).
func kappaGridCoverage(p [][]float64, scheme string, n, reps, resamples int, seed uint64, methods ...string) []kappaGridResult {
	k := len(p)
	w := KappaWeights(k, scheme)
	truth := trueWeightedKappa(p, w)
	var cum []float64
	acc := 0.0
	for _, row := range p {
		for _, v := range row {
			acc += v
			cum = append(cum, acc)
		}
	}
	r := rand.New(rand.NewPCG(seed, uint64(n)))
	m := make([][]int, k)
	for i := range m {
		m[i] = make([]int, k)
	}
	out := make([]kappaGridResult, len(methods))
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
			m[c/k][c%k]++
		}
		for x, method := range methods {
			iv := KappaCI95(m, w, resamples, uint64(rep)+1, method)
			switch {
			case math.IsNaN(iv.Lo):
			case iv.Unreliable:
				out[x].unreliable++
			default:
				out[x].reliable++
				out[x].width += iv.Hi - iv.Lo
				if iv.Lo <= truth && truth <= iv.Hi {
					out[x].covered++
				}
			}
		}
	}
	return out
}

// The cells of the grid where BCa alone covered least (docs/statistics.md,
// "Interval coverage": 0.890 and 0.896 at 50 pairs, quadratic weights, high
// agreement): the interval calibrate and judge use covers at least 0.95 there.
func TestKappaCoverageGrid(t *testing.T) {
	skipSimulationUnderRace(t)
	for _, tc := range []struct {
		marg int
		n    int
	}{{0, 50}, {1, 50}} {
		mg, ag := kappaGridMargins[tc.marg], kappaGridAgreement[0]
		p := kappaGridJoint(mg.m, ag.a, ag.b)
		res := kappaGridCoverage(p, KappaQuadratic, tc.n, 250, 500, 11, KappaCIMethod)[0]
		require.Greater(t, res.reliable, 100, "%s", mg.name)
		assert.GreaterOrEqual(t, res.coverage(), 0.95, "%s, high agreement, quadratic, n = %d (%d intervals)", mg.name, tc.n, res.reliable)
	}
	// Unweighted (Cohen's) kappa on balanced margins with high agreement at
	// 200 pairs (0.945 over 2,100 samples, among the grid's lowest that
	// pass): not significantly below 0.95 (CoverageFloor's rule; 250 samples
	// only catch a fall well below it, the full rows are TestKappaGridRule's).
	p := kappaGridJoint(kappaGridMargins[0].m, kappaGridAgreement[0].a, kappaGridAgreement[0].b)
	res := kappaGridCoverage(p, KappaUnweighted, 200, 250, 500, 11, KappaCIMethod)[0]
	assertCoverage(t, res.covered, res.reliable, "balanced, high agreement, unweighted, n = 200")
}

// TestKappaGridRule prints docs/statistics.md's second run of the unweighted
// rows of the kappa grid (1,500 samples each, seed 12, besides the table's
// 600 at seed 11) with CoverageFloor's test on each and on both runs pooled:
//
//	go test ./internal/metrics -run TestKappaGridRule -v -args -print-kappa-rule [-kappa-grid-part 0|1]
func TestKappaGridRule(t *testing.T) {
	skipSimulationUnderRace(t)
	if !*printKappaRule {
		t.Skip("run with -print-kappa-rule to print the unweighted kappa rows with the coverage rule")
	}
	const reps, resamples = 1500, 1000
	fmt.Printf("| margins | agreement | n | covered of reliable | coverage | lowest that passes |\n|---|---|---:|---:|---:|---:|\n")
	for x, mg := range kappaGridMargins {
		if *kappaGridPart >= 0 && x%2 != *kappaGridPart {
			continue
		}
		for _, ag := range kappaGridAgreement {
			p := kappaGridJoint(mg.m, ag.a, ag.b)
			for _, n := range []int{30, 50, 100, 200} {
				res := kappaGridCoverage(p, KappaUnweighted, n, reps, resamples, 12, KappaCIMethod)[0]
				fmt.Printf("| %s | %s | %d | %d of %d | %.4f | %.4f |\n", mg.name, ag.name, n, res.covered, res.reliable, res.coverage(), coverageThreshold(res.reliable))
			}
		}
	}
}

// TestKappaGridTable prints docs/statistics.md's kappa grid:
// go test ./internal/metrics -run TestKappaGridTable -v -args -print-kappa-grid
func TestKappaGridTable(t *testing.T) {
	skipSimulationUnderRace(t)
	if !*printKappaGrid {
		t.Skip("run with -print-kappa-grid to print the kappa coverage grid")
	}
	const reps, resamples = 600, 1000
	fmt.Printf("| margins | agreement | weights | true κ | n | reliable (marked) | BCa | %s | mean width: BCa → %s |\n|---|---|---|---:|---:|---:|---:|---:|---:|\n", KappaCIMethod, KappaCIMethod)
	for x, mg := range kappaGridMargins {
		if *kappaGridPart >= 0 && x%2 != *kappaGridPart {
			continue
		}
		for _, ag := range kappaGridAgreement {
			p := kappaGridJoint(mg.m, ag.a, ag.b)
			for _, scheme := range []string{KappaUnweighted, KappaLinear, KappaQuadratic} {
				for _, n := range []int{30, 50, 100, 200} {
					res := kappaGridCoverage(p, scheme, n, reps, resamples, 11, MethodBCa, KappaCIMethod)
					b, u := res[0], res[1]
					fmt.Printf("| %s | %s | %s | %.3f | %d | %d (%d) | %.3f | %.3f | %.3f → %.3f |\n", mg.name, ag.name, scheme,
						trueWeightedKappa(p, KappaWeights(4, scheme)), n, u.reliable, u.unreliable, b.coverage(), u.coverage(),
						b.width/float64(b.reliable), u.width/float64(u.reliable))
				}
			}
		}
	}
}
