package html

import (
	"slices"

	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
	"github.com/retrieval-gate/retrieval-gate/internal/report/gatetable"
)

// GateTable adds the one gate table of every report (report/gatetable's
// columns: gate, group, measure, status with its reason, threshold, value,
// n); foot is the footnote of an interval a reason marks
// (gatetable.UnreliableNote, or compare's with human labels), shown under
// the table and as the mark's title (flag), as every marked interval of the
// page has it.
func (p *Page) GateTable(gates []gatetable.Entry, foot string) {
	gt := Table{Head: []string{"gate", "group", "measure", "status", "threshold", "value", "n"}, Cards: true, // too wide for a phone
		NumCols: []bool{false, false, false, false, true, true, true}}
	for _, g := range gates {
		val, th := g.Numbers() // never read as equal when they differ (format.Distinct)
		n := format.Missing
		if g.N > 0 {
			n = Count(int(g.N))
		}
		gt.Rows = append(gt.Rows, []Cell{{Text: g.Name}, {Text: orMissing(g.Group)}, {Text: orMissing(g.Measure)},
			{Text: string(g.Status), Sub: g.Reason, Strong: g.Status == outcome.Fail, Flag: noteIf(g.Unreliable, foot)}, {Text: th}, {Text: val}, {Text: n}})
	}
	if slices.ContainsFunc(gates, func(g gatetable.Entry) bool { return g.Unreliable }) {
		gt.Foot = foot
	}
	p.Table(gt)
}
