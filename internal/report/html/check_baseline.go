package html

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/report/checkreport"
)

// FlipsListed is how many flips of each kind (newly missed, newly found, rank
// drops) and unpaired cases of each kind the HTML report lists; the counts are
// always complete, and --json lists up to the baseline's own cap.
const FlipsListed = 50

// flipsOpen is the number of listed flips up to which they are shown open.
const flipsOpen = 10

// checkBaseline writes the "vs base" section of check's HTML report, as the
// Markdown shows it: provenance and warnings, the paired comparison per group
// with its test and n, the flips (newly missed first) and the cases not paired.
// Nothing without --baseline. It reads the document's values and computes none.
func checkBaseline(p *Page, r *checkreport.Document) {
	bl := r.Baseline
	if bl == nil {
		return
	}
	p.Section("vs base")
	if bl.Status != checkreport.BaselineCompared {
		p.Note("No baseline: " + bl.Reason + ". The regression gates are off.")
		return
	}
	var prov []string
	if bl.Commit != "" {
		prov = append(prov, "commit "+format.CommitPrefix(bl.Commit, 12))
	}
	if bl.CreatedAt != "" {
		prov = append(prov, "created "+bl.CreatedAt)
	}
	for _, k := range sortedKeys(bl.Source) {
		prov = append(prov, k+" "+bl.Source[k])
	}
	prov = append(prov, bl.File)
	p.Para("Baseline: " + strings.Join(prov, " · "))
	if bl.Stale {
		p.Note("Warning: the baseline is older than 7 days (created " + bl.CreatedAt + "): refresh it so the comparison is with the current base.")
	}
	for _, x := range bl.Differences {
		p.Note(fmt.Sprintf("Note: the baseline's %s is %s, this run's %s: %s.", x.Field, x.Baseline, x.Current, x.Consequence))
	}
	c, f := bl.Cases, bl.Flips
	p.Para(fmt.Sprintf("%s paired cases · %s newly missed · %s newly found · %s rank drops (≥ %d) · not paired: %s gold changed, %s only in the baseline, %s only in this run",
		Count(int(c.Paired)), Count(int(f.NewlyMissedTotal)), Count(int(f.NewlyFoundTotal)), Count(int(f.RankDropsTotal)), f.RankDropThreshold,
		Count(int(c.GoldChanged)), Count(int(c.OnlyInBaseline)), Count(int(c.OnlyInCurrent))))
	checkOverlap(p, bl.Overlap) // check_overlap.go
	checkChurn(p, bl.Churn)     // check_overlap.go

	if c.Paired > 0 {
		type named struct {
			label string
			g     checkreport.PairedGroup
		}
		table := func(groups []named) Table {
			t := Table{Head: []string{"group", "measure", "base → head", "Δ", "p", "MDD"}, NumCols: []bool{false, false, true, true, true, true}, Cards: true} // too wide for a phone
			for _, g := range groups {
				for _, k := range pairedKeys(g.g) {
					x := g.g.Metrics[k]
					delta := format.Signed(x.Delta.V())
					switch x.Change {
					case "worse":
						delta = "🔻 " + delta
					case "better":
						delta = "🔺 " + delta
					}
					t.Rows = append(t.Rows, []Cell{{Text: g.label, Sub: "n = " + Count(int(x.N)), Strong: g.label == "overall"}, {Text: checkLabel(k, r.K)},
						{Text: Fmt(x.Baseline.V()) + " → " + Fmt(x.Current.V())},
						{Text: delta, Sub: checkreport.PairedInterval(x), Strong: x.Rejects, Flag: noteIf(x.Unreliable, checkreport.PairedNote(x))},
						{Text: format.P(x.P.V()), Sub: checkreport.TestLabel(x.Test)}, {Text: Fmt(x.MDD.V())}})
				}
			}
			return t
		}
		groups := []named{{"overall", bl.Overall}}
		for _, name := range sortedKeys(bl.ByType) {
			groups = append(groups, named{"type: " + name, bl.ByType[name]})
		}
		t := table(groups)
		t.Foot = "Δ = head − base over the paired cases; " + checkreport.PairedIntervalsLegend + "; " + checkreport.PairedPLegend + "; 🔻/🔺 and bold only where p < 0.05; MDD: " + checkreport.MDDLegend + "."
		if bl.AnyPairedUnreliable(false) {
			t.Foot += " " + bl.PairedUnreliableNoteFor(false) + "."
		}
		if bl.AnyPairedNote(false) {
			t.Foot += " " + checkreport.TestDecidesNote + "."
		}
		if s := bl.ClustersNote(); s != "" {
			t.Foot += " " + s + "."
		}
		p.Table(t)
		if len(bl.ByLocale) > 0 {
			var locales []named
			for _, name := range sortedKeys(bl.ByLocale) {
				locales = append(locales, named{"locale: " + name, bl.ByLocale[name]})
			}
			lt := table(locales)
			if bl.AnyPairedUnreliable(true) {
				lt.Foot = bl.PairedUnreliableNoteFor(true) + "."
			}
			if bl.AnyPairedNote(true) {
				lt.Foot = strings.TrimSpace(lt.Foot + " " + checkreport.TestDecidesNote + ".")
			}
			p.Details("By locale ("+checkreport.LocalePairedNote+")", func() { p.Table(lt) })
		}
	}

	// Flips, newly missed first.
	if f.NewlyMissedTotal+f.NewlyFoundTotal+f.RankDropsTotal > 0 {
		listed := min(FlipsListed, len(f.NewlyMissed)) + min(FlipsListed, len(f.NewlyFound)) + min(FlipsListed, len(f.RankDrops))
		flips := func() {
			flipTable(p, r.K, "Newly missed", f.NewlyMissed, f.NewlyMissedTotal)
			flipTable(p, r.K, "Newly found", f.NewlyFound, f.NewlyFoundTotal)
			flipTable(p, r.K, fmt.Sprintf("Rank drops of the first gold card (≥ %d)", f.RankDropThreshold), f.RankDrops, f.RankDropsTotal)
		}
		if listed > flipsOpen {
			p.Details(fmt.Sprintf("Flips: %s newly missed, %s newly found, %s rank drops", Count(int(f.NewlyMissedTotal)), Count(int(f.NewlyFoundTotal)), Count(int(f.RankDropsTotal))), flips)
		} else {
			flips()
		}
	}

	movedTable(p, bl.Overlap) // check_overlap.go
	changedTable(p, bl.Churn) // check_overlap.go

	// Not paired.
	u := bl.Unpaired
	if c.GoldChanged+c.OnlyInBaseline+c.OnlyInCurrent > 0 {
		p.Details(fmt.Sprintf("Not paired: %s gold changed, %s only in the baseline, %s only in this run", Count(int(c.GoldChanged)), Count(int(c.OnlyInBaseline)), Count(int(c.OnlyInCurrent))), func() {
			p.Note("A case whose gold changed is a relabelling, not a retrieval change: it is not compared.")
			if n := min(FlipsListed, len(u.GoldChanged)); n > 0 {
				t := Table{Caption: "Gold changed", Head: []string{"case", "gold: base → head"}, Cards: true}
				for _, g := range u.GoldChanged[:n] {
					t.Rows = append(t.Rows, []Cell{{Text: g.CaseID, Sub: g.File + ":" + strconv.Itoa(g.Line)}, {Text: strings.Join(g.Before, ", ") + " → " + strings.Join(g.After, ", ")}})
				}
				t.Foot = more(c.GoldChanged, n)
				p.Table(t)
			}
			refs := func(label string, rs []checkreport.CaseRef, total int64) {
				if total == 0 {
					return
				}
				n := min(FlipsListed, len(rs))
				ids := make([]string, n)
				for i, x := range rs[:n] {
					ids[i] = x.CaseID
				}
				s := fmt.Sprintf("%s (%s): %s", label, Count(int(total)), strings.Join(ids, ", "))
				if m := more(total, n); m != "" {
					s += " " + m
				}
				p.Para(s)
			}
			refs("Only in the baseline", u.OnlyInBaseline, c.OnlyInBaseline)
			refs("Only in this run", u.OnlyInCurrent, c.OnlyInCurrent)
		})
	}
}

// more is "… and N more not shown (see --json)." when total exceeds the n listed.
func more(total int64, n int) string {
	if m := total - int64(n); m > 0 {
		return fmt.Sprintf("… and %s more not shown (see --json).", Count(int(m)))
	}
	return ""
}

// flipTable lists one kind of flip (nothing when there is none): the case with
// its locale, type and file:line, the query, the gold over the top k of both runs.
func flipTable(p *Page, k int, title string, fs []checkreport.Flip, total int64) {
	if total == 0 {
		return
	}
	n := min(FlipsListed, len(fs))
	t := Table{Caption: fmt.Sprintf("%s (%s)", title, Count(int(total))), Head: []string{"case", "query", "gold", "top " + strconv.Itoa(k) + ": base → head"}, Cards: true}
	for _, x := range fs[:n] {
		t.Rows = append(t.Rows, []Cell{
			{Text: x.CaseID, Sub: x.Locale + " · " + x.Type + " · " + x.File + ":" + strconv.Itoa(x.Line)},
			{Text: x.Query},
			{Text: strings.Join(x.Gold, ", ")},
			{Text: topList(x.Before, x.RankBefore), Sub: "→ " + topList(x.After, x.RankAfter) + rboSuffix(x.RBO)},
		})
	}
	t.Foot = more(total, n)
	p.Table(t)
}

// topList is a top-k list with the first gold rank, or the missing glyph when unknown.
func topList(top []string, rank int) string {
	if top == nil {
		return format.Missing
	}
	s := strings.Join(top, ", ")
	if s == "" {
		s = "(nothing)"
	}
	if rank > 0 {
		s += " (gold #" + strconv.Itoa(rank) + ")"
	}
	return s
}

// pairedKeys are a paired group's registered measures in registry order.
func pairedKeys(g checkreport.PairedGroup) []string { return checkreport.PairedKeys(g) }

// verdictCard is the verdict with its icon; with a baseline its detail is the
// comparison the reports' first line states (checkreport.BaselineHeadline), so
// the card never says a bare "pass" above a comparison that went the other way,
// before the gates.
func verdictCard(r *checkreport.Document) Indicator {
	c := Indicator{Label: "Verdict", Value: r.VerdictIcon() + " " + string(r.Verdict), Detail: gatesLine(r)}
	if h := r.BaselineHeadline(func(s string) string { return s }); h != "" {
		c.Detail = h + " — " + c.Detail
	}
	return c
}

// baselineCard is the headline measure's paired Δ vs the baseline: "Δ hit@5 vs
// base", -0.061, with both means, the test, n and the newly missed cases.
func baselineCard(r *checkreport.Document) (Indicator, bool) {
	bl := r.Baseline
	if bl == nil || bl.Status != checkreport.BaselineCompared || bl.HeadlineMeasure == "" {
		return Indicator{}, false
	}
	pm, ok := bl.Overall.Metrics[bl.HeadlineMeasure]
	if !ok {
		return Indicator{}, false
	}
	label := checkLabel(bl.HeadlineMeasure, r.K)
	detail := fmt.Sprintf("%s → %s · p = %s (%s) · n = %s · %s newly missed", Fmt(pm.Baseline.V()), Fmt(pm.Current.V()),
		format.P(pm.P.V()), checkreport.TestLabel(pm.Test), Count(int(pm.N)), Count(int(bl.Flips.NewlyMissedTotal)))
	return Indicator{Label: "Δ " + label + " vs base", Value: format.Signed(pm.Delta.V()), Detail: detail}, true
}
