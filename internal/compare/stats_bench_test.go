package compare

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

// BenchmarkStatistics is the resampling alone for n queries and two strategies
// (24 series: 16 means and 8 paired differences) at the default 10,000 resamples.
func BenchmarkStatistics(b *testing.B) {
	for _, n := range []int{300, 1000, 5000, 100_000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			res := syntheticResult(n, 2, 10000)
			for b.Loop() {
				res.Paired = nil
				res.statistics()
			}
		})
	}
	// 100,000 queries × 4 strategies: three comparisons per measure, with
	// strategies far apart (every p far below 1e-300) and close (z ≈ 1.5 … 4.5:
	// the saddlepoint's Newton steps run on every measure).
	b.Run("n=100000/strategies=4", func(b *testing.B) {
		res := syntheticResult(100_000, 4, 10000)
		for b.Loop() {
			res.Paired = nil
			res.statistics()
		}
	})
	b.Run("n=100000/strategies=4/close", func(b *testing.B) {
		res := syntheticResult(100_000, 4, 10000)
		for j := range res.Strategies {
			for i, v := range res.Strategies[j].Values {
				res.Strategies[j].Values[i] = v/float64(1+j) + 0.002*float64(j)
			}
		}
		for b.Loop() {
			res.Paired = nil
			res.statistics()
		}
	})
}

// syntheticResult builds a Result of n queries and s strategies with random
// per-query values, for the statistics alone.
func syntheticResult(n, s, resamples int) *Result {
	r := rand.New(rand.NewPCG(3, 4))
	res := &Result{Options: Options{K: 10, RelevantLevel: 2, Resamples: resamples, Seed: 1}}
	for i := range n {
		res.QueryIDs = append(res.QueryIDs, fmt.Sprintf("q%06d", i))
	}
	for j := range s {
		st := Strategy{Name: fmt.Sprint("s", j), N: n, Values: make([]float64, n*metrics.NumGraded)}
		for i := range st.Values {
			st.Values[i] = r.Float64() * float64(1+j)
		}
		res.Strategies = append(res.Strategies, st)
	}
	res.Baseline = "s0"
	return res
}
