// Package checkreport is the typed document of `check` (schema
// retrieval-gate/aggregates@1): built from a gate.Result in one place (New),
// written as the --json report, read back by Read (the baseline of a later run
// reads a previous report this way), and rendered as text and Markdown. The
// renderers take the document and do no arithmetic. (The --cases-out lines,
// data check reads back, are internal/gate's: gate.AppendCaseLine.)
package checkreport

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/gate"
	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
	"github.com/retrieval-gate/retrieval-gate/internal/report/gatetable"
	"github.com/retrieval-gate/retrieval-gate/internal/report/readback"
	"github.com/retrieval-gate/retrieval-gate/internal/report/trendtable"
	"github.com/retrieval-gate/retrieval-gate/internal/trend"
)

// Schema is the schema id of the `check --json` report.
const Schema = "retrieval-gate/aggregates@1"

// IndicativeOnly labels every locale delta wherever it is shown, and the
// churn's figures by locale (the words of a per-locale floor's and churn
// gate's reason).
const IndicativeOnly = gatetable.LocaleIndicative

// Document is the check report. Fields are declared in the alphabetical order of
// their JSON names, so the JSON has sorted keys at every level (maps are sorted
// by encoding/json). Missed is for the renderers only (the per-case file has
// every case); Read leaves it empty and sets MissedNotCarried, so a report
// rendered again from the JSON says the missed cases are not in it.
//
// Additions to the contract's example: cases.precomputed; per group
// without_gold and per metric n; integrity.problems_total and
// integrity.unknown_retrieved; locale_deltas_note; cases.unknown_keys; the gates
// non_empty and floor:MEASURE@GROUP; per gate its group, measure, n,
// detectable_difference, and its reason when it has one.
type Document struct {
	Baseline         *Baseline                          `json:"baseline,omitempty"` // --baseline (baseline.go)
	ByLocale         map[string]Group                   `json:"by_locale"`
	ByType           map[string]Group                   `json:"by_type"`
	Cases            Cases                              `json:"cases"`
	Gates            []Gate                             `json:"gates"`
	GroupsOmitted    GroupsOmitted                      `json:"groups_omitted"`
	Integrity        Integrity                          `json:"integrity"`
	K                int                                `json:"k"`
	LocaleDeltas     map[string]map[string]format.Float `json:"locale_deltas"`
	LocaleDeltasNote string                             `json:"locale_deltas_note"`
	Overall          Group                              `json:"overall"`
	ReferenceLocale  string                             `json:"reference_locale"`
	Schema           string                             `json:"schema"`
	Verdict          outcome.Status                     `json:"verdict"`

	Missed           []Missed `json:"-"` // the first missed cases, file order
	MissedTotal      int64    `json:"-"`
	MissedNotCarried bool     `json:"-"` // read back from JSON: Missed and MissedTotal are unknown

	// Trend is the gated measures over the base branch's last runs (--history
	// with --trend-runs): shown in the Markdown and text reports, not in the
	// JSON, whose document is what a history stores (a trend in it would nest
	// the history in itself; the history is the trend's machine-readable source).
	Trend *trend.Trend `json:"-"`
}

// MissedNotCarriedLine is what a report rendered again from the JSON says in
// place of the missed cases.
const MissedNotCarriedLine = "not in the JSON report; the per-case scores (--cases-out) list them"

// GroupsOmitted counts the type and locale groups beyond gate.MaxGroups (the
// largest by cases are kept), neither computed nor shown; their cases count in
// the overall group.
type GroupsOmitted struct {
	Locale Omitted `json:"locale"`
	Type   Omitted `json:"type"`
}

// Omitted is a number of groups and of the cases in them.
type Omitted struct {
	Cases  int64 `json:"cases"`
	Groups int   `json:"groups"`
}

// omittedLine says which groups are not shown, or "" when all are.
func (d *Document) omittedLine() string {
	var parts []string
	for _, x := range []struct {
		what string
		o    Omitted
	}{{"types", d.GroupsOmitted.Type}, {"locales", d.GroupsOmitted.Locale}} {
		if x.o.Groups > 0 {
			parts = append(parts, fmt.Sprintf("%d more %s (%d cases)", x.o.Groups, x.what, x.o.Cases))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("only the %d largest type and locale groups are computed and shown: %s are not (their cases count in overall)", gate.MaxGroups, strings.Join(parts, " and "))
}

// Cases counts the input cases, and the cases with top-level keys the format
// does not know (a misspelt field, another harness's shape), by key.
type Cases struct {
	Precomputed int64        `json:"precomputed"`
	Total       int64        `json:"total"`
	UnknownKeys []UnknownKey `json:"unknown_keys"`
	WithGold    int64        `json:"with_gold"`
	WithoutGold int64        `json:"without_gold"`
}

// UnknownKey is a top-level key the cases format does not know and how many
// cases carry it; key "" counts the cases with other unknown keys beyond the
// first hundred names.
type UnknownKey struct {
	Cases int64  `json:"cases"`
	Key   string `json:"key"`
}

// Group is the aggregate of a set of cases; N counts its gold-carrying cases,
// and a group with N = 0 has no metrics. WithRelevantIDs counts those of the N
// that carry relevant_ids: their recall@k and nDCG@k are real recall, the
// others' a lower bound under disjunctive gold.
type Group struct {
	Metrics         map[string]Summary `json:"metrics"`
	N               int64              `json:"n"`
	WithRelevantIDs int64              `json:"with_relevant_ids"`
	WithoutGold     int64              `json:"without_gold"`
}

// Summary is one measure's mean, 95% CI and n in a group: ci95_method says how
// the interval was computed (wilson-cc for 0/1 values, hall-t below 30 cases and
// from metrics.LargeSampleMinN, bca in between, or bounded-wilson-cc /
// range when every value is equal), unreliable that its method's simulated coverage at n is below 0.95.
// When cases carry a `cluster` key (cases in families), clusters is the number
// of clusters the n cases fall into (a case without a key is one) and the
// interval is computed over them (cluster-t); absent otherwise.
type Summary struct {
	CI95       [2]format.Float `json:"ci95"`
	CI95Method string          `json:"ci95_method"`
	Clusters   int64           `json:"clusters,omitempty"`
	Mean       format.Float    `json:"mean"`
	N          int64           `json:"n"`
	Unreliable bool            `json:"unreliable"`
}

// Gate is one gate's outcome, as every report lists it (see gatetable.Entry):
// the contract's name, status, threshold and value (present for a gate on a
// measure, null when off), plus group, measure, n, reason, detectable_difference.
type Gate = gatetable.Entry

// Integrity is the dataset-integrity gate's evidence.
type Integrity struct {
	KBCards       int              `json:"kb_cards"`
	OK            bool             `json:"ok"`
	Problems      []Problem        `json:"problems"`
	ProblemsTotal int64            `json:"problems_total"`
	Unknown       UnknownRetrieved `json:"unknown_retrieved"`
}

// Problem is a gold id that does not resolve to a card of the knowledge base.
type Problem struct {
	CaseID string `json:"case_id"`
	File   string `json:"file"`
	GoldID string `json:"gold_id"`
	Line   int    `json:"line"`
	Reason string `json:"reason"`
}

// UnknownRetrieved is the stale-index warning.
type UnknownRetrieved struct {
	Cases    int64    `json:"cases"`
	Entries  int64    `json:"entries"`
	Examples []string `json:"examples"`
}

// Missed is a missed case (hit@k = 0) as the Markdown lists it.
type Missed struct {
	ID, File, Locale, Type, Query string
	Line                          int
	Gold, TopK                    []string
	Precomputed                   bool
}

func group(g gate.Group) Group {
	m := make(map[string]Summary, len(g.Metrics))
	for _, x := range g.Metrics {
		m[x.Key] = Summary{Mean: format.Float(x.Mean), CI95: format.CI(x.CI95), N: x.N, CI95Method: x.Method, Unreliable: x.Unreliable, Clusters: x.Clusters}
	}
	return Group{Metrics: m, N: g.N, WithoutGold: g.WithoutGold, WithRelevantIDs: g.WithRelevant}
}

// New builds the document of a check result: the one place the domain result
// becomes what the reports show.
func New(r *gate.Result) *Document {
	d := &Document{
		Schema: Schema, K: r.K,
		Cases:    Cases{Total: r.Total, WithGold: r.WithGold, WithoutGold: r.WithoutGold, Precomputed: r.Precomputed},
		Overall:  group(r.Overall),
		ByType:   make(map[string]Group, len(r.ByType)),
		ByLocale: make(map[string]Group, len(r.ByLocale)),
		GroupsOmitted: GroupsOmitted{
			Type:   Omitted{Groups: r.TypesOmitted.Groups, Cases: r.TypesOmitted.Cases},
			Locale: Omitted{Groups: r.LocalesOmitted.Groups, Cases: r.LocalesOmitted.Cases},
		},
		ReferenceLocale: r.ReferenceLocale,
		LocaleDeltas:    make(map[string]map[string]format.Float, len(r.Deltas)),
		Verdict:         r.Verdict(),
		MissedTotal:     r.MissedTotal,
	}
	for _, g := range r.ByType {
		d.ByType[g.Name] = group(g)
	}
	for _, g := range r.ByLocale {
		d.ByLocale[g.Name] = group(g)
	}
	for _, ld := range r.Deltas {
		m := make(map[string]format.Float, len(ld.Deltas))
		for _, x := range ld.Deltas {
			m[x.Key] = format.Float(x.Value)
		}
		d.LocaleDeltas[ld.Locale] = m
	}
	d.LocaleDeltasNote = IndicativeOnly
	if !r.ReferenceHasGold {
		d.LocaleDeltasNote = "no deltas: " + d.noDeltas(strconv.Quote)
	}
	in := r.Integrity
	d.Integrity = Integrity{
		OK: in.OK, KBCards: in.KBCards, ProblemsTotal: in.ProblemsTotal, Problems: make([]Problem, 0, len(in.Problems)),
		Unknown: UnknownRetrieved{Entries: in.Unknown.Entries, Cases: in.Unknown.Cases, Examples: in.Unknown.Examples},
	}
	if d.Integrity.Unknown.Examples == nil {
		d.Integrity.Unknown.Examples = []string{}
	}
	for _, p := range in.Problems {
		d.Integrity.Problems = append(d.Integrity.Problems, Problem{File: p.File, Line: p.Line, CaseID: p.CaseID, GoldID: p.GoldID, Reason: ProblemReason(p.Kind)})
	}
	d.Gates = gatetable.FromOutcome(r.Gates)
	d.Cases.UnknownKeys = make([]UnknownKey, 0, len(r.UnknownKeys))
	for _, u := range r.UnknownKeys {
		d.Cases.UnknownKeys = append(d.Cases.UnknownKeys, UnknownKey{Cases: u.Cases, Key: u.Key})
	}
	for _, m := range r.Missed {
		d.Missed = append(d.Missed, Missed{ID: m.ID, File: m.File, Line: m.Line, Locale: m.Locale, Type: m.Type,
			Query: m.Query, Gold: m.Gold, TopK: m.TopK, Precomputed: m.Precomputed})
	}
	return d
}

// WriteJSON writes the document as the --json report: sorted keys, full-precision
// numbers (format.Float), two-space indentation, a final newline.
func (d *Document) WriteJSON(w io.Writer) error { return format.WriteJSON(w, d) }

// ReadParsed reads a check document written by WriteJSON, which
// readback.Parse has read and parsed (data and its tree: report.Read parses a
// document once to learn its schema). It is checked first as strictly as
// check writes it (validate): a value that is wrong is an *input.Error at its
// line, whose File is "" (the caller names the file).
func ReadParsed(data []byte, root *jsonpos.Value) (*Document, error) {
	d := &Document{}
	if err := readback.Decode(data, root, validate, d, "check report"); err != nil {
		return nil, err
	}
	if d.Schema != Schema {
		return nil, fmt.Errorf("schema %q is not %q", d.Schema, Schema)
	}
	d.MissedNotCarried = true
	return d, nil
}

// relevantLine says, when any case carries relevant_ids, how many of each
// group's scored cases do ("" when none does); label renders a group's name.
func (d *Document) relevantLine(label func(string) string) string {
	if d.Overall.WithRelevantIDs == 0 {
		return ""
	}
	part := func(name string, g Group) string {
		return fmt.Sprintf("%s %d of %d", label(name), g.WithRelevantIDs, g.N)
	}
	parts := []string{part("overall", d.Overall)}
	for _, name := range sortedKeys(d.ByType) {
		parts = append(parts, part("type "+name, d.ByType[name]))
	}
	for _, name := range sortedKeys(d.ByLocale) {
		parts = append(parts, part("locale "+name, d.ByLocale[name]))
	}
	return fmt.Sprintf("cases with relevant_ids (recall@%d and nDCG@%d are real recall for them, a lower bound for the others): %s",
		d.K, d.K, strings.Join(parts, ", "))
}

// referenceHasGold reports whether the reference locale has gold-carrying cases.
func (d *Document) referenceHasGold() bool { return d.ByLocale[d.ReferenceLocale].N > 0 }

// noDeltas says why a report shows no locale deltas, or "" when it shows some;
// quote renders the reference locale for the report's format.
func (d *Document) noDeltas(quote func(string) string) string {
	switch {
	case !d.referenceHasGold():
		return "the reference locale " + quote(d.ReferenceLocale) + " has no gold-carrying cases"
	case len(d.LocaleDeltas) == 0:
		return "no other locale has gold-carrying cases"
	}
	return ""
}

// columns are the metric keys of the report: those of the overall group,
// registered measures first in registry order, then the others sorted; every
// registered measure when the overall group has none.
func (d *Document) columns() []string {
	var keys, extra []string
	for _, k := range metrics.CaseKeys {
		if _, ok := d.Overall.Metrics[k]; ok {
			keys = append(keys, k)
		}
	}
	for k := range d.Overall.Metrics {
		if metrics.CaseIndex(k) < 0 {
			extra = append(extra, k)
		}
	}
	slices.Sort(extra)
	keys = append(keys, extra...)
	if len(keys) == 0 {
		keys = metrics.CaseKeys
	}
	return keys
}

// sortedKeys returns the keys of a map of groups (or deltas) in name order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// label is the short label of a metric key at cut k (the key itself when it is
// not a registered measure).
func (d *Document) label(key string) string {
	if i := metrics.CaseIndex(key); i >= 0 {
		return metrics.CaseMeasures[i].LabelAt(d.K)
	}
	return key
}

// meanCI is a group's "mean [lo, hi]" of key, with the metric's n when it differs
// from the group's, or the missing glyph.
func meanCI(g Group, key string) string {
	m, ok := g.Metrics[key]
	if !ok || m.N == 0 {
		return format.Missing
	}
	s := format.Num(m.Mean.V()) + " " + format.Interval([2]float64{m.CI95[0].V(), m.CI95[1].V()})
	if m.Unreliable {
		s += UnreliableMark
	}
	if m.N != g.N {
		s += fmt.Sprintf(" (n=%d)", m.N)
	}
	return s
}

// UnreliableMark follows an interval whose method's simulated coverage at its n
// is below 0.95; UnreliableNote
// is its footnote in the text, Markdown and HTML reports.
const (
	UnreliableMark = format.UnreliableMark
	UnreliableNote = format.UnreliableNote + " (a mean that varies below 20 cases, one that does not below 30; docs/statistics.md)"
)

// anyMetric reports whether a metric of a group (overall, by type, by locale)
// satisfies ok.
func (d *Document) anyMetric(ok func(Summary) bool) bool {
	groups := []Group{d.Overall}
	for _, g := range d.ByType {
		groups = append(groups, g)
	}
	for _, g := range d.ByLocale {
		groups = append(groups, g)
	}
	for _, g := range groups {
		for _, m := range g.Metrics {
			if ok(m) {
				return true
			}
		}
	}
	return false
}

// anyUnreliable reports whether a group's interval is marked.
func (d *Document) anyUnreliable() bool {
	return d.anyMetric(func(m Summary) bool { return m.Unreliable && m.N > 0 })
}

// MeanMethods names the methods of the means' intervals for the legends:
// hall-t below 30 cases and BCa from 30, and when a group's interval is
// hall-t from metrics.LargeSampleMinN cases (the document says so: its
// ci95_method) that too.
//
// When cases carry a `cluster` key it first says so: the overall n cases in
// how many clusters, and that each group's interval is computed over its
// own clusters (cluster-t), the other methods applying to a group none of
// whose cases carries a key.
func (d *Document) MeanMethods() string {
	s := "Wilson (continuity-corrected) for 0/1 values, else hall-t (t united with Hall's skewness-corrected t) below 30 cases, BCa bootstrap from 30"
	if d.largeHallT() {
		s += fmt.Sprintf(", hall-t again from %d", metrics.LargeSampleMinN)
	}
	var n, g int64
	for _, key := range sortedKeys(d.Overall.Metrics) {
		if m := d.Overall.Metrics[key]; m.Clusters > 0 {
			n, g = m.N, m.Clusters
			break
		}
	}
	if g > 0 {
		s = fmt.Sprintf("cases in families: %d cases in %s overall (a case without a cluster key is one), each group's interval computed over its own clusters (cluster-t: Student's t with the cluster-robust standard error); in a group without a cluster key: %s", n, format.Count(g, "cluster", "clusters"), s)
	}
	return s
}

// largeHallT reports whether a group's interval is hall-t from
// metrics.LargeSampleMinN cases.
func (d *Document) largeHallT() bool {
	return d.anyMetric(func(m Summary) bool { return m.CI95Method == metrics.MethodHallT && m.N >= metrics.LargeSampleMinN })
}

// DeltaN is the n a locale's deltas rest on, looked up in by_locale (the
// entries of locale_deltas carry none): the locale's gold-carrying cases, then
// the reference locale's. ok is false when the document lacks either group (one
// not written by check, which always writes both).
func (d *Document) DeltaN(locale string) (n, ref int64, ok bool) {
	g, okG := d.ByLocale[locale]
	r, okR := d.ByLocale[d.ReferenceLocale]
	return g.N, r.N, okG && okR
}

// DeltaMeasureN is the n of a locale's delta of key when it is not DeltaN's:
// each side's measure n (smaller than its group's where precomputed scores lack
// the key), then the reference locale's; ok is false when both are their
// group's n, or when the document lacks the delta or a group.
func (d *Document) DeltaMeasureN(locale, key string) (n, ref int64, ok bool) {
	if _, has := d.LocaleDeltas[locale][key]; !has {
		return 0, 0, false
	}
	g, okG := d.ByLocale[locale]
	r, okR := d.ByLocale[d.ReferenceLocale]
	if !okG || !okR {
		return 0, 0, false
	}
	m, rm := g.Metrics[key], r.Metrics[key]
	return m.N, rm.N, m.N != g.N || rm.N != r.N
}

// deltaN is "n=42 vs 51" (DeltaN; "—" for a group the document lacks).
func (d *Document) deltaN(locale string) string {
	n, ref, ok := d.DeltaN(locale)
	if !ok {
		return "n=" + format.Missing
	}
	return fmt.Sprintf("n=%d vs %d", n, ref)
}

// deltaCell is a locale's delta of key, signed, with its measure's n when it is
// not the groups' (as meanCI's), or the missing glyph.
func (d *Document) deltaCell(locale, key string) string {
	v := d.delta(locale, key)
	s := format.Signed(v)
	if n, ref, ok := d.DeltaMeasureN(locale, key); ok && !math.IsNaN(v) {
		s += fmt.Sprintf(" (n=%d vs %d)", n, ref)
	}
	return s
}

// DeltaNLegend says what the n of a locale delta are; reference renders the
// reference locale for the report's format.
func (d *Document) DeltaNLegend(reference func(string) string) string {
	return "n: the locale's gold-carrying cases vs " + reference(d.ReferenceLocale) + "'s, the two groups each delta rests on"
}

// delta is a locale's delta of key, NaN when it has none.
func (d *Document) delta(locale, key string) float64 {
	if v, ok := d.LocaleDeltas[locale][key]; ok {
		return v.V()
	}
	return math.NaN()
}

// ragasKeys are the top-level keys of a ragas record: a file of them is
// converted by `retrieval-gate import`.
var ragasKeys = []string{"user_input", "retrieved_context_ids", "reference_context_ids"}

// UnknownKeysWarning is the one warning about top-level case keys the format
// does not know (their names and counts), pointing at `retrieval-gate import`
// when they are a ragas record's; "" when there are none. Plain text: the
// renderers escape it.
func (d *Document) UnknownKeysWarning() string {
	if len(d.Cases.UnknownKeys) == 0 {
		return ""
	}
	parts := make([]string, 0, len(d.Cases.UnknownKeys))
	ragas := false
	for _, u := range d.Cases.UnknownKeys {
		name := strconv.Quote(u.Key)
		if u.Key == "" {
			name = "other keys"
		}
		parts = append(parts, fmt.Sprintf("%s (%s)", name, format.Count(u.Cases, "case", "cases")))
		ragas = ragas || slices.Contains(ragasKeys, u.Key)
	}
	s := "the cases have top-level keys the cases format does not know, ignored: " + strings.Join(parts, ", ") +
		" (a misspelt field? the fields are id, locale, type, query, must_cite_one_of, retrieved, scores)"
	if ragas {
		s += "; they look like a ragas file: convert it with `retrieval-gate import --format ragas --in FILE --out cases.jsonl`"
	}
	return s
}

// TrendMeasures are the measures the Markdown report's trend shows
// (trend.CheckMeasures of the gates).
func (d *Document) TrendMeasures() []trend.Measure {
	return trend.CheckMeasures(trendtable.Gates(d.Gates))
}
