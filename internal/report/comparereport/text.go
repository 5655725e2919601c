package comparereport

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/report/gatetable"
	"github.com/retrieval-gate/retrieval-gate/internal/report/trendtable"
)

type textTable struct {
	rows [][]string
}

func (t *textTable) add(cells ...string) { t.rows = append(t.rows, cells) }

func (t *textTable) write(b *strings.Builder) {
	var widths []int
	for _, r := range t.rows {
		for i, c := range r {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], len([]rune(c)))
		}
	}
	for _, r := range t.rows {
		b.WriteString(" ")
		for i, c := range r {
			b.WriteString(" ")
			if i == 0 {
				b.WriteString(c + strings.Repeat(" ", widths[i]-len([]rune(c))))
			} else {
				b.WriteString(strings.Repeat(" ", widths[i]-len([]rune(c))) + c)
			}
		}
		b.WriteString("\n")
	}
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// dist is the strategy's relevance distribution as percentages, highest level
// first, then the unjudged fraction.
func (s *Strategy) dist() []string {
	d := s.RelevanceDistribution
	out := make([]string, 0, len(d.Levels)+1)
	for l := len(d.Levels) - 1; l >= 0; l-- {
		out = append(out, format.Pct(d.Levels[l].V()))
	}
	return append(out, format.Pct(d.Unjudged.V()))
}

// distNHead is the heading of the column of the documents the distribution's
// shares are of, "" when no strategy has the count (a report written before it).
func (d *Document) distNHead() string {
	for _, s := range d.Strategies {
		if s.RelevanceDistributionN != nil {
			return "n documents"
		}
	}
	return ""
}

// distN is the strategy's cell of the distNHead column: the count, or
// format.Missing when the document does not have it.
func (s *Strategy) distN() string {
	if s.RelevanceDistributionN == nil {
		return format.Missing
	}
	return strconv.Itoa(*s.RelevanceDistributionN)
}

// distCells are the distribution's cells (dist), then the count of documents
// when the table has its column (distNHead).
func (d *Document) distCells(s *Strategy) []string {
	if d.distNHead() == "" {
		return s.dist()
	}
	return append(s.dist(), s.distN())
}

// distLevels is the number of levels of the distribution columns (every strategy has the same).
func (d *Document) distLevels() int {
	for _, s := range d.Strategies {
		return len(s.RelevanceDistribution.Levels)
	}
	return 4
}

// distHeads is the distribution columns' headings: "rel L" from the highest level down to 0.
func (d *Document) distHeads() []string {
	n := d.distLevels()
	h := make([]string, 0, n)
	for l := n - 1; l >= 0; l-- {
		h = append(h, "rel "+strconv.Itoa(l))
	}
	return h
}

// Text writes the terminal report of `compare`.
func (d *Document) Text(w io.Writer) error {
	var b strings.Builder
	name := format.SanitizeText
	fmt.Fprintf(&b, "retrieval-gate compare: k=%d, gain %s, relevant = rel >= %d, baseline %s\n",
		d.K, d.gain(), d.RelevantLevel, name(d.Baseline))
	fmt.Fprintf(&b, "queries: %d judged, %d with a judged document of positive gain (evaluated: graded measures), %d of them with one at rel >= %d (binary measures), %d excluded from every mean\n",
		d.Queries.Judged, d.Queries.WithRelevant, d.Queries.AtRelevantLevel, d.RelevantLevel, d.NotEvaluated)
	fmt.Fprintf(&b, "%s\n\n", d.scaleLine())
	t := &textTable{}
	head := []string{"strategy", "n", "missing"}
	for _, m := range metrics.QueryMeasures {
		head = append(head, d.measureHead(m.Key))
	}
	t.add(head...)
	nrow := []string{"(n per measure)", "", ""}
	for _, m := range metrics.QueryMeasures {
		nrow = append(nrow, d.measureN(m.Key))
	}
	t.add(nrow...)
	unreliable := false
	for _, s := range d.strategies() {
		row := []string{name(s.Name), strconv.Itoa(s.N), strconv.Itoa(s.MissingFromRun)}
		for _, m := range metrics.QueryMeasures {
			row = append(row, format.Num(s.Metrics[m.Key].Mean.V()))
		}
		t.add(row...)
		row = []string{"", "", ""}
		for _, m := range metrics.QueryMeasures {
			sm := s.Metrics[m.Key]
			cell := "±" + format.Num(sm.HalfWidth)
			if sm.Unreliable {
				cell += UnreliableMark
				unreliable = true
			}
			row = append(row, cell)
		}
		t.add(row...)
	}
	t.write(&b)
	ciNote := "± is half the width of the 95% CI"
	if !d.Statistics.Resampled {
		ciNote += "; large input: approximated, not resampled (see the last line)"
	}
	fmt.Fprintf(&b, "  (%s)\n  (%s)\n", ciNote, d.dcgScaleLine())
	if l := d.ClustersLine(name); l != "" {
		fmt.Fprintf(&b, "  %s\n", l)
	}
	if unreliable {
		fmt.Fprintf(&b, "  %s\n", UnreliableLine)
	}
	fmt.Fprintf(&b, "\nrelevance of the top-%d documents (0 includes unjudged):\n", d.K)
	t = &textTable{}
	head = append(append([]string{"strategy"}, d.distHeads()...), "unjudged")
	if h := d.distNHead(); h != "" {
		head = append(head, h)
	}
	t.add(append(head, "failed queries", d.JudgedLabel())...)
	for _, s := range d.strategies() {
		t.add(append(append([]string{name(s.Name)}, d.distCells(s)...), strconv.Itoa(len(s.FailedQueries)), d.JudgedCell(s))...)
	}
	t.write(&b)
	fmt.Fprintf(&b, "\nmean relevance and the relevance buckets of the top-%d documents:\n", d.K)
	t = &textTable{}
	t.add(append([]string{"strategy"}, bucketHeads...)...)
	for _, s := range d.strategies() {
		t.add(append([]string{name(s.Name)}, d.bucketCells(s)...)...)
	}
	t.write(&b)
	fmt.Fprintf(&b, "  (%s)\n", d.bucketsNote())
	d.holesText(&b, name)
	if len(d.Paired) > 0 {
		fmt.Fprintf(&b, "\npaired comparisons against %s:\n", name(d.Baseline))
		t = &textTable{}
		t.add("strategy", "metric", "n", "delta", "95% CI", "p", "p (Holm)", "test", "significant")
		var notes []string
		for _, p := range d.Paired {
			t.add(name(p.Strategy), d.metricCell(p.Metric), strconv.Itoa(p.N), format.Signed(p.Delta.V()), d.ciCell(p), format.P(p.PUnadjusted.V()), format.P(p.PValue.V()), p.PValueMethod, yesNo(p.Significant)+noteMark(p, &notes))
		}
		t.write(&b)
		for i, n := range notes {
			fmt.Fprintf(&b, "  [%d] %s\n", i+1, n)
		}
		for _, l := range d.IdenticalLines(name) {
			fmt.Fprintf(&b, "  %s\n", l)
		}
		fmt.Fprintf(&b, "  %s\n", d.primaryLine())
	}
	d.humanText(&b, name)
	// The gates' verdict before the decision, which says how it bears on them.
	if len(d.Gates) > 0 {
		fmt.Fprintf(&b, "\ngates: %s\n", strings.ToUpper(string(d.Verdict)))
		gatetable.TextNoted(&b, d.Gates, d.GatesUnreliableLine())
	}
	fmt.Fprintf(&b, "\n%s\n", d.recommendation(name))
	if dw := d.decisionWords(name); dw.Line != "" {
		fmt.Fprintf(&b, "%s\n", dw.Line)
	}
	if s := d.humanBasis(`"human-corrected estimates" above`); s != "" {
		fmt.Fprintf(&b, "%s\n", s)
	}
	if !d.ScenariosUnknown {
		b.WriteString("what to do (the common scenarios, each with how it bears on the decision):\n")
		for _, sc := range d.Scenarios {
			fmt.Fprintf(&b, "- %s\n", d.scenario(sc, name).line())
		}
		if len(d.Scenarios) == 0 {
			fmt.Fprintf(&b, "- %s\n", NoScenarioLine)
		}
	}
	if l := d.DecisionUnreliableLine(); l != "" {
		fmt.Fprintf(&b, "%s\n", l)
	}
	if d.ReadBack {
		fmt.Fprintf(&b, "diagnosis not shown: %s.\n", NotCarriedLine)
	}
	if fs := d.diagnosis(); len(fs) > 0 {
		b.WriteString("diagnosis:\n")
		for _, f := range fs {
			fmt.Fprintf(&b, "- %s\n", d.finding(f, name))
		}
		if l := d.DiagnosisUnreliableLine(); l != "" {
			fmt.Fprintf(&b, "%s\n", l)
		}
	}
	if d.Trend != nil {
		b.WriteString("\n")
		trendtable.Text(&b, d.Trend, d.label, name)
	}
	fmt.Fprintf(&b, "\n%s.\n", d.method())
	for _, s := range d.strategies() {
		if s.NotJudged > 0 {
			fmt.Fprintf(&b, "note: %d of the %d queries of %s are not in the qrels and were ignored.\n", s.NotJudged, s.RunQueries, name(s.Name))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
