package report

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode"

	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

// cmpListMax caps the query ids listed per strategy in the Markdown report.
const cmpListMax = 50

// mermaidLabel makes a user-controlled name safe inside a quoted Mermaid string
// in a fenced block: letters, digits, spaces and -_.+:/()= are kept, anything
// else (quotes, backticks, brackets, control characters) becomes '_'.
func mermaidLabel(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune(" -_.+:/()=", r):
			return r
		}
		return '_'
	}, strings.ToValidUTF8(s, "_"))
}

func mermaidNum(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "0"
	}
	return strconv.FormatFloat(f, 'f', 4, 64)
}

// CompareMarkdown writes the Markdown report of `compare` (for a file, a job
// summary or a comment): tables, Mermaid xychart-beta charts, recommendation,
// diagnosis, and the failed, best and worst queries in collapsed sections. Every
// user-controlled name is escaped.
func CompareMarkdown(w io.Writer, r *compare.Result) error {
	var b strings.Builder
	esc := EscapeMarkdown
	fmt.Fprintf(&b, "## Retrieval strategy comparison\n\n")
	fmt.Fprintf(&b, "k = %d · gain %s · relevant = rel ≥ %d · baseline **%s** · %d evaluated queries (%d judged; %d without a relevant document are excluded from every mean)\n\n",
		r.K, cmpGain(r), r.RelevantLevel, esc(r.Baseline), r.N(), r.Judged, r.NotEvaluated)
	fmt.Fprintf(&b, "**%s**\n\n", cmpRecommendation(r, func(s string) string { return esc(s) }))

	fmt.Fprintf(&b, "### Means with 95%% confidence intervals\n\n")
	if !r.Exact {
		fmt.Fprintf(&b, "> **Large input:** the intervals and p-values below are large-sample approximations of the bootstrap and of the randomization test, not resampled (%d queries × %d resamples exceeds %d); see the note at the end.\n\n",
			r.N(), r.Resamples, metrics.ExactResamplingBudget)
	}
	fmt.Fprintf(&b, "| strategy | n | missing from run |")
	for m := range metrics.NumGraded {
		fmt.Fprintf(&b, " %s |", cmpLabel(m, r.K))
	}
	b.WriteString("\n|---|---:|---:|" + strings.Repeat("---:|", metrics.NumGraded) + "\n")
	for i := range r.Strategies {
		s := &r.Strategies[i]
		fmt.Fprintf(&b, "| %s | %d | %d |", esc(s.Name), s.N, s.Missing)
		for m := range metrics.NumGraded {
			fmt.Fprintf(&b, " %s %s |", cmpNum(s.Means[m]), cmpInterval(s.CI[m]))
		}
		b.WriteString("\n")
	}

	if len(r.Paired) > 0 {
		fmt.Fprintf(&b, "\n### Paired comparisons against %s\n\n| strategy | metric | Δ mean | 95%% CI of Δ | p | p (Holm) | significant |\n|---|---|---:|---:|---:|---:|---|\n", esc(r.Baseline))
		for _, p := range r.Paired {
			sig := "no"
			if p.Significant {
				sig = "**yes**"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", esc(p.Strategy), p.Metric, cmpSigned(p.Delta), cmpInterval(p.CI), compare.FormatP(p.P), compare.FormatP(p.PHolm), sig)
		}
	}

	if len(r.Diagnosis) > 0 {
		b.WriteString("\n### Diagnosis\n\n")
		for _, d := range r.Diagnosis {
			fmt.Fprintf(&b, "- %s\n", esc(d))
		}
	}

	// Charts.
	maxDCG := 0.0
	labels := make([]string, len(r.Strategies))
	for i := range r.Strategies {
		maxDCG = max(maxDCG, r.Strategies[i].CI[metrics.GDCG][1], r.Strategies[i].Means[metrics.GDCG])
		labels[i] = strconv.Quote(mermaidLabel(r.Strategies[i].Name))
	}
	if math.IsNaN(maxDCG) || maxDCG <= 0 {
		maxDCG = 1
	}
	fmt.Fprintf(&b, "\n### Charts\n\n```mermaid\nxychart-beta\n  title \"Mean dcg@%d by strategy\"\n  x-axis [%s]\n  y-axis \"dcg@%d\" 0 --> %s\n  bar [", r.K, strings.Join(labels, ", "), r.K, mermaidNum(math.Ceil(maxDCG*10)/10))
	for i := range r.Strategies {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(mermaidNum(r.Strategies[i].Means[metrics.GDCG]))
	}
	b.WriteString("]\n```\n\n")
	pos := make([]string, r.K)
	for i := range pos {
		pos[i] = strconv.Itoa(i + 1)
	}
	fmt.Fprintf(&b, "```mermaid\nxychart-beta\n  title \"Mean relevance by rank\"\n  x-axis \"rank\" [%s]\n  y-axis \"mean relevance\" 0 --> %d\n", strings.Join(pos, ", "), 3)
	for i := range r.Strategies {
		b.WriteString("  line [")
		for j, v := range r.Strategies[i].ByPosition {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString(mermaidNum(v))
		}
		b.WriteString("]\n")
	}
	b.WriteString("```\n\n")
	if len(r.Strategies) > 1 {
		b.WriteString("Lines, in drawing order: ")
		for i := range r.Strategies {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%d. %s", i+1, esc(r.Strategies[i].Name))
		}
		b.WriteString(".\n\n")
	}

	fmt.Fprintf(&b, "### Relevance of the top-%d documents\n\n| strategy | rel 3 | rel 2 | rel 1 | rel 0 | of which unjudged | failed queries |\n|---|---:|---:|---:|---:|---:|---:|\n", r.K)
	for i := range r.Strategies {
		s := &r.Strategies[i]
		d := s.Distribution()
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %d |\n", esc(s.Name), cmpPct(d[0]), cmpPct(d[1]), cmpPct(d[2]), cmpPct(d[3]), cmpPct(d[4]), len(s.Failed))
	}
	b.WriteString("\nUnjudged documents count as relevance 0. A failed query has a top-1 result of relevance 0 (or no result).\n")

	list := func(ids []string) string {
		if len(ids) == 0 {
			return "none"
		}
		out := make([]string, 0, min(len(ids), cmpListMax))
		for _, id := range ids[:min(len(ids), cmpListMax)] {
			out = append(out, esc(id))
		}
		s := strings.Join(out, ", ")
		if len(ids) > cmpListMax {
			s += fmt.Sprintf(" … and %d more (all in the JSON report)", len(ids)-cmpListMax)
		}
		return s
	}
	b.WriteString("\n<details><summary>Failed, best and worst queries</summary>\n\n")
	for i := range r.Strategies {
		s := &r.Strategies[i]
		fmt.Fprintf(&b, "**%s**\n\n- failed (%d): %s\n- best by dcg@%d: %s\n- worst by dcg@%d: %s\n\n", esc(s.Name), len(s.Failed), list(s.Failed), r.K, list(s.Best), r.K, list(s.Worst))
	}
	b.WriteString("</details>\n\n")
	fmt.Fprintf(&b, "<sub>%s. Means exclude queries without a relevant document; queries missing from a run score 0.</sub>\n", esc(cmpMethod(r)))
	_, err := io.WriteString(w, b.String())
	return err
}
