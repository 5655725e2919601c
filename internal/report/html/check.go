package html

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/report/checkreport"
	"github.com/retrieval-gate/retrieval-gate/internal/report/gatetable"
)

// IndicativeOnly is how the locale deltas are qualified in every report.
const IndicativeOnly = checkreport.IndicativeOnly

// checkLabel is the report label of a measure key at cut k ("hit@5"); other
// precomputed keys are shown as they are.
func checkLabel(key string, k int) string {
	if i := metrics.CaseIndex(key); i >= 0 {
		return metrics.CaseMeasures[i].LabelAt(k)
	}
	return key
}

// deltaN is the n of a locale delta, the locale's then the reference
// locale's ("42 vs 51"; "—" when the document lacks a group).
func deltaN(n, ref int64, ok bool) string {
	if !ok {
		return format.Missing
	}
	return Count(int(n)) + " vs " + Count(int(ref))
}

// CheckHTML writes the report of `check --html` from the check document: the
// verdict, the groups with n and intervals (a chart of hit@k per locale and per
// type), the locale deltas (indicative only), the gates, the integrity problems
// the missed cases (the document keeps a bounded number; the total is
// shown) and, with a baseline, the paired comparison and the flips. It reads the document's values and computes none.
func CheckHTML(w io.Writer, r *checkreport.Document) error {
	hit := checkLabel(metrics.KeyHit, r.K)
	p := NewPage("retrieval-gate check: " + string(r.Verdict))
	p.Subtitle(fmt.Sprintf("k = %d · %s cases: %s with gold (scored), %s without gold (not scored)", r.K, Count(int(r.Cases.Total)), Count(int(r.Cases.WithGold)), Count(int(r.Cases.WithoutGold))))
	kpis := []Indicator{verdictCard(r)}
	if m, ok := metric(r.Overall, metrics.KeyHit); ok {
		kpis = append(kpis, Indicator{Label: "Overall " + hit, Value: Fmt(m.Mean.V()), Detail: "95% CI " + FmtCI(ci(m)),
			Flag: noteIf(m.Unreliable, checkreport.UnreliableNote), After: " · n = " + Count(int(m.N))})
	}
	if c, ok := baselineCard(r); ok {
		kpis = append(kpis, c)
	}
	integ := "every gold id resolves"
	if !r.Integrity.OK {
		integ = Count(int(r.Integrity.ProblemsTotal)) + plural(r.Integrity.ProblemsTotal, " problem", " problems")
	}
	kpis = append(kpis, Indicator{Label: "Dataset integrity", Value: integ, Detail: Count(r.Integrity.KBCards) + " cards in the knowledge base"})
	p.Indicators(kpis)
	checkBaseline(p, r) // vs base, with --baseline (check_baseline.go)

	// Groups.
	keys := metrics.CaseKeys // every registered measure of check, in report order
	p.Section("Groups")
	var cats []string
	var bars []Bar
	type named struct {
		label string
		g     checkreport.Group
	}
	groups := []named{{"overall", r.Overall}}
	for _, name := range sortedKeys(r.ByType) {
		groups = append(groups, named{"type: " + name, r.ByType[name]})
	}
	for _, name := range sortedKeys(r.ByLocale) {
		groups = append(groups, named{"locale: " + name, r.ByLocale[name]})
	}
	for _, g := range groups {
		cats = append(cats, g.label)
		if m, ok := metric(g.g, metrics.KeyHit); ok {
			c := ci(m)
			bars = append(bars, Bar{Category: g.label, Value: m.Mean.V(), CI: &c, N: int(m.N), Unreliable: m.Unreliable})
		} else {
			// No gold-carrying case: no value, the group still in the chart (a
			// dash, as in the table beside it).
			bars = append(bars, Bar{Category: g.label, Value: math.NaN(), N: int(g.g.N)})
		}
	}
	t := Table{Head: []string{"group", "n"}, NumCols: []bool{false, true}, Cards: true} // too wide for a phone
	for _, k := range keys {
		t.Head = append(t.Head, checkLabel(k, r.K))
		t.NumCols = append(t.NumCols, true)
	}
	unreliable := false // an interval of the table is marked
	for _, g := range groups {
		row := []Cell{{Text: g.label, Strong: g.label == "overall"}, {Text: Count(int(g.g.N)), Sub: subWithout(g.g.WithoutGold)}}
		for _, k := range keys {
			m, ok := metric(g.g, k)
			if !ok {
				row = append(row, Cell{Text: "—"})
				continue
			}
			row = append(row, Cell{Text: Fmt(m.Mean.V()), Sub: FmtCI(ci(m)) + format.MarkIf(m.Unreliable), Flag: noteIf(m.Unreliable, checkreport.UnreliableNote)})
			unreliable = unreliable || m.Unreliable
		}
		t.Rows = append(t.Rows, row)
	}
	t.Foot = fmt.Sprintf("Mean and 95%% interval (%s) over each group's gold-carrying cases; n is that count. %s is the success number; recall@%d is a conservative lower bound under disjunctive gold; nDCG@%d uses binary gain.", r.MeanMethods(), hit, r.K, r.K)
	if unreliable {
		t.Foot += " " + checkreport.UnreliableNote + "."
	}
	p.Grid(func() {
		p.BarChart(BarChart{Title: hit + " per group (95% CI whiskers)", Measure: hit, Categories: cats, Series: []Series{{Name: hit}}, Bars: bars})
	}, func() { p.Table(t) })

	// Locale deltas.
	p.Section("Locale deltas vs " + r.ReferenceLocale + " (" + IndicativeOnly + ")")
	if len(r.LocaleDeltas) == 0 {
		p.Para("No deltas: the reference locale " + r.ReferenceLocale + " has no gold-carrying case, or there is no other locale.")
	} else {
		dt := Table{Head: []string{"locale"}, NumCols: []bool{false, true, true, true}}
		for _, k := range keys {
			dt.Head = append(dt.Head, "Δ "+checkLabel(k, r.K))
		}
		ownN := false // a Δ shows its measure's n below it
		for _, locale := range sortedKeys(r.LocaleDeltas) {
			row := []Cell{{Text: locale, Sub: "n = " + deltaN(r.DeltaN(locale))}} // as the paired tables' groups (check_baseline.go)
			for _, k := range keys {
				c := Cell{Text: "—"}
				if d, ok := r.LocaleDeltas[locale][k]; ok && !math.IsNaN(d.V()) {
					c.Text = format.Signed(d.V())
					if n, ref, ok := r.DeltaMeasureN(locale, k); ok {
						c.Sub, ownN = "n = "+deltaN(n, ref, true), true
					}
				}
				row = append(row, c)
			}
			dt.Rows = append(dt.Rows, row)
		}
		dt.Foot = "Each locale's mean minus the reference locale's mean: " + IndicativeOnly + "; " + r.DeltaNLegend(func(s string) string { return s })
		if ownN {
			dt.Foot += " (a Δ whose measure has fewer cases than its group shows its own n below it)"
		}
		dt.Foot += "; read it beside each group's interval above."
		p.Table(dt)
	}

	// Gates.
	p.Section("Gates")
	p.GateTable(r.Gates, gatetable.UnreliableNote)

	// Integrity.
	p.Section("Dataset integrity")
	in := r.Integrity
	if in.OK {
		p.Para(fmt.Sprintf("Every gold id resolves to one of the %s cards of the knowledge base.", Count(in.KBCards)))
	} else {
		it := Table{Caption: Count(int(in.ProblemsTotal)) + plural(in.ProblemsTotal, " gold id is not a card", " gold ids are not cards") + " of the knowledge base", Head: []string{"case", "gold id", "reason"}, Cards: true}
		for _, pr := range in.Problems {
			it.Rows = append(it.Rows, []Cell{{Text: pr.CaseID, Sub: pr.File + ":" + strconv.Itoa(pr.Line)}, {Text: pr.GoldID}, {Text: pr.Reason}})
		}
		if more := in.ProblemsTotal - int64(len(in.Problems)); more > 0 {
			it.Foot = fmt.Sprintf("… and %s more not shown (the first %d in file order).", Count(int(more)), len(in.Problems))
		}
		p.Table(it)
	}
	if u := in.Unknown; u.Entries > 0 {
		p.Note(fmt.Sprintf("Warning: %s retrieved entries in %s cases are not cards of the knowledge base (a stale index?), e.g. %s. This is a warning, not a failure.", Count(int(u.Entries)), Count(int(u.Cases)), strings.Join(u.Examples, ", ")))
	}

	// Missed cases.
	if r.MissedNotCarried {
		p.Section(fmt.Sprintf("Missed cases (%s = 0)", hit))
		p.Para("Not in the JSON report this page was rendered from; the per-case scores (--cases-out) list them.")
	} else if p.Section(fmt.Sprintf("Missed cases (%s = 0): %s", hit, Count(int(r.MissedTotal)))); r.MissedTotal == 0 {
		p.Para("None.")
	} else {
		mt := Table{Head: []string{"case", "query", "gold → top " + strconv.Itoa(r.K)}, Cards: true}
		for _, m := range r.Missed {
			top := "(precomputed)"
			if !m.Precomputed {
				top = strings.Join(m.TopK, ", ")
				if top == "" {
					top = "(nothing retrieved)"
				}
			}
			mt.Rows = append(mt.Rows, []Cell{
				{Text: m.ID, Sub: m.Locale + " · " + m.Type + " · " + m.File + ":" + strconv.Itoa(m.Line)},
				{Text: m.Query},
				{Text: strings.Join(m.Gold, ", "), Sub: "→ " + top},
			})
		}
		if more := r.MissedTotal - int64(len(r.Missed)); more > 0 {
			mt.Foot = fmt.Sprintf("… and %s more not shown (the first %d in file order; all in --cases-out).", Count(int(more)), len(r.Missed))
		}
		p.Details("Show the "+Count(len(r.Missed))+plural(len(r.Missed), " missed case", " missed cases"), func() { p.Table(mt) })
	}
	_, err := p.WriteTo(w)
	return err
}

func subWithout(n int64) string {
	if n == 0 {
		return ""
	}
	return "+" + Count(int(n)) + " without gold"
}

func gatesLine(r *checkreport.Document) string {
	var parts []string
	for _, g := range r.Gates {
		parts = append(parts, g.Name+" "+string(g.Status))
	}
	return strings.Join(parts, " · ")
}

// metric is a group's summary of key, when the group has cases for it.
func metric(g checkreport.Group, key string) (checkreport.Summary, bool) {
	m, ok := g.Metrics[key]
	if !ok || m.N == 0 || math.IsNaN(m.Mean.V()) {
		return m, false
	}
	return m, true
}

func ci(m checkreport.Summary) [2]float64 { return [2]float64{m.CI95[0].V(), m.CI95[1].V()} }

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func orMissing(s string) string {
	if s == "" {
		return format.Missing
	}
	return s
}
