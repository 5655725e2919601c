package html

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/report/gatetable"
)

// RerankSuffix marks a reranked strategy: "hybrid+rerank" is "hybrid" with the
// reranker, and the dashboard shows the two side by side. A strategy without its
// counterpart stands alone.
const RerankSuffix = "+rerank"

// Sample is how many query ids a per-query table lists at most (the best, the
// worst, the failed queries of a strategy); the counts are always complete.
const Sample = 10

// Stat is a mean with its 95% interval.
type Stat struct {
	Mean float64
	CI   [2]float64
}

// StrategyView is one strategy of the dashboard.
type StrategyView struct {
	Name         string
	N            int
	DCG, MeanRel Stat
	Measures     []MeasureStat // every registered measure, in metrics.QueryMeasures order
	ByPosition   []float64     // mean relevance at rank 1..k
	Failed       int           // queries whose top-1 result is judged 0 (or missing)
	FailedSample []string      // the first Sample of them, by id
}

// MeasureStat is a strategy's mean of one measure, its interval and n (Has
// false: the document has no value for it).
type MeasureStat struct {
	Stat
	N   int64
	Has bool
}

// PairView is a paired comparison a − b.
type PairView struct {
	A, B        string
	Delta       float64
	CI          [2]float64
	PHolm       float64
	Significant bool
}

// RerankPair is a strategy and its reranked counterpart (indexes into
// CompareView.Strategies) with the paired test of dcg (reranked − base).
type RerankPair struct {
	Base, Rerank int
	Test         PairView
}

// QueryView is one query of the best/worst tables.
type QueryView struct {
	ID           string
	MeanRel, DCG float64
}

// CompareView is everything the compare dashboard shows, already computed.
type CompareView struct {
	K                               int
	Gain                            string
	RelevantLevel                   int
	Judged, Evaluated, NotEvaluated int
	Baseline                        string
	Method                          string // how the intervals and p-values were computed
	Best                            int    // index of the strategy with the highest mean dcg
	Recommended                     string // a strategy, or "no clear winner"
	Leader                          *PairView
	Strategies                      []StrategyView // run order
	Groups                          [][2]int       // display order of the bar chart: {base, rerank} (-1: none), best first
	Pairs                           []RerankPair
	QueriesOf                       string      // the strategy whose best/worst queries are listed
	BestQueries, WorstQueries       []QueryView // by mean relevance; Sample each
	Diagnosis                       []string
	Gates                           []gatetable.Entry // the gates asked for (--gate-strategy); none by default
	Verdict                         string            // their verdict
	// OverRuns is the primary measure over the runs of the history, this run
	// the newest (nil: the run has no history, no section).
	OverRuns *HistoryView
}

// Compare writes the compare dashboard.
func Compare(w io.Writer, v CompareView) error {
	dcg := "DCG@" + strconv.Itoa(v.K)
	rel := "mean relevance@" + strconv.Itoa(v.K)
	p := NewPage("Retrieval strategy comparison")
	p.Subtitle(fmt.Sprintf("k = %d · gain %s · relevant = rel ≥ %d · baseline %s · %s", v.K, v.Gain, v.RelevantLevel, v.Baseline, v.Method))
	if len(v.Strategies) == 0 {
		p.Para("No strategy.")
		_, err := p.WriteTo(w)
		return err
	}
	best := v.Strategies[v.Best]
	rec := Indicator{Label: "Recommended strategy", Value: v.Recommended}
	switch l := v.Leader; {
	case l == nil:
		rec.Detail = "the only strategy"
	case l.Significant && l.Delta > 0:
		rec.Detail = fmt.Sprintf("ahead of %s by %s %s (95%% CI %s to %s, Holm p = %s)", l.B, format.Signed(l.Delta), dcg, format.Signed(l.CI[0]), format.Signed(l.CI[1]), fmtP(l.PHolm))
	default:
		rec.Value = "no clear winner"
		rec.Detail = fmt.Sprintf("%s leads %s by %s %s, not significant (95%% CI %s to %s, Holm p = %s)", l.A, l.B, format.Signed(l.Delta), dcg, format.Signed(l.CI[0]), format.Signed(l.CI[1]), fmtP(l.PHolm))
	}
	p.Indicators([]Indicator{
		{Label: "Best " + dcg, Value: Fmt(best.DCG.Mean), Detail: fmt.Sprintf("%s · 95%% CI %s · n = %s", best.Name, FmtCI(best.DCG.CI), Count(best.N))},
		rec,
		{Label: "Queries evaluated", Value: Count(v.Evaluated), Detail: fmt.Sprintf("of %s judged; %s without a relevant document excluded", Count(v.Judged), Count(v.NotEvaluated))},
	})

	// The gates, when compare is one (--gate-strategy), as the Markdown shows them.
	if len(v.Gates) > 0 {
		p.Section("Gates: " + v.Verdict)
		p.GateTable(v.Gates)
	}

	// DCG per strategy, with and without the reranker.
	anyPair := len(v.Pairs) > 0
	series := []Series{{Name: "without reranker", Color: 0}}
	if anyPair {
		series = append(series, Series{Name: "with reranker", Color: 1})
	}
	var cats []string
	var bars []Bar
	name := func(g [2]int) string {
		if g[0] >= 0 {
			return v.Strategies[g[0]].Name
		}
		return v.Strategies[g[1]].Name
	}
	for _, g := range v.Groups {
		c := name(g)
		cats = append(cats, c)
		for si, i := range g {
			if i < 0 {
				continue
			}
			s := v.Strategies[i]
			ci := s.DCG.CI
			bars = append(bars, Bar{Category: c, Series: si, Value: s.DCG.Mean, CI: &ci, N: s.N})
		}
	}
	chartTitle := dcg + " per strategy"
	if anyPair {
		chartTitle += ", with and without the reranker"
	}
	p.Section(chartTitle)
	cell := func(i int, st func(StrategyView) Stat) Cell {
		if i < 0 {
			return Cell{Text: "—", Num: true}
		}
		s := st(v.Strategies[i])
		return Cell{Text: Fmt(s.Mean), Sub: FmtCI(s.CI), Num: true, Strong: i == v.Best}
	}
	table := func(caption string, st func(StrategyView) Stat) Table {
		t := Table{Caption: caption, Head: []string{"strategy", "base"}, NumCols: []bool{false, true, true}}
		if anyPair {
			t.Head = append(t.Head, RerankSuffix)
		}
		for _, g := range v.Groups {
			row := []Cell{{Text: name(g)}, cell(g[0], st)}
			if anyPair {
				row = append(row, cell(g[1], st))
			}
			t.Rows = append(t.Rows, row)
		}
		return t
	}
	p.Grid(func() {
		p.BarChart(BarChart{Title: chartTitle + " (95% CI whiskers)", Measure: dcg, Categories: cats, Series: series, Bars: bars})
	}, func() {
		p.Table(table(dcg, func(s StrategyView) Stat { return s.DCG }))
		p.Table(table(rel, func(s StrategyView) Stat { return s.MeanRel }))
		p.Note("Each value with its 95% interval below it; the best strategy in bold.")
	})

	// Every measure of the registry, one row each, a column per strategy.
	p.Section("Every measure")
	mt := Table{Head: []string{"measure"}, NumCols: []bool{false}}
	for _, s := range v.Strategies {
		mt.Head = append(mt.Head, s.Name)
		mt.NumCols = append(mt.NumCols, true)
	}
	for m := range metrics.QueryMeasures {
		info := metrics.QueryMeasures[m].Info
		sub := info.Key
		for _, p := range info.Own { // the parameters the measure owns, e.g. RBP's p
			sub += " · " + p.Name + " = " + strconv.FormatFloat(p.Value, 'g', -1, 64)
		}
		row := []Cell{{Text: info.LabelAt(v.K), Sub: sub}}
		for _, s := range v.Strategies {
			if m >= len(s.Measures) || !s.Measures[m].Has {
				row = append(row, Cell{Text: "—", Num: true})
				continue
			}
			ms := s.Measures[m]
			row = append(row, Cell{Text: Fmt(ms.Mean), Sub: FmtCI(ms.CI) + " · n = " + Count(int(ms.N)), Num: true})
		}
		mt.Rows = append(mt.Rows, row)
	}
	p.Table(mt)
	p.Note("Each mean with its 95% interval and n below it; the key of each measure is under its label.")

	// Mean relevance by position.
	p.Section("Mean relevance by result position")
	var lseries []Series
	var lines []Line
	for gi, g := range v.Groups {
		for si, i := range g {
			if i < 0 {
				continue
			}
			lseries = append(lseries, Series{Name: v.Strategies[i].Name, Color: gi % 8, Dashed: si == 1})
			lines = append(lines, Line{Series: len(lseries) - 1, Y: v.Strategies[i].ByPosition})
		}
	}
	xs := make([]string, v.K)
	for i := range xs {
		xs[i] = strconv.Itoa(i + 1)
	}
	p.LineChart(LineChart{Title: "Mean relevance (0–3) at each rank, per strategy", XLabel: "rank", YLabel: "mean relevance", X: xs, Series: lseries, Lines: lines})
	p.Note("Reranked strategies are dashed, in the colour of their base strategy. A missing result counts 0.")

	// Base vs reranker.
	p.Section("Base vs reranker")
	if !anyPair {
		p.Para("No strategy has a reranked counterpart (a strategy NAME and NAME" + RerankSuffix + ").")
	} else {
		t := Table{Head: []string{"strategy", "base", RerankSuffix, "Δ " + dcg, "verdict"}, NumCols: []bool{false, true, true, true, false}}
		for _, pr := range v.Pairs {
			b, r := v.Strategies[pr.Base], v.Strategies[pr.Rerank]
			verdict := "no significant change"
			switch {
			case pr.Test.Significant && pr.Test.Delta > 0:
				verdict = "reranker helps"
			case pr.Test.Significant && pr.Test.Delta < 0:
				verdict = "reranker hurts"
			}
			t.Rows = append(t.Rows, []Cell{
				{Text: b.Name},
				{Text: Fmt(b.DCG.Mean), Sub: FmtCI(b.DCG.CI)},
				{Text: Fmt(r.DCG.Mean), Sub: FmtCI(r.DCG.CI)},
				{Text: format.Signed(pr.Test.Delta), Sub: format.Signed(pr.Test.CI[0]) + " to " + format.Signed(pr.Test.CI[1])},
				{Text: verdict, Sub: "Holm p = " + fmtP(pr.Test.PHolm)},
			})
		}
		t.Foot = "Δ is reranked − base on the same queries, with its paired 95% interval; p from the paired randomization test, Holm-adjusted with every other comparison of the report."
		p.Table(t)
	}

	// Best and worst queries.
	p.Section("Best and worst queries by mean relevance (" + v.QueriesOf + ")")
	qt := func(caption string, qs []QueryView) Table {
		t := Table{Caption: caption, Head: []string{"query", rel, dcg}, NumCols: []bool{false, true, true}}
		for _, q := range qs {
			t.Rows = append(t.Rows, []Cell{{Text: q.ID}, {Text: Fmt(q.MeanRel)}, {Text: Fmt(q.DCG)}})
		}
		return t
	}
	p.Grid(func() { p.Table(qt("Best", v.BestQueries)) }, func() { p.Table(qt("Worst", v.WorstQueries)) })
	p.Note(fmt.Sprintf("The %d highest and lowest of %s queries, ties by query id; every query's values are in the --per-query output.", Sample, Count(v.Evaluated)))

	// Failed queries.
	p.Section("Failed queries (top-1 result judged 0)")
	ft := Table{Head: []string{"strategy", "failed", "queries"}, NumCols: []bool{false, true, false}}
	for _, g := range v.Groups {
		for _, i := range g {
			if i < 0 {
				continue
			}
			s := v.Strategies[i]
			sample := strings.Join(s.FailedSample, ", ")
			if more := s.Failed - len(s.FailedSample); more > 0 {
				sample += fmt.Sprintf(" … and %s more", Count(more))
			}
			ft.Rows = append(ft.Rows, []Cell{{Text: s.Name}, {Text: Count(s.Failed), Sub: "of " + Count(s.N)}, {Text: sample}})
		}
	}
	ft.Foot = fmt.Sprintf("The first %d failed queries by id per strategy; all of them are in the JSON report. A missing result counts as failed.", Sample)
	p.Table(ft)

	if o := v.OverRuns; o != nil {
		p.Section(dcgLabel(o.Measure, v.K) + " over the runs")
		switch {
		case o.Unread != "":
			p.Para("The history could not be read (" + o.Unread + "): no chart over the runs.")
		case len(o.Runs) < 2:
			p.Para("No earlier run of " + o.Command + " in the history " + o.File + o.branchText() + ": this run is the first point of the chart.")
		default:
			p.runsChart(*o)
		}
	}

	if len(v.Diagnosis) > 0 {
		p.Section("Diagnosis")
		p.List(v.Diagnosis)
	}
	_, err := p.WriteTo(w)
	return err
}

func fmtP(p float64) string { return format.P(p) }

// dcgLabel is a compare measure key as the dashboard titles it: dcg_at_k is
// "DCG@10", another key itself.
func dcgLabel(key string, k int) string {
	if key == metrics.KeyDCG {
		return "DCG@" + strconv.Itoa(k)
	}
	return key
}
