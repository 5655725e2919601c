package html

import (
	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/report/comparereport"
)

// The seed's figures on the compare dashboard: the maximum DCG@k beside every
// DCG@k, mean relevance with the three relevance buckets per strategy, and the
// common scenarios with their actions and rules (worded by comparereport).

// BucketsView are a strategy's top-k documents in the seed's relevance buckets
// (fractions of N documents; NaN when none).
type BucketsView struct {
	N                                         int
	HighlyRelevant, RelevantPlus, NotRelevant float64
}

func bucketsOf(s *comparereport.Strategy) BucketsView {
	b := s.RelevanceBuckets
	return BucketsView{N: b.N, HighlyRelevant: b.HighlyRelevant.V(), RelevantPlus: b.RelevantPlus.V(), NotRelevant: b.NotRelevant.V()}
}

// scaleOf is what follows a measure's label to give its scale: "of 31.805"
// for DCG@k (the maximum possible at the run's k and gain), else "".
func (v *CompareView) scaleOf(key string) string {
	if key != metrics.KeyDCG || v.MaxDCG != v.MaxDCG || v.MaxDCG <= 0 {
		return ""
	}
	return "of " + Fmt(v.MaxDCG)
}

// scaled is a label with its scale: "DCG@10 (of 31.805)".
func scaled(label, scale string) string {
	if scale == "" {
		return label
	}
	return label + " (" + scale + ")"
}

// dcgScaleNote says what the maximum DCG@k is.
func (v *CompareView) dcgScaleNote() string {
	if v.scaleOf(metrics.KeyDCG) == "" {
		return ""
	}
	return MeasureLabel(metrics.KeyDCG, v.K) + " is out of " + Fmt(v.MaxDCG) + ", the maximum possible: " + Count(v.K) +
		" results of relevance " + Count(v.MaxDCGLevel) + " with the " + v.Gain + " gain."
}

// scaleNote says what values the measure key takes, from the page's data:
// DCG@k's maximum (dcgScaleNote), else its scale (metrics.Info.Scale): 0 to 1,
// 0 or 1 per query, or 0 to the highest relevance of the qrels; "" for a
// measure the registry does not know or DCG@k without its maximum.
func (v *CompareView) scaleNote(key string) string {
	if key == metrics.KeyDCG {
		return v.dcgScaleNote()
	}
	i := metrics.QueryIndex(key)
	if i < 0 {
		return ""
	}
	label := MeasureLabel(key, v.K)
	switch metrics.QueryMeasures[i].Scale {
	case metrics.ScaleUnit:
		return label + " lies between 0 and 1."
	case metrics.ScaleBinary:
		return label + " is 0 or 1 for each query: its mean is the share of queries where it is 1."
	}
	return label + " lies between 0 and " + Count(v.MaxDCGLevel) + ", the highest relevance in the qrels."
}

// scenariosSection lists the common scenarios whose rule the run meets: what
// was found, the suggested action (bold) and the rule.
func (p *Page) scenariosSection(v *CompareView) {
	p.Section("What to do")
	if len(v.Scenarios) == 0 {
		p.Para(v.NoScenario)
		return
	}
	p.raw(`<ul class="scenarios"` + v.id("rg-scenarios") + ` data-part="scenarios">` + "\n")
	for _, s := range v.Scenarios {
		p.raw(`<li data-scenario="` + Esc(s.Code) + `">` + Esc(s.Found) + " <strong>" + Esc(s.Todo()) + `</strong> <span class="ci">Rule: ` + Esc(s.Rule) + ".</span></li>\n")
	}
	p.raw("</ul>\n")
	if v.ScenariosNote != "" {
		p.Note(v.ScenariosNote + ".")
	}
}

// bucketsSection is the table of mean relevance and the three buckets per strategy.
func (p *Page) bucketsSection(v *CompareView) {
	p.Section(v.runTitle("Mean relevance and relevance distribution"))
	mi := metrics.QueryIndex(metrics.KeyMeanRel)
	t := Table{Head: []string{"strategy", MeasureLabel(metrics.KeyMeanRel, v.K), "highly relevant (3)", "relevant+ (≥ 2)", "not relevant (≤ 1)"},
		NumCols: []bool{false, true, true, true, true}, Cards: true}
	var means []float64
	for _, s := range v.Strategies {
		means = append(means, s.MeanRel.Mean)
	}
	bold := bestOf(means, true)
	unreliable := false // an interval of the table is marked
	for i, s := range v.Strategies {
		mean := Cell{Text: "—", Num: true}
		if mi < len(s.Measures) && s.Measures[mi].Has {
			m := s.Measures[mi]
			mean = Cell{Text: Fmt(m.Mean), Sub: FmtCI(m.CI) + format.MarkIf(m.Unreliable) + " · n = " + Count(int(m.N)), Num: true, Strong: bold[i],
				Flag: noteIf(m.Unreliable, comparereport.UnreliableLine)}
			unreliable = unreliable || m.Unreliable
		}
		b := s.Buckets
		docs := "n = " + Count(b.N) + " judged documents"
		t.Rows = append(t.Rows, []Cell{{Text: s.Name}, mean,
			{Text: format.Pct(b.HighlyRelevant), Sub: docs, Num: true},
			{Text: format.Pct(b.RelevantPlus), Sub: docs, Num: true},
			{Text: format.Pct(b.NotRelevant), Sub: docs, Num: true}})
	}
	t.Foot = joinNote(v.BucketsNote, noteIf(unreliable, comparereport.UnreliableLine+"."))
	p.raw(`<div` + v.id("rg-buckets") + ` data-part="buckets">` + "\n")
	p.Table(t)
	p.raw("</div>\n")
}
