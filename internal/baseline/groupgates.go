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
// group's paired n detects. The per-group gates of a run test many
// hypotheses at once (each type, each locale, each measure): their paired
// tests are one family, Holm-adjusted together (issue 34), and a gate is
// confirmed by its adjusted p. The overall --max-drop-hit/-recall/-ndcg gates
// are not in it and not adjusted: each is the pre-declared test of the whole
// paired set on its measure, three strongly dependent views of one change,
// as compare's primary measure is its own family. A per-locale gate blocks
// like a per-locale floor and is labelled indicative only: a locale's n is
// small, and its test is corrected only for the gates set, not for every
// locale.

// GroupGateName is the gate name of --max-drop MEASURE@GROUP: "max_drop:MEASURE@GROUP".
func GroupGateName(s floor.Spec) string { return "max_drop:" + s.Target() }

// decide sets g's status and reason for the tolerance tol on the paired
// statistic st (nil: the measure has no paired value in the group), its test
// taken at its own p.
func (c *Comparer) decide(g *outcome.Gate, tol float64, st *Stat) {
	p := math.NaN()
	if st != nil {
		p = st.P
	}
	c.decideAt(g, tol, st, p, 1)
}

// decideAt is decide with the test's p taken as p, adjusted within a family
// of m gates (m ≥ 2 adds the HolmGroupGates clause).
func (c *Comparer) decideAt(g *outcome.Gate, tol float64, st *Stat, p float64, m int) {
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
	case c.opt.Test == TestSignificant && !(p < Alpha):
		g.Status = outcome.Pass
		g.Why = []outcome.Clause{{Code: outcome.DropNotSignificant, Value: -st.Delta, Threshold: tol, Test: st.Test, P: p}}
	default:
		g.Status = outcome.Fail
		g.Why = []outcome.Clause{{Code: outcome.Dropped, Name: label, Value: -st.Delta, Base: st.Base, Current: st.Cur, Threshold: tol, Test: st.Test, P: p}}
	}
	if m >= 2 && len(g.Why) > 0 {
		g.Why = append(g.Why, outcome.Clause{Code: outcome.HolmGroupGates, N: int64(m), P: st.P, Value: p})
	}
	var note outcome.Clause
	g.Detectable, note = detectsDrop(st, tol)
	g.Why = append(g.Why, note)
}

// detectsDrop is the drop the paired test of st detects at metrics.DefaultPower
// and DefaultAlpha (Stat.MDD; NaN when none can be, or it cannot be
// estimated: Stat.NoSpread) and its clause against the tolerance.
func detectsDrop(st *Stat, tol float64) (float64, outcome.Clause) {
	if st.NoSpread {
		return st.MDD, outcome.Clause{Code: outcome.DropNoSpread, N: st.N, M: st.Clusters, Value: st.Delta, Threshold: tol}
	}
	return st.MDD, outcome.Clause{Code: outcome.DetectsDrop, N: st.N, M: st.Clusters, Detectable: st.MDD, Threshold: tol,
		Only: !math.IsNaN(st.MDD) && st.MDD > tol+gateTolerance, Power: metrics.DefaultPower, Alpha: metrics.DefaultAlpha}
}

// groupGates appends the --max-drop MEASURE@GROUP gates to out, in
// command-line order, and folds them into out.Regression. The paired tests of
// the gates that have one are Holm-adjusted together (metrics.Holm), and each
// gate is decided by its adjusted p.
func (c *Comparer) groupGates(out *Comparison) {
	stats := make([]*Stat, len(c.opt.GroupMaxDrop))
	var family []float64
	for i, s := range c.opt.GroupMaxDrop {
		if grp, _ := out.pairedGroup(s.Group); grp != nil {
			for j := range grp.Stats {
				if grp.Stats[j].Key == s.Measure {
					stats[i] = &grp.Stats[j]
				}
			}
		}
		if stats[i] != nil {
			family = append(family, stats[i].P)
		}
	}
	adjusted := metrics.Holm(family)
	k := 0
	for i, s := range c.opt.GroupMaxDrop {
		g := outcome.New(GroupGateName(s), outcome.Fail)
		g.Group, g.Measure, g.Threshold = s.Group, s.Measure, s.Value
		grp, names := out.pairedGroup(s.Group)
		switch st := stats[i]; {
		case grp == nil:
			g.Why = []outcome.Clause{{Code: outcome.NoSuchGroup, Names: names}}
		case st == nil:
			c.decide(&g, s.Value, nil)
		default:
			g.Value, g.N = -st.Delta, st.N
			c.decideAt(&g, s.Value, st, adjusted[k], len(family))
			k++
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
	return findGroup(name, &out.Overall, out.ByType, out.ByLocale, func(g *GroupStats) string { return g.Name })
}

// findGroup finds the group named name in the floor grammar (overall,
// type:NAME, locale:NAME) among overall and the groups by type and by locale,
// or returns nil and the names of the groups there are.
func findGroup[G any](name string, overall *G, byType, byLocale []G, nameOf func(*G) string) (*G, []string) {
	if name == outcome.GroupOverall {
		return overall, nil
	}
	names := []string{outcome.GroupOverall}
	for _, part := range []struct {
		prefix string
		groups []G
	}{{floor.TypePrefix, byType}, {floor.LocalePrefix, byLocale}} {
		for i := range part.groups {
			n := part.prefix + nameOf(&part.groups[i])
			if n == name {
				return &part.groups[i], nil
			}
			names = append(names, n)
		}
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
