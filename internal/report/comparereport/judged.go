package comparereport

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/format"
)

// Holes: judged@k per strategy, its warning and the --judged-only mode, in
// every format (the JSON keys judged_at_k, judged_at_k_threshold, judged_only).

// JudgedAtK is a strategy's judged@k: the share of its top k that has a label,
// mean over the N evaluated queries that returned a document; Low when the mean
// is below the document's JudgedAtKThreshold.
type JudgedAtK struct {
	Low  bool         `json:"low"`
	Mean format.Float `json:"mean"`
	N    int          `json:"n"`
}

// addHoles fills the document's holes from the comparison.
func (d *Document) addHoles(r *compare.Result) {
	d.JudgedOnly = r.JudgedOnly
	d.JudgedAtKThreshold = format.Float(compare.JudgedThreshold)
	for i := range r.Strategies {
		s := &r.Strategies[i]
		j := s.Judged
		d.Strategies[s.Name].JudgedAtK = &JudgedAtK{Mean: format.Float(j.Mean), N: j.N, Low: j.Low}
	}
}

// JudgedLabel is judged@k's label at the document's cutoff.
func (d *Document) JudgedLabel() string { return "judged@" + strconv.Itoa(d.K) }

// JudgedCell is a strategy's judged@k with its n ("0.620 (n 50)"), or the
// missing glyph for a report written before judged@k.
func (d *Document) JudgedCell(s *Strategy) string {
	if s.JudgedAtK == nil {
		return format.Missing
	}
	return fmt.Sprintf("%s (n %d)", format.Num(s.JudgedAtK.Mean.V()), s.JudgedAtK.N)
}

// JudgedLow reports whether the strategy's judged@k is flagged low.
func (s *Strategy) JudgedLow() bool { return s.JudgedAtK != nil && s.JudgedAtK.Low }

// HolesWarning is the warning on the strategies whose judged@k is below the
// threshold, in report order ("" when every strategy is at or above it); name
// renders a strategy name for the format.
func (d *Document) HolesWarning(name func(string) string) string {
	var low []string
	for _, s := range d.strategies() {
		if s.JudgedLow() {
			v, _ := format.Distinct(s.JudgedAtK.Mean.V(), d.JudgedAtKThreshold.V())
			low = append(low, fmt.Sprintf("%s (%s, n = %d)", name(s.Name), v, s.JudgedAtK.N))
		}
	}
	if len(low) == 0 {
		return ""
	}
	head := fmt.Sprintf("%s is below %s for %s: part of the top %d has no label.", d.JudgedLabel(), format.Num(d.JudgedAtKThreshold.V()), strings.Join(low, ", "), d.K)
	if d.JudgedOnly {
		return head + " With --judged-only those documents are skipped (condensed lists), which tends to overestimate a strategy with many of them; judge them (judge --known-qrels judges only the holes) for a fair comparison."
	}
	return head + " Those documents count as relevance 0, so the measures are lower bounds, biased against a strategy that retrieves documents the judged pool never saw; judge them (judge --known-qrels judges only the holes) or compare again with --judged-only."
}

// JudgedOnlyLine says the measures are on condensed lists ("" when not).
func (d *Document) JudgedOnlyLine() string {
	if !d.JudgedOnly {
		return ""
	}
	return fmt.Sprintf("--judged-only: every measure is computed on condensed lists, each ranking without its unjudged documents before the top-%d cut (trec_eval -J); %s is of the rankings as retrieved.", d.K, d.JudgedLabel())
}

// JudgedNote explains judged@k under the tables.
func (d *Document) JudgedNote() string {
	return fmt.Sprintf("%s is the share of each top %d that has a label of 0 or above (a negative one is unjudged, as trec_eval reads it), mean over the queries that returned a document, n of them; below %s its strategy is flagged.", d.JudgedLabel(), d.K, format.Num(d.JudgedAtKThreshold.V()))
}

// holesText writes the holes lines of the terminal report.
func (d *Document) holesText(b *strings.Builder, name func(string) string) {
	fmt.Fprintf(b, "  (%s)\n", d.JudgedNote())
	if l := d.JudgedOnlyLine(); l != "" {
		fmt.Fprintf(b, "  %s\n", l)
	}
	if w := d.HolesWarning(name); w != "" {
		fmt.Fprintf(b, "warning: %s\n", w)
	}
}

// holesMarkdown writes the holes paragraph of the Markdown report.
func (d *Document) holesMarkdown(b *strings.Builder) {
	esc := format.EscapeMarkdown
	if l := d.JudgedOnlyLine(); l != "" {
		fmt.Fprintf(b, "> %s\n\n", esc(l))
	}
	if w := d.HolesWarning(identity); w != "" {
		fmt.Fprintf(b, "> ⚠️ **Holes:** %s\n\n", esc(w))
	}
}
