package html

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/report/comparereport"
	"github.com/retrieval-gate/retrieval-gate/internal/report/gatetable"
)

// RerankSuffix marks a reranked strategy: "hybrid+rerank" is "hybrid" with the
// reranker, and the dashboard shows the two side by side. A strategy without its
// counterpart stands alone.
const RerankSuffix = "+rerank"

// Sample is how many query ids a per-query table lists at most (the best, the
// worst, the failed queries of a strategy); the counts are always complete.
const Sample = 10

// Stat is a mean with its 95% interval, and whether the document marks the
// interval unreliable.
type Stat struct {
	Mean       float64
	CI         [2]float64
	Unreliable bool
}

// StrategyView is one strategy of the dashboard.
type StrategyView struct {
	Name         string
	N            int
	DCG, MeanRel Stat
	Buckets      BucketsView   // the top-k documents in the seed's three relevance buckets
	Measures     []MeasureStat // every registered measure, in metrics.QueryMeasures order
	ByPosition   []float64     // mean relevance at rank 1..k over the judged documents there (NaN: none)
	ByPositionN  []int         // the judged documents at each rank; nil in a report written before them
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
	N           int // the queries the test pairs
	Delta       float64
	CI          [2]float64
	PHolm       float64
	Significant bool
	// Identical: A and B return the same top k on every query (nothing to test).
	Identical bool
	// Note: why the interval and the test disagree, in words (the test
	// decides); empty when they agree.
	Note string
	// Unreliable: the document marks the interval unreliable.
	Unreliable bool
	// PTest names the test the p comes from, in words (methodText of the
	// test's p_value_method: "exact sign-flip", "sign-flip randomization
	// (10,000 resamples, seed 1)", …); "" where the view does not say.
	PTest string
}

// RerankPair is a strategy and its reranked counterpart (indexes into
// CompareView.Strategies) with the paired test of the primary measure
// (reranked − base).
type RerankPair struct {
	Base, Rerank int
	Test         PairView
	// Effect is what the test says the reranker does (the document's
	// rerankers[].effect).
	Effect compare.Effect
	// Untested: a document written before the JSON carried the reranker
	// findings (an earlier run, report --from) has no reranker's test: the
	// means only.
	Untested bool
}

// QueryView is one query of the best/worst tables: its id, its text (""
// without compare --queries) and the value of every measure (key -> value;
// absent: the document does not carry it).
type QueryView struct {
	ID, Text string
	Values   map[string]float64
}

// QueryLists are a strategy's best and worst queries by one measure.
type QueryLists struct {
	Best, Worst []QueryView
}

// QueriesView is one strategy's best and worst queries by each measure (key
// -> lists), as its document lists them: a document written before the lists
// by every measure has the primary's only.
type QueriesView struct {
	Strategy string
	By       map[string]QueryLists
}

// CompareView is everything the compare dashboard shows, already computed.
type CompareView struct {
	K                               int
	Gain                            string
	RelevantLevel                   int
	Judged, Evaluated, NotEvaluated int
	Baseline                        string
	Methods                         []string // how the intervals and p-values were computed, from the document
	Best                            int      // index of the strategy with the highest mean dcg
	Recommended                     string   // a strategy, or "no clear winner"
	Leader                          *PairView
	Strategies                      []StrategyView // run order
	Groups                          [][2]int       // display order of the bar chart: {base, rerank} (-1: none), best first
	Pairs                           []RerankPair
	// RerankMeasure is the measure of the reranker pairs' tests: the
	// document's primary (Primary may be another run's, for "Select metric").
	RerankMeasure string
	QueriesOf     string // the strategy whose best/worst queries are shown first (the best)
	Diagnosis     []string
	// Identical says which strategies return the baseline's rankings on every
	// query (comparereport.Document.IdenticalLines).
	Identical []string
	// MaxDCG is the largest DCG@k possible at the run's k and gain (k results
	// of relevance MaxDCGLevel), shown beside every DCG@k.
	MaxDCG      float64
	MaxDCGLevel int
	// Scenarios are the common scenarios the run meets, in words (NoScenario
	// when none); BucketsNote explains the buckets table.
	Scenarios               []comparereport.ScenarioText
	Decision                comparereport.DecisionWords // the one decision, in words (empty: the document has none)
	NoScenario, BucketsNote string
	// ScenariosNote and DiagnosisNote are the footnotes of the unreliable
	// mark a scenario's or a finding's interval carries ("": none does);
	// DecisionNote that of the recommendation's interval (the human-corrected
	// intervals' footnote when the decision uses them, as the text and
	// Markdown reports say).
	ScenariosNote, DiagnosisNote, DecisionNote string
	// GatesNote is the footnote of an interval a gate's reason marks
	// (comparereport.Document.GatesUnreliableLine).
	GatesNote string
	Gates     []gatetable.Entry // the gates asked for (--gate-strategy); none by default
	Verdict   string            // their verdict
	// OverRuns is the primary measure over the runs of the history, this run
	// the newest (nil: the run has no history, no section).
	OverRuns *HistoryView
	// Primary is the measure shown without script (the document's primary);
	// Measures the keys "Select metric" offers, Runs the runs "Select run"
	// offers (oldest first, this run at Current), Colours each strategy's
	// colour in every chart.
	Primary  string
	Measures []string
	Runs     []exploreRun
	Current  int
	Colours  map[string]int
	// Holes is the judged@k section (judged.go).
	Holes HolesView
	// RunPages are the whole page of each run of Runs but this one (nil at
	// Current), built from the run's document in the history: "Select run"
	// shows the chosen run's (nil: its document could not be read, Unread
	// says why). RunLabel names the run in the section titles.
	RunPages   []*CompareView
	RunMissing []string
	RunLabel   string
	// QueryStrategies are the strategies whose best and worst queries are
	// listed (the document's, by each measure), in run order; Texts says
	// some query has its text (compare --queries).
	QueryStrategies []QueriesView
	Texts           bool
	// Human is the human-corrected section (compare --human-qrels; nil without).
	Human *comparereport.HumanSection
}

// Compare writes the compare dashboard.
func Compare(w io.Writer, v CompareView) error {
	p := NewPage("Retrieval strategy comparison")
	p.Subtitle(fmt.Sprintf("k = %d · gain %s · relevant = rel ≥ %d · baseline %s", v.K, v.Gain, v.RelevantLevel, v.Baseline))
	for _, m := range v.Methods {
		p.Note(m)
	}
	if len(v.Strategies) == 0 {
		p.Para("No strategy.")
		_, err := p.WriteTo(w)
		return err
	}
	// "Select run" and "Select metric" head the page: the whole page is the
	// chosen run (each run's blocks, the others hidden), the measure the
	// chosen one.
	p.controls(v)
	p.runBlocks(&v, (*Page).compareTop, true)
	second := metrics.KeyMeanRel // the second table's measure ("": the primary is it)
	if v.Primary == metrics.KeyMeanRel {
		second = ""
	}

	// Per strategy: the run and the measure chosen (the script redraws from
	// the embedded data); without script, this run and the primary measure.
	p.Section("Per strategy")
	cur := v.Runs[v.Current]
	p.raw(`<p class="shown" id="rg-shown">Shown: ` + Esc(cur.Label+" · "+MeasureLabel(v.Primary, v.K)) + "</p>\n")
	p.Grid(func() {
		p.raw(`<div id="rg-bars">` + "\n")
		p.BarChart(exploreBars(cur, v.Primary, v.K, v.Colours, v.scaleOf(v.Primary)))
		p.raw("</div>\n")
	}, func() {
		p.raw(`<div id="rg-table">` + "\n")
		p.Table(exploreTable(cur, v.Primary, v.K, v.scaleOf(v.Primary)))
		p.raw("</div>\n")
		if second != "" {
			p.raw(`<div id="rg-table2">` + "\n")
			p.Table(exploreTable(cur, second, v.K, ""))
			p.raw("</div>\n")
		}
		// The scale of the measure shown, and the footnote of an interval
		// of the two tables marked unreliable: the script writes the
		// chosen run's and measure's (exploreData's notes).
		p.raw(`<p class="note">` + Esc("Each value with its 95% interval below it; the best value of the measure in bold (by its direction: higher is better for every measure here). A reranked strategy (NAME"+RerankSuffix+") is drawn in its base strategy's colour, dashed.") +
			` <span id="rg-scale">` + Esc(joinNote(v.scaleNote(v.Primary), unreliableNote(cur, v.Primary, second))) + "</span></p>\n")
	})
	p.runBlocks(&v, (*Page).compareBottom, false)

	if o := v.OverRuns; o != nil {
		p.Section("Over the runs")
		switch {
		case o.Unread != "":
			p.Para("The history could not be read (" + o.Unread + "): no chart over the runs.")
		case len(o.Runs) < 2:
			p.Para("No earlier run of " + o.Command + " in the history " + o.File + o.branchText() + ": this run is the first point of the chart.")
		default:
			// The chosen measure's chart: the primary's without script; the
			// script draws another from the embedded data.
			p.raw(`<div id="rg-over">` + "\n")
			p.runsChart(o.ForMeasure(v.Primary), v.K, v.Colours)
			p.raw("</div>\n")
		}
	}
	// The scale sentence of each run's page and measure (a run without its
	// page: the sentences that do not depend on the run's maximum), and the
	// footnote when an interval of the run's two tables is marked unreliable.
	notes := make([][]string, len(v.Runs))
	for i := range v.Runs {
		page := &v
		if i != v.Current {
			page = nil
			if i < len(v.RunPages) {
				page = v.RunPages[i]
			}
		}
		notes[i] = make([]string, len(v.Measures))
		for j, key := range v.Measures {
			switch {
			case page != nil:
				notes[i][j] = page.scaleNote(key)
			case key != metrics.KeyDCG:
				notes[i][j] = v.scaleNote(key)
			}
			notes[i][j] = joinNote(notes[i][j], unreliableNote(v.Runs[i], key, second))
		}
	}
	// Each run's best and worst queries by every measure (queriesData).
	qdata := make([][]byte, len(v.Runs))
	for i := range v.Runs {
		page := &v
		if i != v.Current {
			page = nil
			if i < len(v.RunPages) {
				page = v.RunPages[i]
			}
		}
		qdata[i] = queriesData(nil, page, v.Measures)
	}
	p.Script(exploreJS, exploreData(v.K, v.Measures, v.scaleOf, v.Colours, v.Runs, v.Current, v.Primary, second, notes, qdata))
	_, err := p.WriteTo(w)
	return err
}

// runBlocks writes one block of every run of "Select run", each the run's
// own view (this run's v, an earlier run's from its document), all but this
// run's hidden until the script shows the chosen one.
func (p *Page) runBlocks(v *CompareView, block func(*Page, *CompareView), say bool) {
	for i := range v.Runs {
		hidden := ""
		if i != v.Current {
			hidden = " hidden"
		}
		p.raw(`<div class="rg-runpage" data-run="` + strconv.Itoa(i) + `"` + hidden + ">\n")
		switch {
		case i == v.Current:
			block(p, v)
		case i < len(v.RunPages) && v.RunPages[i] != nil:
			block(p, v.RunPages[i])
		case say && i < len(v.RunMissing) && v.RunMissing[i] != "":
			p.Para(v.RunMissing[i])
		}
		p.raw("</div>\n")
	}
}

// id is an element id of this run's blocks ("" for an earlier run's: ids
// are unique, and the tests and the script find an earlier run's elements
// in its block).
func (v *CompareView) id(name string) string {
	if v.RunLabel != "" {
		return ""
	}
	return ` id="` + name + `"`
}

// runTitle is a section title with the run it shows.
func (v *CompareView) runTitle(title string) string {
	if v.RunLabel != "" {
		return title + " (" + v.RunLabel + ")"
	}
	return title + " (this run)"
}

// compareTop is a run's decision, headline figures, gates, what to do and
// human-corrected section.
func (p *Page) compareTop(v *CompareView) {
	dcg := MeasureLabel(metrics.KeyDCG, v.K)
	dcgScale := v.scaleOf(metrics.KeyDCG)
	best := v.Strategies[v.Best]
	rec := Indicator{Label: "Recommended strategy", Value: v.Recommended}
	primary := MeasureLabel(v.Primary, v.K)
	switch l := v.Leader; {
	case l == nil:
		rec.Detail = "the only strategy"
	case l.Identical:
		rec.Value = "no clear winner"
		rec.Detail = fmt.Sprintf("%s and %s return identical rankings on every query: no difference to test", l.A, l.B)
	case l.Significant && l.Delta > 0:
		rec.Detail = fmt.Sprintf("ahead of %s by %s %s (95%% CI %s to %s", l.B, format.Signed(l.Delta), primary, format.Signed(l.CI[0]), format.Signed(l.CI[1]))
		rec.Flag, rec.After = noteIf(l.Unreliable, v.DecisionNote), ", Holm p = "+fmtP(l.PHolm)+", n = "+Count(l.N)+")"
	default:
		rec.Value = "no clear winner"
		rec.Detail = fmt.Sprintf("%s leads %s by %s %s, not significant (95%% CI %s to %s", l.A, l.B, format.Signed(l.Delta), primary, format.Signed(l.CI[0]), format.Signed(l.CI[1]))
		rec.Flag, rec.After = noteIf(l.Unreliable, v.DecisionNote), ", Holm p = "+fmtP(l.PHolm)+", n = "+Count(l.N)+")"
	}
	if l := v.Leader; l != nil && l.Note != "" {
		rec.After += "; " + l.Note
	}
	// The decision (compare.Decision) heads the card when the document has
	// it: what to take, the recommendation's test below it, the decision's
	// sentence as the page's headline.
	if v.Decision.Head != "" {
		rec.Label, rec.Value = "Decision", v.Decision.Head
	}
	// The gates, when compare is one (--gate-strategy), as the Markdown shows
	// them: their verdict before the decision, which says how it bears on them.
	if len(v.Gates) > 0 {
		p.Section("Gates: " + v.Verdict)
		p.GateTable(v.Gates, v.GatesNote)
	}
	if v.Decision.Line != "" {
		p.raw(`<p class="decision"` + v.id("rg-decision") + `><strong>` + Esc(v.Decision.Line) + "</strong></p>\n")
	}
	bestLabel := "Best " + dcg
	if v.Human != nil { // the card's mean is the judge's; the decision beside it uses the corrected figures
		bestLabel += " (judge only)"
	}
	p.Indicators([]Indicator{
		{Label: bestLabel, Value: Fmt(best.DCG.Mean) + " " + dcgScale, Detail: best.Name + " · 95% CI " + FmtCI(best.DCG.CI),
			Flag: noteIf(best.DCG.Unreliable, comparereport.UnreliableLine), After: " · n = " + Count(best.N)},
		rec,
		{Label: "Queries evaluated", Value: Count(v.Evaluated), Detail: fmt.Sprintf("of %s judged; %s without a relevant document excluded", Count(v.Judged), Count(v.NotEvaluated))},
	})
	for _, l := range v.Identical {
		p.Note(l)
	}
	p.scenariosSection(v)
	p.humanSection(v.Human)
}

// compareBottom is a run's every measure, judged@k, buckets, relevance by
// position, base vs reranker, best and worst queries, failed queries and
// diagnosis.
func (p *Page) compareBottom(v *CompareView) {
	// Every measure of the registry, one row each, a column per strategy,
	// the best of each row bold by the measure's direction.
	p.Section(v.runTitle("Every measure"))
	mt := Table{Head: []string{"measure"}, NumCols: []bool{false}, Cards: true}
	unreliable := false // an interval of the table is marked
	for _, s := range v.Strategies {
		mt.Head = append(mt.Head, s.Name)
		mt.NumCols = append(mt.NumCols, true)
	}
	for m := range metrics.QueryMeasures {
		info := metrics.QueryMeasures[m].Info
		sub := info.Key
		if sc := v.scaleOf(info.Key); sc != "" {
			sub += " · " + sc
		}
		for _, p := range info.Own { // the parameters the measure owns, e.g. RBP's p
			sub += " · " + p.Name + " = " + format.Full(p.Value)
		}
		vals := make([]float64, len(v.Strategies))
		for i, s := range v.Strategies {
			vals[i] = math.NaN()
			if m < len(s.Measures) && s.Measures[m].Has {
				vals[i] = s.Measures[m].Mean
			}
		}
		bold := bestOf(vals, info.HigherIsBetter)
		row := []Cell{{Text: info.LabelAt(v.K), Sub: sub}}
		for i, s := range v.Strategies {
			if m >= len(s.Measures) || !s.Measures[m].Has {
				row = append(row, Cell{Text: "—", Num: true})
				continue
			}
			ms := s.Measures[m]
			row = append(row, Cell{Text: Fmt(ms.Mean), Sub: FmtCI(ms.CI) + format.MarkIf(ms.Unreliable) + " · n = " + Count(int(ms.N)), Num: true, Strong: bold[i],
				Flag: noteIf(ms.Unreliable, comparereport.UnreliableLine)})
			unreliable = unreliable || ms.Unreliable
		}
		mt.Rows = append(mt.Rows, row)
	}
	p.raw(`<div` + v.id("rg-every") + ` data-part="every">` + "\n")
	p.Table(mt)
	p.raw("</div>\n")
	p.Note(joinNote("Each mean with its 95% interval and n below it, the best of each measure in bold (by its direction); the key of each measure is under its label.", noteIf(unreliable, comparereport.UnreliableLine+".")))
	p.holes(v.Holes)

	p.bucketsSection(v)

	// Mean relevance by position.
	p.Section(v.runTitle("Mean relevance by result position"))
	var lseries []Series
	var lines []Line
	unjudgedZero := false // a report written before n per rank
	for _, g := range v.Groups {
		for _, i := range g {
			if i < 0 {
				continue
			}
			lseries = append(lseries, seriesOf(v.Strategies[i].Name, v.Colours))
			sv := &v.Strategies[i]
			var labels []string
			if sv.ByPositionN != nil {
				labels = make([]string, len(sv.ByPositionN))
				for r, n := range sv.ByPositionN {
					labels[r] = "n = " + Count(n) + " judged"
				}
			} else {
				unjudgedZero = true
			}
			lines = append(lines, Line{Series: len(lseries) - 1, Y: sv.ByPosition, Label: labels, N: sv.ByPositionN})
		}
	}
	xs := make([]string, v.K)
	for i := range xs {
		xs[i] = strconv.Itoa(i + 1)
	}
	run := "this run"
	if v.RunLabel != "" {
		run = v.RunLabel
	}
	p.LineChart(LineChart{Title: "Mean relevance (0–3) at each rank, per strategy (" + run + ")", XLabel: "rank", YLabel: "mean relevance", X: xs, Series: lseries, Lines: lines})
	if unjudgedZero {
		p.Note("Reranked strategies are dashed, in the colour of their base strategy. Written before n per rank: an unjudged or missing result counts 0.")
	} else {
		p.Note("Reranked strategies are dashed, in the colour of their base strategy. Each point is the mean over the judged results at that rank (its n on hover); an unjudged or missing result is not in it, and a rank with none judged has no point.")
	}

	// Base vs reranker.
	p.Section(v.runTitle("Base vs reranker"))
	if len(v.Pairs) == 0 {
		p.Para("No strategy has a reranked counterpart (a strategy and the same name with a reranker word: NAME" + RerankSuffix + ", NAME-rr, NAME-ce).")
	} else {
		// The table is on the measure the reranker's test is on (the run's
		// primary): its means with their intervals and n, as in the "Every
		// measure" table, and the test's Δ.
		rm := v.RerankMeasure
		if rm == "" {
			rm = v.Primary
		}
		label := MeasureLabel(rm, v.K)
		mi := metrics.QueryIndex(rm)
		stat := func(s StrategyView) MeasureStat {
			if mi >= 0 && mi < len(s.Measures) && s.Measures[mi].Has {
				return s.Measures[mi]
			}
			return MeasureStat{Stat: Stat{Mean: math.NaN()}}
		}
		t := Table{Caption: scaled(label, v.scaleOf(rm)), Head: []string{"strategy", "base", RerankSuffix, "Δ " + label, "verdict"}, NumCols: []bool{false, true, true, true, false}, Cards: true}
		unreliable := false // an interval of the table is marked
		cell := func(s StrategyView, strong bool) Cell {
			ms := stat(s)
			if !ms.Has {
				return Cell{Text: format.Missing}
			}
			unreliable = unreliable || ms.Unreliable
			sub := FmtCI(ms.CI) + format.MarkIf(ms.Unreliable) + " · n = " + Count(int(ms.N))
			return Cell{Text: Fmt(ms.Mean), Sub: sub, Strong: strong, Flag: noteIf(ms.Unreliable, comparereport.UnreliableLine)}
		}
		for _, pr := range v.Pairs {
			b, r := v.Strategies[pr.Base], v.Strategies[pr.Rerank]
			verdict := "no significant change"
			switch {
			case pr.Untested:
				verdict = "not tested here"
			case pr.Effect == compare.EffectHelps:
				verdict = "reranker helps"
			case pr.Effect == compare.EffectHurts:
				verdict = "reranker hurts"
			}
			bold := bestOf([]float64{stat(b).Mean, stat(r).Mean}, true)
			name := Cell{Text: b.Name}
			if r.Name != b.Name+RerankSuffix {
				name.Sub = "reranked: " + r.Name
			}
			t.Rows = append(t.Rows, []Cell{
				name,
				cell(b, bold[0]),
				cell(r, bold[1]),
				{Text: format.Signed(pr.Test.Delta), Sub: format.Signed(pr.Test.CI[0]) + " to " + format.Signed(pr.Test.CI[1]) + format.MarkIf(pr.Test.Unreliable) + " · n = " + Count(pr.Test.N),
					Flag: noteIf(pr.Test.Unreliable, comparereport.UnreliableLine)},
				{Text: verdict, Sub: "Holm p = " + fmtP(pr.Test.PHolm)},
			})
			if pr.Untested {
				t.Rows[len(t.Rows)-1][3] = Cell{Text: format.Missing}
				t.Rows[len(t.Rows)-1][4] = Cell{Text: verdict, Sub: "the test is not in the JSON report"}
			} else {
				unreliable = unreliable || pr.Test.Unreliable
			}
		}
		t.Foot = "Δ is reranked − base on the same queries, with its paired 95% interval; " + rerankTests(v) + "; the better of each pair in bold."
		if unreliable {
			t.Foot += " " + comparereport.UnreliableLine + "."
		}
		p.Table(t)
	}

	p.queriesSection(v)

	// Failed queries.
	p.Section(v.runTitle("Failed queries (top-1 result judged 0)"))
	ft := Table{Head: []string{"strategy", "failed", "queries"}, NumCols: []bool{false, true, false}, Cards: true}
	var fails []float64
	for _, g := range v.Groups {
		for _, i := range g {
			if i >= 0 {
				fails = append(fails, float64(v.Strategies[i].Failed))
			}
		}
	}
	fewest := bestOf(fails, false)
	j := 0
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
			ft.Rows = append(ft.Rows, []Cell{{Text: s.Name}, {Text: Count(s.Failed), Sub: "of " + Count(s.N), Strong: fewest[j]}, {Text: sample}})
			j++
		}
	}
	ft.Foot = fmt.Sprintf("The first %d failed queries by id per strategy, the fewest in bold; all of them are in the JSON report. A missing result counts as failed.", Sample)
	p.Table(ft)

	switch {
	case len(v.Diagnosis) > 0:
		p.Section("Diagnosis")
		p.List(v.Diagnosis)
		if v.DiagnosisNote != "" {
			p.Note(v.DiagnosisNote + ".")
		}
	case v.RunLabel != "":
		p.Section("Diagnosis")
		p.Para("Not shown for an earlier run: the diagnosis is computed from the inputs and is not in the JSON report.")
	}
}

// rerankTests says which test each reranker pair's p comes from, as the
// document names it: one test for every pair, or each pair's ("p: exact
// sign-flip for hybrid; sign-flip randomization (10,000 resamples, seed 1)
// for dense"), and that it is Holm-adjusted.
func rerankTests(v *CompareView) string {
	type use struct {
		test  string
		names []string
	}
	var uses []use
	for _, pr := range v.Pairs {
		if pr.Untested || pr.Test.PTest == "" {
			continue
		}
		name := v.Strategies[pr.Base].Name
		i := slices.IndexFunc(uses, func(u use) bool { return u.test == pr.Test.PTest })
		if i < 0 {
			uses = append(uses, use{test: pr.Test.PTest})
			i = len(uses) - 1
		}
		uses[i].names = append(uses[i].names, name)
	}
	holm := "Holm-adjusted with the report's other paired comparisons on " + MeasureLabel(v.Primary, v.K)
	switch len(uses) {
	case 0: // a document written before the JSON carried the reranker findings
		return "the test behind Δ and p is not in this run's JSON report"
	case 1:
		return "p: " + uses[0].test + ", " + holm
	}
	parts := make([]string, len(uses))
	for i, u := range uses {
		parts[i] = u.test + " for " + strings.Join(u.names, ", ")
	}
	return "p: " + strings.Join(parts, "; ") + "; each " + holm
}

// queriesSection lists each strategy's best and worst queries, one strategy
// at a time ("Select strategy", the best first) by the measure of "Select
// metric": each query with its text (compare --queries), the measure's value
// and the primary's. The page writes every strategy's lists by the primary
// measure (what a reader without script sees); the script draws the chosen
// strategy's by the chosen measure from the run's data (queriesData), as
// queryTable draws them.
func (p *Page) queriesSection(v *CompareView) {
	primary := MeasureLabel(v.Primary, v.K)
	p.Section(v.runTitle("Best and worst queries"))
	if len(v.QueryStrategies) == 0 {
		p.Para("The report lists no best or worst query.")
		return
	}
	p.raw(`<form class="controls rg-qcontrols" hidden><label>Select strategy <select class="rg-qstrategy">`)
	for _, qs := range v.QueryStrategies {
		sel := ""
		if qs.Strategy == v.QueriesOf {
			sel = " selected"
		}
		p.raw(`<option` + sel + ">" + Esc(qs.Strategy) + "</option>")
	}
	p.raw("</select></label></form>\n")
	for _, qs := range v.QueryStrategies {
		p.raw(`<div class="rg-queries" data-strategy="` + Esc(qs.Strategy) + `">` + "\n")
		l := qs.By[v.Primary]
		p.Grid(func() { p.queryTable(v, "Best of "+qs.Strategy+" by "+primary, l.Best) },
			func() { p.queryTable(v, "Worst of "+qs.Strategy+" by "+primary, l.Worst) })
		p.raw("</div>\n")
	}
	p.Note(fmt.Sprintf("The %d highest and lowest of %s queries by the measure chosen in \"Select metric\" (by its direction; ties by query id), for the strategy chosen in \"Select strategy\"; beside it %s, the primary measure. Without a script: every strategy by %s, as every report lists them. Every query's values are in the --per-query output.", compare.Handful, Count(v.Evaluated), primary, primary))
}

// queryTable is one list of queries by the primary measure: each query's
// id, its text (when a query of the page has one: shortened to
// comparereport.QueryCell runes, the whole in its title) and its value.
func (p *Page) queryTable(v *CompareView, caption string, qs []QueryView) {
	p.raw(`<div class="table"><table class="rg-qtable"><caption>` + Esc(caption) + "</caption><thead><tr><th scope=\"col\">query</th>")
	if v.Texts {
		p.raw(`<th scope="col">text</th>`)
	}
	p.raw(`<th scope="col" class="num" data-key="` + Esc(v.Primary) + `">` + Esc(v.queryHead(v.Primary)) + "</th></tr></thead>\n<tbody>\n")
	for _, q := range qs {
		p.raw(`<tr><th scope="row">` + Esc(q.ID) + "</th>")
		if v.Texts {
			short, whole := format.Shorten(q.Text, comparereport.QueryCell)
			title := ""
			if !whole {
				title = ` title="` + Esc(q.Text) + `"`
			}
			p.raw(`<td class="qtext"` + title + ">" + Esc(short) + "</td>")
		}
		p.raw(`<td class="num" data-key="` + Esc(v.Primary) + `">` + Esc(queryValue(q, v.Primary)) + "</td></tr>\n")
	}
	p.raw("</tbody></table></div>\n")
}

// queryHead is the head of a measure's column in the query tables: its
// label at the run's k with its scale ("DCG@10 (of 31.805)").
func (v *CompareView) queryHead(key string) string {
	return scaled(MeasureLabel(key, v.K), v.scaleOf(key))
}

// queryValue is a query's value of a measure as the tables print it.
func queryValue(q QueryView, key string) string {
	if x, ok := q.Values[key]; ok {
		return Fmt(x)
	}
	return format.Missing
}

// QueriesNone is what the best and worst queries say of a measure a run's
// report has no lists by (a report written before the lists by every
// measure).
const QueriesNone = "The report of this run lists the best and worst queries by its primary measure only (it was written before the lists by every measure): choose that measure to see them."

// queriesData is the JSON of a run's best and worst queries the script
// draws from (the run's page v; nil: none), the measures in keys' order:
// {"p": the primary's index, "text": whether a query has a text, "h": each
// measure's column head, "c": its label in the captions, "none":
// QueriesNone, "t": each listed query's text as the table shows it, "full":
// the whole text where that is shortened, "s": per strategy {"l": per
// measure key [best ids, worst ids], "v": per query id its values in keys'
// order, printed (Fmt; format.Missing)}}. Names, ids and texts are
// sanitised as Esc does for the page's text.
func queriesData(b []byte, v *CompareView, keys []string) []byte {
	if v == nil || len(v.QueryStrategies) == 0 {
		return append(b, "null"...)
	}
	// encoding/json escapes <, > and &: the data cannot end its element.
	str := func(s string) {
		j, _ := json.Marshal(format.SanitizeText(s))
		b = append(b, j...)
	}
	b = append(b, `{"p":`...)
	b = strconv.AppendInt(b, int64(slices.Index(keys, v.Primary)), 10)
	b = append(b, `,"text":`...)
	b = strconv.AppendBool(b, v.Texts)
	for _, part := range []struct {
		name string
		of   func(string) string
	}{{"h", v.queryHead}, {"c", func(k string) string { return MeasureLabel(k, v.K) }}} {
		b = append(b, `,"`+part.name+`":[`...)
		for i, key := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			str(part.of(key))
		}
		b = append(b, ']')
	}
	b = append(b, `,"none":`...)
	str(QueriesNone)
	// The texts of the listed queries, once per run.
	texts, full := map[string]string{}, map[string]string{}
	for _, qs := range v.QueryStrategies {
		for _, l := range qs.By {
			for _, q := range append(slices.Clone(l.Best), l.Worst...) {
				if q.Text == "" {
					continue
				}
				short, whole := format.Shorten(q.Text, comparereport.QueryCell)
				texts[q.ID] = short
				if !whole {
					full[q.ID] = q.Text
				}
			}
		}
	}
	for _, m := range []struct {
		name string
		m    map[string]string
	}{{"t", texts}, {"full", full}} {
		b = append(b, `,"`+m.name+`":{`...)
		for i, id := range slices.Sorted(maps.Keys(m.m)) {
			if i > 0 {
				b = append(b, ',')
			}
			str(id)
			b = append(b, ':')
			str(m.m[id])
		}
		b = append(b, '}')
	}
	b = append(b, `,"s":{`...)
	for i, qs := range v.QueryStrategies {
		if i > 0 {
			b = append(b, ',')
		}
		str(qs.Strategy)
		b = append(b, `:{"l":{`...)
		values := map[string]QueryView{}
		first := true
		for _, key := range keys {
			l, ok := qs.By[key]
			if !ok {
				continue
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			str(key)
			b = append(b, ":["...)
			for j, list := range [][]QueryView{l.Best, l.Worst} {
				if j > 0 {
					b = append(b, ',')
				}
				b = append(b, '[')
				for n, q := range list {
					if n > 0 {
						b = append(b, ',')
					}
					str(q.ID)
					values[q.ID] = q
				}
				b = append(b, ']')
			}
			b = append(b, ']')
		}
		b = append(b, `},"v":{`...)
		for n, id := range slices.Sorted(maps.Keys(values)) {
			if n > 0 {
				b = append(b, ',')
			}
			str(id)
			b = append(b, ":["...)
			for j, key := range keys {
				if j > 0 {
					b = append(b, ',')
				}
				b = format.AppendJSONString(b, queryValue(values[id], key))
			}
			b = append(b, ']')
		}
		b = append(b, "}}"...)
	}
	return append(b, "}}"...)
}

func fmtP(p float64) string { return format.P(p) }

// joinNote is two sentences of a note, either of which may be "".
func joinNote(a, b string) string {
	if a == "" || b == "" {
		return a + b
	}
	return a + " " + b
}

// unreliableNote is the footnote (comparereport.UnreliableLine) of the
// tables of "Per strategy" of run r, one per measure of keys ("": none),
// when an interval of them is marked unreliable; else "".
func unreliableNote(r exploreRun, keys ...string) string {
	for _, name := range r.Order {
		for _, key := range keys {
			if pt, ok := r.Measures[name][key]; ok && key != "" && pt.Unreliable {
				return comparereport.UnreliableLine + "."
			}
		}
	}
	return ""
}

// controls are "Select run" and "Select metric", hidden until the script
// shows them (without script they could not act).
func (p *Page) controls(v CompareView) {
	p.raw(`<form class="controls" id="rg-controls" hidden><label for="rg-run">Select run <select id="rg-run">`)
	for i := len(v.Runs) - 1; i >= 0; i-- {
		sel := ""
		if i == v.Current {
			sel = " selected"
		}
		p.raw(`<option value="` + strconv.Itoa(i) + `"` + sel + ">" + Esc(v.Runs[i].Label) + "</option>")
	}
	p.raw(`</select></label><label for="rg-metric">Select metric <select id="rg-metric">`)
	for i, key := range v.Measures {
		sel := ""
		if key == v.Primary {
			sel = " selected"
		}
		p.raw(`<option value="` + strconv.Itoa(i) + `"` + sel + ">" + Esc(MeasureLabel(key, v.K)) + "</option>")
	}
	p.raw("</select></label></form>\n")
}

// exploreGroups are a run's strategies in pairs {base, reranked} (nil: none),
// ordered by the better of each pair on the measure, best first, ties in the
// run's order (the script orders them alike).
func exploreGroups(r exploreRun, key string) [][2]*string {
	have := map[string]bool{}
	for _, n := range r.Order {
		have[n] = true
	}
	var gs [][2]*string
	for i := range r.Order {
		n := &r.Order[i]
		if base, ok := strings.CutSuffix(*n, RerankSuffix); ok {
			if !have[base] {
				gs = append(gs, [2]*string{nil, n})
			}
			continue
		}
		g := [2]*string{n, nil}
		for j := range r.Order {
			if r.Order[j] == *n+RerankSuffix {
				g[1] = &r.Order[j]
			}
		}
		gs = append(gs, g)
	}
	higher := higherIsBetter(key)
	top := func(g [2]*string) (float64, bool) {
		t, found := 0.0, false
		for _, n := range g {
			if n == nil {
				continue
			}
			pt, ok := r.Measures[*n][key]
			if !ok || pt.Mean != pt.Mean {
				continue
			}
			if !found || (higher && pt.Mean > t) || (!higher && pt.Mean < t) {
				t, found = pt.Mean, true
			}
		}
		return t, found
	}
	slices.SortStableFunc(gs, func(a, b [2]*string) int {
		ta, oka := top(a)
		tb, okb := top(b)
		switch {
		case !oka && !okb, oka && okb && ta == tb:
			return 0
		case !oka:
			return 1
		case !okb:
			return -1
		case (higher && ta > tb) || (!higher && ta < tb):
			return -1
		}
		return 1
	})
	return gs
}

func groupName(g [2]*string) string {
	if g[0] != nil {
		return *g[0]
	}
	return *g[1]
}

// exploreTable is a run's table of one measure: a row per strategy, its
// reranked counterpart beside it, the best value bold.
func exploreTable(r exploreRun, key string, k int, scale string) Table {
	gs := exploreGroups(r, key)
	pairs := slices.ContainsFunc(gs, func(g [2]*string) bool { return g[0] != nil && g[1] != nil })
	var vals []float64
	for _, n := range r.Order {
		if pt, ok := r.Measures[n][key]; ok {
			vals = append(vals, pt.Mean)
		}
	}
	best := math.NaN()
	for i, b := range bestOf(vals, higherIsBetter(key)) {
		if b {
			best = vals[i]
		}
	}
	t := Table{Caption: scaled(MeasureLabel(key, k), scale), Head: []string{"strategy", "base"}, NumCols: []bool{false, true, true}}
	if pairs {
		t.Head = append(t.Head, RerankSuffix)
	}
	cell := func(n *string) Cell {
		if n == nil {
			return Cell{Text: "—", Num: true}
		}
		pt, ok := r.Measures[*n][key]
		if !ok {
			return Cell{Text: "—", Num: true}
		}
		return Cell{Text: Fmt(pt.Mean), Sub: FmtCI([2]float64{pt.Lo, pt.Hi}) + format.MarkIf(pt.Unreliable) + " · n = " + Count(pt.N), Num: true, Strong: pt.Mean == best,
			Flag: noteIf(pt.Unreliable, comparereport.UnreliableLine)}
	}
	for _, g := range gs {
		row := []Cell{{Text: groupName(g)}, cell(g[0])}
		if pairs {
			row = append(row, cell(g[1]))
		} else if g[0] == nil {
			row[1] = cell(g[1])
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// exploreBars is a run's bar chart of one measure: a row per strategy, its
// reranked counterpart below it, each in its strategy's colour.
func exploreBars(r exploreRun, key string, k int, colours map[string]int, scale string) BarChart {
	label := MeasureLabel(key, k)
	gs := exploreGroups(r, key)
	pairs := slices.ContainsFunc(gs, func(g [2]*string) bool { return g[0] != nil && g[1] != nil })
	c := BarChart{Title: scaled(label, scale) + " per strategy (95% CI whiskers), " + r.Label, Measure: scaled(label, scale), Series: []Series{{}}, Legend: []Series{}}
	if pairs {
		c.Series = append(c.Series, Series{})
	}
	for _, g := range gs {
		cat := groupName(g)
		c.Categories = append(c.Categories, cat)
		slots := g[:]
		if !pairs {
			slots = []*string{g[0]}
			if g[0] == nil {
				slots = []*string{g[1]}
			}
		}
		for si, n := range slots {
			if n == nil {
				continue
			}
			st := seriesOf(*n, colours)
			c.Legend = append(c.Legend, st)
			pt, ok := r.Measures[*n][key]
			if !ok {
				continue
			}
			// An undefined mean draws no bar; its table row is "—" with its n (as the script's).
			b := Bar{Category: cat, Series: si, Value: pt.Mean, N: pt.N, Style: &st, Unreliable: pt.Unreliable}
			if pt.Lo == pt.Lo && pt.Hi == pt.Hi {
				b.CI = &[2]float64{pt.Lo, pt.Hi}
			}
			c.Bars = append(c.Bars, b)
		}
	}
	return c
}
