package comparereport

import (
	"fmt"
	"io"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
	"github.com/retrieval-gate/retrieval-gate/internal/report/gatetable"
	"github.com/retrieval-gate/retrieval-gate/internal/report/trendtable"
)

// listMax caps the query ids listed per strategy in the Markdown report.
const listMax = 50

func identity(s string) string { return s }

// Markdown writes the Markdown report of `compare` (for a file, a job summary or
// a comment): tables (no chart: --html draws them), recommendation, diagnosis,
// and the failed, best and worst queries in collapsed sections. Every
// user-controlled name is escaped.
func (d *Document) Markdown(w io.Writer) error {
	var b strings.Builder
	esc := format.EscapeMarkdown
	st := d.Statistics
	primary := d.label(d.Primary)
	fmt.Fprintf(&b, "## Retrieval strategy comparison\n\n")
	fmt.Fprintf(&b, "k = %d · gain %s · relevant = rel ≥ %d · baseline **%s** · %d evaluated queries with a judged document of positive gain (graded measures), %d of them with one at rel ≥ %d (binary measures); %d judged, %d without a document of positive gain are excluded from every mean · %s\n\n",
		d.K, d.gain(), d.RelevantLevel, esc(d.Baseline), d.Queries.WithRelevant, d.Queries.AtRelevantLevel, d.RelevantLevel, d.Queries.Judged, d.NotEvaluated, d.scaleLine())
	// The gates' verdict first, when compare is a gate: the decision below
	// says how it bears on them.
	if len(d.Gates) > 0 {
		icon := "✅"
		if d.Verdict != outcome.Pass {
			icon = "❌"
		}
		fmt.Fprintf(&b, "### %s Gates: %s\n\n", icon, d.Verdict)
		gatetable.MarkdownNoted(&b, d.Gates, d.GatesUnreliableLine())
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "**%s**\n\n", d.recommendation(esc))
	if dw := d.decisionWords(esc); dw.Line != "" {
		fmt.Fprintf(&b, "**%s**\n\n", dw.Line)
	}
	fmt.Fprintf(&b, "%s\n\n", d.primaryLine())
	if s := d.humanBasis(`"Human-corrected estimates" below`); s != "" {
		fmt.Fprintf(&b, "%s\n\n", s)
	}
	if !d.ScenariosUnknown {
		b.WriteString("**What to do** (the common scenarios whose rule this comparison meets, each with how it bears on the decision):\n\n")
		for _, sc := range d.Scenarios {
			t := d.scenario(sc, esc)
			fmt.Fprintf(&b, "- %s **%s** <sub>Rule: %s.</sub>\n", t.Found, t.Todo(), t.Rule)
		}
		if len(d.Scenarios) == 0 {
			fmt.Fprintf(&b, "- %s\n", NoScenarioLine)
		}
		b.WriteString("\n")
	}
	if l := d.DecisionUnreliableLine(); l != "" {
		fmt.Fprintf(&b, "%s\n\n", l)
	}
	d.holesMarkdown(&b)                       // --judged-only, and the strategies whose judged@k is low
	trendtable.Markdown(&b, d.Trend, d.label) // the gated measures over the base branch's last runs

	fmt.Fprintf(&b, "### Means with 95%% confidence intervals\n\n")
	if !st.Resampled {
		fmt.Fprintf(&b, "> **Large input:** the intervals and p-values below are large-sample approximations of the bootstrap and of the randomization test, not resampled (%d queries × %d resamples exceeds %d); see the note at the end.\n\n",
			d.Queries.WithRelevant, st.Resamples, st.ResamplingBudget)
	}
	if l := d.ClustersLine(esc); l != "" {
		fmt.Fprintf(&b, "> %s\n\n", l)
	}
	// Two tables of at most six short columns each, so neither is wider than
	// GitHub's comment column: the measures in report order, the first four
	// beside n, the rest below; each mean with ± half its interval's width
	// (marked when unreliable), and a first row with each measure's own n.
	half := (metrics.NumGraded + 1) / 2
	unreliable := false
	for part, ms := range [][]metrics.Measure[metrics.QueryInput]{metrics.QueryMeasures[:half], metrics.QueryMeasures[half:]} {
		if part > 0 {
			b.WriteString("\n")
		}
		b.WriteString("| strategy |")
		if part == 0 {
			b.WriteString(" n |")
		}
		for _, m := range ms {
			fmt.Fprintf(&b, " %s |", d.measureHead(m.Key))
		}
		b.WriteString("\n|---|")
		if part == 0 {
			b.WriteString("---:|")
		}
		b.WriteString(strings.Repeat("---:|", len(ms)) + "\n| *n per measure* |")
		if part == 0 {
			b.WriteString(" |")
		}
		for _, m := range ms {
			fmt.Fprintf(&b, " %s |", d.measureN(m.Key))
		}
		b.WriteString("\n")
		for _, s := range d.strategies() {
			fmt.Fprintf(&b, "| %s |", esc(s.Name))
			if part == 0 {
				fmt.Fprintf(&b, " %d |", s.N)
			}
			for _, m := range ms {
				sm := s.Metrics[m.Key]
				mark := ""
				if sm.Unreliable {
					mark, unreliable = UnreliableMark, true
				}
				fmt.Fprintf(&b, " %s ±%s%s |", format.Num(sm.Mean.V()), format.Num(sm.HalfWidth), mark)
			}
			b.WriteString("\n")
		}
	}
	fmt.Fprintf(&b, "\n± is half the width of the 95%% interval (the exact bounds are in the JSON report). %s.\n", d.dcgScaleLine())
	if unreliable {
		fmt.Fprintf(&b, "\n%s\n", UnreliableLine)
	}

	if len(d.Paired) > 0 {
		// The primary measure's rows are the comparisons the recommendation rests
		// on: they stay visible, in a table of six short columns; the other
		// measures' rows (secondary tests) are collapsed below them, so the section
		// is a few rows tall whatever the number of strategies (issue 13).
		var primaryRows, otherRows []Paired
		for _, p := range d.Paired {
			if p.Primary {
				primaryRows = append(primaryRows, p)
			} else {
				otherRows = append(otherRows, p)
			}
		}
		fmt.Fprintf(&b, "\n### Paired comparisons against %s\n\n", esc(d.Baseline))
		var notes []string
		// lines writes lines as one paragraph, one per line (hard line breaks).
		lines := func(ls []string) {
			b.WriteString(strings.Join(ls, "  \n") + "\n")
		}
		notesFrom := func(from int) []string {
			var out []string
			for i := from; i < len(notes); i++ {
				out = append(out, fmt.Sprintf("[%d] %s.", i+1, notes[i]))
			}
			return out
		}
		row := func(p Paired, metric bool) {
			sig := "no"
			if p.Significant {
				sig = "**yes**"
			}
			fmt.Fprintf(&b, "| %s |", esc(p.Strategy))
			if metric {
				fmt.Fprintf(&b, " %s |", p.Metric)
			}
			fmt.Fprintf(&b, " %d | %s | %s | %s | %s%s |\n", p.N, format.Signed(p.Delta.V()), d.ciCell(p), format.P(p.PValue.V()), sig, noteMark(p, &notes))
		}
		if len(primaryRows) > 0 {
			fmt.Fprintf(&b, "On the primary measure, %s (%s):\n\n| strategy | n | Δ mean | 95%% CI of Δ | p (Holm) | significant |\n|---|---:|---:|---:|---:|---|\n", d.Primary, d.label(d.Primary))
			for _, p := range primaryRows {
				row(p, false)
			}
			b.WriteString("\n")
		}
		lines(append(append([]string{fmt.Sprintf("Tests: %s (the unadjusted p-values are in the JSON report).", d.testMethods())}, notesFrom(0)...), d.IdenticalLines(esc)...))
		if len(otherRows) > 0 {
			collapse := len(primaryRows) > 0
			if collapse {
				fmt.Fprintf(&b, "\n<details><summary>The other measures (secondary tests): %d paired comparisons</summary>\n", len(otherRows))
			}
			b.WriteString("\n| strategy | metric | n | Δ mean | 95% CI of Δ | p (Holm) | significant |\n|---|---|---:|---:|---:|---:|---|\n")
			from := len(notes)
			for _, p := range otherRows {
				row(p, true)
			}
			if len(notes) > from {
				b.WriteString("\n")
				lines(notesFrom(from))
			}
			if collapse {
				b.WriteString("\n</details>\n")
			}
		}
	}

	d.humanMarkdown(&b)
	if d.ReadBack {
		fmt.Fprintf(&b, "\n### Diagnosis\n\nNot shown: %s.\n", NotCarriedLine)
	}
	if fs := d.diagnosis(); len(fs) > 0 {
		b.WriteString("\n### Diagnosis\n\n")
		for _, f := range fs {
			fmt.Fprintf(&b, "- %s\n", esc(d.finding(f, identity)))
		}
		if l := d.DiagnosisUnreliableLine(); l != "" {
			fmt.Fprintf(&b, "\n%s\n", l)
		}
	}

	// No chart in the comment: GitHub's Mermaid xychart can show neither an
	// interval nor a legend, so its bars and lines could not answer a question
	// at a glance (issue 13). The HTML dashboard (--html) draws them, with
	// intervals, sorted bars, fitted axes and a legend.
	b.WriteString("\nCharts (DCG per strategy with its interval, relevance by rank): `compare --html FILE` draws the dashboard.\n\n")
	strategies := d.strategies()
	heads := append(d.distHeads(), "of which unjudged")
	if h := d.distNHead(); h != "" {
		heads = append(heads, h)
	}
	fmt.Fprintf(&b, "### Relevance of the top-%d documents\n\n| strategy | %s | failed queries | %s |\n|---|%s---:|---:|\n",
		d.K, strings.Join(heads, " | "), d.JudgedLabel(), strings.Repeat("---:|", len(heads)))
	for _, s := range strategies {
		fmt.Fprintf(&b, "| %s | %s | %d | %s |\n", esc(s.Name), strings.Join(d.distCells(s), " | "), len(s.FailedQueries), d.JudgedCell(s))
	}
	b.WriteString("\nUnjudged documents count as relevance 0. A failed query has a top-1 result of relevance 0 (or no result). " + esc(d.JudgedNote()) + "\n")
	fmt.Fprintf(&b, "\n| strategy | %s |\n|---|%s\n", strings.Join(bucketHeads, " | "), strings.Repeat("---:|", len(bucketHeads)))
	for _, s := range strategies {
		fmt.Fprintf(&b, "| %s | %s |\n", esc(s.Name), strings.Join(d.bucketCells(s), " | "))
	}
	fmt.Fprintf(&b, "\n%s.\n", d.bucketsNote())

	list := func(ids []string) string {
		if len(ids) == 0 {
			return "none"
		}
		out := make([]string, 0, min(len(ids), listMax))
		for _, id := range ids[:min(len(ids), listMax)] {
			out = append(out, esc(id))
		}
		s := strings.Join(out, ", ")
		if len(ids) > listMax {
			s += fmt.Sprintf(" … and %d more (all in the JSON report)", len(ids)-listMax)
		}
		return s
	}
	// The best and worst with their texts (compare --queries), one a line.
	ranked := func(ids []string) string {
		if d.QueryTexts == nil || len(ids) == 0 {
			return " " + list(ids)
		}
		var l strings.Builder
		for _, id := range ids {
			l.WriteString("\n  - " + esc(id))
			if t, ok := d.QueryTexts[id]; ok {
				short, _ := format.Shorten(t, QueryCell)
				l.WriteString(": " + esc(short))
			}
		}
		return l.String()
	}
	b.WriteString("\n<details><summary>Failed, best and worst queries</summary>\n\n")
	for _, s := range strategies {
		fmt.Fprintf(&b, "**%s**\n\n- failed (%d): %s\n- best by %s:%s\n- worst by %s:%s\n\n", esc(s.Name), len(s.FailedQueries), list(s.FailedQueries), primary, ranked(s.BestQueries), primary, ranked(s.WorstQueries))
	}
	b.WriteString("</details>\n\n")
	fmt.Fprintf(&b, "<sub>%s. Graded measures average over the queries with a judged document of positive gain, binary ones over those with a document at the relevant level; queries missing from a run score 0.</sub>\n", esc(d.method()))
	_, err := io.WriteString(w, b.String())
	return err
}
