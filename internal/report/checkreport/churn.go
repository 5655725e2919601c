package checkreport

import (
	"fmt"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/baseline"
	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
)

// The churn of the top k (issue 35 item 1): the key `churn` of the vs-base
// section, its line in the Markdown and terminal reports, and the most
// changed cases when a churn gate is set. Every figure is the domain's
// (baseline.Churn); only words here.

// Churn is what changed in the top k of the cases both runs hold.
type Churn struct {
	ByLocale map[string]ChurnGroup `json:"by_locale"`
	// ByLocaleNote qualifies the figures by locale (IndicativeOnly), as the
	// paired comparison's by_locale_note and the locale deltas' note do; a
	// report written before it has none.
	ByLocaleNote string                `json:"by_locale_note,omitempty"`
	ByType       map[string]ChurnGroup `json:"by_type"`
	Depth        int                   `json:"depth"` // the top k compared: the smaller k of the two runs
	// MostChanged are the cases both runs hold (with or without gold) whose
	// top k changed, lowest RBO first (ties in file order), at most
	// baseline.DefaultMaxChanged.
	MostChanged []Moved    `json:"most_changed"`
	Overall     ChurnGroup `json:"overall"`
	// Status is the churn gates' (--min-rbo, --max-churn): pass, fail, or off
	// when none is set.
	Status outcome.Status `json:"status"`
}

// ChurnGroup is the churn of a group's cases both runs hold: Held of them,
// N with both top k known (Unknown without); RBO their mean rank-biased
// overlap; Changed of the N changed their top k as a set (ChangedShare their
// share); Left the mean number of the baseline's top k that left this run's.
//
// Clusters: the clusters the N cases fall into when cases carry a `cluster`
// key (a case without one is one); the three intervals are then computed
// over them. Absent when no case carries a key.
type ChurnGroup struct {
	Changed      int64    `json:"changed"`
	ChangedShare Estimate `json:"changed_share"`
	Clusters     int64    `json:"clusters,omitempty"`
	Held         int64    `json:"held"`
	Left         Estimate `json:"left"`
	N            int64    `json:"n"`
	RBO          Estimate `json:"rbo"`
	Unknown      int64    `json:"unknown"`
}

// Estimate is a figure with its 95% interval, the interval's method
// (docs/statistics.md) and whether that method covers less than 0.95 at this n.
type Estimate struct {
	CI95       [2]format.Float `json:"ci95"`
	CI95Method string          `json:"ci95_method"`
	Mean       format.Float    `json:"mean"`
	Unreliable bool            `json:"unreliable"`
}

func estimate(e baseline.Estimate) Estimate {
	return Estimate{Mean: format.Float(e.Mean), CI95: format.CI(e.CI95.CI()), CI95Method: e.CI95.Method, Unreliable: e.CI95.Unreliable}
}

func churnGroup(g baseline.ChurnGroup) ChurnGroup {
	return ChurnGroup{Held: g.Held, N: g.N, Unknown: g.Unknown, Changed: g.Changed,
		RBO: estimate(g.RBO), ChangedShare: estimate(g.Share), Left: estimate(g.Left), Clusters: g.Clusters}
}

func churnOf(c baseline.Churn, status outcome.Status) *Churn {
	out := &Churn{Depth: c.Depth, Overall: churnGroup(c.Overall), ByType: map[string]ChurnGroup{}, ByLocale: map[string]ChurnGroup{},
		ByLocaleNote: IndicativeOnly, MostChanged: []Moved{}, Status: status}
	for _, g := range c.ByType {
		out.ByType[g.Name] = churnGroup(g)
	}
	for _, g := range c.ByLocale {
		out.ByLocale[g.Name] = churnGroup(g)
	}
	for _, m := range c.MostChanged {
		out.MostChanged = append(out.MostChanged, Moved{CaseID: m.ID, File: m.File, Line: m.Line,
			Locale: m.Locale, Type: m.Type, Query: m.Query, Before: m.Before, After: m.After, RBO: format.Float(m.RBO)})
	}
	return out
}

// estimateText is "0.962 [0.916, 0.984]", with UnreliableMark where the
// interval's method covers less than 0.95 at its n.
func estimateText(e Estimate) string {
	s := format.Num(e.Mean.V()) + " " + format.Interval([2]float64{e.CI95[0].V(), e.CI95[1].V()})
	if e.Unreliable {
		s += UnreliableMark
	}
	return s
}

// ChurnSummary is the churn's one line in every report: "156 cases both runs
// hold (with or without gold): 150 of 156 changed their top 5 as a set, a
// share of 0.962 [0.916, 0.984]; on average 3.026 [2.872, 3.179] of the
// baseline's top 5 left; mean RBO 0.502 [0.476, 0.527]". strong marks up the count of
// changed cases (Markdown's **), as given.
func (c *Churn) ChurnSummary(strong func(string) string) string {
	g := c.Overall
	s := fmt.Sprintf("%d cases both runs hold (with or without gold)", g.Held)
	if g.Unknown > 0 {
		s += fmt.Sprintf(", %d of them without a top k in one run", g.Unknown)
	}
	if g.N == 0 {
		return s + ": no top k to compare"
	}
	return s + fmt.Sprintf(": %s their top %d as a set, a share of %s; on average %s of the baseline's top %d left; mean RBO %s",
		strong(fmt.Sprintf("%d of %d changed", g.Changed, g.N)), c.Depth, estimateText(g.ChangedShare), estimateText(g.Left), c.Depth, estimateText(g.RBO))
}

// ChurnMethods says how the churn's intervals were computed.
func (c *Churn) ChurnMethods() string {
	g := c.Overall
	if g.N == 0 {
		return ""
	}
	s := fmt.Sprintf("95%% intervals: the share %s, the entries that left %s, the mean RBO %s (of 1 − RBO, mapped back)",
		g.ChangedShare.CI95Method, g.Left.CI95Method, g.RBO.CI95Method)
	if g.Clusters > 0 {
		s += fmt.Sprintf(", over the %s of the %d cases (cases in families: a case without a cluster key is one; each group over its own clusters)", format.Count(g.Clusters, "cluster", "clusters"), g.N)
	}
	s += ": docs/statistics.md"
	if g.ChangedShare.Unreliable || g.Left.Unreliable || g.RBO.Unreliable {
		s += "; " + EstimateUnreliableNote
	}
	return s
}

// EstimateUnreliableNote explains UnreliableMark beside an estimate of the
// churn or of the top-k overlap: it follows their methods' line wherever an
// interval of the line it explains is marked.
const EstimateUnreliableNote = UnreliableMark + " unreliable: this interval's method covers less than 95% at this number of cases or clusters in simulation (docs/statistics.md)"

// mdChurn writes the churn line of the vs-base section.
func (d *Document) mdChurn(b *strings.Builder) {
	c := d.Baseline.Churn
	if c == nil {
		return
	}
	fmt.Fprintf(b, "**Top-%d churn**: %s.", c.Depth, c.ChurnSummary(func(s string) string { return "**" + s + "**" }))
	if m := c.ChurnMethods(); m != "" {
		fmt.Fprintf(b, " %s.", m)
	}
	b.WriteString("\n\n")
}

// mdChanged lists the most changed cases both runs hold when a churn gate is
// set (nothing otherwise, or when none changed).
func (d *Document) mdChanged(b *strings.Builder, maxListed int) {
	c := d.Baseline.Churn
	if c == nil || c.Status == outcome.Off || len(c.MostChanged) == 0 {
		return
	}
	w := func(f string, args ...any) { fmt.Fprintf(b, f, args...) }
	ms := c.MostChanged
	n := min(maxListed, len(ms))
	w("#### Most changed cases (%d listed; %d of %d changed their top %d as a set)\n\n", n, c.Overall.Changed, c.Overall.N, c.Depth)
	w("All the cases both runs hold, with or without gold; lowest RBO first.\n\n")
	writeMoved(b, ms[:n], c.Depth)
}

// textChurn writes the churn lines of the terminal report.
func (d *Document) textChurn(b *strings.Builder) {
	c := d.Baseline.Churn
	if c == nil {
		return
	}
	p := func(f string, args ...any) { fmt.Fprintf(b, f, args...) }
	san := format.SanitizeText
	p("  top-%d churn: %s\n", c.Depth, c.ChurnSummary(func(s string) string { return s }))
	if m := c.ChurnMethods(); m != "" {
		p("  (%s)\n", m)
	}
	if c.Status == outcome.Off || len(c.MostChanged) == 0 {
		return
	}
	ms := c.MostChanged
	p("  most changed: %d changed as a set\n", c.Overall.Changed)
	n := min(textMaxListed, len(ms))
	for _, x := range ms[:n] {
		p("    %s:%d  %s  RBO %s\n", san(x.File), x.Line, san(x.CaseID), format.Num(x.RBO.V()))
	}
	if more := c.Overall.Changed - int64(n); more > 0 {
		p("    … and %d more (see --markdown or --json)\n", more)
	}
}
