package html

import (
	"github.com/retrieval-gate/retrieval-gate/internal/report/comparereport"
)

// HolesView is the dashboard's judged@k section: each strategy's judged@k with
// its n, the warning on the strategies below the threshold and, with
// --judged-only, the line saying the measures are on condensed lists. Every
// sentence comes from the document (comparereport), as in the Markdown.
type HolesView struct {
	Label      string // judged@k
	Rows       []HoleRow
	Warning    string
	Note       string
	JudgedOnly string // "" unless --judged-only
}

// HoleRow is one strategy's judged@k cell ("0.620 (n 50)") and whether it is low.
type HoleRow struct {
	Name, Cell string
	Low        bool
}

// holesViewOf is the adapter of the section.
func holesViewOf(d *comparereport.Document) HolesView {
	h := HolesView{Label: d.JudgedLabel(), Warning: d.HolesWarning(func(s string) string { return s }), Note: d.JudgedNote(), JudgedOnly: d.JudgedOnlyLine()}
	for _, name := range d.Order {
		s := d.Strategies[name]
		h.Rows = append(h.Rows, HoleRow{Name: name, Cell: d.JudgedCell(s), Low: s.JudgedLow()})
	}
	return h
}

// holes writes the judged@k section.
func (p *Page) holes(h HolesView) {
	if len(h.Rows) == 0 {
		return
	}
	p.Section("Judged documents (" + h.Label + ")")
	if h.JudgedOnly != "" {
		p.Para(h.JudgedOnly)
	}
	t := Table{Head: []string{"strategy", h.Label, "status"}, NumCols: []bool{false, true, false}}
	for _, r := range h.Rows {
		status := "ok"
		if r.Low {
			status = "low: see the warning below"
		}
		t.Rows = append(t.Rows, []Cell{{Text: r.Name}, {Text: r.Cell, Num: true}, {Text: status}})
	}
	t.Foot = h.Note
	p.Table(t)
	if h.Warning != "" {
		p.Note("Warning: " + h.Warning)
	}
}
