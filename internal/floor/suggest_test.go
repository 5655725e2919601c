package floor

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
)

func TestSuggest(t *testing.T) {
	sum := func(n int64, mean, lo, hi float64, method string) metrics.Summary {
		return metrics.Summary{N: n, Mean: mean, CI95: [2]float64{lo, hi}, Method: method, Unreliable: metrics.UnreliableFor(method, n)}
	}
	for _, c := range []struct {
		name    string
		o       Observed
		value   float64
		refused string
		code    outcome.Code
	}{
		{"binary: the Wilson bound rounded down", Observed{Measure: metrics.KeyHit, Group: "overall", Summary: sum(132, 0.742, 0.6618, 0.809, metrics.MethodWilson), Binary: true}, 0.66, "", outcome.Detects},
		{"a bound on the grid stays", Observed{Measure: metrics.KeyHit, Group: "overall", Summary: sum(200, 0.8, 0.7, 0.86, metrics.MethodWilson), Binary: true}, 0.7, "", outcome.Detects},
		{"graded: the BCa bound", Observed{Measure: metrics.KeyNDCG, Group: "type:golden", Summary: sum(104, 0.614, 0.5391, 0.686, metrics.MethodBCa), SD: 0.38}, 0.53, "", outcome.Detects},
		{"Wilson (continuity-corrected) is trusted at small n", Observed{Measure: metrics.KeyHit, Group: "locale:pt-BR", Summary: sum(39, 0.641, 0.472, 0.783, metrics.MethodWilson), Binary: true}, 0.47, "", outcome.Detects},
		{"BCa below 30 cases", Observed{Measure: metrics.KeyRecall, Group: "type:adversarial", Summary: sum(28, 0.446, 0.268, 0.643, metrics.MethodBCa), SD: 0.4}, 0, RefusedUnreliable, ""},
		{"nothing scored", Observed{Measure: metrics.KeyHit, Group: "locale:xx", Summary: metrics.Summary{Mean: math.NaN(), CI95: [2]float64{math.NaN(), math.NaN()}, Unreliable: true}}, 0, RefusedEmpty, ""},
		{"a bound of 0", Observed{Measure: metrics.KeyHit, Group: "overall", Summary: sum(400, 0.01, 0.004, 0.03, metrics.MethodWilson), Binary: true}, 0, RefusedZero, ""},
		{"no spread", Observed{Measure: metrics.KeyNDCG, Group: "overall", Summary: sum(60, 1, 0.95, 1, metrics.MethodBCa), SD: 0}, 0.95, "", outcome.NoSpread},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := Suggest(c.o)
			assert.Equal(t, c.refused, s.Refused)
			assert.Equal(t, c.value, s.Spec.Value, "exactly the decimal")
			assert.Equal(t, c.o.Measure, s.Spec.Measure)
			assert.Equal(t, c.o.Group, s.Spec.Group)
			assert.Equal(t, c.o.Summary.N, s.N)
			assert.Equal(t, c.code, s.Why.Code)
			assert.Equal(t, c.o.Group[:min(len(c.o.Group), 7)] == "locale:", s.Indicative)
			if c.refused == "" {
				assert.LessOrEqual(t, s.Spec.Value, c.o.Summary.CI95[0]+1e-9, "at or below the bound")
				assert.LessOrEqual(t, s.Spec.Value, c.o.Summary.Mean, "the run passes its own floor")
			}
			if c.code == outcome.Detects {
				assert.False(t, math.IsNaN(s.Detectable))
				assert.Equal(t, c.o.Summary.N, s.Why.N)
			}
		})
	}
}
