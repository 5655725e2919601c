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
