package html

import (
	"fmt"
	"strconv"

	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
	"github.com/retrieval-gate/retrieval-gate/internal/report/checkreport"
)

// checkOverlap writes the rank-biased overlap summary of the vs-base section:
// the paired cases and the cases without gold, each mean RBO with its 95%
// interval, with the measure and its persistence stated and how the
// intervals were computed. Nothing when the document has no overlap.
func checkOverlap(p *Page, o *checkreport.Overlap) {
	if o == nil {
		return
	}
	group := func(g checkreport.OverlapGroup) string {
		s := fmt.Sprintf("mean RBO %s (n = %s), %s changed", g.MeanText(), Count(int(g.N)), Count(int(g.Changed)))
		if g.Unknown > 0 {
			s += fmt.Sprintf(", %s without a top k in one run", Count(int(g.Unknown)))
		}
		return s
	}
	p.markedPara(fmt.Sprintf("Top-%d change: paired cases: %s; cases without gold: %s.", o.Depth, group(o.Paired), group(o.WithoutGold)), checkreport.EstimateUnreliableNote)
	p.Note(fmt.Sprintf("Rank-biased overlap RBO_ext (Webber, Moffat, Zobel 2010) of the top %d of base and head, persistence p = %s (the top %d carry %s of its weight): 1 = the same ranking, 0 = nothing in common.",
		o.Depth, format.Full(o.Persistence.V()), o.Depth, format.Pct(o.TopWeight.V())))
	if m := o.OverlapMethods(); m != "" {
		p.Note(m + ".")
	}
}

// movedTable lists the most changed cases without gold, lowest RBO first.
func movedTable(p *Page, o *checkreport.Overlap) {
	if o == nil || len(o.MostChangedWithoutGold) == 0 {
		return
	}
	ms := o.MostChangedWithoutGold
	t := Table{Caption: fmt.Sprintf("Most changed cases without gold (%d shown of %s changed)", len(ms), Count(int(o.WithoutGold.Changed))),
		Head: []string{"case", "query", "RBO", "top " + strconv.Itoa(o.Depth) + ": base → head"}, NumCols: []bool{false, false, true, false}, Cards: true}
	for _, x := range ms {
		t.Rows = append(t.Rows, []Cell{
			{Text: x.CaseID, Sub: x.Locale + " · " + x.Type + " · " + x.File + ":" + strconv.Itoa(x.Line)},
			{Text: x.Query},
			{Text: Fmt(x.RBO.V())},
			{Text: topList(x.Before, 0), Sub: "→ " + topList(x.After, 0)},
		})
	}
	t.Foot = "Not scored (no gold), so no flip can show them; lowest RBO first."
	p.Table(t)
}

// rboSuffix is " · RBO x" for a flip's top-k cell.
func rboSuffix(v format.Float) string {
	return " · RBO " + Fmt(v.V())
}

// checkChurn writes the churn line of the vs-base section: the cases both
// runs hold, how many changed their top k as a set, the entries that left and
// the mean RBO, each with its interval. Nothing when the document has none.
func checkChurn(p *Page, c *checkreport.Churn) {
	if c == nil {
		return
	}
	p.markedPara(fmt.Sprintf("Top-%d churn: %s.", c.Depth, c.ChurnSummary(func(s string) string { return s })), checkreport.EstimateUnreliableNote)
	if m := c.ChurnMethods(); m != "" {
		p.Note(m + ".")
	}
}

// changedTable lists the most changed cases both runs hold, lowest RBO
// first, when a churn gate is set.
func changedTable(p *Page, c *checkreport.Churn) {
	if c == nil || c.Status == outcome.Off || len(c.MostChanged) == 0 {
		return
	}
	ms := c.MostChanged
	t := Table{Caption: fmt.Sprintf("Most changed cases (%d listed; %s of %s changed their top %d as a set)", len(ms), Count(int(c.Overall.Changed)), Count(int(c.Overall.N)), c.Depth),
		Head: []string{"case", "query", "RBO", "top " + strconv.Itoa(c.Depth) + ": base → head"}, NumCols: []bool{false, false, true, false}, Cards: true}
	for _, x := range ms {
		t.Rows = append(t.Rows, []Cell{
			{Text: x.CaseID, Sub: x.Locale + " · " + x.Type + " · " + x.File + ":" + strconv.Itoa(x.Line)},
			{Text: x.Query},
			{Text: Fmt(x.RBO.V())},
			{Text: topList(x.Before, 0), Sub: "→ " + topList(x.After, 0)},
		})
	}
	t.Foot = "All the cases both runs hold, with or without gold; lowest RBO first."
	p.Table(t)
}
