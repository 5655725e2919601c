package baseline

import (
	"math"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/floor"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
)

// Regression gates per group (--max-drop MEASURE@GROUP=F, issue 21 item 13):
// the tolerated drop of one group's paired mean (overall, type:NAME,
// locale:TAG), decided as the overall --max-drop-* gates are (the drop beyond
// the tolerance, confirmed by the paired test under --regression-test
// significant) and stating, as every regression gate does, the drop its
// group's paired n detects. A per-locale gate blocks like a per-locale floor
// and is labelled indicative only: a locale's n is small and its test is not
// corrected for the number of locales.

// GroupGateName is the gate name of --max-drop MEASURE@GROUP: "max_drop:MEASURE@GROUP".
func GroupGateName(s floor.Spec) string { return "max_drop:" + s.Target() }

// decide sets g's status and reason for the tolerance tol on the paired
// statistic st (nil: the measure has no paired value in the group).
func (c *Comparer) decide(g *outcome.Gate, tol float64, st *Stat) {
	g.Threshold = tol
	label := ""
	if g.Group != outcome.GroupOverall {
		label = g.Group
	}
	switch {
	case st == nil:
		// A gate that was asked for and cannot be evaluated fails: the
		// regression would otherwise pass unseen (issue 20 item 8).
		g.Status = outcome.Fail
		if c.paired == 0 {
			g.Why = []outcome.Clause{{Code: outcome.NothingPairs, Text: c.b.Source.File, N: int64(c.b.recs.n), M: c.onlyCur, Value: float64(c.goldChanged)}}
		} else {
			g.Why = []outcome.Clause{{Code: outcome.NoPairedValue}}
		}
		return
	case -st.Delta <= tol+gateTolerance:
		g.Status = outcome.Pass
	case c.opt.Test == TestSignificant && !st.Rejects:
		g.Status = outcome.Pass
		g.Why = []outcome.Clause{{Code: outcome.DropNotSignificant, Value: -st.Delta, Threshold: tol, Test: st.Test, P: st.P}}
	default:
		g.Status = outcome.Fail
		g.Why = []outcome.Clause{{Code: outcome.Dropped, Name: label, Value: -st.Delta, Base: st.Base, Current: st.Cur, Threshold: tol, Test: st.Test, P: st.P}}
	}
	var note outcome.Clause
	g.Detectable, note = detectsDrop(st, tol)
	g.Why = append(g.Why, note)
}

// detectsDrop is the drop the paired test of st detects at metrics.DefaultPower
// and DefaultAlpha (Stat.MDD; NaN when none can be) and its clause against the
// tolerance.
func detectsDrop(st *Stat, tol float64) (float64, outcome.Clause) {
	return st.MDD, outcome.Clause{Code: outcome.DetectsDrop, N: st.N, Detectable: st.MDD, Threshold: tol,
		Only: !math.IsNaN(st.MDD) && st.MDD > tol+gateTolerance, Power: metrics.DefaultPower, Alpha: metrics.DefaultAlpha}
}

// groupGates appends the --max-drop MEASURE@GROUP gates to out, in
// command-line order, and folds them into out.Regression.
func (c *Comparer) groupGates(out *Comparison) {
	for _, s := range c.opt.GroupMaxDrop {
		g := outcome.New(GroupGateName(s), outcome.Fail)
		g.Group, g.Measure, g.Threshold = s.Group, s.Measure, s.Value
		grp, names := out.pairedGroup(s.Group)
		switch {
		case grp == nil:
			g.Why = []outcome.Clause{{Code: outcome.NoSuchGroup, Names: names}}
		default:
			var st *Stat
			for i := range grp.Stats {
				if grp.Stats[i].Key == s.Measure {
					st = &grp.Stats[i]
				}
			}
			if st != nil {
				g.Value, g.N = -st.Delta, st.N
			}
			c.decide(&g, s.Value, st)
		}
		if strings.HasPrefix(s.Group, floor.LocalePrefix) {
			g.Why = append(g.Why, outcome.Clause{Code: outcome.IndicativeLocaleTest})
		}
		switch {
		case g.Status == outcome.Fail:
			out.Regression = outcome.Fail
		case g.Status == outcome.Pass && out.Regression == outcome.Off:
			out.Regression = outcome.Pass
		}
		out.Gates = append(out.Gates, g)
	}
}

// pairedGroup finds a group of the comparison by its floor-grammar name, or
// returns nil and the names of the groups there are.
func (out *Comparison) pairedGroup(name string) (*GroupStats, []string) {
	if name == outcome.GroupOverall {
		return &out.Overall, nil
	}
	names := []string{outcome.GroupOverall}
	for i := range out.ByType {
		if floor.TypePrefix+out.ByType[i].Name == name {
			return &out.ByType[i], nil
		}
		names = append(names, floor.TypePrefix+out.ByType[i].Name)
	}
	for i := range out.ByLocale {
		if floor.LocalePrefix+out.ByLocale[i].Name == name {
			return &out.ByLocale[i], nil
		}
		names = append(names, floor.LocalePrefix+out.ByLocale[i].Name)
	}
	return nil, names
}

// unavailableGroupGates are the --max-drop MEASURE@GROUP gates when there is no
// baseline: off, with the reason.
func unavailableGroupGates(why Unavailability, opt Options) outcome.Gates {
	var gs outcome.Gates
	for _, s := range opt.GroupMaxDrop {
		g := outcome.New(GroupGateName(s), outcome.Off)
		g.Group, g.Measure, g.Threshold = s.Group, s.Measure, s.Value
		g.Why = []outcome.Clause{{Code: outcome.NoBaseline, Name: why.Code, Text: why.Detail}}
		gs = append(gs, g)
	}
	return gs
}
