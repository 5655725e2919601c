package checkreport

import (
	"fmt"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/baseline"
	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
)

// flipsOpenMax is the number of listed flips up to which the flips section is
// shown open; above it, it is collapsed.
const flipsOpenMax = 10

// PairedPLegend says which test gives each row's p and that it is not
// adjusted (the per-group regression gates adjust theirs).
const PairedPLegend = "p of the paired test (exact McNemar for hit, exact or randomization sign-flip otherwise, none when no case changed), unadjusted: each row is its own test, and only the per-group regression gates (--max-drop MEASURE@GROUP) Holm-adjust theirs, together"

// TextPairedLegend says, under the terminal's paired rows, what each row's
// figures are: the bracket after Δ is its 95% interval (the Markdown and the
// HTML say it in the heading and the longer legend under their tables).
const TextPairedLegend = "(Δ = head − base over the n paired cases, [its 95% interval]; p of the paired test, unadjusted; worse/better only where p < 0.05; mdd: the smallest |Δ| these n detect with 80% power)"

// MDDLegend says what the MDD column holds.
const MDDLegend = "the smallest |Δ| these n detect with 80% power (for hit, with as many changed cases as that Δ needs; — when none can be)"

// testLabels are the paired tests' short names in the reports.
var testLabels = map[string]string{
	baseline.TestMcNemar:              "McNemar",
	baseline.TestSignFlipExact:        "sign-flip",
	baseline.TestSignFlipMC:           "sign-flip MC",
	baseline.TestNone:                 "no change",
	baseline.TestClusterSignFlipExact: "sign-flip of clusters",
	baseline.TestClusterSignFlipMC:    "sign-flip MC of clusters",
	baseline.TestClusterSaddlepoint:   "saddlepoint of clusters",
}

// ClustersNote says that cases come in families and the paired statistics
// are computed over them, with the overall group's n cases in m clusters;
// "" when no case carries a cluster key.
func (b *Baseline) ClustersNote() string {
	var n, m int64
	for _, p := range b.Overall.Metrics {
		if p.Clusters > 0 {
			n, m = p.N, p.Clusters
			break
		}
	}
	if m == 0 {
		return ""
	}
	return fmt.Sprintf("cases in families: %d paired cases in %s overall (a case without a cluster key is one); the paired intervals and tests are computed over the clusters (cluster-t, sign-flip of the clusters' sums), and each group over its own clusters", n, format.Count(m, "cluster", "clusters"))
}

// PairedInterval is a paired difference's 95% interval, UnreliableMark after
// it where its method covers less than 0.95 at this n (PairedUnreliableNote),
// TestDecidesMark where it and the test disagree (TestDecidesNote).
func PairedInterval(p Paired) string {
	s := format.SignedInterval([2]float64{p.CI95[0].V(), p.CI95[1].V()})
	if p.Unreliable {
		s += UnreliableMark
	}
	if p.Note == baseline.NoteMethods {
		s += TestDecidesMark
	}
	return s
}

// TestDecidesMark follows a paired interval that disagrees with its test
// (TestDecidesNote).
const TestDecidesMark = "‡"

// TestDecidesNote explains TestDecidesMark.
var TestDecidesNote = fmt.Sprintf("%s the interval and the test disagree: the interval is built to cover the mean difference with 95%% whatever the distribution of the differences (with the betting interval of a bounded mean below %d pairs or %d changed cases), not from the paired test, and near the threshold the two differ; the test decides the 🔻/🔺 mark, at the p shown, and the gates, a per-group gate (--max-drop MEASURE@GROUP) at its Holm-adjusted p",
	TestDecidesMark, metrics.DifferenceReliableMinN, metrics.DifferenceReliableMinNonzero)

// PairedIntervalsLegend says which interval each paired difference has.
var PairedIntervalsLegend = fmt.Sprintf("95%% interval of Δ: for hit, inverted from the exact McNemar test (it excludes 0 exactly when the test rejects); otherwise hall-t (t united with Hall's skewness-corrected t), united with the betting interval of a bounded mean (coverage at least 95%% whatever the distribution) below %d pairs or %d changed cases; the rule of three when no case changed",
	metrics.DifferenceReliableMinN, metrics.DifferenceReliableMinNonzero)

// AnyPairedNote reports whether a paired comparison of the baseline (overall,
// by type, or by locale when locales is true) has an interval that disagrees
// with its test.
func (b *Baseline) AnyPairedNote(locales bool) bool {
	return b.anyPaired(locales, func(x Paired) bool { return x.Note == baseline.NoteMethods })
}

// anyPaired reports whether a paired comparison of the baseline (overall, by
// type, or by locale when locales is true) satisfies f.
func (b *Baseline) anyPaired(locales bool, f func(Paired) bool) bool {
	groups := []PairedGroup{b.Overall}
	for _, g := range b.ByType {
		groups = append(groups, g)
	}
	if locales {
		for _, g := range b.ByLocale {
			groups = append(groups, g)
		}
	}
	for _, g := range groups {
		for _, x := range g.Metrics {
			if f(x) {
				return true
			}
		}
	}
	return false
}

// PairedUnreliableNote explains UnreliableMark beside a paired difference
// computed over cases (a measure without a known range is the only one
// marked there).
const PairedUnreliableNote = UnreliableMark + " unreliable: the interval of a paired difference of a measure without a known range covers less than 95% at this n in simulation (below 50 paired cases; docs/statistics.md); the test decides"

// PairedClustersUnreliableNote explains UnreliableMark beside a paired
// difference computed over the clusters of cases in families, where the
// mark follows the clusters, not the measure's range.
const PairedClustersUnreliableNote = UnreliableMark + " unreliable: the interval of a paired difference over clusters covers less than 95% at this number of clusters in simulation (cluster-t below 100 clusters or below 15 that moved, the bounded interval of clusters without variation below 30; docs/statistics.md); the test decides"

// PairedNote is the footnote of UnreliableMark beside the paired difference
// p: PairedClustersUnreliableNote over clusters, else PairedUnreliableNote.
func PairedNote(p Paired) string {
	if p.Clusters > 0 {
		return PairedClustersUnreliableNote
	}
	return PairedUnreliableNote
}

// PairedUnreliableNoteFor is the footnote of the marked paired intervals of
// the comparison (overall, by type, or by locale when locales is true): over
// clusters when they are computed over clusters.
func (b *Baseline) PairedUnreliableNoteFor(locales bool) string {
	if b.anyPaired(locales, func(x Paired) bool { return x.Unreliable && x.Clusters > 0 }) {
		return PairedClustersUnreliableNote
	}
	return PairedUnreliableNote
}

// AnyPairedUnreliable reports whether a paired comparison of the baseline
// (overall, by type, or by locale when locales is true) has an unreliable interval.
func (b *Baseline) AnyPairedUnreliable(locales bool) bool {
	return b.anyPaired(locales, func(x Paired) bool { return x.Unreliable })
}

// deltaCell is "Δ [lo, hi]" with an arrow where the paired test rejects.
func deltaCell(p Paired) string {
	s := format.Signed(p.Delta.V()) + " " + PairedInterval(p)
	switch p.Change {
	case "worse":
		s = "🔻 " + s
	case "better":
		s = "🔺 " + s
	}
	return s
}

// baselineLine is the one-line provenance of the baseline.
func (b *Baseline) provenance(esc func(string) string) string {
	parts := []string{}
	if b.Commit != "" {
		parts = append(parts, "commit "+esc(format.CommitPrefix(b.Commit, 12)))
	}
	if b.CreatedAt != "" {
		parts = append(parts, "created "+esc(b.CreatedAt))
	}
	for _, k := range sortedKeys(b.Source) {
		parts = append(parts, esc(k)+" "+esc(b.Source[k]))
	}
	parts = append(parts, esc(b.File))
	return strings.Join(parts, " · ")
}

// mdBaseline writes the "vs base" section (nothing without --baseline).
func (d *Document) mdBaseline(b *strings.Builder, maxListed int) {
	bl := d.Baseline
	if bl == nil {
		return
	}
	w := func(f string, args ...any) { fmt.Fprintf(b, f, args...) }
	esc := format.EscapeMarkdown
	if bl.Status != BaselineCompared {
		w("### vs base\n\n> [!WARNING]\n> No baseline: %s. The regression gates are off.\n\n", esc(bl.Reason))
		return
	}
	w("### vs base\n\nBaseline: %s\n\n", bl.provenance(esc))
	if bl.Stale {
		w("> [!WARNING]\n> The baseline is older than 7 days (created %s): refresh it so the comparison is with the current base.\n\n", esc(bl.CreatedAt))
	}
	for _, x := range bl.Differences {
		w("> [!NOTE]\n> The baseline's %s is `%s`, this run's `%s`: %s.\n\n", esc(x.Field), esc(x.Baseline), esc(x.Current), esc(x.Consequence))
	}
	c := bl.Cases
	w("**%d paired cases** · %d newly missed · %d newly found · %d rank drops (≥ %d) · not paired: %d gold changed, %d only in the baseline, %d only in this run\n\n",
		c.Paired, bl.Flips.NewlyMissedTotal, bl.Flips.NewlyFoundTotal, bl.Flips.RankDropsTotal, bl.Flips.RankDropThreshold,
		c.GoldChanged, c.OnlyInBaseline, c.OnlyInCurrent)
	d.mdOverlap(b) // overlap.go
	d.mdChurn(b)   // churn.go

	if c.Paired > 0 {
		table := func(rows func(row func(label string, g PairedGroup))) {
			w("| group | measure | base → head | Δ [95%% CI] | p | MDD |\n|---|---|---:|---:|---:|---:|\n")
			rows(func(label string, g PairedGroup) {
				for _, k := range pairedKeys(g) {
					p := g.Metrics[k]
					w("| %s (n=%d) | %s | %s → %s | %s | %s %s | %s |\n", label, p.N, d.mdLabel(k),
						format.Num(p.Baseline.V()), format.Num(p.Current.V()), deltaCell(p), format.P(p.P.V()), testLabels[p.Test], format.Num(p.MDD.V()))
				}
			})
		}
		table(func(row func(string, PairedGroup)) {
			row("**overall**", bl.Overall)
			for _, name := range sortedKeys(bl.ByType) {
				row("type: "+esc(name), bl.ByType[name])
			}
		})
		w("\nΔ = head − base over the paired cases; %s; %s; 🔻/🔺 only where p < 0.05; MDD: %s.\n\n", PairedIntervalsLegend, PairedPLegend, MDDLegend)
		if s := bl.ClustersNote(); s != "" {
			w("%s.\n\n", s)
		}
		if bl.AnyPairedUnreliable(false) {
			w("%s\n\n", bl.PairedUnreliableNoteFor(false))
		}
		if bl.AnyPairedNote(false) {
			w("%s\n\n", TestDecidesNote)
		}
		if len(bl.ByLocale) > 0 {
			w("<details><summary>By locale (%s)</summary>\n\n", LocalePairedNote)
			table(func(row func(string, PairedGroup)) {
				for _, name := range sortedKeys(bl.ByLocale) {
					row("locale: "+esc(name), bl.ByLocale[name])
				}
			})
			if bl.AnyPairedUnreliable(true) && !bl.AnyPairedUnreliable(false) {
				w("\n%s\n", bl.PairedUnreliableNoteFor(true))
			}
			if bl.AnyPairedNote(true) && !bl.AnyPairedNote(false) {
				w("\n%s\n", TestDecidesNote)
			}
			w("\n</details>\n\n")
		}
	}

	// Flips, newly missed first.
	f := bl.Flips
	listedFlips := min(maxListed, len(f.NewlyMissed)) + min(maxListed, len(f.NewlyFound)) + min(maxListed, len(f.RankDrops))
	if f.NewlyMissedTotal+f.NewlyFoundTotal+f.RankDropsTotal > 0 {
		collapsed := listedFlips > flipsOpenMax
		if collapsed {
			w("<details><summary>Flips: %d newly missed, %d newly found, %d rank drops</summary>\n\n", f.NewlyMissedTotal, f.NewlyFoundTotal, f.RankDropsTotal)
		}
		flipTable := func(title string, fs []Flip, total int64) {
			if total == 0 {
				return
			}
			d.mdFlips(b, title, fs, total, maxListed)
		}
		flipTable("Newly missed", f.NewlyMissed, f.NewlyMissedTotal)
		flipTable("Newly found", f.NewlyFound, f.NewlyFoundTotal)
		flipTable(fmt.Sprintf("Rank drops of the first gold card (≥ %d)", f.RankDropThreshold), f.RankDrops, f.RankDropsTotal)
		if collapsed {
			w("</details>\n\n")
		}
	}
	d.mdMoved(b, maxListed)   // overlap.go
	d.mdChanged(b, maxListed) // churn.go

	// Not paired.
	u := bl.Unpaired
	if c.GoldChanged+c.OnlyInBaseline+c.OnlyInCurrent > 0 {
		w("<details><summary>Not paired: %d gold changed, %d only in the baseline, %d only in this run</summary>\n\n", c.GoldChanged, c.OnlyInBaseline, c.OnlyInCurrent)
		w("A case whose gold changed is a relabelling, not a retrieval change: it is not compared.\n\n")
		if n := min(maxListed, len(u.GoldChanged)); n > 0 {
			w("| case | file:line | gold: base → head |\n|---|---|---|\n")
			for _, g := range u.GoldChanged[:n] {
				w("| %s | %s:%d | %s → %s |\n", esc(g.CaseID), esc(g.File), g.Line, joinEscaped(g.Before), joinEscaped(g.After))
			}
			w("\n")
		}
		refs := func(label string, rs []CaseRef, total int64) {
			if total == 0 {
				return
			}
			n := min(maxListed, len(rs))
			ids := make([]string, n)
			for i, r := range rs[:n] {
				ids[i] = esc(r.CaseID)
			}
			w("%s (%d): %s", label, total, strings.Join(ids, ", "))
			if more := total - int64(n); more > 0 {
				w(" … and %d more", more)
			}
			w("\n\n")
		}
		refs("Only in the baseline", u.OnlyInBaseline, c.OnlyInBaseline)
		refs("Only in this run", u.OnlyInCurrent, c.OnlyInCurrent)
		w("</details>\n\n")
	}
}

// mdFlips writes one kind of flip: a table of two short columns (the case over
// its line; the query, shortened, over the first gold id, how many more, and the
// first gold card's rank in the base and the head), then the top k of the base and of
// the head, and every gold id and the whole query where the row shortened them,
// one item per case below the table.
//
// RBO is the rank-biased overlap of the two top k (— when one is unknown).
func (d *Document) mdFlips(b *strings.Builder, title string, fs []Flip, total int64, maxListed int) {
	w := func(f string, args ...any) { fmt.Fprintf(b, f, args...) }
	esc := format.EscapeMarkdown
	n := min(maxListed, len(fs))
	w("#### %s (%d)\n\n", title, total)
	if n > 0 {
		oneFile := true
		for _, x := range fs[:n] {
			oneFile = oneFile && x.File == fs[0].File
		}
		if oneFile {
			w("Lines of %s.\n\n", esc(fs[0].File))
		}
		w("| case | query; gold: its rank in base → head |\n|---|---|\n")
		for _, x := range fs[:n] {
			where := fmt.Sprintf("line %d", x.Line)
			if !oneFile {
				where = fmt.Sprintf("%s:%d", esc(x.File), x.Line)
			}
			q, _ := format.Shorten(x.Query, queryCell)
			w("| %s<br><sub>%s</sub> | %s<br><sub>gold: %s: %s → %s · RBO %s</sub> |\n", esc(x.CaseID), where, esc(q), firstOf(x.Gold), rankCell(x.Before, x.RankBefore), rankCell(x.After, x.RankAfter), format.Num(x.RBO.V()))
		}
		w("\nTop %d, base → head:\n\n", d.K)
		for _, x := range fs[:n] {
			w("- %s: %s → %s", esc(x.CaseID), topCell(x.Before, x.RankBefore), topCell(x.After, x.RankAfter))
			if len(x.Gold) > 1 {
				w("; gold: %s", joinEscaped(x.Gold))
			}
			if _, whole := format.Shorten(x.Query, queryCell); !whole {
				w("; query: %s", esc(x.Query))
			}
			w("\n")
		}
	}
	if more := total - int64(n); more > 0 {
		w("\n… and %d more not shown (see --json).\n", more)
	}
	w("\n")
}

// rankCell is the rank of the first gold card in a top k: "#2", "none" when no
// gold card is in it, the missing glyph when the top k is unknown.
func rankCell(top []string, rank int) string {
	switch {
	case top == nil:
		return format.Missing
	case rank > 0:
		return fmt.Sprintf("#%d", rank)
	}
	return "none"
}

// topCell is a top-k list with the first gold rank, or the missing glyph.
func topCell(top []string, rank int) string {
	if top == nil {
		return format.Missing
	}
	s := joinEscaped(top)
	if s == "" {
		s = "(nothing)"
	}
	if rank > 0 {
		s += fmt.Sprintf(" (gold #%d)", rank)
	}
	return s
}

// textBaseline writes the "vs base" lines of the terminal report.
func (d *Document) textBaseline(b *strings.Builder, verbose bool) (details []string) {
	bl := d.Baseline
	if bl == nil {
		return nil
	}
	p := func(f string, args ...any) { fmt.Fprintf(b, f, args...) }
	san := format.SanitizeText
	if bl.Status != BaselineCompared {
		p("\nvs base: no baseline: %s (regression gates off)\n", san(bl.Reason))
		return nil
	}
	p("\nvs base: %s\n", bl.provenance(san))
	if bl.Stale {
		p("  warning: the baseline is older than 7 days\n")
	}
	for _, x := range bl.Differences {
		p("  note: baseline %s %s, this run %s: %s\n", san(x.Field), san(x.Baseline), san(x.Current), san(x.Consequence))
	}
	c := bl.Cases
	p("  %d paired; not paired: %d gold changed, %d only in the baseline, %d only in this run\n", c.Paired, c.GoldChanged, c.OnlyInBaseline, c.OnlyInCurrent)
	rows := false // a paired row was written: its legend follows
	row := func(label string, g PairedGroup) {
		for _, k := range pairedKeys(g) {
			rows = true
			x := g.Metrics[k]
			mark := ""
			if x.Change != "" {
				mark = "  " + x.Change
			}
			p("  %-22s %-9s %s -> %s  Δ %s %s  p %s (%s)  mdd %s%s\n", san(label)+fmt.Sprintf(" n=%d", x.N), d.label(k), format.Num(x.Baseline.V()), format.Num(x.Current.V()),
				format.Signed(x.Delta.V()), PairedInterval(x), format.P(x.P.V()), testLabels[x.Test], format.Num(x.MDD.V()), mark)
		}
	}
	row("overall", bl.Overall)
	if verbose {
		for _, name := range sortedKeys(bl.ByType) {
			row("type "+name, bl.ByType[name])
		}
		for _, name := range sortedKeys(bl.ByLocale) {
			row("locale "+name, bl.ByLocale[name])
		}
		p("  (locale rows: %s)\n", LocalePairedNote)
	} else if len(bl.ByType)+len(bl.ByLocale) > 0 {
		details = append(details, "the baseline's type and locale rows")
	}
	if rows {
		p("  %s\n", TextPairedLegend)
	}
	unreliable, unreliableNote := bl.AnyPairedUnreliable(true), bl.PairedUnreliableNoteFor(true)
	if !verbose { // the rows shown: overall's
		unreliable, unreliableNote = false, PairedUnreliableNote
		for _, x := range bl.Overall.Metrics {
			if x.Unreliable {
				unreliable, unreliableNote = true, PairedNote(x)
			}
		}
	}
	if s := bl.ClustersNote(); s != "" {
		p("  (%s)\n", s)
	}
	if unreliable {
		p("  %s\n", unreliableNote)
	}
	note := bl.AnyPairedNote(true)
	if !verbose { // the rows shown: overall's
		note = false
		for _, x := range bl.Overall.Metrics {
			note = note || x.Note == baseline.NoteMethods
		}
	}
	if note {
		p("  (%s)\n", TestDecidesNote)
	}
	f := bl.Flips
	list := func(title string, fs []Flip, total int64) {
		if total == 0 {
			return
		}
		p("  %s: %d\n", title, total)
		n := min(textMaxListed, len(fs))
		for _, x := range fs[:n] {
			p("    %s:%d  %s\n", san(x.File), x.Line, san(x.CaseID))
		}
		if more := total - int64(n); more > 0 {
			p("    … and %d more (see --markdown or --json)\n", more)
		}
	}
	// Which cases broke is the comparison's point: newly missed always.
	list("newly missed", f.NewlyMissed, f.NewlyMissedTotal)
	if verbose {
		list("newly found", f.NewlyFound, f.NewlyFoundTotal)
		list(fmt.Sprintf("rank drops (≥ %d)", f.RankDropThreshold), f.RankDrops, f.RankDropsTotal)
		d.textOverlap(b) // overlap.go
		d.textChurn(b)   // churn.go
		return nil
	}
	if f.NewlyFoundTotal > 0 {
		details = append(details, fmt.Sprintf("%d newly found", f.NewlyFoundTotal))
	}
	if f.RankDropsTotal > 0 {
		details = append(details, fmt.Sprintf("%d rank drops (≥ %d)", f.RankDropsTotal, f.RankDropThreshold))
	}
	if bl.Overlap != nil {
		details = append(details, fmt.Sprintf("the top-%d change (rank-biased overlap)", bl.Overlap.Depth))
	}
	if c := bl.Churn; c != nil && c.Status != outcome.Off {
		d.textChurn(b) // a churn gate's figures are its decision: always shown
	}
	return details
}
