package comparereport

import (
	"fmt"

	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/report/format"
)

// The sentences of the compare reports, shared by text and Markdown; name
// renders a user-controlled name for the format (sanitised or escaped).

// label is a measure's report label at the document's cutoff.
func (d *Document) label(key string) string {
	if i, ok := metrics.Lookup(key); ok {
		return i.LabelAt(d.K)
	}
	return key
}

// method describes how the intervals and p-values were computed.
func (d *Document) method() string {
	st := d.Statistics
	var ci string
	if st.Resampled {
		ci = fmt.Sprintf("95%% CIs: percentile bootstrap, %d resamples, seed %d; p: paired sign-flip randomization test, two-sided, %d resamples", st.Resamples, st.Seed, st.Resamples)
	} else {
		ci = fmt.Sprintf("95%% CIs and p: large-sample approximations of the bootstrap (Cornish-Fisher) and of the sign-flip test (normal), because %d queries x %d resamples exceeds %d", d.Queries.WithRelevant, st.Resamples, st.ResamplingBudget)
	}
	return ci + fmt.Sprintf("; p-values Holm-adjusted over the %d paired comparisons; significant = adjusted p < %.2f", len(d.Paired), st.Alpha.V())
}

func (d *Document) gain() string {
	if d.Gain == metrics.GainLinear.String() {
		return "linear (rel)"
	}
	return "exp (2^rel - 1)"
}

// recommendation is the recommendation sentence.
func (d *Document) recommendation(name func(string) string) string {
	l := d.RecommendationTest
	if l == nil {
		return "Only one strategy: " + name(d.Recommended) + "."
	}
	if d.Recommended == compare.NoClearWinner {
		return fmt.Sprintf("No clear winner: %s has the best mean %s, but %s is not significantly worse (delta %s, adjusted p = %s).",
			name(l.Best), d.label(l.Metric), name(l.RunnerUp), format.Signed(l.Delta.V()), format.P(l.PValue.V()))
	}
	return fmt.Sprintf("Recommended: %s, best mean %s, significantly above the runner-up %s (delta %s, 95%% CI %s, adjusted p = %s).",
		name(d.Recommended), d.label(l.Metric), name(l.RunnerUp), format.Signed(l.Delta.V()), format.SignedInterval([2]float64{l.CI95[0].V(), l.CI95[1].V()}), format.P(l.PValue.V()))
}

// finding puts one diagnosis finding into words.
func (d *Document) finding(f compare.Finding, name func(string) string) string {
	a, b := name(f.A), name(f.B)
	p := f.Test
	describe := fmt.Sprintf("Δ %s = %s, 95%% CI %s, Holm p = %s", d.label(compare.Primary), format.Signed(p.Delta), format.SignedInterval(p.CI), format.P(p.PHolm))
	switch f.Kind {
	case compare.HybridVsDense:
		if f.Better() {
			return fmt.Sprintf("%s is clearly above %s (%s): judging by the names (hybrid vs. dense/ANN), adding keyword matching helps on these queries.", a, b, describe)
		}
		return fmt.Sprintf("%s is not significantly above %s (%s): judging by the names, adding keyword matching to dense retrieval shows no clear benefit on these queries.", a, b, describe)
	case compare.HybridVsLexical:
		if f.Better() {
			return fmt.Sprintf("%s is clearly above %s (%s): judging by the names (hybrid vs. full text), adding vector search helps on these queries.", a, b, describe)
		}
		return fmt.Sprintf("%s is not significantly above %s (%s): judging by the names, adding vector search to full text shows no clear benefit on these queries.", a, b, describe)
	case compare.Reranker:
		switch {
		case f.Better():
			return fmt.Sprintf("The reranker helps significantly: %s beats %s (%s); it is likely worth its latency.", a, b, describe)
		case f.Worse():
			return fmt.Sprintf("The reranker hurts: %s is significantly below %s (%s).", a, b, describe)
		}
		return fmt.Sprintf("The reranker shows no significant gain: %s vs %s (%s); its latency may not be worth it on these queries.", a, b, describe)
	case compare.WideIntervals:
		msg := fmt.Sprintf("The intervals are wide (%d evaluated queries", f.N)
		if f.A != "" {
			msg += fmt.Sprintf("; %s of %s is ±%s of its mean", d.label(compare.Primary), a, wholePct(f.Width))
		}
		return msg + "): too few queries to separate close strategies; about four times as many judged queries halve the width."
	case compare.Unjudged:
		return fmt.Sprintf("%s of the top-%d documents of %s are unjudged and count as relevance 0: its scores are lower bounds; judge those documents for a fair comparison.", wholePct(f.Fraction), d.K, a)
	case compare.MissingQueries:
		return fmt.Sprintf("%s has no results for %d of the %d evaluated queries; they score 0.", a, f.Count, f.N)
	}
	return ""
}

// wholePct prints a fraction as a whole percentage ("67%"), as the diagnosis words it.
func wholePct(f float64) string { return fmt.Sprintf("%.0f%%", 100*f) }
