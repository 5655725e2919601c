package compare

import (
	"math"

	"github.com/retrieval-gate/retrieval-gate/internal/floor"
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
		g := floor.Evaluate("floor:"+f.Measure, f, r.floorObservation(si, f))
		g.Group = outcome.StrategyGroup(s.Name)
		r.Gates = append(r.Gates, g)
	}
	r.Decision.BelowFloors = r.belowFloors(r.Decision.Taken())
	if gs.FailIfBeaten {
		r.Gates = append(r.Gates, r.notBeaten(si))
	}
}

// floorObservation is strategy si's mean of floor f's measure over the
// evaluated queries, as its floor gate decides it (cluster-robust with
// clusters, human-corrected with human labels).
func (r *Result) floorObservation(si int, f floor.Spec) floor.Observation {
	s := &r.Strategies[si]
	m := metrics.QueryIndex(f.Measure)
	o := floor.Observation{Found: true, GroupN: int64(r.N()), Label: "strategy " + s.Name,
		Empty:  outcome.Clause{Code: outcome.NoEvaluatedQueries},
		Absent: outcome.Clause{Code: outcome.NoQueryValue, Measure: f.Measure}}
	if m < 0 {
		return o
	}
	h := metrics.NewHistogram()
	for i := range r.N() {
		if v := s.Values[i*metrics.NumGraded+m]; !math.IsNaN(v) { // NaN: a query the measure does not count
			h.Add(v)
		}
	}
	// A proportion only on a measure of range [0, 1]: DCG or relevance/k of 1
	// on every query is not one (metrics.ColumnCI95).
	lo, hi := r.measureRange(m)
	o.N, o.Mean, o.SD, o.Binary = h.N(), s.Means[m], h.SampleSD(), h.IsBinary() && lo == 0 && hi == 1
	if r.clustered() {
		r.clusteredObservation(&o, si, m)
	}
	if r.Human != nil {
		r.correctedObservation(&o, si, m)
	}
	return o
}

// belowFloors is each floor of the gate that the strategy named fails, by the
// rule of the floor gates (the decision's strategy held to the floors the
// gate strategy is held to); none without floors.
func (r *Result) belowFloors(name string) []BelowFloor {
	si := r.StrategyIndex(name)
	if si < 0 {
		return nil
	}
	var out []BelowFloor
	for _, f := range r.Gate.Floors {
		if g := floor.Evaluate("floor:"+f.Measure, f, r.floorObservation(si, f)); g.Status == outcome.Fail {
			out = append(out, BelowFloor{Measure: f.Measure, Threshold: f.Value, Value: g.Value, N: g.N})
		}
	}
	return out
}

// notBeaten fails when another strategy is significantly better than strategy
// si on the primary measure (--primary): the paired test of each other strategy against it (the
// baseline comparisons already made, Holm-adjusted over the family; any other
// pair tested as one more member of it).
func (r *Result) notBeaten(si int) outcome.Gate {
	s := &r.Strategies[si]
	g := outcome.New(NotBeaten, outcome.Pass)
	key := metrics.GradedKeys[r.primary]
	g.Group, g.Measure, g.Value, g.N = outcome.StrategyGroup(s.Name), key, r.CorrectedMean(si, r.primary), int64(s.MeasureN[r.primary])
	if r.Human != nil {
		g.N = int64(r.Human.MeasureN[r.primary])
	}
	if len(r.Strategies) == 1 {
		g.Status, g.Why = outcome.Off, []outcome.Clause{{Code: outcome.NoOtherStrategy}}
		return g
	}
	var beaten []outcome.PairedTest
	var closest *Paired
	for o := range r.Strategies {
		if o == si {
			continue
		}
		t := r.decisionTest(o, si, r.primary)
		if t.Significant && t.Delta > 0 {
			beaten = append(beaten, describe(t))
		} else if closest == nil || t.Delta > closest.Delta {
			closest = &t
		}
	}
	if len(beaten) > 0 {
		g.Status = outcome.Fail
		g.Why = []outcome.Clause{{Code: outcome.Beaten, Measure: key, Tests: beaten}}
		return g
	}
	g.Why = []outcome.Clause{{Code: outcome.NotBeaten, Measure: key, Tests: []outcome.PairedTest{describe(*closest)}}}
	return g
}

// describe is one paired test as a gate reason cites it: the strategy, Δ, its
// interval and the Holm-adjusted p.
func describe(t Paired) outcome.PairedTest {
	ci := t.CI.CI()
	return outcome.PairedTest{Strategy: t.Strategy, Delta: t.Delta, Lo: ci[0], Hi: ci[1], PHolm: t.PHolm, Unreliable: t.CI.Unreliable}
}

// clusteredObservation puts the cluster-robust standard error of strategy s's
// mean of measure m into a floor's observation when the queries come in
// clusters: the standard deviation that gives it over the n queries, so that
// the detectable difference is the clusters' (as check's floors over cases in
// families); NaN from a single cluster (too few to estimate).
func (r *Result) clusteredObservation(o *floor.Observation, s, m int) {
	rows := make([]int, 0, r.N())
	xs := make([]float64, 0, r.N())
	for i := range r.N() {
		if v := r.Strategies[s].Values[i*metrics.NumGraded+m]; !math.IsNaN(v) {
			rows, xs = append(rows, i), append(xs, v)
		}
	}
	sub, nc := r.rowClusters(rows)
	se, G := metrics.ClusterMeanSE(xs, sub, nc)
	o.OverClusters(G, se)
}
