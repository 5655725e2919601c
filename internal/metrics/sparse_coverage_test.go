package metrics

import (
	"fmt"
	"math"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// differenceIntervalBefore34 is the interval paired differences of a bounded
// measure got before issue 34: MethodHallTBetting below DifferenceReliableMinN
// pairs (the betting interval alone when every difference is equal),
// MethodHallT from there (BoundedWilsonCI95 when every difference is equal),
// whatever the number of non-zero differences.
func differenceIntervalBefore34(vals []float64, cnt []int64, n int64, lo, hi float64) Interval {
	if n < DifferenceReliableMinN {
		ci := BettingInterval(vals, cnt, lo, hi, 0.05)
		if len(vals) >= 2 && n >= 2 {
			ht := hallTFromCounts(vals, cnt, n, lo, hi)
			ci = [2]float64{min(ci[0], ht[0]), max(ci[1], ht[1])}
		}
		return Interval{Lo: ci[0], Hi: ci[1], N: n, Method: MethodHallTBetting}
	}
	if len(vals) < 2 {
		return BoundedWilsonCI95(vals[0], n, lo, hi)
	}
	ci := hallTFromCounts(vals, cnt, n, lo, hi)
	return Interval{Lo: ci[0], Hi: ci[1], N: n, Method: MethodHallT}
}

// Issue 34 item 1: identical runs (every difference 0) got the widest
// interval the range allows from 50 pairs (bounded-wilson-cc: ±0.261 of the
// range's half-width at 60 queries, ±8.299 for DCG@10 out of 31.805); the rule
// of three gives ±(1 − 0.05^{1/(n−1)}).
func TestIdenticalDifferencesInterval(t *testing.T) {
	for _, c := range []struct {
		n             int64
		before, after float64 // half-widths on [−1, 1]
		beforeMethod  string
	}{
		{20, 0.2352, 0.1459, MethodHallTBetting},
		{50, 0.2856, 0.0593, MethodBoundedWilson},
		{60, 0.2609, 0.0495, MethodBoundedWilson},
		{200, 0.1422, 0.0149, MethodBoundedWilson},
	} {
		t.Run(fmt.Sprint(c.n), func(t *testing.T) {
			vals, cnt := []float64{0}, []int64{c.n}
			before := differenceIntervalBefore34(vals, cnt, c.n, -1, 1)
			after := differenceInterval(vals, cnt, c.n, -1, 1)
			assert.Equal(t, c.beforeMethod, before.Method)
			assert.InDelta(t, c.before, before.Hi, 5e-5)
			assert.InDelta(t, -before.Hi, before.Lo, 1e-9)
			assert.Equal(t, MethodRuleOfThree, after.Method)
			assert.InDelta(t, 1-math.Pow(0.05, 1/float64(c.n-1)), after.Hi, 1e-15)
			assert.InDelta(t, c.after, after.Hi, 5e-5)
			assert.InDelta(t, -after.Hi, after.Lo, 1e-15)
		})
	}
	// DCG@10 out of 31.805 (differences in [−31.805, 31.805]) at 60 queries:
	// the issue's ±8.299 becomes ±1.575.
	w := 31.805
	before := differenceIntervalBefore34([]float64{0}, []int64{60}, 60, -w, w)
	assert.InDelta(t, 8.299, before.Hi, 5e-4)
	after := RuleOfThreeCI95(0, 60, -w, w)
	assert.InDelta(t, 1.575, after.Hi, 5e-4)
	// All equal off 0: the room on each side of c.
	iv := RuleOfThreeCI95(0.5, 20, -1, 1)
	u := 1 - math.Pow(0.05, 1.0/19)
	assert.InDelta(t, 0.5-u*1.5, iv.Lo, 1e-15)
	assert.InDelta(t, 0.5+u*0.5, iv.Hi, 1e-15)
}

// The rule of three misses the mean on the samples whose every difference is
// equal with probability at most 5% for every distribution on the range: the
// miss needs every pair to equal some c whose share p_c is below 1 − U, and
// Σ p_c^n ≤ (1 − U)^{n−1} = 0.05. Checked exactly: on two-point distributions
// {a, b} of every p on a grid the probability of an equal sample that the rule
// of three misses is at most 0.05, and it was 0.0625 on ±1 with p ½ at n = 5
// with the one-value-at-a-time U = 1 − 0.05^{1/n} (both ends can be the equal
// value).
func TestRuleOfThreeCoverageExact(t *testing.T) {
	for _, n := range []int64{2, 3, 5, 8, 20, 50, 200} {
		for _, sup := range [][2]float64{{-1, 1}, {0, 1}, {-1, 0}, {-0.5, 1}, {-1, -0.3}} {
			for k := 1; k < 1000; k++ {
				p := float64(k) / 1000
				mean := (1-p)*sup[0] + p*sup[1]
				miss := 0.0
				for i, c := range sup {
					pc := 1 - p
					if i == 1 {
						pc = p
					}
					if iv := RuleOfThreeCI95(c, n, -1, 1); mean < iv.Lo || mean > iv.Hi {
						miss += math.Pow(pc, float64(n))
					}
				}
				require.LessOrEqual(t, miss, 0.05+1e-12, "n %d, support %v, p %g", n, sup, p)
			}
		}
	}
	// The one-value-at-a-time bound would have missed 1/16 there.
	u := 1 - math.Pow(0.05, 1.0/5)
	assert.Less(t, -1+2*u, 0.0, "with 1 − 0.05^{1/n} the interval of five −1 misses 0")
	assert.Greater(t, RuleOfThreeCI95(-1, 5, -1, 1).Hi, 0.0)
	// One pair: the range.
	assert.Equal(t, [2]float64{-1, 1}, RuleOfThreeCI95(0.3, 1, -1, 1).CI())
}

// The interval of paired differences a bounded measure gets below 30 pairs
// (the betting interval united with hall-t, the rule of three when every
// difference is equal) covers at least 0.955, exactly, on every two-point
// distribution of a grid (supports ±1, {0, 1}, {−1, 0}, {−0.5, 1}, {−1, 0.2},
// p from 0.01 to 0.99) at n = 2 to 30 (the normal suite: n = 2, 5, 12, 27, p in
// steps of 0.04).
func TestDifferenceIntervalCoverageExact(t *testing.T) {
	skipSimulationUnderRace(t)
	ns, step := []int{2, 5, 12, 27}, 4
	if fullSimulation() {
		ns, step = nil, 1
		for n := 2; n <= 30; n++ {
			ns = append(ns, n)
		}
	}
	worst := 1.0
	for _, sup := range [][]float64{{-1, 1}, {0, 1}, {-1, 0}, {-0.5, 1}, {-1, 0.2}} {
		for k := step; k < 100; k += step {
			p := float64(k) / 100
			for _, n := range ns {
				c := exactCoverage(sup, []float64{1 - p, p}, n, func(vals []float64, cnt []int64) [2]float64 {
					return differenceInterval(vals, cnt, int64(n), -1, 1).CI()
				})
				worst = min(worst, c)
				require.GreaterOrEqual(t, c, 0.955, "support %v, p %g, n %d", sup, p, n)
			}
		}
	}
	t.Logf("lowest exact coverage %.4f", worst)
}

// sparseCell is one row of the sparse-difference table.
type sparseCell struct {
	zero          float64
	n             int
	before, after coverageCell
	identical     int
}

// sparseDifferenceCoverage simulates reps samples of n differences, 0 with
// probability zero, else uniform on [−0.5, 1] (range [−1, 1]), and the
// coverage of the interval before and after issue 34.
func sparseDifferenceCoverage(zero float64, n, reps int, seed uint64) sparseCell {
	r := NewRand(seed)
	c := sparseCell{zero: zero, n: n}
	mean := (1 - zero) * 0.25
	for range reps {
		h := NewHistogram()
		for range n {
			if r.Float64() < zero {
				h.Add(0)
			} else {
				h.Add(-0.5 + 1.5*r.Float64())
			}
		}
		vals, cnt := h.sorted()
		if len(vals) == 1 {
			c.identical++
		}
		c.before.add(differenceIntervalBefore34(vals, cnt, h.n, -1, 1), mean)
		c.after.add(differenceInterval(vals, cnt, h.n, -1, 1), mean)
	}
	return c
}

// Issue 34 item 1: on sparse differences (most of them 0) the interval of the
// mean paired difference covers at least 0.95 at n = 20, 50 and 200 (and 100,
// 500), where the interval used before fell to 0.84: MethodHallT from 50 pairs
// saw two or three non-zero values at 50 pairs 95% of them 0. The normal suite
// runs four cells with 1,000 samples and asserts CoverageFloor's test (not
// significantly below 0.95: at least 0.9387 of 1,000);
//
//	RETRIEVAL_GATE_FULL_SIMULATION=1 go test ./internal/metrics -run TestSparseDifferenceCoverage -v
//
// runs every cell with 10,000 samples and prints docs/statistics.md's table.
func TestSparseDifferenceCoverage(t *testing.T) {
	skipSimulationUnderRace(t)
	reps := 1000
	type key struct {
		zero float64
		n    int
	}
	cells := []key{{0.8, 20}, {0.95, 50}, {0.98, 100}, {0.99, 200}}
	if fullSimulation() {
		reps, cells = 10000, nil
		for _, z := range []float64{0.8, 0.9, 0.95, 0.98, 0.99} {
			for _, n := range []int{20, 50, 100, 200, 500} {
				cells = append(cells, key{z, n})
			}
		}
	}
	out := make([]sparseCell, len(cells))
	var mu sync.Mutex
	if fullSimulation() || testing.Verbose() {
		fmt.Println("| share of 0 | n | identical samples | before: coverage ± s.e. | missed low / high | mean width | after: coverage ± s.e. | missed low / high | mean width |")
		fmt.Println("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	}
	parallelBlocks(len(cells), func(i int) {
		k := cells[i]
		c := sparseDifferenceCoverage(k.zero, k.n, reps, uint64(3400+1000*k.zero)+uint64(k.n))
		out[i] = c
		if fullSimulation() || testing.Verbose() {
			mu.Lock()
			fmt.Printf("| %.2f | %d | %d | %.3f ± %.3f | %d / %d | %.3f | %.3f ± %.3f | %d / %d | %.3f |\n", c.zero, c.n, c.identical,
				c.before.coverage(), c.before.se(), c.before.low, c.before.high, c.before.meanWidth(),
				c.after.coverage(), c.after.se(), c.after.low, c.after.high, c.after.meanWidth())
			mu.Unlock()
		}
	})
	for _, c := range out {
		assertCoverage(t, c.after.covered, c.after.reps, "share of 0 %.2f, n %d", c.zero, c.n)
	}
}
