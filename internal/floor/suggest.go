package floor

import (
	"math"

	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
)

// Evidence-based floors (ADR-0023's "observed minus slack", issue 21 item 14):
// from a run the user accepts, a floor per measure and group at the lower bound
// of the group's 95% interval, rounded down to SuggestStep. A later run whose
// cases and retrieval are unchanged scores the same mean and passes; a drop
// below what this run's n can tell from it fails. A group whose interval the
// simulations do not trust at its n (metrics.UnreliableFor: hall-t below 20
// cases; the continuity-corrected Wilson interval of 0/1 values is trusted at
// every n) gets no floor, and neither does one whose bound
// rounds down to 0 (a floor of 0 gates nothing) or whose name makes the
// expression longer than Parse reads.

// SuggestStep is the grid a suggested floor is rounded down to.
const SuggestStep = 0.01

// Why a group gets no suggested floor (Suggestion.Refused).
const (
	RefusedEmpty      = "empty"      // n = 0: nothing was scored
	RefusedUnreliable = "unreliable" // the interval's coverage is not trusted at this n
	RefusedZero       = "zero"       // the lower bound rounds down to 0
	RefusedLong       = "long"       // the group's expression would be longer than MaxExpr
)

// Observed is one measure of one group as a run observed it.
type Observed struct {
	Measure, Group string // Group in the floor grammar: overall, type:NAME, locale:TAG
	Summary        metrics.Summary
	SD             float64 // sample sd of the values (NaN for n < 2)
	Binary         bool    // every value is 0 or 1
	// Clusters and SE: the clusters the values fall into and the mean's
	// cluster-robust standard error when the items come in families (the
	// interval is then over the clusters); 0 and unused otherwise.
	Clusters int64
	SE       float64
}

// Suggestion is the floor suggested for one measure of one group.
type Suggestion struct {
	Spec    Spec // the floor (Value set only when Refused is "")
	Refused string
	N       int64
	Mean    float64
	CI95    [2]float64
	Method  string // the interval's method (metrics.MethodWilson, MethodBCa, ...)
	// Clusters: the clusters the N items fall into when the interval is over
	// clusters (its coverage, and so Refused, follows them); 0 otherwise.
	Clusters int64
	// Detectable is the smallest difference from the floor the n detects at
	// metrics.DefaultPower and DefaultAlpha (NaN when none can be, or when
	// refused); Why is its clause (outcome.Detects, CannotDetect, ...).
	Detectable float64
	Why        outcome.Clause
	// Indicative: a per-locale floor (indicative only, as every locale gate).
	Indicative bool
}

// Suggest is the floor suggested from o.
func Suggest(o Observed) Suggestion {
	s := Suggestion{Spec: Spec{Measure: o.Measure, Group: o.Group}, N: o.Summary.N, Mean: o.Summary.Mean,
		CI95: o.Summary.CI95, Method: o.Summary.Method, Clusters: o.Clusters, Detectable: math.NaN(), Indicative: isLocale(o.Group)}
	lo := o.Summary.CI95[0]
	switch {
	case o.Summary.N == 0 || math.IsNaN(lo):
		s.Refused = RefusedEmpty
		return s
	case o.Summary.Unreliable:
		s.Refused = RefusedUnreliable
		return s
	case len(o.Measure)+len("@")+len(QuoteGroup(o.Group))+len("=0.00") > MaxExpr:
		s.Refused = RefusedLong // Parse would refuse the expression
		return s
	}
	// Rounded down on the grid; the 1e-9 keeps a bound of 0.7 (0.69999…) at 0.70.
	v := math.Floor(lo/SuggestStep+1e-9) * SuggestStep
	v = math.Round(v/SuggestStep) / (1 / SuggestStep) // exactly the decimal (0.66, not 0.6600000000000001)
	if v <= 0 {
		s.Refused = RefusedZero
		return s
	}
	s.Spec.Value = v
	obs := Observation{Found: true, GroupN: o.Summary.N, N: o.Summary.N, Mean: o.Summary.Mean, SD: o.SD, Binary: o.Binary}
	obs.OverClusters(o.Clusters, o.SE) // as the floor gate decides it
	s.Detectable, s.Why = detectable(v, obs)
	return s
}

func isLocale(group string) bool {
	return len(group) >= len(LocalePrefix) && group[:len(LocalePrefix)] == LocalePrefix
}
