package comparereport

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

// Human is the JSON "human" object (compare --human-qrels; absent without):
// the judge's figures corrected by human labels on a random sample of queries
// (PPI++). "decides" is true: the recommendation ("recommendation_test", whose
// p_value_method is then compare.PMethodPPI) and the gates use these figures.
// "n" is the human-labelled evaluated queries; "pairs" the graded rows;
// "not_evaluated" the labelled queries the judge's qrels do not evaluate (left
// out); "unlabelled_queries" the sheet's queries with no grade; "holes" the
// top-k documents of the labelled queries the sheet does not grade (scored 0).
// "strategies" gives, per strategy and measure, the judge-only mean and
// interval, the corrected (PPI++) estimate with its interval, standard error
// and λ̂, the human-only mean and interval, the human n and the n of the
// measure, and how much narrower the corrected interval is than the
// human-only one (1 − width ratio). "paired" is the top-level "paired" corrected.
//
// With the queries' locales (compare --queries) the estimates are stratified
// by locale: "method" is ppi++-stratified, "strata" says how (the locales,
// their evaluated and labelled queries and weights), each corrected measure
// names its "ci95_method", and "by_locale" gives each locale's own corrected
// estimate per strategy and measure (null below LocaleMinLabelled labelled
// queries: "too_few"). Absent without locales, so a report without them
// reads as before.
//
// When the queries come in clusters (compare --clusters, or the cases'
// cluster keys) every corrected interval and test is computed over the
// clusters (metrics.PPIClustered: the delete-one-cluster jackknife): "method"
// is ppi++-cluster-jackknife (ppi++-stratified-cluster-jackknife with
// strata), "clusters" the clusters holding a labelled query, and each
// corrected measure names its "ci95_method" and its own "clusters"; absent
// without clusters.
type Human struct {
	ByLocale     map[string]map[string]map[string]LocaleCorrected `json:"by_locale,omitempty"`
	Clusters     int                                              `json:"clusters,omitempty"`
	Decides      bool                                             `json:"decides"`
	File         string                                           `json:"file"`
	Holes        int                                              `json:"holes"`
	JudgeBias    JudgeBias                                        `json:"judge_bias"`
	Method       string                                           `json:"method"`
	N            int                                              `json:"n"`
	NotEvaluated int                                              `json:"not_evaluated"`
	Paired       []Paired                                         `json:"paired"`
	Pairs        int                                              `json:"pairs"`
	Strata       *Strata                                          `json:"strata,omitempty"`
	Strategies   map[string]map[string]Corrected                  `json:"strategies"`
	Unlabelled   int                                              `json:"unlabelled_queries"`
}

// Strata is how the corrected estimates are stratified by locale: the
// queries file the locales come from, each locale with its evaluated queries
// (n), labelled ones (n_human), weight (its share of the evaluated queries;
// each measure weighs by its own) and stratum; the locales with fewer than
// min_labelled labelled queries share one stratum ("shared", with
// shared_n_human labelled queries), and "pooled" is true when that stratum
// is too small: the estimates are then the pooled ones.
type Strata struct {
	By           string          `json:"by"`
	File         string          `json:"file"`
	Locales      []LocaleStratum `json:"locales"`
	MinLabelled  int             `json:"min_labelled"`
	Pooled       bool            `json:"pooled"`
	Shared       []string        `json:"shared"`
	SharedNHuman int             `json:"shared_n_human"`
	Strata       int             `json:"strata"`
}

// LocaleStratum is one locale of the evaluated queries.
type LocaleStratum struct {
	Locale  string       `json:"locale"`
	N       int          `json:"n"`
	NHuman  int          `json:"n_human"`
	Stratum int          `json:"stratum"`
	Weight  format.Float `json:"weight"`
}

// LocaleCorrected is one locale's own corrected estimate of a strategy's
// measure (its λ̂ and jackknife standard error): null below
// compare.LocaleMinLabelled labelled queries ("too_few").
type LocaleCorrected struct {
	CI95       [2]format.Float `json:"ci95"`
	CI95Method string          `json:"ci95_method"`
	Clusters   int             `json:"clusters,omitempty"` // labelled clusters, over clusters
	Estimate   format.Float    `json:"corrected"`
	Lambda     format.Float    `json:"lambda"`
	N          int             `json:"n"`
	NHuman     int             `json:"n_human"`
	SE         format.Float    `json:"se"`
	TooFew     bool            `json:"too_few"`
}

// Corrected is one strategy's measure, judge-only and corrected.
type Corrected struct {
	CI95          [2]format.Float `json:"ci95"`
	CI95Method    string          `json:"ci95_method,omitempty"` // with strata or clusters only: ppi++-stratified, ppi++-cluster-jackknife…, or the pooled fallback's
	Clusters      int             `json:"clusters,omitempty"`    // over clusters: the clusters holding a labelled query of the measure
	Estimate      format.Float    `json:"corrected"`
	HumanOnly     format.Float    `json:"human_only"`
	HumanOnlyCI95 [2]format.Float `json:"human_only_ci95"`
	JudgeOnly     format.Float    `json:"judge_only"`
	JudgeOnlyCI95 [2]format.Float `json:"judge_only_ci95"`
	Lambda        format.Float    `json:"lambda"`
	N             int             `json:"n"`
	NHuman        int             `json:"n_human"`
	Narrower      format.Float    `json:"narrower_than_human_only"`
	SE            format.Float    `json:"se"`
	Unreliable    bool            `json:"unreliable"`
}

// JudgeBias is the judge against the humans on the sample's pairs: confusion
// [human grade][judge grade], the mean signed error (judge − human) overall
// and per human level, the pairs compared and those the judge did not grade.
type JudgeBias struct {
	ByLevel   []LevelBias  `json:"by_level"`
	Confusion [][]int      `json:"confusion"`
	MSE       format.Float `json:"mean_signed_error"`
	N         int          `json:"n"`
	Unjudged  int          `json:"unjudged"`
}

// LevelBias is the judge's mean signed error on the pairs people graded Level.
type LevelBias struct {
	Level int          `json:"level"`
	MSE   format.Float `json:"mean_signed_error"`
	N     int          `json:"n"`
}

// newHuman is the "human" object of r (nil without human labels).
func newHuman(r *compare.Result) *Human {
	h := r.Human
	if h == nil {
		return nil
	}
	out := &Human{Decides: true, File: h.File, Holes: h.Holes, Method: metrics.MethodPPIJackknife, N: h.N, NotEvaluated: h.NotEvaluated,
		Pairs: h.Pairs, Unlabelled: h.Unlabelled, Strategies: map[string]map[string]Corrected{}, Paired: make([]Paired, 0, len(h.Paired))}
	if h.Strata != nil {
		out.Strata = newStrata(h.Strata)
		if !h.Strata.Pooled {
			out.Method = metrics.MethodPPIStratified
		}
		out.ByLocale = map[string]map[string]map[string]LocaleCorrected{}
	}
	if h.Clusters > 0 {
		out.Clusters = h.Clusters
		out.Method = metrics.MethodPPIClusterJackknife
		if h.Strata != nil && !h.Strata.Pooled {
			out.Method = metrics.MethodPPIStratifiedClusterJackknife
		}
	}
	for s := range r.Strategies {
		st := &r.Strategies[s]
		ms := map[string]Corrected{}
		for m, key := range metrics.GradedKeys {
			e, ho := h.Means[s][m], h.HumanOnly[s][m]
			narrower := 1 - (e.Hi-e.Lo)/(ho.Hi-ho.Lo)
			c := Corrected{JudgeOnly: format.Float(st.Means[m]), JudgeOnlyCI95: format.CI(st.CI[m].CI()),
				Estimate: format.Float(e.Estimate), CI95: format.CI([2]float64{e.Lo, e.Hi}), SE: format.Float(e.SE), Lambda: format.Float(e.Lambda),
				HumanOnly: format.Float(ho.Estimate), HumanOnlyCI95: format.CI([2]float64{ho.Lo, ho.Hi}),
				N: st.MeasureN[m], NHuman: e.N, Narrower: format.Float(narrower), Unreliable: e.Interval().Unreliable}
			if h.Strata != nil || h.Clusters > 0 {
				c.CI95Method, c.Clusters = e.Method, e.Clusters
			}
			ms[key] = c
		}
		out.Strategies[st.Name] = ms
		if h.Strata == nil {
			continue
		}
		for l, loc := range h.Strata.Locales {
			byS := out.ByLocale[loc.Locale]
			if byS == nil {
				byS = map[string]map[string]LocaleCorrected{}
				out.ByLocale[loc.Locale] = byS
			}
			lm := map[string]LocaleCorrected{}
			for m, key := range metrics.GradedKeys {
				lm[key] = localeCorrected(h.ByLocale[l][s][m])
			}
			byS[st.Name] = lm
		}
	}
	for i := range h.Paired {
		out.Paired = append(out.Paired, paired(&h.Paired[i]))
	}
	b := h.Bias
	out.JudgeBias = JudgeBias{Confusion: b.Confusion, MSE: format.Float(b.MSE), N: b.N, Unjudged: b.Unjudged}
	for _, l := range b.ByLevel {
		out.JudgeBias.ByLevel = append(out.JudgeBias.ByLevel, LevelBias{Level: l.Level, MSE: format.Float(l.MSE), N: l.N})
	}
	return out
}

func newStrata(st *compare.Strata) *Strata {
	out := &Strata{By: "locale", File: st.File, MinLabelled: compare.StratumMinLabelled, Pooled: st.Pooled, Shared: st.Shared,
		SharedNHuman: st.SharedN, Strata: st.NumStrata}
	if out.Shared == nil {
		out.Shared = []string{}
	}
	for l, loc := range st.Locales {
		out.Locales = append(out.Locales, LocaleStratum{Locale: loc.Locale, N: loc.Queries, NHuman: loc.Labelled, Weight: format.Float(loc.Weight), Stratum: st.Stratum[l]})
	}
	return out
}

// localeCorrected is a locale's own estimate as the JSON gives it: null
// figures below compare.LocaleMinLabelled labelled queries.
func localeCorrected(e metrics.PPI) LocaleCorrected {
	out := LocaleCorrected{N: e.N + e.Others, NHuman: e.N}
	if e.N < compare.LocaleMinLabelled {
		nan := format.Float(math.NaN())
		out.Estimate, out.CI95, out.SE, out.Lambda, out.TooFew = nan, [2]format.Float{nan, nan}, nan, nan, true
		return out
	}
	out.Estimate, out.CI95, out.SE, out.Lambda = format.Float(e.Estimate), format.CI([2]float64{e.Lo, e.Hi}), format.Float(e.SE), format.Float(e.Lambda)
	out.CI95Method, out.Clusters = e.Method, e.Clusters
	return out
}

// humanBasis is the sentence after the recommendation when human labels
// correct the figures ("" without); see points to the section of the
// renderer's own output that shows them ("": the sentence is in it).
func (d *Document) humanBasis(see string) string {
	h := d.Human
	if h == nil {
		return ""
	}
	how := "PPI++"
	if d.stratified() {
		how = "PPI++ stratified by locale"
	}
	if h.Clusters > 0 {
		how += fmt.Sprintf(" over the %s of the labelled queries", format.Count(h.Clusters, "cluster", "clusters"))
	}
	s := fmt.Sprintf("The recommendation and the gates use the human-corrected figures (%s: the judge's values of every query, corrected by %d human-labelled queries)", how, h.N)
	if see != "" {
		s += "; see " + see
	}
	return s + "."
}

// humanSignFlipLine says how a corrected difference without variation among
// its labelled queries is tested ("" when no corrected paired row is).
func (d *Document) humanSignFlipLine() string {
	if d.Human == nil || !slices.ContainsFunc(d.Human.Paired, func(p Paired) bool { return compare.IsHumanSignFlip(p.PValueMethod) }) {
		return ""
	}
	return "Where the labelled queries leave a corrected difference no variation (standard error 0, the difference not 0), PPI++'s t statistic has nothing to divide by: p is then the exact sign-flip test of the labelled queries' human paired differences (" +
		compare.PMethodHumanSignFlipExact + "; p = 2·0.5^n when all n are equal; over queries in families, of the clusters' sums), and the interval the rule of three."
}

// humanIntro is the first line of the human section.
func (d *Document) humanIntro(file string) string {
	h := d.Human
	s := fmt.Sprintf("PPI++ (power-tuned prediction-powered inference): n human = %d labelled queries (%d graded pairs, %s)", h.N, h.Pairs, file)
	if h.NotEvaluated > 0 {
		s += fmt.Sprintf("; %d labelled queries the judge's qrels do not evaluate were left out", h.NotEvaluated)
	}
	if h.Unlabelled > 0 {
		s += fmt.Sprintf("; %d sampled queries have no grade yet", h.Unlabelled)
	}
	if h.Holes > 0 {
		s += fmt.Sprintf("; %d top-%d documents of labelled queries are not on the sheet and count 0", h.Holes, d.K)
	}
	if h.Clusters > 0 {
		s += fmt.Sprintf("; queries in families: the labelled queries fall into %s, and every corrected interval and test is computed at the cluster level (delete-one-cluster jackknife, t with labelled clusters − 1 df; unreliable below %d labelled clusters)", format.Count(h.Clusters, "cluster", "clusters"), metrics.PPIMinClusters)
	}
	return s + "."
}

// humanNote explains the columns.
const humanNote = "judge only: the mean of the judge's labels (its interval covers the sampling of queries, not the judge's bias); corrected: PPI++ estimate and 95% interval (t with n human − 1 df, its standard error from the jackknife over the labelled queries, λ̂ tuned again without each; clipped to the measure's range); human only: the labelled queries alone; narrower: how much narrower the corrected interval is than the human-only one; λ̂: the weight given to the judge (0: none, 1: plain PPI)"

// humanStratifiedNote is humanNote when the estimates are stratified by locale.
const humanStratifiedNote = "judge only: the mean of the judge's labels (its interval covers the sampling of queries, not the judge's bias); corrected: PPI++ estimate stratified by locale, Σ weight × the locale's estimate (each locale its own λ̂ and jackknife standard error over its labelled queries), and its 95% interval (t with the Welch–Satterthwaite degrees of freedom of the locales' standard errors; clipped to the measure's range); human only: the labelled queries alone, pooled; narrower: how much narrower the corrected interval is than the human-only one; λ̂: — (each locale has its own weight given to the judge: the table by locale)"

// humanClusterNote is humanNote when the queries come in clusters.
const humanClusterNote = "judge only: the mean of the judge's labels (its interval covers the sampling of queries, not the judge's bias); corrected: PPI++ estimate and 95% interval over the clusters (t with labelled clusters − 1 df, its standard error from the delete-one-cluster jackknife: every query of a cluster, labelled or not, left out and λ̂ tuned again; clipped to the measure's range); human only: the labelled queries alone, over their clusters; narrower: how much narrower the corrected interval is than the human-only one; λ̂: the weight given to the judge (0: none, 1: plain PPI)"

// humanStratifiedClusterNote is humanNote when the estimates are stratified
// by locale and the queries come in clusters.
const humanStratifiedClusterNote = "judge only: the mean of the judge's labels (its interval covers the sampling of queries, not the judge's bias); corrected: PPI++ estimate stratified by locale, Σ weight × the locale's estimate (each locale its own λ̂), and its 95% interval over the clusters (the delete-one-cluster jackknife of the weighted sum, a cluster spanning locales left out of each at once; t with labelled clusters − 1 df; clipped to the measure's range); human only: the labelled queries alone, pooled, over their clusters; narrower: how much narrower the corrected interval is than the human-only one; λ̂: — (each locale has its own weight given to the judge: the table by locale)"

// clustered reports whether the corrected estimates are computed over clusters.
func (d *Document) clustered() bool { return d.Human != nil && d.Human.Clusters > 0 }

// stratified reports whether the corrected estimates are stratified by locale.
func (d *Document) stratified() bool {
	return d.Human != nil && d.Human.Strata != nil && !d.Human.Strata.Pooled
}

// note is the note under the corrected table.
func (d *Document) note() string {
	switch {
	case d.stratified() && d.clustered():
		return humanStratifiedClusterNote
	case d.clustered():
		return humanClusterNote
	case d.stratified():
		return humanStratifiedNote
	}
	return humanNote
}

// strataLine says how the corrected estimates are stratified by locale ("":
// the queries' locales are not known, or there is one).
func (d *Document) strataLine(name func(string) string) string {
	st := d.Human.Strata
	if st == nil {
		return ""
	}
	if st.Pooled {
		if st.Strata < 2 {
			return fmt.Sprintf("Not stratified by locale (%s): every locale has fewer than %d labelled queries; the estimates are pooled (one λ̂ for every locale).", name(st.File), st.MinLabelled)
		}
		return fmt.Sprintf("Not stratified by locale (%s): the locales with fewer than %d labelled queries (%s) have %d together, too few for a stratum of their own; the estimates are pooled (one λ̂ for every locale).",
			name(st.File), st.MinLabelled, name(strings.Join(st.Shared, ", ")), st.SharedNHuman)
	}
	parts := make([]string, len(st.Locales))
	for i, l := range st.Locales {
		parts[i] = fmt.Sprintf("%s %s (%d queries, %d labelled)", name(l.Locale), format.Num(l.Weight.V()), l.N, l.NHuman)
	}
	se := "jackknife standard error"
	if d.clustered() {
		se = "delete-one-cluster jackknife standard error"
	}
	s := fmt.Sprintf("Stratified by locale (%s): each locale's PPI++ estimate (its own λ̂ and %s) weighted by the locale's share of the measure's evaluated queries: %s", name(st.File), se, strings.Join(parts, ", "))
	if len(st.Shared) > 0 {
		s += fmt.Sprintf("; %s share one stratum (fewer than %d labelled queries each, %d together)", name(strings.Join(st.Shared, ", ")), st.MinLabelled, st.SharedNHuman)
	}
	return s + "."
}

// localeHead is the head of the per-locale table.
var localeHead = []string{"strategy", "locale", "weight", "n", "n human", "corrected", "95% CI", "λ̂"}

// localeRows are each strategy's and locale's own corrected estimate of the
// primary measure (nil without strata): the interval from
// compare.LocaleMinLabelled labelled queries, else the n said too small.
func (d *Document) localeRows(name func(string) string) [][]string {
	h := d.Human
	if h.Strata == nil {
		return nil
	}
	var rows [][]string
	for _, s := range d.strategies() {
		for _, l := range h.Strata.Locales {
			c := h.ByLocale[l.Locale][s.Name][d.Primary]
			row := []string{name(s.Name), name(l.Locale), format.Num(l.Weight.V()), strconv.Itoa(c.N), strconv.Itoa(c.NHuman)}
			if c.TooFew {
				row = append(row, format.Missing, fmt.Sprintf("n human %d < %d: too small for an interval", c.NHuman, compare.LocaleMinLabelled), format.Missing)
			} else {
				row = append(row, format.Num(c.Estimate.V()), format.Interval([2]float64{c.CI95[0].V(), c.CI95[1].V()}), format.Num(c.Lambda.V()))
			}
			rows = append(rows, row)
		}
	}
	return rows
}

// localeNote is the note under the per-locale table.
func (d *Document) localeNote() string {
	se := "jackknife standard error"
	if d.clustered() {
		se = "delete-one-cluster jackknife standard error over the locale's clusters"
	}
	return fmt.Sprintf("Each locale's own corrected %s (its own λ̂ and %s, clipped to the measure's range; the JSON's human.by_locale has every measure); a locale's mean and interval are shown from %d labelled queries of it, the human n from which a PPI++ interval is not marked unreliable; weight: the locale's share of the evaluated queries",
		d.metricCell(d.Primary), se, compare.LocaleMinLabelled)
}

// humanRows is the corrected table's rows: strategy, measure, judge only,
// corrected with its interval, human only with its interval, n human, λ̂,
// narrower.
func (d *Document) humanRows(name, measure func(string) string) [][]string {
	var rows [][]string
	for _, s := range d.strategies() {
		for _, m := range metrics.QueryMeasures {
			c := d.Human.Strategies[s.Name][m.Key]
			ci := format.Interval([2]float64{c.CI95[0].V(), c.CI95[1].V()})
			if c.Unreliable {
				ci += UnreliableMark
			}
			rows = append(rows, []string{name(s.Name), measure(m.Key), format.Num(c.JudgeOnly.V()), format.Num(c.Estimate.V()) + " " + ci,
				format.Num(c.HumanOnly.V()) + " " + format.Interval([2]float64{c.HumanOnlyCI95[0].V(), c.HumanOnlyCI95[1].V()}),
				strconv.Itoa(c.NHuman), format.Num(c.Lambda.V()), format.Pct(c.Narrower.V())})
		}
	}
	return rows
}

// humanMarks is the footnote of the corrected table's marked intervals and
// that of the corrected paired table's ("" where none is marked).
func (d *Document) humanMarks() (rows, paired string) {
	for _, ms := range d.Human.Strategies {
		for _, c := range ms {
			if c.Unreliable {
				rows = d.humanUnreliableLine()
			}
		}
	}
	for _, p := range d.Human.Paired {
		if p.Unreliable {
			paired = d.humanUnreliableLine()
		}
	}
	return rows, paired
}

// Each estimate shares its cell with its interval: ten columns were wider
// than GitHub's comment column.
var humanHead = []string{"strategy", "measure", "judge only", "corrected [95% CI]", "human only [95% CI]", "n human", "λ̂", "narrower"}

// biasRows is the confusion matrix with each human level's n and mean signed error.
func (d *Document) biasRows() (head []string, rows [][]string) {
	b := d.Human.JudgeBias
	head = []string{"human \\ judge"}
	if len(b.Confusion) > 0 {
		for j := range b.Confusion[0] {
			head = append(head, strconv.Itoa(j))
		}
	}
	head = append(head, "n", "mean signed error")
	for h, row := range b.Confusion {
		cells := []string{strconv.Itoa(h)}
		for _, c := range row {
			cells = append(cells, strconv.Itoa(c))
		}
		l := b.ByLevel[h]
		rows = append(rows, append(cells, strconv.Itoa(l.N), format.Signed(l.MSE.V())))
	}
	return head, rows
}

// biasLine sums up the judge's bias.
func (d *Document) biasLine() string {
	b := d.Human.JudgeBias
	s := fmt.Sprintf("The judge against people on the sample: mean signed error %s grade (judge − human) over %d pairs", format.Signed(b.MSE.V()), b.N)
	if b.Unjudged > 0 {
		s += fmt.Sprintf("; %d graded pairs the judge did not grade are not compared", b.Unjudged)
	}
	return s + "."
}

// humanText writes the human section of the text report.
func (d *Document) humanText(b *strings.Builder, name func(string) string) {
	if d.Human == nil {
		return
	}
	fmt.Fprintf(b, "\nhuman-corrected estimates: %s\n", d.humanIntro(name(d.Human.File)))
	t := &textTable{}
	t.add(humanHead...)
	for _, r := range d.humanRows(name, d.metricCell) {
		t.add(r...)
	}
	t.write(b)
	fmt.Fprintf(b, "  (%s)\n", d.note())
	rowsMark, pairedMark := d.humanMarks()
	if rowsMark != "" {
		fmt.Fprintf(b, "  %s\n", rowsMark)
	}
	if l := d.strataLine(name); l != "" {
		fmt.Fprintf(b, "%s\n", l)
	}
	if rows := d.localeRows(name); len(rows) > 0 {
		fmt.Fprintf(b, "\nhuman-corrected %s by locale:\n", d.metricCell(d.Primary))
		t = &textTable{}
		t.add(localeHead...)
		for _, r := range rows {
			t.add(r...)
		}
		t.write(b)
		fmt.Fprintf(b, "  (%s)\n", d.localeNote())
	}
	if len(d.Human.Paired) > 0 {
		fmt.Fprintf(b, "\nhuman-corrected paired comparisons against %s:\n", name(d.Baseline))
		t = &textTable{}
		t.add("strategy", "metric", "n human", "delta", "95% CI", "p", "p (Holm)", "test", "significant")
		var notes []string
		for _, p := range d.Human.Paired {
			t.add(name(p.Strategy), d.metricCell(p.Metric), strconv.Itoa(p.N), format.Signed(p.Delta.V()), d.ciCell(p), format.P(p.PUnadjusted.V()), format.P(p.PValue.V()), p.PValueMethod, yesNo(p.Significant)+noteMark(p, &notes))
		}
		t.write(b)
		for i, n := range notes {
			fmt.Fprintf(b, "  [%d] %s\n", i+1, n)
		}
		if l := d.humanSignFlipLine(); l != "" {
			fmt.Fprintf(b, "  %s\n", l)
		}
		if pairedMark != "" {
			fmt.Fprintf(b, "  %s\n", pairedMark)
		}
	}
	fmt.Fprintf(b, "\n%s\n", d.biasLine())
	head, rows := d.biasRows()
	t = &textTable{}
	t.add(head...)
	for _, r := range rows {
		t.add(r...)
	}
	t.write(b)
}

// humanMarkdown writes the human section of the Markdown report.
func (d *Document) humanMarkdown(b *strings.Builder) {
	if d.Human == nil {
		return
	}
	esc := format.EscapeMarkdown
	fmt.Fprintf(b, "\n### Human-corrected estimates\n\n%s\n\n", d.humanIntro(esc(d.Human.File)))
	b.WriteString("<details><summary>Every strategy and measure: judge only, corrected, human only</summary>\n\n")
	b.WriteString("| " + strings.Join(humanHead, " | ") + " |\n|---|---|" + strings.Repeat("---:|", len(humanHead)-2) + "\n")
	for _, r := range d.humanRows(esc, d.metricCell) {
		b.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
	rowsMark, pairedMark := d.humanMarks()
	if rowsMark != "" {
		fmt.Fprintf(b, "\n%s.\n\n%s\n\n</details>\n", d.note(), rowsMark)
	} else {
		fmt.Fprintf(b, "\n%s.\n\n</details>\n", d.note())
	}
	if l := d.strataLine(esc); l != "" {
		fmt.Fprintf(b, "\n%s\n", l)
	}
	if rows := d.localeRows(esc); len(rows) > 0 {
		fmt.Fprintf(b, "\n<details><summary>Corrected %s by locale</summary>\n\n", d.metricCell(d.Primary))
		b.WriteString("| " + strings.Join(localeHead, " | ") + " |\n|---|---|" + strings.Repeat("---:|", len(localeHead)-2) + "\n")
		for _, r := range rows {
			b.WriteString("| " + strings.Join(r, " | ") + " |\n")
		}
		fmt.Fprintf(b, "\n%s.\n\n</details>\n", d.localeNote())
	}
	if len(d.Human.Paired) > 0 {
		fmt.Fprintf(b, "\nCorrected paired comparisons against %s:\n\n| strategy | metric | n human | Δ (corrected) | 95%% CI of Δ | p (Holm) | significant |\n|---|---|---:|---:|---:|---:|---|\n", esc(d.Baseline))
		var notes []string
		for _, p := range d.Human.Paired {
			sig := "no"
			if p.Significant {
				sig = "**yes**"
			}
			fmt.Fprintf(b, "| %s | %s | %d | %s | %s | %s | %s%s |\n", esc(p.Strategy), d.metricCell(p.Metric), p.N, format.Signed(p.Delta.V()), d.ciCell(p), format.P(p.PValue.V()), sig, noteMark(p, &notes))
		}
		for i, n := range notes {
			fmt.Fprintf(b, "\n[%d] %s.", i+1, n)
		}
		if l := d.humanSignFlipLine(); l != "" {
			fmt.Fprintf(b, "\n%s", l)
		}
		if pairedMark != "" {
			fmt.Fprintf(b, "\n\n%s", pairedMark)
		}
		if len(notes) > 0 || d.humanSignFlipLine() != "" || pairedMark != "" {
			b.WriteString("\n")
		}
	}
	head, rows := d.biasRows()
	fmt.Fprintf(b, "\n%s\n\n| %s |\n|---|%s\n", d.biasLine(), strings.Join(head, " | "), strings.Repeat("---:|", len(head)-1))
	for _, r := range rows {
		b.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
}

// HumanSection is the human section's words and tables for another renderer
// (the HTML dashboard); ok is false without human labels. Rows are as the text
// report's (HumanHead), Bias the confusion matrix with its head.
type HumanSection struct {
	Basis, Intro, Note, BiasLine string
	Head                         []string
	Rows                         [][]string
	Paired                       []Paired
	BiasHead                     []string
	BiasRows                     [][]string
	// Strata says how the estimates are stratified by locale, and the
	// per-locale table of the primary measure (LocaleHead, LocaleRows,
	// LocaleNote, LocaleTitle); "" and nil without the queries' locales.
	// PairedFoot says how the corrected paired intervals are computed.
	Strata, LocaleNote, LocaleTitle, PairedFoot string
	// Unreliable and PairedUnreliable are the footnotes of the marked
	// intervals (UnreliableMark) of the corrected table and of the paired
	// one ("" where none is marked).
	Unreliable, PairedUnreliable string
	// PairedMeasures names the measure of each of Paired as the dashboard
	// names measures ("DCG@10 (primary)").
	PairedMeasures []string
	LocaleHead     []string
	LocaleRows     [][]string
}

// HumanSection returns the human section (ok false without human labels); name
// renders a user-controlled name.
func (d *Document) HumanSection(name func(string) string) (s HumanSection, ok bool) {
	if d.Human == nil {
		return s, false
	}
	s = HumanSection{Basis: d.humanBasis(""), Intro: d.humanIntro(name(d.Human.File)), Note: d.note(), BiasLine: d.biasLine(),
		Head: humanHead, Rows: d.humanRows(name, d.labelCell), Paired: d.Human.Paired, Strata: d.strataLine(name),
		PairedFoot: "PPI++ estimate of each paired difference with its t interval (the jackknife standard error); p from the same t statistic, so the interval excludes 0 exactly when p < 0.05 before Holm's adjustment within each measure."}
	switch {
	case d.stratified() && d.clustered():
		s.PairedFoot = "PPI++ estimate of each paired difference stratified by locale with its t interval over the clusters (the delete-one-cluster jackknife standard error, labelled clusters − 1 degrees of freedom); p from the same t statistic, so the interval excludes 0 exactly when p < 0.05 before Holm's adjustment within each measure."
	case d.clustered():
		s.PairedFoot = "PPI++ estimate of each paired difference with its t interval over the clusters (the delete-one-cluster jackknife standard error, labelled clusters − 1 degrees of freedom); p from the same t statistic, so the interval excludes 0 exactly when p < 0.05 before Holm's adjustment within each measure."
	case d.stratified():
		s.PairedFoot = "PPI++ estimate of each paired difference stratified by locale with its t interval (each locale's jackknife standard error, the Welch–Satterthwaite degrees of freedom); p from the same t statistic, so the interval excludes 0 exactly when p < 0.05 before Holm's adjustment within each measure."
	}
	if l := d.humanSignFlipLine(); l != "" {
		s.PairedFoot += " " + l
	}
	s.Unreliable, s.PairedUnreliable = d.humanMarks()
	for _, p := range d.Human.Paired {
		s.PairedMeasures = append(s.PairedMeasures, d.labelCell(p.Metric))
	}
	if rows := d.localeRows(name); len(rows) > 0 {
		s.LocaleHead, s.LocaleRows, s.LocaleNote = localeHead, rows, d.localeNote()
		s.LocaleTitle = "Corrected " + d.labelCell(d.Primary) + " by locale"
	}
	s.BiasHead, s.BiasRows = d.biasRows()
	return s, true
}
