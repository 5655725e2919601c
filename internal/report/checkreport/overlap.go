package checkreport

import (
	"fmt"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/baseline"
	"github.com/retrieval-gate/retrieval-gate/internal/format"
)

// The rank-biased overlap of the two runs' top k (issue 22 item 4): the key
// `overlap` of the vs-base section, and its lines in the Markdown and terminal
// reports. Every figure is the domain's (baseline.Overlap); only words here.

// OverlapMeasure names the overlap measure in the document.
const OverlapMeasure = "rbo_ext"

// Overlap is the rank-biased overlap of the two runs' top k.
type Overlap struct {
	Depth int `json:"depth"` // the top k compared: the smaller k of the two runs
	// Measure is OverlapMeasure: RBO_EXT (Webber, Moffat, Zobel 2010, eq. 32).
	Measure string `json:"measure"`
	// MostChangedWithoutGold are the cases without gold in both runs whose top k
	// changed, lowest RBO first (ties in file order), at most baseline.DefaultMaxMoved.
	MostChangedWithoutGold []Moved      `json:"most_changed_without_gold"`
	Paired                 OverlapGroup `json:"paired"`
	Persistence            format.Float `json:"persistence"`
	TopWeight              format.Float `json:"top_weight"` // share of RBO's weight on the first Depth ranks
	WithoutGold            OverlapGroup `json:"without_gold"`
}

// OverlapGroup is the overlap of a set of cases: n with both top k known, their
// mean RBO (null when n is 0) with its 95% interval, how many of them changed
// (any difference of the top k) and how many lack a run's top k.
//
// The interval is the churn's mean RBO's (Estimate): CI95 ([null, null] when
// n is 0), its method CI95Method ("" when n is 0) and Unreliable; Clusters as
// the churn group's (absent when no case carries a `cluster` key). CI95 is nil
// in a report read back from a version that wrote none (added to
// retrieval-gate/aggregates@1 without a new version): no interval is shown.
type OverlapGroup struct {
	Changed    int64            `json:"changed"`
	CI95       *[2]format.Float `json:"ci95,omitempty"`
	CI95Method string           `json:"ci95_method"`
	Clusters   int64            `json:"clusters,omitempty"`
	Mean       format.Float     `json:"mean"`
	N          int64            `json:"n"`
	Unknown    int64            `json:"unknown"`
	Unreliable bool             `json:"unreliable"`
}

// Moved is a case without gold whose top k changed.
type Moved struct {
	After  []string     `json:"after"`
	Before []string     `json:"before"`
	CaseID string       `json:"case_id"`
	File   string       `json:"file"`
	Line   int          `json:"line"`
	Locale string       `json:"locale"`
	Query  string       `json:"query"`
	RBO    format.Float `json:"rbo"`
	Type   string       `json:"type"`
}

func overlapOf(o baseline.Overlap) *Overlap {
	out := &Overlap{Depth: o.Depth, Measure: OverlapMeasure, Persistence: format.Float(o.P), TopWeight: format.Float(o.Weight),
		Paired: overlapGroup(o.Paired), WithoutGold: overlapGroup(o.WithoutGold), MostChangedWithoutGold: []Moved{}}
	for _, m := range o.MostChanged {
		out.MostChangedWithoutGold = append(out.MostChangedWithoutGold, Moved{CaseID: m.ID, File: m.File, Line: m.Line,
			Locale: m.Locale, Type: m.Type, Query: m.Query, Before: m.Before, After: m.After, RBO: format.Float(m.RBO)})
	}
	return out
}

func overlapGroup(g baseline.OverlapGroup) OverlapGroup {
	e := estimate(g.RBO)
	return OverlapGroup{N: g.N, Mean: e.Mean, CI95: &e.CI95, CI95Method: e.CI95Method, Unreliable: e.Unreliable,
		Clusters: g.Clusters, Changed: g.Changed, Unknown: g.Unknown}
}

// MeanText is the group's mean RBO as the reports write it: "0.981 [0.962,
// 0.993]" (estimateText, with UnreliableMark where the interval's method
// covers less than 0.95 at its n), the mean alone when there is no interval
// (n is 0, or a report read back from a version that wrote none).
func (g OverlapGroup) MeanText() string {
	if g.CI95 == nil || format.Interval([2]float64{g.CI95[0].V(), g.CI95[1].V()}) == format.Missing {
		return format.Num(g.Mean.V())
	}
	return estimateText(Estimate{Mean: g.Mean, CI95: *g.CI95, CI95Method: g.CI95Method, Unreliable: g.Unreliable})
}

// overlapGroupText is "mean RBO 0.981 [0.962, 0.993] (n=120), 12 changed" and
// the cases not compared.
func overlapGroupText(g OverlapGroup) string {
	s := fmt.Sprintf("mean RBO %s (n=%d), %d changed", g.MeanText(), g.N, g.Changed)
	if g.Unknown > 0 {
		s += fmt.Sprintf(", %d without a top k in one run", g.Unknown)
	}
	return s
}

// OverlapMethods says how the overlap's intervals were computed, "" when
// neither group has one: "95% intervals of the mean RBO: paired cases
// hall-t, cases without gold hall-t-betting (of 1 − RBO, mapped back, as the
// churn's): docs/statistics.md", a group in families "cluster-t-hull over the
// 12 clusters of its 40 cases".
func (o *Overlap) OverlapMethods() string {
	var parts []string
	for _, x := range []struct {
		name string
		g    OverlapGroup
	}{{"paired cases", o.Paired}, {"cases without gold", o.WithoutGold}} {
		if x.g.CI95 == nil || x.g.CI95Method == "" {
			continue
		}
		p := x.name + " " + x.g.CI95Method
		if x.g.Clusters > 0 {
			p += fmt.Sprintf(" over the %s of its %d cases", format.Count(x.g.Clusters, "cluster", "clusters"), x.g.N)
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return ""
	}
	s := "95% intervals of the mean RBO: " + strings.Join(parts, ", ") + " (of 1 − RBO, mapped back, as the churn's): docs/statistics.md"
	if o.Paired.CI95 != nil && o.Paired.Unreliable || o.WithoutGold.CI95 != nil && o.WithoutGold.Unreliable {
		s += "; " + EstimateUnreliableNote
	}
	return s
}

// overlapDefinition states the measure and its persistence.
func (o *Overlap) definition() string {
	return fmt.Sprintf("rank-biased overlap RBO_ext (Webber, Moffat, Zobel 2010) of the top %d of base and head, persistence p = %s (the top %d carry %s of its weight): 1 = the same ranking, 0 = nothing in common",
		o.Depth, format.Full(o.Persistence.V()), o.Depth, format.Pct(o.TopWeight.V()))
}

// mdOverlap writes the overlap summary line of the vs-base section.
func (d *Document) mdOverlap(b *strings.Builder) {
	o := d.Baseline.Overlap
	if o == nil {
		return
	}
	fmt.Fprintf(b, "**Top-%d change**: paired cases: %s; cases without gold: %s. Measure: %s.",
		o.Depth, overlapGroupText(o.Paired), overlapGroupText(o.WithoutGold), o.definition())
	if m := o.OverlapMethods(); m != "" {
		fmt.Fprintf(b, " %s.", m)
	}
	b.WriteString("\n\n")
}

// mdMoved lists the most changed cases without gold (nothing when none changed).
func (d *Document) mdMoved(b *strings.Builder, maxListed int) {
	o := d.Baseline.Overlap
	if o == nil || len(o.MostChangedWithoutGold) == 0 {
		return
	}
	w := func(f string, args ...any) { fmt.Fprintf(b, f, args...) }
	ms := o.MostChangedWithoutGold
	n := min(maxListed, len(ms))
	w("#### Most changed cases without gold (%d shown of %d changed)\n\n", n, o.WithoutGold.Changed)
	w("Not scored (no gold), so no flip can show them; lowest RBO first.\n\n")
	writeMoved(b, ms[:n], o.Depth)
}

// writeMoved writes the Markdown of the most changed cases ms: a table of
// case (with its file:line), query (shortened) and RBO, then each case's top
// depth in the base and the head, with the whole query where the table
// shortened it.
func writeMoved(b *strings.Builder, ms []Moved, depth int) {
	w := func(f string, args ...any) { fmt.Fprintf(b, f, args...) }
	esc := format.EscapeMarkdown
	w("| case | query | RBO |\n|---|---|---:|\n")
	for _, x := range ms {
		q, _ := format.Shorten(x.Query, queryCell)
		w("| %s<br><sub>%s:%d</sub> | %s | %s |\n", esc(x.CaseID), esc(x.File), x.Line, esc(q), format.Num(x.RBO.V()))
	}
	w("\nTop %d, base → head:\n\n", depth)
	for _, x := range ms {
		w("- %s: %s → %s", esc(x.CaseID), topCell(x.Before, 0), topCell(x.After, 0))
		if _, whole := format.Shorten(x.Query, queryCell); !whole {
			w("; query: %s", esc(x.Query))
		}
		w("\n")
	}
	w("\n")
}

// textOverlap writes the overlap lines of the terminal report.
func (d *Document) textOverlap(b *strings.Builder) {
	o := d.Baseline.Overlap
	if o == nil {
		return
	}
	p := func(f string, args ...any) { fmt.Fprintf(b, f, args...) }
	san := format.SanitizeText
	p("  top-%d change: paired %s; without gold %s\n", o.Depth, overlapGroupText(o.Paired), overlapGroupText(o.WithoutGold))
	p("  (%s)\n", o.definition())
	if m := o.OverlapMethods(); m != "" {
		p("  (%s)\n", m)
	}
	ms := o.MostChangedWithoutGold
	if len(ms) == 0 {
		return
	}
	p("  most changed without gold: %d changed\n", o.WithoutGold.Changed)
	n := min(textMaxListed, len(ms))
	for _, x := range ms[:n] {
		p("    %s:%d  %s  RBO %s\n", san(x.File), x.Line, san(x.CaseID), format.Num(x.RBO.V()))
	}
	if more := o.WithoutGold.Changed - int64(n); more > 0 {
		p("    … and %d more (see --markdown or --json)\n", more)
	}
}
