// Package outcome is the one gate outcome every command reports: a gate's
// status, what it measured against which threshold, and why it failed; a list of
// gates gives the verdict and the names of the failed gates (the exit code). It
// is shared by check (dataset integrity, floors), calibrate (kappa per dimension,
// unpaired labels, lock, git anchoring) and the gates to come (per-measure and
// per-group floors, compare as a gate, the regression gate against a baseline).
package outcome

import "math"

// Status is a gate's outcome.
type Status string

// The statuses of a gate. Off is a gate that was not asked for (a floor left
// unset) or that cannot run (its input is unavailable: the reason says why); it
// never fails the verdict.
const (
	Pass Status = "pass"
	Fail Status = "fail"
	Off  Status = "off"
)

// Groups a gate can be about (besides "type:NAME", "locale:TAG", a compare
// strategy's, StrategyGroup, and a calibrate dimension name).
const (
	GroupOverall = "overall"
)

// The measures of the gates whose Value and Threshold are counts
// (calibrate's): the reports print them as whole numbers.
const (
	MeasureUnpairedLabels = "unpaired_labels"  // labels of a dimension without their partner
	MeasureChangedCases   = "changed_cases"    // a carried-over dimension's cases whose labels moved
	MeasureNotBlindLabels = "not_blind_labels" // panel labels given after the judge's were seen
)

// IsCount reports whether a gate's measure is a count (MeasureUnpairedLabels, ...).
func IsCount(measure string) bool {
	switch measure {
	case MeasureUnpairedLabels, MeasureChangedCases, MeasureNotBlindLabels:
		return true
	}
	return false
}

// StrategyGroup is the gate group of a compare strategy: "strategy:NAME".
func StrategyGroup(name string) string { return "strategy:" + name }

// Gate is one gate's outcome. Threshold and Value are NaN when the gate has
// none (an integrity gate; an unset floor has a Value but no Threshold).
type Gate struct {
	Name string // stable id, e.g. "integrity", "min_hit", "kappa:faithfulness"
	// Group is what the gate looked at: GroupOverall, "type:NAME",
	// "locale:TAG", a calibrate dimension; "" when it is about the whole input.
	Group string
	// Measure is the registry key of the measure compared with Threshold (see
	// internal/metrics), or another statistic's name (weighted_kappa); "" for a
	// gate that is not a threshold on a number.
	Measure   string
	Status    Status
	Threshold float64
	Value     float64
	N         int64 // the n behind Value (cases, queries, pairs); 0 when none
	// Why is the reason as data (codes, numbers, names), in order; the report
	// layer writes it as words. Empty: nothing to say.
	Why []Clause
	// Detectable is the smallest difference from Threshold that N can detect at
	// 80% power and α = 0.05 (a floor's; see internal/floor); NaN when none.
	Detectable float64
}

// New returns a gate with no threshold and no value.
func New(name string, status Status) Gate {
	return Gate{Name: name, Status: status, Threshold: math.NaN(), Value: math.NaN(), Detectable: math.NaN()}
}

// Gates is a command's gates, in report order.
type Gates []Gate

// Verdict is Fail when any gate failed, else Pass.
func (gs Gates) Verdict() Status {
	for _, g := range gs {
		if g.Status == Fail {
			return Fail
		}
	}
	return Pass
}

// Failed returns the names of the failed gates, in order.
func (gs Gates) Failed() []string {
	var out []string
	for _, g := range gs {
		if g.Status == Fail {
			out = append(out, g.Name)
		}
	}
	return out
}

// Find returns the gate named name.
func (gs Gates) Find(name string) (Gate, bool) {
	for _, g := range gs {
		if g.Name == name {
			return g, true
		}
	}
	return Gate{}, false
}
