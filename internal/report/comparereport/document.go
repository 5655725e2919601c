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

	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
	"github.com/retrieval-gate/retrieval-gate/internal/report/format"
	"github.com/retrieval-gate/retrieval-gate/internal/report/gatetable"
)

// Schema is the schema id of the compare document.
const Schema = compare.Schema

// Methods of the intervals and p-values, as named in the JSON "statistics" object.
const (
	CIMethodBootstrap     = "percentile-bootstrap"
	CIMethodApproximation = "cornish-fisher-approximation"
	PMethodRandomization  = "sign-flip-randomization"
	PMethodApproximation  = "sign-flip-normal-approximation"
)

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
// Holm-adjusted over all the paired comparisons. "gates" lists the gates asked
// for (--gate-strategy with --floor, --fail-if-beaten; empty by default) and
// "verdict" is their verdict (pass when there are none).
type Document struct {
	Gain               string               `json:"gain"`
	Gates              []gatetable.Entry    `json:"gates"`
	K                  int                  `json:"k"`
	Paired             []Paired             `json:"paired"`
	Queries            Queries              `json:"queries"`
	RecommendationTest *Leader              `json:"recommendation_test"`
	Recommended        string               `json:"recommended"`
	RelevantLevel      int                  `json:"relevant_level"`
	Schema             string               `json:"schema"`
	Statistics         Statistics           `json:"statistics"`
	Strategies         map[string]*Strategy `json:"strategies"`
	Verdict            outcome.Status       `json:"verdict"`

	Order        []string          `json:"-"` // strategy names, run order (Read: baseline first, then as paired)
	Baseline     string            `json:"-"`
	NotEvaluated int               `json:"-"` // judged queries without a relevant document
	ChartMax     float64           `json:"-"` // upper bound of the primary-measure chart
	Findings     []compare.Finding `json:"-"`
}

// Queries counts the judged and the evaluated queries.
type Queries struct {
	Judged       int `json:"judged"`
	WithRelevant int `json:"with_relevant"`
}

// Strategy is one run's evaluation.
type Strategy struct {
	BestQueries           []string           `json:"best_queries"`
	FailedQueries         []string           `json:"failed_queries"`
	Metrics               map[string]Summary `json:"metrics"`
	MissingFromRun        int                `json:"missing_from_run"`
	N                     int                `json:"n"`
	RelevanceByPosition   []format.Float     `json:"relevance_by_position"`
	RelevanceDistribution Distribution       `json:"relevance_distribution"`
	WorstQueries          []string           `json:"worst_queries"`

	Name                  string `json:"-"`
	RunQueries, NotJudged int    `json:"-"` // queries of the run; of them not in the qrels
}

// Summary is one measure's mean and 95% CI.
type Summary struct {
	CI95 [2]format.Float `json:"ci95"`
	Mean format.Float    `json:"mean"`

	HalfWidth float64 `json:"-"` // half the width of CI95
}

// Distribution is the relevance of the top-k documents: fractions at each level
// (0 includes unjudged) and the unjudged fraction.
type Distribution struct {
	Rel0     format.Float `json:"0"`
	Rel1     format.Float `json:"1"`
	Rel2     format.Float `json:"2"`
	Rel3     format.Float `json:"3"`
	Unjudged format.Float `json:"unjudged"`
}

// Paired is a strategy against the baseline on one measure.
type Paired struct {
	Baseline    string          `json:"baseline"`
	CI95        [2]format.Float `json:"ci95"`
	Delta       format.Float    `json:"delta"`
	Metric      string          `json:"metric"`
	PValue      format.Float    `json:"p_value"`
	PUnadjusted format.Float    `json:"p_value_unadjusted"`
	Significant bool            `json:"significant"`
	Strategy    string          `json:"strategy"`
}

// Leader is the comparison behind the recommendation: best against runner-up.
type Leader struct {
	Best        string          `json:"best"`
	CI95        [2]format.Float `json:"ci95"`
	Delta       format.Float    `json:"delta"`
	Metric      string          `json:"metric"`
	PValue      format.Float    `json:"p_value"`
	PUnadjusted format.Float    `json:"p_value_unadjusted"`
	RunnerUp    string          `json:"runner_up"`
	Significant bool            `json:"significant"`
}

// Statistics says how the intervals and p-values were computed: by Monte Carlo
// resampling, or, when queries × resamples exceeds the budget, by the
// large-sample approximations (resampled false).
type Statistics struct {
	Alpha            format.Float `json:"alpha"`
	CI95Method       string       `json:"ci95_method"`
	PAdjustment      string       `json:"p_adjustment"`
	PValueMethod     string       `json:"p_value_method"`
	Resampled        bool         `json:"resampled"`
	Resamples        int          `json:"resamples"`
	ResamplingBudget int          `json:"resampling_budget"`
	Seed             uint64       `json:"seed"`
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
	d := &Document{
		Gain: r.Gain.String(), K: r.K, RelevantLevel: r.RelevantLevel, Schema: Schema,
		Queries:     Queries{Judged: r.Judged, WithRelevant: r.N()},
		Recommended: r.Recommended,
		Strategies:  map[string]*Strategy{},
		Paired:      make([]Paired, 0, len(r.Paired)),
		Baseline:    r.Baseline,
		Findings:    r.Findings,
		Gates:       gatetable.FromOutcome(r.Gates),
		Verdict:     r.Verdict(),
	}
	for i := range r.Strategies {
		s := &r.Strategies[i]
		ms := make(map[string]Summary, metrics.NumGraded)
		for m, key := range metrics.GradedKeys {
			ms[key] = Summary{Mean: format.Float(s.Means[m]), CI95: format.CI(s.CI[m])}
		}
		dist := s.Distribution()
		d.Strategies[s.Name] = &Strategy{
			Name: s.Name, N: s.N, MissingFromRun: s.Missing, Metrics: ms,
			RelevanceDistribution: Distribution{Rel3: format.Float(dist[0]), Rel2: format.Float(dist[1]),
				Rel1: format.Float(dist[2]), Rel0: format.Float(dist[3]), Unjudged: format.Float(dist[4])},
			RelevanceByPosition: format.Floats(s.ByPosition),
			FailedQueries:       strs(s.Failed), BestQueries: strs(s.Best), WorstQueries: strs(s.Worst),
			RunQueries: s.RunQueries, NotJudged: s.NotJudged,
		}
		d.Order = append(d.Order, s.Name)
	}
	for _, p := range r.Paired {
		d.Paired = append(d.Paired, Paired{
			Strategy: p.Strategy, Baseline: p.Baseline, Metric: p.Metric,
			Delta: format.Float(p.Delta), CI95: format.CI(p.CI), PValue: format.Float(p.PHolm),
			PUnadjusted: format.Float(p.P), Significant: p.Significant,
		})
	}
	if l := r.Leader; l != nil {
		d.RecommendationTest = &Leader{
			Best: l.Strategy, RunnerUp: l.Baseline, Metric: l.Metric,
			Delta: format.Float(l.Delta), CI95: format.CI(l.CI), PValue: format.Float(l.PHolm),
			PUnadjusted: format.Float(l.P), Significant: l.Significant,
		}
	}
	ci, p := CIMethodBootstrap, PMethodRandomization
	if !r.Exact {
		ci, p = CIMethodApproximation, PMethodApproximation
	}
	d.Statistics = Statistics{
		Resampled: r.Exact, CI95Method: ci, PValueMethod: p,
		Resamples: r.Resamples, Seed: r.Seed, ResamplingBudget: metrics.ExactResamplingBudget,
		PAdjustment: "holm", Alpha: format.Float(compare.Alpha),
	}
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
		p := s.Metrics[compare.Primary]
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

// Read reads a compare document written by WriteJSON.
func Read(r io.Reader) (*Document, error) {
	d := &Document{}
	if err := json.NewDecoder(r).Decode(d); err != nil {
		return nil, fmt.Errorf("not a compare report: %w", err)
	}
	if d.Schema != Schema {
		return nil, fmt.Errorf("schema %q is not %q", d.Schema, Schema)
	}
	if d.Strategies == nil {
		d.Strategies = map[string]*Strategy{}
	}
	d.derive()
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
