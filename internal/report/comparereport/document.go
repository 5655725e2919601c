// Package comparereport is the typed document of `compare` (schema
// retrieval-gate/compare@1), built from a compare.Result in one place (New),
// written as the --json report, read back by Read, and rendered as text and
// Markdown. The renderers take the document and do no arithmetic.
package comparereport

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
	"github.com/retrieval-gate/retrieval-gate/internal/report/gatetable"
	"github.com/retrieval-gate/retrieval-gate/internal/report/readback"
	"github.com/retrieval-gate/retrieval-gate/internal/report/trendtable"
	"github.com/retrieval-gate/retrieval-gate/internal/trend"
)

// Schema is the schema id of the compare document.
const Schema = compare.Schema

// PAdjustment names the p-value adjustment in the JSON "statistics" object:
// Holm within each measure's family of strategies (the primary measure's tests
// are adjusted across strategies only; each secondary measure likewise).
const PAdjustment = "holm-within-measure"

// Document is the compare report. Fields are declared in the alphabetical order
// of their JSON names, so the JSON has sorted keys at every level. Fields tagged
// `json:"-"` are for the renderers only: Read derives those it can from the JSON
// (run order, half-widths, chart bounds) and leaves the others empty (findings,
// the per-run notes).
//
// Beyond the contract's keys, "statistics" says how the intervals and p-values
// were computed (resampling or approximation), each paired comparison has its
// p_value_unadjusted, and "recommendation_test" is the comparison of the best
// two strategies behind "recommended" (null with one run). p_value is
// Holm-adjusted within the measure's family (its strategies); "primary" marks
// the tests of the primary measure, the only ones the recommendation uses.
// Every interval carries its n, its method and whether its method's simulated
// coverage at that n (below 0.95) makes it
// unreliable; every test its n, its p_value_method and a note when the interval
// and the test disagree. "relevance_scale" is the [lowest, highest] relevance
// level found in the qrels; "relevant_level_fallback" says binary qrels were
// evaluated at level 1 instead of the default 2. "gates" lists the gates asked
// for (--gate-strategy with --floor, --fail-if-beaten; empty by default) and
// "verdict" is their verdict (pass when there are none). "rerankers" and
// "hybrids" are the diagnosis' reranker and hybrid findings, each test as
// computed with its effect (the queries missing from a run are in each
// strategy's figures).
type Document struct {
	// Decision is the comparison's one decision (compare.Decision); nil in a
	// document written before it, whose reports then give the recommendation
	// alone.
	Decision *Decision         `json:"decision,omitempty"`
	Gain     string            `json:"gain"`
	Gates    []gatetable.Entry `json:"gates"`
	Human    *Human            `json:"human,omitempty"` // compare --human-qrels (human.go)
	// Hybrids are the hybrid findings (compare.Finding of kind
	// compare.HybridVsDense or compare.HybridVsLexical): each hybrid strategy
	// against each dense and each full-text one with the same reranking, on
	// the primary measure, what the diagnosis says in words; empty when no
	// run is a hybrid (also when read from a document written before them).
	Hybrids            []Hybrid     `json:"hybrids"`
	JudgedAtKThreshold format.Float `json:"judged_at_k_threshold"`
	JudgedOnly         bool         `json:"judged_only"`
	K                  int          `json:"k"`
	MaxDCGAtK          format.Float `json:"max_dcg_at_k"`
	Paired             []Paired     `json:"paired"`
	Primary            string       `json:"primary"`
	Queries            Queries      `json:"queries"`
	// QueryTexts are the texts of the queries the strategies' best and worst
	// lists name (query id -> text), from compare --queries (evaluate's
	// cases); nil without (the reports show the ids alone).
	QueryTexts            map[string]string `json:"query_texts,omitempty"`
	RecommendationTest    *Leader           `json:"recommendation_test"`
	Recommended           string            `json:"recommended"`
	RelevanceScale        [2]int            `json:"relevance_scale"`
	RelevantLevel         int               `json:"relevant_level"`
	RelevantLevelFallback bool              `json:"relevant_level_fallback"`
	// Rerankers are the reranker findings (compare.Finding of kind
	// compare.Reranker): each reranked strategy against the same strategy
	// without the reranker on the primary measure, what the diagnosis and the
	// dashboard's "Base vs reranker" table say; empty when no run reranks.
	Rerankers  []Reranker           `json:"rerankers"`
	Scenarios  []Scenario           `json:"scenarios"`
	Schema     string               `json:"schema"`
	Statistics Statistics           `json:"statistics"`
	Strategies map[string]*Strategy `json:"strategies"`
	Verdict    outcome.Status       `json:"verdict"`

	Order        []string          `json:"-"` // strategy names, run order (Read: baseline first, then as paired)
	Baseline     string            `json:"-"`
	NotEvaluated int               `json:"-"` // judged queries without a relevant document
	ChartMax     float64           `json:"-"` // upper bound of the primary-measure chart
	Findings     []compare.Finding `json:"-"`
	// ReadBack is set by Read: the findings and the per-run notes, computed
	// from the inputs, are not in the JSON (but for the reranker findings,
	// Rerankers); the renderers say so.
	ReadBack bool `json:"-"`
	// RerankersUnknown is set by Read for a document written before the JSON
	// had "rerankers": the dashboard then says the reranker tests are not in it.
	RerankersUnknown bool `json:"-"`
	// ScenariosUnknown is set by Read for a document written before the JSON
	// had "scenarios": the reports then say nothing about them.
	ScenariosUnknown bool `json:"-"`
	// Trend is the gated measures (else the recommended strategy's primary
	// measure) over the base branch's last runs (--history with --trend-runs):
	// in the Markdown and text reports, not in the JSON (see checkreport.Document.Trend).
	Trend *trend.Trend `json:"-"`
}

// NotCarriedLine is what a report rendered again from the JSON says in place
// of the diagnosis.
const NotCarriedLine = "the diagnosis and the per-run notes are computed from the inputs and are not in the JSON report; run compare again for them"

// Queries counts the judged and the evaluated queries: WithRelevant have a
// judged document of positive gain (the graded measures' n), AtRelevantLevel
// one at the relevant level (the binary measures' n).
type Queries struct {
	AtRelevantLevel int `json:"at_relevant_level"`
	Judged          int `json:"judged"`
	WithRelevant    int `json:"with_relevant"`
}

// Strategy is one run's evaluation.
type Strategy struct {
	BestQueries    []string           `json:"best_queries"`
	FailedQueries  []string           `json:"failed_queries"`
	JudgedAtK      *JudgedAtK         `json:"judged_at_k"`
	Metrics        map[string]Summary `json:"metrics"`
	MissingFromRun int                `json:"missing_from_run"`
	N              int                `json:"n"`
	// QueriesByMeasure are the best and worst queries by every measure
	// (measure key -> lists, compare.Strategy.ByMeasure; the primary's are
	// BestQueries and WorstQueries), for the dashboard's choice of measure;
	// nil in a document written before it.
	QueriesByMeasure map[string]Ranked `json:"queries_by_measure,omitempty"`
	// QueryValues are the values of every measure of the queries listed in
	// BestQueries, WorstQueries and QueriesByMeasure (query id -> measure key
	// -> value; null: the measure does not count the query), for the
	// dashboard's best and worst queries; nil in a document written before it.
	QueryValues         map[string]map[string]format.Float `json:"query_values,omitempty"`
	RelevanceBuckets    Buckets                            `json:"relevance_buckets"`
	RelevanceByPosition []format.Float                     `json:"relevance_by_position"`
	// RelevanceByPositionN counts the judged documents at each rank; nil in a
	// report written before it (whose means count unjudged results as 0).
	RelevanceByPositionN  []int        `json:"relevance_by_position_n"`
	RelevanceDistribution Distribution `json:"relevance_distribution"`
	// RelevanceDistributionN counts the top-k documents of the evaluated
	// queries, the documents RelevanceDistribution's fractions are of; nil in
	// a report written before it.
	RelevanceDistributionN *int     `json:"relevance_distribution_n,omitempty"`
	WorstQueries           []string `json:"worst_queries"`

	Name                  string `json:"-"`
	RunQueries, NotJudged int    `json:"-"` // queries of the run; of them not in the qrels
}

// QueryCell is the most runes of a query's text a report shows in a list or
// a table cell (format.Shorten); the JSON has the whole text.
const QueryCell = 80

// Ranked are a strategy's best and worst queries by one measure
// (compare.Ranked): best first, worst first, ties by query id.
type Ranked struct {
	Best  []string `json:"best"`
	Worst []string `json:"worst"`
}

// Summary is one measure's mean and 95% CI over its n queries.
type Summary struct {
	CI95       [2]format.Float `json:"ci95"`
	CI95Method string          `json:"ci95_method"`
	Mean       format.Float    `json:"mean"`
	N          int64           `json:"n"`
	Unreliable bool            `json:"unreliable"`

	HalfWidth float64 `json:"-"` // half the width of CI95
}

// Distribution is the relevance of the top-k documents: the fraction at each
// level 0..max(3, highest level found) (Levels[l]; 0 includes the unjudged and
// negative ones) and the unjudged fraction. In JSON it is one object, keys "0",
// "1", … in level order, then "unjudged".
type Distribution struct {
	Levels   []format.Float
	Unjudged format.Float
}

// MarshalJSON writes {"0": f0, "1": f1, …, "unjudged": u}.
func (d Distribution) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for l, f := range d.Levels {
		b = fmt.Appendf(b, "\"%d\":", l)
		b = format.AppendFloat(b, f.V())
		b = append(b, ',')
	}
	b = append(b, `"unjudged":`...)
	b = format.AppendFloat(b, d.Unjudged.V())
	return append(b, '}'), nil
}

// UnmarshalJSON reads what MarshalJSON writes: keys "0".."L" (every level up to
// the highest present) and "unjudged".
func (d *Distribution) UnmarshalJSON(b []byte) error {
	var m map[string]format.Float
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	u, ok := m["unjudged"]
	if !ok {
		return fmt.Errorf("relevance distribution without \"unjudged\"")
	}
	d.Unjudged = u
	d.Levels = make([]format.Float, len(m)-1)
	for l := range d.Levels {
		f, ok := m[strconv.Itoa(l)]
		if !ok {
			return fmt.Errorf("relevance distribution without level %d", l)
		}
		d.Levels[l] = f
	}
	return nil
}

// newDistribution builds the Distribution of fractions levels (index = level),
// padded with zeros to the levels 0..3.
func newDistribution(levels []float64, unjudged float64) Distribution {
	d := Distribution{Levels: make([]format.Float, max(len(levels), 4)), Unjudged: format.Float(unjudged)}
	for l, f := range levels {
		d.Levels[l] = format.Float(f)
	}
	return d
}

// Paired is a strategy against the baseline on one measure: Δ mean, its 95% CI
// and n, the p-values and the note when the interval and the test disagree
// (compare.Note*).
type Paired struct {
	Baseline   string          `json:"baseline"`
	CI95       [2]format.Float `json:"ci95"`
	CI95Method string          `json:"ci95_method"`
	Delta      format.Float    `json:"delta"`
	// Identical: the two strategies return the same top k on every evaluated
	// query (every difference 0, nothing to test); absent otherwise.
	Identical    bool         `json:"identical,omitempty"`
	Metric       string       `json:"metric"`
	N            int          `json:"n"`
	Note         string       `json:"note"`
	PValue       format.Float `json:"p_value"`
	PValueMethod string       `json:"p_value_method"`
	PUnadjusted  format.Float `json:"p_value_unadjusted"`
	Primary      bool         `json:"primary"`
	Significant  bool         `json:"significant"`
	Strategy     string       `json:"strategy"`
	Unreliable   bool         `json:"unreliable"`
	// Clusters: the clusters the n queries fall into when the interval and
	// the test are computed over clusters (compare --clusters); absent
	// otherwise.
	Clusters int `json:"clusters,omitempty"`
}

// Leader is the comparison behind the recommendation: best against runner-up
// on the primary measure (the fields as in Paired).
type Leader struct {
	Best         string          `json:"best"`
	CI95         [2]format.Float `json:"ci95"`
	CI95Method   string          `json:"ci95_method"`
	Delta        format.Float    `json:"delta"`
	Identical    bool            `json:"identical,omitempty"`
	Metric       string          `json:"metric"`
	N            int             `json:"n"`
	Note         string          `json:"note"`
	PValue       format.Float    `json:"p_value"`
	PValueMethod string          `json:"p_value_method"`
	PUnadjusted  format.Float    `json:"p_value_unadjusted"`
	Primary      bool            `json:"primary"`
	RunnerUp     string          `json:"runner_up"`
	Significant  bool            `json:"significant"`
	Unreliable   bool            `json:"unreliable"`
}

// Reranker is a reranker finding: the reranked strategy against the same
// strategy without the reranker (Base), Δ = reranked − base on the primary
// measure with its paired test (the fields as in Paired: Holm-adjusted with
// the measure's family, Primary always true), and its Effect (compare.Effect: helps, hurts,
// no-significant-change).
type Reranker struct {
	Base         string          `json:"base"`
	CI95         [2]format.Float `json:"ci95"`
	CI95Method   string          `json:"ci95_method"`
	Clusters     int             `json:"clusters,omitempty"`
	Delta        format.Float    `json:"delta"`
	Effect       string          `json:"effect"`
	Identical    bool            `json:"identical,omitempty"`
	Metric       string          `json:"metric"`
	N            int             `json:"n"`
	Note         string          `json:"note"`
	PValue       format.Float    `json:"p_value"`
	PValueMethod string          `json:"p_value_method"`
	PUnadjusted  format.Float    `json:"p_value_unadjusted"`
	Primary      bool            `json:"primary"`
	Reranked     string          `json:"reranked"`
	Significant  bool            `json:"significant"`
	Unreliable   bool            `json:"unreliable"`
}

// Hybrid is a hybrid finding: the hybrid strategy against another (Other, a
// dense (ANN) or a full-text strategy by its name: OtherKind "dense" or
// "lexical"), Δ = hybrid − other on the primary measure with its paired test
// (the fields as in Paired), and its Effect (compare.Effect: helps, hurts,
// no-significant-change), what adding the other half does to the one-sided
// retriever, read the other way round.
type Hybrid struct {
	CI95         [2]format.Float `json:"ci95"`
	CI95Method   string          `json:"ci95_method"`
	Clusters     int             `json:"clusters,omitempty"`
	Delta        format.Float    `json:"delta"`
	Effect       string          `json:"effect"`
	Hybrid       string          `json:"hybrid"`
	Identical    bool            `json:"identical,omitempty"`
	Metric       string          `json:"metric"`
	N            int             `json:"n"`
	Note         string          `json:"note"`
	Other        string          `json:"other"`
	OtherKind    string          `json:"other_kind"`
	PValue       format.Float    `json:"p_value"`
	PValueMethod string          `json:"p_value_method"`
	PUnadjusted  format.Float    `json:"p_value_unadjusted"`
	Primary      bool            `json:"primary"`
	Significant  bool            `json:"significant"`
	Unreliable   bool            `json:"unreliable"`
}

// The other kinds of a hybrid finding.
const (
	HybridOtherDense   = "dense"
	HybridOtherLexical = "lexical"
)

// newHybrids are the hybrid findings of fs, in the diagnosis' order.
func newHybrids(fs []compare.Finding) []Hybrid {
	out := []Hybrid{}
	for _, f := range fs {
		kind := HybridOtherDense
		switch f.Kind {
		case compare.HybridVsDense:
		case compare.HybridVsLexical:
			kind = HybridOtherLexical
		default:
			continue
		}
		t := paired(&f.Test)
		out = append(out, Hybrid{Hybrid: f.A, Other: f.B, OtherKind: kind, Effect: string(f.Effect()), Metric: t.Metric, N: t.N, Delta: t.Delta,
			CI95: t.CI95, CI95Method: t.CI95Method, Unreliable: t.Unreliable, PValue: t.PValue, PUnadjusted: t.PUnadjusted,
			PValueMethod: t.PValueMethod, Primary: t.Primary, Significant: t.Significant, Note: t.Note, Identical: t.Identical, Clusters: t.Clusters})
	}
	return out
}

// newRerankers are the reranker findings of fs, in the diagnosis' order.
func newRerankers(fs []compare.Finding) []Reranker {
	out := []Reranker{}
	for _, f := range fs {
		if f.Kind != compare.Reranker {
			continue
		}
		t := paired(&f.Test)
		out = append(out, Reranker{Reranked: f.A, Base: f.B, Effect: string(f.Effect()), Metric: t.Metric, N: t.N, Delta: t.Delta,
			CI95: t.CI95, CI95Method: t.CI95Method, Unreliable: t.Unreliable, PValue: t.PValue, PUnadjusted: t.PUnadjusted,
			PValueMethod: t.PValueMethod, Primary: t.Primary, Significant: t.Significant, Note: t.Note, Identical: t.Identical, Clusters: t.Clusters})
	}
	return out
}

// Statistics says how the intervals and p-values were computed: CI95Methods and
// PValueMethods list the methods used (each interval and test names its own);
// resampled is false when queries × resamples exceeds the budget and the
// intervals without an exact form are Cornish–Fisher approximations.
type Statistics struct {
	Alpha            format.Float `json:"alpha"`
	CI95Methods      []string     `json:"ci95_methods"`
	PAdjustment      string       `json:"p_adjustment"`
	PValueMethods    []string     `json:"p_value_methods"`
	Resampled        bool         `json:"resampled"`
	Resamples        int          `json:"resamples"`
	ResamplingBudget int          `json:"resampling_budget"`
	Seed             uint64       `json:"seed"`
	// Clusters: compare --clusters, the queries in families; absent without.
	Clusters *Clusters `json:"clusters,omitempty"`
}

// Clusters says how the evaluated queries fall into clusters: every interval
// and paired test is then computed over the clusters (issue 34).
type Clusters struct {
	File     string `json:"file"`
	Queries  int    `json:"queries"`
	Clusters int    `json:"clusters"`
	// Listed: the evaluated queries the file lists (each other one is a
	// cluster of its own).
	Listed int `json:"listed"`
}

func paired(p *compare.Paired) Paired {
	return Paired{
		Strategy: p.Strategy, Baseline: p.Baseline, Metric: p.Metric, N: p.N, Delta: format.Float(p.Delta),
		CI95: format.CI(p.CI.CI()), CI95Method: p.CI.Method, Unreliable: p.CI.Unreliable,
		PValue: format.Float(p.PHolm), PUnadjusted: format.Float(p.P), PValueMethod: p.PMethod,
		Primary: p.Primary, Significant: p.Significant, Note: p.Note, Identical: p.Identical, Clusters: p.Clusters,
	}
}

// addMethod adds m to the sorted set ms.
func addMethod(ms []string, m string) []string {
	if i, found := slices.BinarySearch(ms, m); !found {
		ms = slices.Insert(ms, i, m)
	}
	return ms
}

func strs(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// New builds the document of a comparison: the one place the domain result
// becomes what the reports show.
func New(r *compare.Result) *Document {
	pi := r.PrimaryIndex()
	d := &Document{
		Gain: r.Gain.String(), K: r.K, RelevantLevel: r.RelevantLevel, Schema: Schema,
		Primary: metrics.GradedKeys[pi], RelevanceScale: [2]int{r.MinLevel, r.MaxLevel}, RelevantLevelFallback: r.LevelFallback,
		Queries:     Queries{Judged: r.Judged, WithRelevant: r.N(), AtRelevantLevel: r.MeasureN[metrics.QueryIndex(metrics.KeyGradedHit)]},
		Recommended: r.Recommended,
		Decision:    newDecision(r.Decision),
		Strategies:  map[string]*Strategy{},
		Paired:      make([]Paired, 0, len(r.Paired)),
		Baseline:    r.Baseline,
		Findings:    r.Findings,
		Rerankers:   newRerankers(r.Findings),
		Hybrids:     newHybrids(r.Findings),
		Scenarios:   newScenarios(r.Scenarios),
		MaxDCGAtK:   format.Float(r.MaxDCG()),
		Gates:       gatetable.FromOutcome(r.Gates),
		Verdict:     r.Verdict(),
		Human:       newHuman(r),
	}
	st := Statistics{CI95Methods: []string{}, PValueMethods: []string{}}
	for i := range r.Strategies {
		s := &r.Strategies[i]
		ms := make(map[string]Summary, metrics.NumGraded)
		for m, key := range metrics.GradedKeys {
			iv := s.CI[m]
			ms[key] = Summary{Mean: format.Float(s.Means[m]), CI95: format.CI(iv.CI()), CI95Method: iv.Method,
				N: int64(s.MeasureN[m]), Unreliable: iv.Unreliable}
			st.CI95Methods = addMethod(st.CI95Methods, iv.Method)
		}
		levels, unjudged := s.Distribution()
		retrieved := s.Retrieved
		d.Strategies[s.Name] = &Strategy{
			Name: s.Name, N: s.N, MissingFromRun: s.Missing, Metrics: ms,
			RelevanceDistribution: newDistribution(levels, unjudged), RelevanceDistributionN: &retrieved,
			RelevanceBuckets:    newBuckets(s.Buckets()),
			RelevanceByPosition: format.Floats(s.ByPosition), RelevanceByPositionN: s.ByPositionN,
			FailedQueries: strs(s.Failed), BestQueries: strs(s.Best), WorstQueries: strs(s.Worst),
			RunQueries: s.RunQueries, NotJudged: s.NotJudged,
			QueriesByMeasure: byMeasure(s),
			QueryValues:      queryValues(r, s),
		}
		d.Order = append(d.Order, s.Name)
		d.addTexts(r, s)
	}
	for i := range r.Paired {
		p := &r.Paired[i]
		d.Paired = append(d.Paired, paired(p))
		st.CI95Methods = addMethod(st.CI95Methods, p.CI.Method)
		st.PValueMethods = addMethod(st.PValueMethods, p.PMethod)
	}
	if l := r.Leader; l != nil {
		t := paired(l)
		d.RecommendationTest = &Leader{Best: t.Strategy, RunnerUp: t.Baseline, Metric: t.Metric, N: t.N, Delta: t.Delta,
			CI95: t.CI95, CI95Method: t.CI95Method, Unreliable: t.Unreliable, PValue: t.PValue, PUnadjusted: t.PUnadjusted,
			PValueMethod: t.PValueMethod, Primary: t.Primary, Significant: t.Significant, Note: t.Note, Identical: t.Identical}
		st.CI95Methods = addMethod(st.CI95Methods, l.CI.Method)
		st.PValueMethods = addMethod(st.PValueMethods, l.PMethod)
	}
	st.Resampled, st.Resamples, st.Seed, st.ResamplingBudget = r.Exact, r.Resamples, r.Seed, metrics.ExactResamplingBudget
	st.PAdjustment, st.Alpha = PAdjustment, format.Float(compare.Alpha)
	if c := r.Clusters; c != nil {
		st.Clusters = &Clusters{File: c.File, Queries: c.Queries, Clusters: c.Clusters, Listed: c.Listed}
	}
	d.Statistics = st
	d.addHoles(r)
	d.derive()
	return d
}

// derive fills the renderer-only fields that follow from the JSON fields.
func (d *Document) derive() {
	d.NotEvaluated = d.Queries.Judged - d.Queries.WithRelevant
	if d.Order == nil { // read back: baseline first, then the paired strategies, then the rest by name
		if len(d.Paired) > 0 {
			d.Baseline = d.Paired[0].Baseline
		}
		add := func(name string) {
			if _, ok := d.Strategies[name]; ok && !slices.Contains(d.Order, name) {
				d.Order = append(d.Order, name)
			}
		}
		add(d.Baseline)
		for _, p := range d.Paired {
			add(p.Strategy)
		}
		names := make([]string, 0, len(d.Strategies))
		for n := range d.Strategies {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			add(n)
		}
		if d.Baseline == "" && len(d.Order) > 0 {
			d.Baseline = d.Order[0]
		}
	}
	chartMax := 0.0
	for name, s := range d.Strategies {
		s.Name = name
		for key, m := range s.Metrics {
			m.HalfWidth = (m.CI95[1].V() - m.CI95[0].V()) / 2
			s.Metrics[key] = m
		}
		p := s.Metrics[d.Primary]
		chartMax = max(chartMax, p.CI95[1].V(), p.Mean.V())
	}
	if math.IsNaN(chartMax) || chartMax <= 0 {
		chartMax = 1
	}
	d.ChartMax = math.Ceil(chartMax*10) / 10
}

// WriteJSON writes the document as the --json report: sorted keys, two-space
// indentation, full-precision numbers (format.Float), a final newline.
func (d *Document) WriteJSON(w io.Writer) error { return format.WriteJSON(w, d) }

// Read reads a compare document written by WriteJSON. It is checked first as
// strictly as compare writes it (validate): a value that is wrong is an
// *input.Error at its line, whose File is "" (the caller names the file).
func Read(r io.Reader) (*Document, error) {
	data, root, err := readback.Parse(r, "")
	if err != nil {
		return nil, err
	}
	return ReadParsed(data, root)
}

// ReadParsed is Read of a document readback.Parse has read and parsed (data
// and its tree): report.Read parses a document once to learn its schema.
func ReadParsed(data []byte, root *jsonpos.Value) (*Document, error) {
	d := &Document{}
	if err := readback.Decode(data, root, validate, d, "compare report"); err != nil {
		return nil, err
	}
	if d.Schema != Schema {
		return nil, fmt.Errorf("schema %q is not %q", d.Schema, Schema)
	}
	if d.Strategies == nil {
		d.Strategies = map[string]*Strategy{}
	}
	if d.Primary == "" {
		d.Primary = compare.Primary
	}
	if d.MaxDCGAtK == 0 { // written before the field existed
		d.MaxDCGAtK = format.Float(maxDCGOf(d.K, d.RelevanceScale[1], d.Gain))
	}
	if d.Scenarios == nil { // written before the scenarios were in the JSON: none to show
		d.Scenarios, d.ScenariosUnknown = []Scenario{}, true
	}
	if d.Rerankers == nil { // written before the reranker findings were in the JSON
		d.Rerankers, d.RerankersUnknown = []Reranker{}, true
	}
	if d.Hybrids == nil { // written before the hybrid findings were in the JSON
		d.Hybrids = []Hybrid{}
	}
	for _, s := range d.Strategies {
		if b := &s.RelevanceBuckets; b.N == 0 { // none retrieved, or written before the field existed
			nan := format.Float(math.NaN())
			b.HighlyRelevant, b.RelevantPlus, b.NotRelevant = nan, nan, nan
		}
	}
	d.derive()
	d.ReadBack = true
	return d, nil
}

// strategies returns the strategies in report order.
func (d *Document) strategies() []*Strategy {
	out := make([]*Strategy, len(d.Order))
	for i, n := range d.Order {
		out[i] = d.Strategies[n]
	}
	return out
}

// TrendMeasures are the measures the Markdown report's trend shows
// (trend.CompareMeasures of the gates, the recommendation, none with no
// clear winner, and the primary).
func (d *Document) TrendMeasures() []trend.Measure {
	best := ""
	if d.RecommendationTest != nil {
		best = d.RecommendationTest.Best
	}
	recommended := d.Recommended
	if recommended == compare.NoClearWinner {
		recommended = ""
	}
	return trend.CompareMeasures(trendtable.Gates(d.Gates), recommended, best, d.Order, d.Primary)
}

// listed are the query ids of a strategy's best and worst lists, the
// primary's first, then every measure's (repeats included).
func listed(s *compare.Strategy) []string {
	ids := append(slices.Clone(s.Best), s.Worst...)
	for _, r := range s.ByMeasure {
		ids = append(append(ids, r.Best...), r.Worst...)
	}
	return ids
}

// byMeasure are a strategy's best and worst queries by every measure, by key.
func byMeasure(s *compare.Strategy) map[string]Ranked {
	out := make(map[string]Ranked, metrics.NumGraded)
	for m, key := range metrics.GradedKeys {
		r := s.ByMeasure[m]
		out[key] = Ranked{Best: strs(r.Best), Worst: strs(r.Worst)}
	}
	return out
}

// addTexts adds the texts of a strategy's listed queries that the result's
// queries give (compare --queries): QueryTexts.
func (d *Document) addTexts(r *compare.Result, s *compare.Strategy) {
	for _, id := range listed(s) {
		if q, ok := r.Queries[id]; ok && q.Text != "" {
			if d.QueryTexts == nil {
				d.QueryTexts = map[string]string{}
			}
			d.QueryTexts[id] = q.Text
		}
	}
}

// queryValues are every measure's values of a strategy's best and worst
// queries (by id; the result's query ids are sorted).
func queryValues(r *compare.Result, s *compare.Strategy) map[string]map[string]format.Float {
	out := map[string]map[string]format.Float{}
	const M = metrics.NumGraded
	for _, id := range listed(s) {
		i, ok := slices.BinarySearch(r.QueryIDs, id)
		if !ok || out[id] != nil || (i+1)*M > len(s.Values) {
			continue
		}
		vs := make(map[string]format.Float, M)
		for m, key := range metrics.GradedKeys {
			vs[key] = format.Float(s.Values[i*M+m])
		}
		out[id] = vs
	}
	return out
}
