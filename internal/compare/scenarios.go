package compare

import (
	"math"

	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

// The six common scenarios of a strategy comparison, each a rule on the
// comparison's numbers with a suggested action (the seed's list). The domain
// decides which rules are met and carries their numbers; the renderers state
// each rule and its action in words.

// ScenarioCode names a scenario (also its JSON "code").
type ScenarioCode string

// The scenarios, in report order.
const (
	// HybridBeatsDense: a hybrid strategy significantly above a dense (ANN) one
	// with the same reranking on the primary measure: use hybrid.
	HybridBeatsDense ScenarioCode = "hybrid-beats-dense"
	// DenseMatchesHybrid: hybrid and dense not significantly different: either
	// works; dense is simpler.
	DenseMatchesHybrid ScenarioCode = "dense-matches-hybrid"
	// LexicalBeatsDense: a full-text strategy significantly above a dense one
	// with the same reranking: the embedding model may not capture the domain
	// (fine-tune it, or use full text).
	LexicalBeatsDense ScenarioCode = "lexical-beats-dense"
	// RerankerHelps: a reranked strategy significantly above the same strategy
	// without the reranker: enable it if the latency budget allows.
	RerankerHelps ScenarioCode = "reranker-helps"
	// WideIntervalsScenario: fewer than WideMinQueries evaluated queries, or a
	// primary-measure interval wider than ±WideRelHalfWidth of its mean: add
	// queries (how many: QueriesForWidth, and QueriesToSeparate from the power
	// calculation on the best two strategies).
	WideIntervalsScenario ScenarioCode = "wide-intervals"
	// AllLow: every strategy's nDCG@k is low: even the upper end of its 95%
	// interval is below LowNDCG: data quality or relevance problems (queries
	// the corpus does not answer, chunking, judgments).
	AllLow ScenarioCode = "all-low"
)

// The thresholds of the scenario rules.
const (
	// WideMinQueries: fewer evaluated queries make every interval wide.
	WideMinQueries = 30
	// WideRelHalfWidth: a primary-measure interval whose half-width exceeds this
	// fraction of its mean is wide.
	WideRelHalfWidth = 0.10
	// LowNDCG: "low" is an nDCG@k whose 95% upper bound is below 0.3, for every
	// strategy: under a third of the ideal ranking's DCG even at the optimistic
	// end of the interval (nDCG, normalised per query, reads alike at every k,
	// gain and number of judgments; DCG does not).
	LowNDCG = 0.3
	// Power is the power of the sample-size calculation (at Alpha, two-sided).
	Power = metrics.DefaultPower
)

// Scenario is one scenario whose rule the comparison meets, with the numbers
// of the rule.
type Scenario struct {
	Code ScenarioCode
	// A and B are the strategies of a pair scenario (A − B on the primary
	// measure, Test); WideIntervals: A has the widest interval; AllLow: A has
	// the highest upper bound (Value).
	A, B string
	Test *Paired
	// WideIntervals: N evaluated queries; Width is A's half-width relative to
	// its mean; QueriesForWidth the queries at which it narrows to
	// WideRelHalfWidth (at least WideMinQueries); QueriesToSeparate the queries
	// at which the best two strategies' observed difference (Test: best −
	// runner-up, when not significant) is detected at Power and Alpha (0: no
	// such test, or no difference to detect).
	N                                  int
	Width                              float64
	QueriesForWidth, QueriesToSeparate int
	// AllLow: Measure's upper bounds are all below Threshold; Value is the
	// highest of them (A's).
	Measure          string
	Threshold, Value float64
	// Bearing is how the scenario bears on the Decision (decision.go).
	Bearing Bearing
}

// scenarios evaluates the six rules; the pair tests are the diagnosis's (one
// test per pair, Holm-adjusted as the report's other comparisons), and with
// human labels the decision's (human-corrected, decisionTest): a scenario's
// action must not say "use hybrid" on the judge's figures beside a decision
// that the corrected ones make level.
func (r *Result) scenarios() {
	add := func(s Scenario) { r.Scenarios = append(r.Scenarios, s) }
	test := func(f Finding) Paired {
		if r.Human != nil {
			return r.decisionTest(r.StrategyIndex(f.A), r.StrategyIndex(f.B), r.primary)
		}
		return f.Test
	}
	for _, f := range r.Findings {
		if f.Kind != HybridVsDense {
			continue
		}
		t := test(f)
		switch {
		case t.Significant && t.Delta > 0:
			add(Scenario{Code: HybridBeatsDense, A: f.A, B: f.B, Test: &t})
		case !t.Significant:
			add(Scenario{Code: DenseMatchesHybrid, A: f.A, B: f.B, Test: &t})
		}
	}
	// Full text against dense, with the same reranking.
	S := len(r.Strategies)
	kind := func(i int, words []string) bool { return hasToken(r.Strategies[i].Name, words...) }
	for l := range S {
		if !kind(l, lexicalWords) || kind(l, hybridWords) || kind(l, denseWords) {
			continue
		}
		for d := range S {
			if d == l || !kind(d, denseWords) || kind(d, hybridWords) || kind(d, lexicalWords) ||
				isRerank(r.Strategies[d].Name) != isRerank(r.Strategies[l].Name) {
				continue
			}
			if t := r.decisionTest(l, d, r.primary); t.Significant && t.Delta > 0 {
				add(Scenario{Code: LexicalBeatsDense, A: r.Strategies[l].Name, B: r.Strategies[d].Name, Test: &t})
			}
		}
	}
	for _, f := range r.Findings {
		if f.Kind != Reranker {
			continue
		}
		if t := test(f); t.Significant && t.Delta > 0 {
			add(Scenario{Code: RerankerHelps, A: f.A, B: f.B, Test: &t})
		}
	}
	if s, ok := r.wideIntervals(); ok {
		add(s)
	}
	if s, ok := r.allLow(); ok {
		add(s)
	}
}

// widestInterval is the strategy with the widest primary-measure interval
// relative to its mean (ties: the first by name, not by run order), and that
// relative half-width (-1: none has a positive mean).
func (r *Result) widestInterval() (int, float64) {
	widest, wi := 0.0, -1
	for i := range r.Strategies {
		s := &r.Strategies[i]
		m := s.Means[r.primary]
		ci := s.CI[r.primary]
		if m <= 0 || math.IsNaN(ci.Lo) {
			continue
		}
		if w := (ci.Hi - ci.Lo) / 2 / m; w > widest || w == widest && wi >= 0 && s.Name < r.Strategies[wi].Name {
			widest, wi = w, i
		}
	}
	return wi, widest
}

// wideIntervals is the wide-intervals scenario with its sample sizes.
func (r *Result) wideIntervals() (Scenario, bool) {
	n := r.N()
	wi, widest := r.widestInterval()
	if n >= WideMinQueries && widest <= WideRelHalfWidth {
		return Scenario{}, false
	}
	s := Scenario{Code: WideIntervalsScenario, N: n, QueriesForWidth: max(WideMinQueries, n)}
	if wi >= 0 {
		s.A, s.Width = r.Strategies[wi].Name, widest
		s.QueriesForWidth = max(WideMinQueries, metrics.QueriesForHalfWidth(n, widest, WideRelHalfWidth))
	}
	if l := r.Leader; l != nil && !l.Significant {
		a, b := r.StrategyIndex(l.Strategy), r.StrategyIndex(l.Baseline)
		const M = metrics.NumGraded
		var d []float64
		var rows []int
		for i := range n {
			x, y := r.Strategies[a].Values[i*M+r.primary], r.Strategies[b].Values[i*M+r.primary]
			if math.IsNaN(x) || math.IsNaN(y) { // a query the measure does not count, for either run
				continue
			}
			d, rows = append(d, x-y), append(rows, i)
		}
		t := *l
		s.Test = &t
		sd := metrics.SampleSDOf(d)
		if r.clustered() {
			// Queries in families: the sd a query contributes is the
			// cluster-robust standard error times √n (the floors' rule), so
			// the size counts the families' dependence; none below 2
			// clusters.
			sub, nc := r.rowClusters(rows)
			se, _ := metrics.ClusterMeanSE(d, sub, nc)
			sd = se * math.Sqrt(float64(len(d)))
		}
		// The normal-theory size, at least WideMinQueries (below it the
		// approximation, and every interval, is unreliable).
		if q := metrics.QueriesToDetect(sd, l.Delta, Alpha, Power); q > 0 {
			s.QueriesToSeparate = max(q, WideMinQueries)
		}
	}
	return s, true
}

// allLow is the all-low scenario: every strategy's nDCG@k upper bound below
// LowNDCG; A is the strategy with the highest (ties: the first by name).
func (r *Result) allLow() (Scenario, bool) {
	m := metrics.QueryIndex(metrics.KeyNDCGGraded)
	s := Scenario{Code: AllLow, Measure: metrics.KeyNDCGGraded, Threshold: LowNDCG, Value: math.Inf(-1)}
	for i := range r.Strategies {
		st := &r.Strategies[i]
		hi := st.CI[m].Hi
		if math.IsNaN(hi) {
			hi = st.Means[m]
		}
		if !(hi < LowNDCG) {
			return Scenario{}, false
		}
		if hi > s.Value || hi == s.Value && st.Name < s.A {
			s.Value, s.A = hi, st.Name
		}
	}
	return s, len(r.Strategies) > 0
}
