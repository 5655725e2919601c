package comparereport

import (
	"fmt"
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
type Human struct {
	Decides      bool                            `json:"decides"`
	File         string                          `json:"file"`
	Holes        int                             `json:"holes"`
	JudgeBias    JudgeBias                       `json:"judge_bias"`
	Method       string                          `json:"method"`
	N            int                             `json:"n"`
	NotEvaluated int                             `json:"not_evaluated"`
	Paired       []Paired                        `json:"paired"`
	Pairs        int                             `json:"pairs"`
	Strategies   map[string]map[string]Corrected `json:"strategies"`
	Unlabelled   int                             `json:"unlabelled_queries"`
}

// Corrected is one strategy's measure, judge-only and corrected.
type Corrected struct {
	CI95          [2]format.Float `json:"ci95"`
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
	for s := range r.Strategies {
		st := &r.Strategies[s]
		ms := map[string]Corrected{}
		for m, key := range metrics.GradedKeys {
			e, ho := h.Means[s][m], h.HumanOnly[s][m]
			narrower := 1 - (e.Hi-e.Lo)/(ho.Hi-ho.Lo)
			ms[key] = Corrected{JudgeOnly: format.Float(st.Means[m]), JudgeOnlyCI95: format.CI(st.CI[m].CI()),
				Estimate: format.Float(e.Estimate), CI95: format.CI([2]float64{e.Lo, e.Hi}), SE: format.Float(e.SE), Lambda: format.Float(e.Lambda),
				HumanOnly: format.Float(ho.Estimate), HumanOnlyCI95: format.CI([2]float64{ho.Lo, ho.Hi}),
				N: st.MeasureN[m], NHuman: e.N, Narrower: format.Float(narrower), Unreliable: e.Interval().Unreliable}
		}
		out.Strategies[st.Name] = ms
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

// humanBasis is the sentence after the recommendation when human labels
// correct the figures ("" without).
func (d *Document) humanBasis() string {
	h := d.Human
	if h == nil {
		return ""
	}
	return fmt.Sprintf("The recommendation and the gates use the human-corrected figures (PPI++: the judge's values of every query, corrected by %d human-labelled queries); see \"Human-corrected estimates\".", h.N)
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
	return s + "."
}

// humanNote explains the columns.
const humanNote = "judge only: the mean of the judge's labels (its interval covers the sampling of queries, not the judge's bias); corrected: PPI++ estimate and 95% interval (t with n human − 1 df, its standard error from the jackknife over the labelled queries, λ̂ tuned again without each; clipped to the measure's range); human only: the labelled queries alone; narrower: how much narrower the corrected interval is than the human-only one; λ̂: the weight given to the judge (0: none, 1: plain PPI)"

// humanRows is the corrected table's rows: strategy, measure, judge only,
// corrected, its interval, human only, its interval, n human, λ̂, narrower.
func (d *Document) humanRows(name func(string) string) [][]string {
	var rows [][]string
	for _, s := range d.strategies() {
		for _, m := range metrics.QueryMeasures {
			c := d.Human.Strategies[s.Name][m.Key]
			ci := format.Interval([2]float64{c.CI95[0].V(), c.CI95[1].V()})
			if c.Unreliable {
				ci += unreliableMark
			}
			rows = append(rows, []string{name(s.Name), d.metricCell(m.Key), format.Num(c.JudgeOnly.V()), format.Num(c.Estimate.V()), ci,
				format.Num(c.HumanOnly.V()), format.Interval([2]float64{c.HumanOnlyCI95[0].V(), c.HumanOnlyCI95[1].V()}),
				strconv.Itoa(c.NHuman), format.Num(c.Lambda.V()), format.Pct(c.Narrower.V())})
		}
	}
	return rows
}

var humanHead = []string{"strategy", "measure", "judge only", "corrected", "95% CI", "human only", "95% CI", "n human", "λ̂", "narrower"}

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
	for _, r := range d.humanRows(name) {
		t.add(r...)
	}
	t.write(b)
	fmt.Fprintf(b, "  (%s)\n", humanNote)
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
	for _, r := range d.humanRows(esc) {
		b.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
	fmt.Fprintf(b, "\n%s.\n\n</details>\n", humanNote)
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
		if len(notes) > 0 {
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
}

// HumanSection returns the human section (ok false without human labels); name
// renders a user-controlled name.
func (d *Document) HumanSection(name func(string) string) (s HumanSection, ok bool) {
	if d.Human == nil {
		return s, false
	}
	s = HumanSection{Basis: d.humanBasis(), Intro: d.humanIntro(name(d.Human.File)), Note: humanNote, BiasLine: d.biasLine(),
		Head: humanHead, Rows: d.humanRows(name), Paired: d.Human.Paired}
	s.BiasHead, s.BiasRows = d.biasRows()
	return s, true
}
