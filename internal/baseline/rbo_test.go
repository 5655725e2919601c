package baseline

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/racetest"
)

// rboOutcome is a head top 5 against the base abcde, with its probability.
type rboOutcome struct {
	p    float64
	head string
}

// rboDist is a finite distribution of per-case RBO at depth 5: its values,
// their cumulative probabilities and its exact mean.
type rboDist struct {
	vals, cum []float64
	mean      float64
}

func newRBODist(outs []rboOutcome) rboDist {
	var d rboDist
	c := 0.0
	for _, o := range outs {
		v := metrics.RBOExtEnded(strings.Split("abcde", ""), strings.Split(o.head, ""), metrics.RBOPersistence)
		c += o.p
		d.vals, d.cum = append(d.vals, v), append(d.cum, c)
		d.mean += o.p * v
	}
	return d
}

func (d rboDist) draw(u float64) float64 {
	for i, c := range d.cum {
		if u < c {
			return d.vals[i]
		}
	}
	return d.vals[len(d.vals)-1]
}

// rboMoved are the ways a top 5 moves: two neighbours swapped, an entry
// replaced at each rank, a ranking that ended after 2, everything replaced.
var rboMoved = []rboOutcome{
	{0.1, "bacde"}, {0.1, "acbde"}, {0.1, "abdce"}, {0.1, "abced"},
	{0.08, "xbcde"}, {0.08, "axcde"}, {0.08, "abxde"}, {0.08, "abcxe"}, {0.08, "abcdx"},
	{0.1, "ab"}, {0.1, "vwxyz"},
}

// withUnchanged is rboMoved with the unchanged top 5 at probability same.
func withUnchanged(same float64) []rboOutcome {
	out := []rboOutcome{{same, "abcde"}}
	for _, o := range rboMoved {
		out = append(out, rboOutcome{o.p * (1 - same), o.head})
	}
	return out
}

// The mean RBO's 95% interval (rboTally: the churn's groups and the overlap
// lines' paired cases and cases without gold, one method) covers the true
// mean not significantly below 0.95 (metrics.CoverageFloor's rule) wherever
// it is not marked unreliable: per-case RBO drawn from the ways a top 5 moves,
// mostly unchanged (cases without gold of a small index change) or mostly
// moved (a new embedder), at n from 5 to 200 (hall-t-betting below 50,
// hall-t from there), and in families that move together (the cluster-t
// hull; from metrics.ClusterReliableMinClusters clusters, so 1,000 samples
// of those designs, whose cases are two to three times as many, and 2,000 of
// the others).
func TestRBOIntervalCoverage(t *testing.T) {
	racetest.Skip(t, "a seeded simulation (CI's run without -race runs it)")
	const reps = 2000
	type design struct {
		name string
		same float64 // probability that a case's top 5 did not move
		n    int
		// families × size cases share their probability of moving, Beta(a, b)
		// with mean 1 − same; singles more cases without a key
		families, size, singles int
		a, b                    float64
	}
	designs := []design{
		{name: "mostly unchanged", same: 0.8, n: 5},
		{name: "mostly unchanged", same: 0.8, n: 20},
		{name: "mostly unchanged", same: 0.8, n: 50},
		{name: "mostly unchanged", same: 0.9, n: 200},
		{name: "mostly moved", same: 0.2, n: 5},
		{name: "mostly moved", same: 0.2, n: 20},
		{name: "mostly moved", same: 0.2, n: 50},
		{name: "mostly moved", same: 0.2, n: 200},
		// at least metrics.ClusterReliableMinClusters (100) clusters: below,
		// every interval over clusters is marked unreliable
		{name: "families", same: 0.8, families: 80, size: 4, singles: 20, a: 0.4, b: 1.6},
		{name: "families", same: 0.3, families: 95, size: 3, singles: 10, a: 2.8, b: 1.2},
	}
	for di, ds := range designs {
		moved := newRBODist(rboMoved)
		truth := newRBODist(withUnchanged(ds.same)).mean
		r := rand.New(rand.NewPCG(3507, uint64(di)))
		beta := distuv.Beta{Alpha: ds.a, Beta: ds.b, Src: rand.NewPCG(3507, uint64(100+di))} // families only
		drawCase := func(pMoved float64) float64 {
			if r.Float64() >= pMoved {
				return 1
			}
			return moved.draw(r.Float64())
		}
		var covered, counted, flagged int
		var width float64
		methods := map[string]int{}
		samples := reps
		if ds.families > 0 {
			samples = reps / 2
		}
		for range samples {
			tally := newRBOTally()
			if ds.families == 0 {
				for range ds.n {
					tally.add(drawCase(1-ds.same), "")
				}
			} else {
				for g := range ds.families {
					q := beta.Rand()
					for range ds.size {
						tally.add(drawCase(q), strconv.Itoa(g))
					}
				}
				for range ds.singles {
					tally.add(drawCase(beta.Rand()), "")
				}
			}
			e, _ := tally.estimate()
			methods[e.CI95.Method]++
			if e.CI95.Unreliable {
				flagged++
				continue
			}
			counted++
			if e.CI95.Lo <= truth && truth <= e.CI95.Hi {
				covered++
			}
			width += e.CI95.Hi - e.CI95.Lo
		}
		n := ds.n
		if ds.families > 0 {
			n = ds.families*ds.size + ds.singles
		}
		label := fmt.Sprintf("%s (unchanged %.1f) n=%d", ds.name, ds.same, n)
		if ds.families > 0 {
			label = fmt.Sprintf("%s %d×%d + %d (unchanged %.1f)", ds.name, ds.families, ds.size, ds.singles, ds.same)
		}
		if counted == 0 {
			t.Errorf("%s: every interval marked unreliable", label)
			continue
		}
		c := float64(covered) / float64(counted)
		se := math.Sqrt(metrics.CoverageFloor * (1 - metrics.CoverageFloor) / float64(counted))
		t.Logf("%s: mean RBO %.3f, coverage %.3f ± %.3f of %d (%d unreliable), mean width %.3f, methods %v",
			label, truth, c, se, counted, flagged, width/float64(counted), methods)
		// metrics.CoverageFloor's rule: not significantly below 0.95.
		assert.GreaterOrEqual(t, c, metrics.CoverageFloor-metrics.CoverageTestZ*se, label)
		if ds.families == 0 {
			assert.Zero(t, flagged, "%s: a bounded mean's interval is never unreliable here", label)
		}
	}
}
