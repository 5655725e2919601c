package report

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

// cmpLabels are the short column labels of the graded metrics (GradedKeys order).
var cmpLabels = [metrics.NumGraded]string{"dcg", "nDCG", "P", "R", "MAP", "MRR", "hit", "rel"}

func cmpLabel(m, k int) string { return cmpLabels[m] + "@" + strconv.Itoa(k) }

func cmpNum(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "n/a"
	}
	return strconv.FormatFloat(f, 'f', 3, 64)
}

func cmpSigned(f float64) string {
	if math.IsNaN(f) {
		return "n/a"
	}
	s := strconv.FormatFloat(f, 'f', 3, 64)
	if s == "-0.000" {
		s = "0.000"
	}
	return s
}

func cmpInterval(ci [2]float64) string {
	if math.IsNaN(ci[0]) || math.IsNaN(ci[1]) {
		return "n/a"
	}
	return "[" + cmpNum(ci[0]) + ", " + cmpNum(ci[1]) + "]"
}

// cmpMethod describes how the intervals and p-values were computed.
func cmpMethod(r *compare.Result) string {
	var ci string
	if r.Exact {
		ci = fmt.Sprintf("95%% CIs: percentile bootstrap, %d resamples, seed %d; p: paired sign-flip randomization test, two-sided, %d resamples", r.Resamples, r.Seed, r.Resamples)
	} else {
		ci = fmt.Sprintf("95%% CIs and p: large-sample approximations of the bootstrap (Cornish-Fisher) and of the sign-flip test (normal), because %d queries x %d resamples exceeds %d", r.N(), r.Resamples, metrics.ExactResamplingBudget)
	}
	return ci + fmt.Sprintf("; p-values Holm-adjusted over the %d paired comparisons; significant = adjusted p < %.2f", len(r.Paired), compare.Alpha)
}

func cmpGain(r *compare.Result) string {
	if r.Gain == metrics.GainLinear {
		return "linear (rel)"
	}
	return "exp (2^rel - 1)"
}

// cmpRecommendation is the recommendation sentence.
func cmpRecommendation(r *compare.Result, name func(string) string) string {
	if len(r.Strategies) == 1 {
		return "Only one strategy: " + name(r.Recommended) + "."
	}
	l := r.Leader
	if r.Recommended == compare.NoClearWinner {
		return fmt.Sprintf("No clear winner: %s has the best mean dcg@%d, but %s is not significantly worse (delta %s, adjusted p = %s).",
			name(l.Strategy), r.K, name(l.Baseline), cmpSigned(l.Delta), compare.FormatP(l.PHolm))
	}
	return fmt.Sprintf("Recommended: %s, best mean dcg@%d, significantly above the runner-up %s (delta %s, 95%% CI %s, adjusted p = %s).",
		name(r.Recommended), r.K, name(l.Baseline), cmpSigned(l.Delta), cmpInterval(l.CI), compare.FormatP(l.PHolm))
}

type textTable struct {
	rows [][]string
}

func (t *textTable) add(cells ...string) { t.rows = append(t.rows, cells) }

func (t *textTable) write(w io.Writer) error {
	var widths []int
	for _, r := range t.rows {
		for i, c := range r {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], len([]rune(c)))
		}
	}
	var b strings.Builder
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
	_, err := io.WriteString(w, b.String())
	return err
}

// CompareText writes the terminal report of `compare`.
func CompareText(w io.Writer, r *compare.Result) error {
	var b strings.Builder
	name := func(s string) string { return sanitizeText(s) }
	fmt.Fprintf(&b, "retrieval-gate compare: k=%d, gain %s, relevant = rel >= %d, baseline %s\n",
		r.K, cmpGain(r), r.RelevantLevel, name(r.Baseline))
	fmt.Fprintf(&b, "queries: %d judged, %d with a relevant document (evaluated), %d excluded from every mean\n\n",
		r.Judged, r.N(), r.NotEvaluated)
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	b.Reset()
	t := &textTable{}
	head := []string{"strategy", "n", "missing"}
	for m := range metrics.NumGraded {
		head = append(head, cmpLabel(m, r.K))
	}
	t.add(head...)
	for i := range r.Strategies {
		s := &r.Strategies[i]
		row := []string{name(s.Name), strconv.Itoa(s.N), strconv.Itoa(s.Missing)}
		for m := range metrics.NumGraded {
			row = append(row, cmpNum(s.Means[m]))
		}
		t.add(row...)
		row = []string{"", "", ""}
		for m := range metrics.NumGraded {
			row = append(row, "±"+cmpNum((s.CI[m][1]-s.CI[m][0])/2))
		}
		t.add(row...)
	}
	if err := t.write(w); err != nil {
		return err
	}
	ciNote := "± is half the width of the 95% CI"
	if !r.Exact {
		ciNote += "; large input: approximated, not resampled (see the last line)"
	}
	fmt.Fprintf(&b, "  (%s)\n\nrelevance of the top-%d documents (0 includes unjudged):\n", ciNote, r.K)
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	b.Reset()
	t = &textTable{}
	t.add("strategy", "rel 3", "rel 2", "rel 1", "rel 0", "unjudged", "failed queries")
	for i := range r.Strategies {
		s := &r.Strategies[i]
		d := s.Distribution()
		t.add(name(s.Name), cmpPct(d[0]), cmpPct(d[1]), cmpPct(d[2]), cmpPct(d[3]), cmpPct(d[4]), strconv.Itoa(len(s.Failed)))
	}
	if err := t.write(w); err != nil {
		return err
	}
	if len(r.Paired) > 0 {
		fmt.Fprintf(&b, "\npaired comparisons against %s:\n", name(r.Baseline))
		io.WriteString(w, b.String())
		b.Reset()
		t = &textTable{}
		t.add("strategy", "metric", "delta", "95% CI", "p (Holm)", "significant")
		for _, p := range r.Paired {
			sig := "no"
			if p.Significant {
				sig = "yes"
			}
			t.add(name(p.Strategy), p.Metric, cmpSigned(p.Delta), cmpInterval(p.CI), compare.FormatP(p.PHolm), sig)
		}
		if err := t.write(w); err != nil {
			return err
		}
	}
	fmt.Fprintf(&b, "\n%s\n", cmpRecommendation(r, name))
	for _, d := range r.Diagnosis {
		fmt.Fprintf(&b, "- %s\n", sanitizeText(d))
	}
	fmt.Fprintf(&b, "\n%s.\n", cmpMethod(r))
	for i := range r.Strategies {
		if s := &r.Strategies[i]; s.NotJudged > 0 {
			fmt.Fprintf(&b, "note: %d of the %d queries of %s are not in the qrels and were ignored.\n", s.NotJudged, s.RunQueries, name(s.Name))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func cmpPct(f float64) string { return strconv.FormatFloat(100*f, 'f', 1, 64) + "%" }
