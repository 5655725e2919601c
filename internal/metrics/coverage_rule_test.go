package metrics

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// coverageThreshold is the lowest share of total simulated intervals covering
// that CoverageFloor's rule accepts: the one-sided 5% score test of coverage
// 0.95, 0.95 − CoverageTestZ·√(0.95·0.05/total) (docs/statistics.md,
// "Interval coverage").
func coverageThreshold(total int) float64 {
	return CoverageFloor - CoverageTestZ*math.Sqrt(CoverageFloor*(1-CoverageFloor)/float64(total))
}

// assertCoverage asserts CoverageFloor's rule: covered of total simulated
// intervals is not significantly below 0.95.
func assertCoverage(t *testing.T, covered, total int, msg string, args ...any) bool {
	t.Helper()
	if total <= 0 {
		return assert.Fail(t, "no simulated interval: "+fmt.Sprintf(msg, args...))
	}
	return assert.GreaterOrEqual(t, float64(covered)/float64(total), coverageThreshold(total),
		"%s: %d of %d intervals cover (%.4f), significantly below %.2f", fmt.Sprintf(msg, args...), covered, total, float64(covered)/float64(total), CoverageFloor)
}

// wilsonUpper is the one-sided 95% Wilson score upper bound of k of n.
func wilsonUpper(k, n int) float64 {
	p, nf, z := float64(k)/float64(n), float64(n), CoverageTestZ
	return (p + z*z/(2*nf) + z*math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf))) / (1 + z*z/nf)
}

// The rule's threshold is the inversion of the Wilson bound: k of n passes
// exactly when the one-sided 95% Wilson upper bound of k/n reaches 0.95, and
// the thresholds docs/statistics.md states.
func TestCoverageRuleThreshold(t *testing.T) {
	for _, n := range []int{200, 250, 600, 1000, 1500, 10000} {
		for k := n * 9 / 10; k <= n; k++ {
			pass := float64(k)/float64(n) >= coverageThreshold(n)
			assert.Equal(t, wilsonUpper(k, n) >= CoverageFloor-1e-12, pass, "%d of %d: upper bound %.5f", k, n, wilsonUpper(k, n))
		}
	}
	for _, c := range []struct {
		n    int
		want float64
	}{{600, 0.9354}, {1000, 0.9387}, {10000, 0.9464}} {
		assert.InDelta(t, c.want, coverageThreshold(c.n), 5e-5, "n = %d", c.n)
	}
	// 0.94 of 10,000 is significantly below 0.95; of 600 it is not.
	assert.Less(t, 0.94, coverageThreshold(10000))
	assert.Greater(t, 0.94, coverageThreshold(600))
}
