package compare

import (
	"fmt"
	"math"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/floor"
	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
)

// GateOptions make compare a gate; the zero value is no gate (compare then
// always passes). Strategy is the strategy the team runs in production.
type GateOptions struct {
	Strategy     string
	Floors       floor.List // on Strategy's means over the evaluated queries (group overall)
	FailIfBeaten bool       // fail when another strategy is significantly better on the primary measure
}

// StrategyGroup is the gate group of a strategy: "strategy:NAME".
func StrategyGroup(name string) string { return "strategy:" + name }

// NotBeaten is the name of the --fail-if-beaten gate.
const NotBeaten = "not_beaten"

// gates decides the gates of r.Gate: each floor on the gate strategy's mean,
// then not_beaten.
func (r *Result) gates() {
	gs := r.Gate
	if gs.Strategy == "" {
		return
	}
	si := r.StrategyIndex(gs.Strategy)
	if si < 0 {
		return // the command refuses an unknown strategy before Run
	}
	s := &r.Strategies[si]
	for _, f := range gs.Floors {
		m := metrics.QueryIndex(f.Measure)
		o := floor.Observation{Found: true, GroupN: int64(r.N()), Label: "strategy " + s.Name,
			Empty: "no evaluated queries", Absent: "no evaluated query has a value of " + f.Measure}
		if m >= 0 {
			h := metrics.NewHistogram()
			for i := range r.N() {
				if v := s.Values[i*metrics.NumGraded+m]; !math.IsNaN(v) { // NaN: a query the measure does not count
					h.Add(v)
				}
			}
			o.N, o.Mean, o.SD, o.Binary = h.N(), s.Means[m], h.SampleSD(), h.IsBinary()
		}
		g := floor.Evaluate("floor:"+f.Measure, f, o)
		g.Group = StrategyGroup(s.Name)
		r.Gates = append(r.Gates, g)
	}
	if gs.FailIfBeaten {
		r.Gates = append(r.Gates, r.notBeaten(si))
	}
}

// notBeaten fails when another strategy is significantly better than strategy
// si on the primary measure (--primary): the paired test of each other strategy against it (the
// baseline comparisons already made, Holm-adjusted over the family; any other
// pair tested as one more member of it).
func (r *Result) notBeaten(si int) outcome.Gate {
	s := &r.Strategies[si]
	g := outcome.New(NotBeaten, outcome.Pass)
	key := metrics.GradedKeys[r.primary]
	g.Group, g.Measure, g.Value, g.N = StrategyGroup(s.Name), key, s.Means[r.primary], int64(r.MeasureN[r.primary])
	if len(r.Strategies) == 1 {
		g.Status, g.Reason = outcome.Off, "no other strategy to compare with"
		return g
	}
	var beaten []string
	var closest *Paired
	for o := range r.Strategies {
		if o == si {
			continue
		}
		t := r.pairTest(o, si, r.primary)
		if t.Significant && t.Delta > 0 {
			beaten = append(beaten, describe(t))
		} else if closest == nil || t.Delta > closest.Delta {
			closest = &t
		}
	}
	if len(beaten) > 0 {
		g.Status = outcome.Fail
		g.Reason = "significantly better on " + key + ": " + strings.Join(beaten, "; ")
		return g
	}
	g.Reason = fmt.Sprintf("no strategy is significantly better on %s (closest: %s)", key, describe(*closest))
	return g
}

// describe is one paired test as a gate reason: "B: +0.12 [+0.05, +0.19], Holm p = 0.0030".
func describe(t Paired) string {
	return fmt.Sprintf("%s %s %s, Holm p = %s", t.Strategy, format.Signed(t.Delta), format.SignedInterval(t.CI.CI()), format.P(t.PHolm))
}
