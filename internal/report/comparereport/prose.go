package comparereport

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/report/gatetable"
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
	ci := fmt.Sprintf("95%% CIs: Wilson (continuity-corrected) for 0/1 series, else hall-t (t united with Hall's skewness-corrected t) below 30 queries, BCa bootstrap (%d resamples, seed %d) from 30, widened to the measure's range when the values do not vary", st.Resamples, st.Seed)
	p := fmt.Sprintf("p: exact McNemar for 0/1 measures, exact sign-flip where the paired differences share a lattice, else Monte Carlo sign-flip (%d resamples)", st.Resamples)
	if !st.Resampled {
		ci = fmt.Sprintf("95%% CIs: Wilson (continuity-corrected) for 0/1 series, else Cornish-Fisher approximation of the bootstrap, because %d queries x %d resamples exceeds %d", d.Queries.WithRelevant, st.Resamples, st.ResamplingBudget)
	}
	if slices.Contains(st.PValueMethods, metrics.PMethodSaddlepoint) {
		p = fmt.Sprintf("p: exact McNemar for 0/1 measures, exact sign-flip where the paired differences share a lattice, else from %d queries (or beyond the resampling budget) the saddlepoint approximation of the sign-flip distribution (relative error O(1/n), no resampling)", metrics.SaddlepointMinQueries)
	}
	ci += fmt.Sprintf("; paired differences: for 0/1 measures inverted from the exact McNemar test (it excludes 0 exactly when the test rejects), the rule of three when every difference is equal, else hall-t united with the betting interval of a bounded mean (coverage at least 95%% whatever the distribution) below %d queries or %d non-zero differences, hall-t from there", metrics.DifferenceReliableMinN, metrics.DifferenceReliableMinNonzero)
	return ci + "; " + p + fmt.Sprintf(", none where every difference is 0 (p = 1); Holm within each measure across the strategies; significant = adjusted p < %s", format.Fixed(st.Alpha.V(), 2))
}

// primaryLine is the one line on the pre-declared primary measure.
func (d *Document) primaryLine() string {
	return fmt.Sprintf("The recommendation rests on the primary measure %s alone (--primary), its p-values Holm-adjusted across the strategies only; the other measures' tests are secondary, each adjusted across the strategies likewise.", d.label(d.Primary))
}

// scaleLine states the relevance scale found and the level used.
func (d *Document) scaleLine() string {
	s := fmt.Sprintf("relevance scale found in the qrels: %d..%d", d.RelevanceScale[0], d.RelevanceScale[1])
	if d.RelevantLevelFallback {
		s += "; binary qrels: relevant = rel >= 1 (instead of the default 2)"
	}
	return s
}

// NoteText explains in words why a paired test and its interval disagree
// (compare.Note*: the test decides); empty for no note.
func NoteText(note string) string {
	switch note {
	case compare.NoteSmallN:
		return "the interval excludes 0 or not, but its method covers less than 95% at this n in simulation: the test decides"
	case compare.NoteHolm:
		return "the interval excludes 0 and the unadjusted p is below alpha, but not after Holm's adjustment across strategies"
	case compare.NoteMethods:
		return "the interval and the test are different procedures and differ near the threshold: the test decides"
	case compare.NoteNoVariation:
		return "the labelled queries' differences do not vary: the interval is the rule of three (how far the mean could still be after that many labelled queries that all agree), the test the exact sign-flip test of their human differences: the test decides"
	}
	return ""
}

// UnreliableMark follows an interval whose method's simulated coverage at its n is below 0.95.
const UnreliableMark = format.UnreliableMark

// UnreliableLine is the footnote of UnreliableMark in every report (the
// HTML dashboard's too).
const UnreliableLine = format.UnreliableNote + " (below 20 queries, paired differences below 50; docs/statistics.md)"

// humanUnreliableLine is the footnote of UnreliableMark on a human-corrected
// (PPI++) interval: exactly what metrics.PPI.Interval marks, an interval over
// fewer than metrics.PPIMinN labelled queries or, when the queries come in
// families, fewer than metrics.PPIMinClusters labelled clusters (never the
// rule-of-three interval of labelled values that do not vary). That is a
// floor on the labels the standard error is estimated from, not a coverage
// below 95% at this n: the simulation of docs/statistics.md covered 0.968 at
// 10 labelled queries, so format.UnreliableNote's words would misstate it.
func (d *Document) humanUnreliableLine() string {
	floor := fmt.Sprintf("fewer than %d human-labelled queries", metrics.PPIMinN)
	if d.clustered() {
		floor += fmt.Sprintf(" or fewer than %d labelled clusters", metrics.PPIMinClusters)
	}
	return UnreliableMark + " unreliable: this PPI++ interval rests on " + floor +
		", too few to estimate its standard error well (a floor on the labels, not a simulated coverage; a rule-of-three interval, used where the labelled values do not vary, is not marked; docs/statistics.md)"
}

func (d *Document) gain() string {
	if d.Gain == metrics.GainLinear.String() {
		return "linear (rel)"
	}
	return "exp (2^rel - 1)"
}

// DecisionUnreliableLine is the footnote of the UnreliableMark that the
// recommendation's interval or a scenario's carries ("" when none does):
// the human-corrected tables' when the decision uses the corrected figures.
func (d *Document) DecisionUnreliableLine() string {
	marked := d.RecommendationTest != nil && d.RecommendationTest.Unreliable
	if d.ScenariosUnreliableLine() != "" {
		marked = true
	}
	return d.decisionFootnote(marked)
}

// ScenariosUnreliableLine is the footnote of the UnreliableMark that a
// scenario's interval carries ("" when none does).
func (d *Document) ScenariosUnreliableLine() string {
	marked := false
	for _, s := range d.Scenarios {
		marked = marked || (s.Test != nil && s.Test.Unreliable)
	}
	return d.decisionFootnote(marked)
}

// decisionFootnote is the footnote of a marked interval of the decision or
// its scenarios (their tests are the corrected ones with human labels), ""
// when none is marked.
func (d *Document) decisionFootnote(marked bool) string {
	switch {
	case !marked:
		return ""
	case d.Human != nil:
		return d.humanUnreliableLine()
	}
	return UnreliableLine
}

// GatesUnreliableLine is the footnote of the UnreliableMark a gate's reason
// carries: with human labels the gates decide on the corrected figures, so
// their intervals are PPI++ ones (humanUnreliableLine), else
// gatetable.UnreliableNote as in every report's gate table.
func (d *Document) GatesUnreliableLine() string {
	if d.Human != nil {
		return d.humanUnreliableLine()
	}
	return gatetable.UnreliableNote
}

// DiagnosisUnreliableLine is the footnote of the UnreliableMark that a
// diagnosis finding's interval carries ("" when none does; the findings are
// the judge's figures).
func (d *Document) DiagnosisUnreliableLine() string {
	for _, f := range d.diagnosis() {
		if f.Test.CI.Unreliable {
			return UnreliableLine
		}
	}
	return ""
}

// recommendation is the recommendation sentence.
func (d *Document) recommendation(name func(string) string) string {
	l := d.RecommendationTest
	if l == nil {
		return "Only one strategy: " + name(d.Recommended) + "."
	}
	if d.Recommended == compare.NoClearWinner && l.Identical {
		return fmt.Sprintf("No clear winner: %s and %s return identical rankings on every query (the top %d of all %d): no difference to test.",
			name(l.Best), name(l.RunnerUp), d.K, l.N)
	}
	if d.Recommended == compare.NoClearWinner {
		s := fmt.Sprintf("No clear winner: %s has the best mean %s, but %s is not significantly worse (delta %s, 95%% CI %s%s, adjusted p = %s, n = %d).",
			name(l.Best), d.label(l.Metric), name(l.RunnerUp), format.Signed(l.Delta.V()), format.SignedInterval([2]float64{l.CI95[0].V(), l.CI95[1].V()}), format.MarkIf(l.Unreliable), format.P(l.PValue.V()), l.N)
		if l.Note != "" {
			s += " Note: " + NoteText(l.Note) + "."
		}
		return s
	}
	s := fmt.Sprintf("Recommended: %s, best mean %s, significantly above the runner-up %s (delta %s, 95%% CI %s%s, adjusted p = %s, n = %d).",
		name(d.Recommended), d.label(l.Metric), name(l.RunnerUp), format.Signed(l.Delta.V()), format.SignedInterval([2]float64{l.CI95[0].V(), l.CI95[1].V()}), format.MarkIf(l.Unreliable), format.P(l.PValue.V()), l.N)
	if l.Note != "" {
		s += " Note: " + NoteText(l.Note) + "."
	}
	return s
}

// finding puts one diagnosis finding into words.
func (d *Document) finding(f compare.Finding, name func(string) string) string {
	a, b := name(f.A), name(f.B)
	p := f.Test
	describe := fmt.Sprintf("Δ %s = %s, 95%% CI %s%s, Holm p = %s, n = %d", d.label(d.Primary), format.Signed(p.Delta), format.SignedInterval(p.CI.CI()), format.MarkIf(p.CI.Unreliable), format.P(p.PHolm), p.N)
	if p.Note != "" {
		describe += "; " + NoteText(p.Note)
	}
	switch f.Kind {
	case compare.HybridVsDense:
		if f.Better() {
			return fmt.Sprintf("%s is clearly above %s (%s): judging by the names (hybrid vs. dense/ANN), adding keyword matching helps on these queries.", a, b, describe)
		}
		if f.Worse() {
			return fmt.Sprintf("%s is significantly below %s (%s): judging by the names, adding keyword matching to dense retrieval hurts on these queries (check the hybrid's fusion weights).", a, b, describe)
		}
		return fmt.Sprintf("%s is not significantly above %s (%s): judging by the names, adding keyword matching to dense retrieval shows no clear benefit on these queries.", a, b, describe)
	case compare.HybridVsLexical:
		if f.Better() {
			return fmt.Sprintf("%s is clearly above %s (%s): judging by the names (hybrid vs. full text), adding vector search helps on these queries.", a, b, describe)
		}
		if f.Worse() {
			return fmt.Sprintf("%s is significantly below %s (%s): judging by the names, adding vector search to full text hurts on these queries (check the hybrid's fusion weights).", a, b, describe)
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
	case compare.MissingQueries:
		return fmt.Sprintf("%s has no results for %d of the %d evaluated queries; they score 0.", a, f.Count, f.N)
	}
	return ""
}

// wholePct prints a fraction as a whole percentage ("67%"), as the diagnosis words it.
func wholePct(f float64) string { return format.Fixed(100*f, 0) + "%" }

// measureN is the n of a measure: one number when every strategy has the same
// (every measure but mean relevance, whose n is the queries each run's top k
// has a judged result for), else the range "lo–hi"; the missing glyph when none.
func (d *Document) measureN(key string) string {
	lo, hi := int64(-1), int64(-1)
	for _, s := range d.strategies() {
		if m, ok := s.Metrics[key]; ok {
			if lo < 0 || m.N < lo {
				lo = m.N
			}
			hi = max(hi, m.N)
		}
	}
	switch {
	case lo < 0:
		return format.Missing
	case lo == hi:
		return strconv.FormatInt(lo, 10)
	}
	return strconv.FormatInt(lo, 10) + "–" + strconv.FormatInt(hi, 10)
}

// metricCell names a paired test's measure, the primary one marked.
func (d *Document) metricCell(key string) string {
	if key == d.Primary {
		return key + " (primary)"
	}
	return key
}

// labelCell is metricCell with the measure's label at the run's k ("DCG@10
// (primary)"), as the dashboard names measures.
func (d *Document) labelCell(key string) string {
	if key == d.Primary {
		return d.label(key) + " (primary)"
	}
	return d.label(key)
}

// ciCell is a paired test's signed interval, marked when unreliable.
func (d *Document) ciCell(p Paired) string {
	s := format.SignedInterval([2]float64{p.CI95[0].V(), p.CI95[1].V()})
	if p.Unreliable {
		s += UnreliableMark
	}
	return s
}

// noteMark is " [i]" referring to the i-th note (appended to notes) when the
// interval and the test disagree, else "".
func noteMark(p Paired, notes *[]string) string {
	if p.Note == "" {
		return ""
	}
	*notes = append(*notes, NoteText(p.Note))
	return fmt.Sprintf(" [%d]", len(*notes))
}

// IdenticalLines says, for each strategy that returns the same rankings as the
// baseline on every query, that there is nothing to test.
func (d *Document) IdenticalLines(name func(string) string) []string {
	var out []string
	for _, p := range d.Paired {
		if p.Identical && p.Metric == d.Primary {
			out = append(out, fmt.Sprintf("%s and %s return identical rankings on every query (n = %d): every difference is 0 and there is nothing to test (p = 1, no-difference); each interval is the rule of three, the largest mean difference %d identical queries still leave room for.",
				name(p.Strategy), name(p.Baseline), p.N, p.N))
		}
	}
	return out
}

// testMethods lists each measure's test method, in report order ("dcg_at_k
// exact-sign-flip, hit_at_k exact-mcnemar, …"); a measure whose tests differ in
// method lists each.
func (d *Document) testMethods() string {
	var parts []string
	for _, m := range metrics.QueryMeasures {
		var ms []string
		for _, p := range d.Paired {
			if p.Metric == m.Key && !slices.Contains(ms, p.PValueMethod) {
				ms = append(ms, p.PValueMethod)
			}
		}
		if len(ms) > 0 {
			parts = append(parts, m.Key+" "+strings.Join(ms, "/"))
		}
	}
	return strings.Join(parts, ", ")
}

// ClustersLine says that the queries come in families and the statistics are
// computed over them (compare --clusters); "" without clusters.
func (d *Document) ClustersLine(name func(string) string) string {
	c := d.Statistics.Clusters
	if c == nil {
		return ""
	}
	return fmt.Sprintf("Queries in families: %d queries in %s (%s; %d of the queries listed, each other one a cluster of its own): every interval and paired test is computed over the clusters (cluster-t intervals, a mean's widened to its interval over the queries where that reaches further; sign-flip tests of the clusters' sums).",
		c.Queries, format.Count(c.Clusters, "cluster", "clusters"), name(c.File), c.Listed)
}
