package metrics

import (
	"context"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

var printAlphaCoverage = flag.Bool("print-alpha-coverage", false, "print the alpha interval's simulated coverage (docs/statistics.md)")

// panelUnit draws one case of the simulated panel: a latent bin (0.3, 0.3, 0.4),
// three raters who each give it with probability 0.8 and else a neighbouring
// bin, each label present with probability 0.9.
func panelUnit(rng *rand.Rand, vals []int) []int {
	vals = vals[:0]
	u := rng.Float64()
	t := 2
	switch {
	case u < 0.3:
		t = 0
	case u < 0.6:
		t = 1
	}
	for range 3 {
		if rng.Float64() >= 0.9 {
			continue
		}
		v := t
		if rng.Float64() >= 0.8 {
			switch t {
			case 0:
				v = 1
			case 2:
				v = 1
			default:
				v = rng.IntN(2) * 2
			}
		}
		vals = append(vals, v)
	}
	return vals
}

// alphaCoverage is the share of `reps` samples of n cases whose AlphaCI95Context
// covers the population alpha (from 400,000 cases), and how often it missed low
// and high; samples without an interval are counted apart.
func alphaCoverage(t *testing.T, n, reps, resamples int, seed uint64) (cov float64, low, high, none int) {
	w := KappaWeights(3, KappaQuadratic)
	rng := rand.New(rand.NewPCG(seed, 99))
	var vals []int
	pop := NewAlphaUnits(3)
	for range 400_000 {
		vals = panelUnit(rng, vals)
		pop.Add(vals)
	}
	truth := pop.Alpha(w)
	hit := 0
	for r := range reps {
		a := NewAlphaUnits(3)
		for a.Units() < int64(n) {
			vals = panelUnit(rng, vals)
			a.Add(vals)
		}
		iv, err := AlphaCI95Context(context.Background(), a, w, resamples, uint64(r)+seed)
		require.NoError(t, err)
		switch {
		case math.IsNaN(iv.Lo):
			none++
		case truth < iv.Lo:
			low++
		case truth > iv.Hi:
			high++
		default:
			hit++
		}
	}
	return float64(hit) / float64(reps-none), low, high, none
}

// TestAlphaCoverage: the BCa interval over cases of the panel's alpha covers the
// population alpha at least CoverageFloor of the time from n = 30 cases (the
// n from which every BCa interval here is marked reliable). Reduced: 200
// samples at n = 30; RETRIEVAL_GATE_FULL_SIMULATION=1: 1000 at n = 20, 30, 50, 100.
func TestAlphaCoverage(t *testing.T) {
	skipSimulationUnderRace(t)
	reps, resamples, ns := 200, 1000, []int{30}
	if fullSimulation() || *printAlphaCoverage {
		reps, resamples, ns = 1000, 2000, []int{20, 30, 50, 100}
	}
	for _, n := range ns {
		cov, low, high, none := alphaCoverage(t, n, reps, resamples, 7)
		if *printAlphaCoverage {
			fmt.Printf("| %d | %.3f | %d | %d | %d |\n", n, cov, low, high, none)
		}
		if n >= int(ReliableMinN) {
			assertCoverage(t, int(math.Round(cov*float64(reps-none))), reps-none, "alpha interval at n = %d", n)
		}
	}
}
