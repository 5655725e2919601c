package html

import (
	"strconv"

	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/report/comparereport"
)

// humanSection draws the human-corrected estimates (compare --human-qrels):
// the sentence saying the recommendation and the gates use them, every
// strategy's measures judge-only, corrected and human-only, the corrected
// paired comparisons and the judge's bias on the sample. Nothing without
// human labels.
func (p *Page) humanSection(h *comparereport.HumanSection) {
	if h == nil {
		return
	}
	p.Section("Human-corrected estimates")
	p.Para(h.Basis)
	p.Para(h.Intro)
	t := Table{Head: h.Head, Cards: true} // too wide for a phone
	for i := range h.Head {
		t.NumCols = append(t.NumCols, i >= 2)
	}
	for _, r := range h.Rows {
		row := make([]Cell, len(r))
		for i, c := range r {
			row[i] = Cell{Text: c, Num: i >= 2}
			if i >= 2 { // figures: the corrected interval carries the mark
				row[i].Flag = h.Unreliable
			}
		}
		t.Rows = append(t.Rows, row)
	}
	t.Foot = h.Note + "."
	if h.Unreliable != "" {
		t.Foot += " " + h.Unreliable
	}
	p.Table(t)
	if h.Strata != "" {
		p.Para(h.Strata)
	}
	if len(h.LocaleRows) > 0 {
		lt := Table{Caption: h.LocaleTitle, Head: h.LocaleHead, Cards: true}
		for i := range h.LocaleHead {
			lt.NumCols = append(lt.NumCols, i >= 2)
		}
		for _, r := range h.LocaleRows {
			row := make([]Cell, len(r))
			for i, c := range r {
				row[i] = Cell{Text: c, Num: i >= 2}
			}
			lt.Rows = append(lt.Rows, row)
		}
		lt.Foot = h.LocaleNote + "."
		p.Table(lt)
	}
	if len(h.Paired) > 0 {
		pt := Table{Head: []string{"strategy", "baseline", "metric", "n human", "Δ (corrected)", "95% CI of Δ", "p (Holm)", "significant"},
			NumCols: []bool{false, false, false, true, true, true, true, false}, Cards: true}
		for i, x := range h.Paired {
			sig := "no"
			if x.Significant {
				sig = "yes"
			}
			pt.Rows = append(pt.Rows, []Cell{{Text: x.Strategy}, {Text: x.Baseline}, {Text: h.PairedMeasures[i]}, {Text: strconv.Itoa(x.N), Num: true},
				{Text: format.Signed(x.Delta.V()), Num: true}, {Text: format.SignedInterval([2]float64{x.CI95[0].V(), x.CI95[1].V()}) + format.MarkIf(x.Unreliable), Num: true, Flag: h.PairedUnreliable},
				{Text: fmtP(x.PValue.V()), Num: true}, {Text: sig}})
		}
		pt.Foot = h.PairedFoot
		if h.PairedUnreliable != "" {
			pt.Foot += " " + h.PairedUnreliable
		}
		p.Table(pt)
	}
	bt := Table{Head: h.BiasHead}
	for i := range h.BiasHead {
		bt.NumCols = append(bt.NumCols, i > 0)
	}
	for _, r := range h.BiasRows {
		row := make([]Cell, len(r))
		for i, c := range r {
			row[i] = Cell{Text: c, Num: i > 0}
		}
		bt.Rows = append(bt.Rows, row)
	}
	bt.Foot = h.BiasLine
	p.Table(bt)
}
