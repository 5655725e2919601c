package comparereport

import (
	"fmt"
	"math"
	"strconv"

	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

// The seed's scale of the compare figures (the largest DCG@k possible, the
// three relevance buckets) and the six common scenarios with their rules and
// suggested actions: the document's fields and their words.

// Buckets are a strategy's judged top-k documents in the seed's three
// relevance buckets: highly relevant (relevance 3 and above), relevant+ (≥ 2),
// not relevant (≤ 1, negatively judged included; unjudged documents are in no
// bucket), as fractions of the N judged documents.
type Buckets struct {
	HighlyRelevant format.Float `json:"highly_relevant"`
	N              int          `json:"n"`
	NotRelevant    format.Float `json:"not_relevant"`
	RelevantPlus   format.Float `json:"relevant_plus"`
}

func newBuckets(b metrics.Buckets) Buckets {
	return Buckets{N: b.N, HighlyRelevant: format.Float(b.HighlyRelevant), RelevantPlus: format.Float(b.RelevantPlus), NotRelevant: format.Float(b.NotRelevant)}
}

// Scenario is a common scenario whose rule the comparison meets (compare.Scenario):
// its code, the strategies, the test of a pair scenario and the numbers of the
// wide-intervals and all-low rules.
type Scenario struct {
	// Bearing is how the scenario bears on the decision (compare.Bearing;
	// empty in a document written before it).
	Bearing           string       `json:"bearing,omitempty"`
	Code              string       `json:"code"`
	Measure           string       `json:"measure,omitempty"`
	Queries           int          `json:"queries,omitempty"`
	QueriesForWidth   int          `json:"queries_for_width,omitempty"`
	QueriesToSeparate int          `json:"queries_to_separate,omitempty"`
	RelativeHalfWidth format.Float `json:"relative_half_width,omitempty"`
	Strategy          string       `json:"strategy,omitempty"`
	Test              *Paired      `json:"test,omitempty"`
	Threshold         format.Float `json:"threshold,omitempty"`
	Value             format.Float `json:"value,omitempty"`
	Versus            string       `json:"versus,omitempty"`
}

func newScenarios(ss []compare.Scenario) []Scenario {
	out := make([]Scenario, 0, len(ss))
	for _, s := range ss {
		x := Scenario{Code: string(s.Code), Bearing: string(s.Bearing), Strategy: s.A, Versus: s.B, Queries: s.N,
			RelativeHalfWidth: format.Float(s.Width), QueriesForWidth: s.QueriesForWidth, QueriesToSeparate: s.QueriesToSeparate,
			Measure: s.Measure, Threshold: format.Float(s.Threshold), Value: format.Float(s.Value)}
		if s.Test != nil {
			p := paired(s.Test)
			x.Test = &p
		}
		out = append(out, x)
	}
	return out
}

// maxDCGLevel is the relevance level of the maximum DCG (the highest level of
// the scale found, at least 1).
func (d *Document) maxDCGLevel() int { return max(d.RelevanceScale[1], 1) }

// measureHead is a measure's column heading; DCG@k's carries its maximum.
func (d *Document) measureHead(key string) string {
	if key == metrics.KeyDCG {
		return d.label(key) + " (of " + format.Num(d.MaxDCGAtK.V()) + ")"
	}
	return d.label(key)
}

// dcgScaleLine says what the maximum DCG@k is.
func (d *Document) dcgScaleLine() string {
	return fmt.Sprintf("%s is out of %s, the maximum possible: %d results of relevance %d with the %s gain", d.label(metrics.KeyDCG), format.Num(d.MaxDCGAtK.V()), d.K, d.maxDCGLevel(), d.gain())
}

// bucketHeads are the bucket columns' headings.
var bucketHeads = []string{"mean relevance (n queries)", "highly relevant (3)", "relevant+ (≥ 2)", "not relevant (≤ 1)", "n judged documents"}

// bucketCells are a strategy's mean relevance (with n queries) and its buckets.
func (d *Document) bucketCells(s *Strategy) []string {
	mean := format.Missing
	if m, ok := s.Metrics[metrics.KeyMeanRel]; ok {
		mean = format.Num(m.Mean.V()) + " ±" + format.Num(m.HalfWidth) + " (" + strconv.FormatInt(m.N, 10) + ")"
	}
	b := s.RelevanceBuckets
	return []string{mean, format.Pct(b.HighlyRelevant.V()), format.Pct(b.RelevantPlus.V()), format.Pct(b.NotRelevant.V()), strconv.Itoa(b.N)}
}

// BucketsNote explains the bucket table, for the HTML page.
func (d *Document) BucketsNote() string { return d.bucketsNote() + "." }

// bucketsNote explains the bucket table.
func (d *Document) bucketsNote() string {
	return fmt.Sprintf("Mean relevance: the average relevance (0–%d) of the judged results in the top %d, per query then over the n queries whose top %d has a judged result (not divided by k; unjudged results left out; ± half its 95%% interval); the buckets are shares of the n judged top-%d documents",
		max(d.RelevanceScale[1], 3), d.K, d.K, d.K)
}

// test describes a pair scenario's test.
func (d *Document) test(p *Paired) string {
	s := fmt.Sprintf("Δ %s = %s, 95%% CI %s%s, Holm p = %s, n = %d", d.label(p.Metric), format.Signed(p.Delta.V()),
		format.SignedInterval([2]float64{p.CI95[0].V(), p.CI95[1].V()}), format.MarkIf(p.Unreliable), format.P(p.PValue.V()), p.N)
	if p.Note != "" {
		s += "; " + NoteText(p.Note)
	}
	return s
}

// ScenarioText is one scenario in words: what was found, the suggested action
// and the rule that triggered it (names rendered by name).
// Bearing says how it bears on the decision; an outranked scenario's action is
// replaced by it (Action empty).
type ScenarioText struct{ Code, Found, Action, Bearing, Rule string }

// scenario puts one scenario into words, with its bearing on the decision.
func (d *Document) scenario(s Scenario, name func(string) string) ScenarioText {
	t := d.scenarioAlone(s, name)
	b, replaces := d.bearing(s, name)
	t.Bearing = b
	if replaces {
		t.Action = ""
	}
	if d.Decision != nil && s.Code == string(compare.LexicalBeatsDense) && compare.Bearing(s.Bearing) == compare.BearingSupports {
		// The full-text strategy is the decision's (or one of its
		// contenders): "(or hybrid)" would offer a strategy the decision did
		// not keep, which may be significantly below it.
		t.Action = lexicalAction
	}
	return t
}

// lexicalAction is the lexical-beats-dense action when its full-text strategy
// is among the decision's: no other strategy offered beside the decision.
const lexicalAction = "The embedding model may not capture your domain: fine-tune it, or use full text."

// scenarioAlone puts one scenario into words: its finding, action and rule.
func (d *Document) scenarioAlone(s Scenario, name func(string) string) ScenarioText {
	a, b := name(s.Strategy), name(s.Versus)
	primary := d.label(d.Primary)
	sig := fmt.Sprintf("significantly above (Holm-adjusted p < %s on %s, the primary measure, same reranking on both sides)", format.Full(d.Statistics.Alpha.V()), primary)
	switch s.Code {
	case string(compare.HybridBeatsDense):
		return ScenarioText{
			Found:  fmt.Sprintf("Hybrid significantly better than dense/ANN: %s beats %s (%s).", a, b, d.test(s.Test)),
			Action: "Use hybrid in production.",
			Rule:   "a hybrid strategy " + sig + " a dense/ANN one; kinds judged by the names",
		}
	case string(compare.DenseMatchesHybrid):
		found := fmt.Sprintf("Dense/ANN and hybrid are about equal: %s vs %s (%s).", a, b, d.test(s.Test))
		if d.hasScenario(compare.WideIntervalsScenario) {
			found += " The intervals are wide (below): not separated by these queries, which is not shown equal."
		}
		return ScenarioText{
			Found:  found,
			Action: "Either works; dense/ANN is simpler (one index, no fusion).",
			Rule:   fmt.Sprintf("the paired test of a hybrid strategy against a dense/ANN one on %s is not significant (Holm-adjusted p ≥ %s); kinds judged by the names", primary, format.Full(d.Statistics.Alpha.V())),
		}
	case string(compare.LexicalBeatsDense):
		return ScenarioText{
			Found:  fmt.Sprintf("Full text significantly better than dense/ANN: %s beats %s (%s).", a, b, d.test(s.Test)),
			Action: "The embedding model may not capture your domain: fine-tune it, or use full text (or hybrid).",
			Rule:   "a full-text (lexical) strategy " + sig + " a dense/ANN one; kinds judged by the names",
		}
	case string(compare.RerankerHelps):
		return ScenarioText{
			Found:  fmt.Sprintf("The reranker helps significantly: %s beats %s (%s).", a, b, d.test(s.Test)),
			Action: "Enable the reranker if the latency budget allows.",
			Rule:   "a strategy with the reranker " + sig + " the same strategy without it",
		}
	case string(compare.WideIntervalsScenario):
		found := fmt.Sprintf("The intervals are wide: %d evaluated queries", s.Queries)
		if s.Strategy != "" {
			found += fmt.Sprintf("; %s of %s is ±%s of its mean", primary, a, wholePct(s.RelativeHalfWidth.V()))
		}
		action := fmt.Sprintf("Add queries: about %d evaluated queries bring the widest interval to ±%s of its mean (the width falls as 1/√n)", s.QueriesForWidth, wholePct(compare.WideRelHalfWidth))
		if t := s.Test; t != nil && s.QueriesToSeparate > 0 {
			action += fmt.Sprintf("; about %d detect the observed difference between %s and %s (Δ %s = %s) with %s power at α = %s (power calculation: n = ((z₀.₉₇₅ + z₀.₈)·sd of the paired differences / Δ)²)",
				s.QueriesToSeparate, name(t.Strategy), name(t.Baseline), primary, format.Signed(t.Delta.V()), wholePct(compare.Power), format.Full(d.Statistics.Alpha.V()))
		}
		return ScenarioText{
			Found:  found + ".",
			Action: action + ".",
			Rule:   fmt.Sprintf("fewer than %d evaluated queries, or a %s interval wider than ±%s of its mean", compare.WideMinQueries, primary, wholePct(compare.WideRelHalfWidth)),
		}
	case string(compare.AllLow):
		label := d.label(s.Measure)
		return ScenarioText{
			Found:  fmt.Sprintf("Every strategy scores low: the highest upper 95%% bound of %s is %s (%s), below %s.", label, format.Num(s.Value.V()), a, format.Num(s.Threshold.V())),
			Action: "Check data quality and relevance before choosing a strategy: do the queries ask what the corpus answers, is the chunking right, are the judgments right?",
			Rule:   fmt.Sprintf("low means %s below %s for every strategy, even at the upper end of its 95%% interval (under a third of the ideal ranking's DCG)", label, format.Num(s.Threshold.V())),
		}
	}
	return ScenarioText{Found: s.Code}
}

// hasScenario reports whether the document lists a scenario of code c.
func (d *Document) hasScenario(c compare.ScenarioCode) bool {
	for _, s := range d.Scenarios {
		if s.Code == string(c) {
			return true
		}
	}
	return false
}

// ScenarioTexts are the scenarios in words, in order (names unescaped: the
// caller escapes for its format).
func (d *Document) ScenarioTexts() []ScenarioText {
	out := make([]ScenarioText, 0, len(d.Scenarios))
	for _, s := range d.Scenarios {
		t := d.scenario(s, identity)
		t.Code = s.Code
		out = append(out, t)
	}
	return out
}

// scenarioLine is a scenario as one line: found, action, rule.
func (t ScenarioText) line() string {
	return t.Found + " → " + t.Todo() + " (Rule: " + t.Rule + ".)"
}

// Todo is the action and the bearing, as one text.
func (t ScenarioText) Todo() string {
	switch {
	case t.Action == "":
		return t.Bearing
	case t.Bearing == "":
		return t.Action
	}
	return t.Action + " " + t.Bearing
}

// NoScenarioLine is said when no scenario's rule is met.
const NoScenarioLine = "None of the six common scenarios applies (hybrid vs dense, dense ≈ hybrid, full text vs dense, reranker, wide intervals, all strategies low)."

// diagnosis is the findings the scenarios do not already state: a hybrid vs
// dense pair or a helping reranker that a scenario names is left out.
func (d *Document) diagnosis() []compare.Finding {
	covered := func(f compare.Finding) bool {
		for _, s := range d.Scenarios {
			if s.Strategy != f.A || s.Versus != f.B {
				continue
			}
			switch {
			case f.Kind == compare.HybridVsDense && (s.Code == string(compare.HybridBeatsDense) || s.Code == string(compare.DenseMatchesHybrid)),
				f.Kind == compare.Reranker && s.Code == string(compare.RerankerHelps):
				return true
			}
		}
		return false
	}
	var out []compare.Finding
	for _, f := range d.Findings {
		if !covered(f) {
			out = append(out, f)
		}
	}
	return out
}

// maxDCGOf is the maximum DCG@k of a document read back without it (written
// before the field existed): from its k, gain and relevance scale.
func maxDCGOf(k, top int, gain string) float64 {
	g := metrics.GainExp
	if gain == metrics.GainLinear.String() {
		g = metrics.GainLinear
	}
	v := metrics.MaxDCG(k, max(top, 1), g)
	if v == 0 {
		return math.NaN()
	}
	return v
}
