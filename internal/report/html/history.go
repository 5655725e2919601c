package html

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/history"
)

// HistoryRuns is how many runs the history's run table lists (the newest); the
// chart has them all.
const HistoryRuns = 100

// RunView is one run of the history.
type RunView struct {
	Time, Commit, Branch string
	Headline             string   // check: the verdict; compare: the recommendation
	Changed              []string // inputs and parameters changed since the previous run (nil: none or first)
	Line                 int      // line in the history file
}

// SeriesView is one line of the history chart: a strategy or a group, its
// value (NaN: absent from that run) and 95% interval per run.
type SeriesView struct {
	Name   string
	Y      []float64
	Lo, Hi []float64
	N      []int
}

// HistoryView is everything the history page shows.
type HistoryView struct {
	Command, Measure, File string
	Runs                   []RunView // oldest first
	Series                 []SeriesView
}

// summaryJSON, groupJSON and docJSON read, from the documents of check
// (retrieval-gate/aggregates@1) and compare (retrieval-gate/compare@1), only
// what the history charts.
type summaryJSON struct {
	Mean *float64    `json:"mean"`
	CI95 [2]*float64 `json:"ci95"`
}

type groupJSON struct {
	N       int                    `json:"n"`
	Metrics map[string]summaryJSON `json:"metrics"`
}

type docJSON struct {
	Schema      string               `json:"schema"`
	Strategies  map[string]groupJSON `json:"strategies"`
	Recommended string               `json:"recommended"`
	Overall     *groupJSON           `json:"overall"`
	ByType      map[string]groupJSON `json:"by_type"`
	ByLocale    map[string]groupJSON `json:"by_locale"`
	Verdict     string               `json:"verdict"`
}

func val(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// HistoryViewOf picks the runs of command from the records (file order) and,
// for each, the measure of every strategy (compare) or group (check: overall,
// each type, each locale). It reads values and computes none.
func HistoryViewOf(file string, recs []history.Record, command, measure string) (HistoryView, error) {
	v := HistoryView{Command: command, Measure: measure, File: file}
	index := map[string]int{}
	var prev *history.Fingerprint
	for _, rec := range recs {
		if rec.Command != command {
			continue
		}
		var d docJSON
		if err := json.Unmarshal(rec.Document, &d); err != nil {
			return v, fmt.Errorf("%s:%d: document: %w", file, rec.Line, err)
		}
		run := RunView{Time: rec.Time, Commit: rec.Commit, Branch: rec.Branch, Line: rec.Line, Headline: d.Verdict}
		if command == "compare" {
			run.Headline = d.Recommended
		}
		if prev != nil && prev.Digest != rec.Fingerprint.Digest {
			run.Changed = rec.Fingerprint.Changed(*prev)
			if len(run.Changed) == 0 {
				run.Changed = []string{"fingerprint"}
			}
		}
		fp := rec.Fingerprint
		prev = &fp
		i := len(v.Runs)
		v.Runs = append(v.Runs, run)
		add := func(name string, g groupJSON) {
			s, ok := g.Metrics[measure]
			if !ok {
				return
			}
			j, ok := index[name]
			if !ok {
				j = len(v.Series)
				index[name] = j
				v.Series = append(v.Series, SeriesView{Name: name})
			}
			sv := &v.Series[j]
			for len(sv.Y) < i {
				sv.Y, sv.Lo, sv.Hi, sv.N = append(sv.Y, math.NaN()), append(sv.Lo, math.NaN()), append(sv.Hi, math.NaN()), append(sv.N, 0)
			}
			sv.Y, sv.Lo, sv.Hi, sv.N = append(sv.Y, val(s.Mean)), append(sv.Lo, val(s.CI95[0])), append(sv.Hi, val(s.CI95[1])), append(sv.N, g.N)
		}
		if command == "compare" {
			for _, name := range sortedKeys(d.Strategies) {
				add(name, d.Strategies[name])
			}
		} else {
			if d.Overall != nil {
				add("overall", *d.Overall)
			}
			for _, name := range sortedKeys(d.ByType) {
				add("type: "+name, d.ByType[name])
			}
			for _, name := range sortedKeys(d.ByLocale) {
				add("locale: "+name, d.ByLocale[name])
			}
		}
	}
	for j := range v.Series {
		sv := &v.Series[j]
		for len(sv.Y) < len(v.Runs) {
			sv.Y, sv.Lo, sv.Hi, sv.N = append(sv.Y, math.NaN()), append(sv.Lo, math.NaN()), append(sv.Hi, math.NaN()), append(sv.N, 0)
		}
	}
	return v, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func short(commit string) string {
	if len(commit) > 7 {
		return commit[:7]
	}
	return commit
}

// History writes the history page: the measure over the runs, one line per
// strategy or group with its interval as a band, the runs whose inputs changed
// marked, and the newest HistoryRuns runs listed.
func History(w io.Writer, v HistoryView) error {
	p := NewPage("retrieval-gate history: " + v.Command)
	p.Subtitle(fmt.Sprintf("%s runs of %s in %s · measure %s", Count(len(v.Runs)), v.Command, v.File, v.Measure))
	if len(v.Runs) == 0 {
		p.Para("No run of " + v.Command + " in the history.")
		_, err := p.WriteTo(w)
		return err
	}
	changes := 0
	var markers []Marker
	for i, r := range v.Runs {
		if r.Changed != nil {
			changes++
			markers = append(markers, Marker{X: i, Label: "inputs changed: " + strings.Join(r.Changed, ", ")})
		}
	}
	first, last := v.Runs[0], v.Runs[len(v.Runs)-1]
	kpis := []Indicator{
		{Label: "Runs", Value: Count(len(v.Runs)), Detail: first.Time + " to " + last.Time},
		{Label: "Latest", Value: last.Headline, Detail: short(last.Commit) + " · " + last.Branch + " · " + last.Time},
		{Label: "Input changes", Value: Count(changes), Detail: "runs whose fingerprint differs from the run before (marked on the chart)"},
	}
	p.Indicators(kpis)
	p.Section(v.Measure + " over the runs")
	xs := make([]string, len(v.Runs))
	for i, r := range v.Runs {
		xs[i] = strconv.Itoa(i + 1)
		if len(r.Time) >= 10 {
			xs[i] = r.Time[:10]
		}
	}
	var series []Series
	var lines []Line
	for j, s := range v.Series {
		series = append(series, Series{Name: s.Name, Color: j % 8})
		labels := make([]string, len(s.N))
		for i, n := range s.N {
			labels[i] = "n = " + Count(n) + " · " + short(v.Runs[i].Commit)
		}
		lines = append(lines, Line{Series: j, Y: s.Y, Lo: s.Lo, Hi: s.Hi, Label: labels})
	}
	p.LineChart(LineChart{Title: v.Measure + " per run (95% CI bands; dashed lines: inputs changed)", XLabel: "run", YLabel: v.Measure, X: xs, Series: series, Lines: lines, Markers: markers})
	p.Note("A dashed vertical line marks a run whose inputs (knowledge base, cases, qrels, runs) or parameters differ from the run before: a jump there may come from relabelling, not from retrieval.")

	p.Section("Runs (newest first)")
	t := Table{Head: []string{"run", "commit", v.headlineName(), "inputs changed"}}
	for i := len(v.Runs) - 1; i >= 0 && i >= len(v.Runs)-HistoryRuns; i-- {
		r := v.Runs[i]
		changed := "—"
		if r.Changed != nil {
			changed = strings.Join(r.Changed, ", ")
		}
		t.Rows = append(t.Rows, []Cell{
			{Text: "#" + strconv.Itoa(i+1), Sub: r.Time},
			{Text: short(r.Commit), Sub: r.Branch},
			{Text: r.Headline},
			{Text: changed},
		})
	}
	if len(v.Runs) > HistoryRuns {
		t.Foot = fmt.Sprintf("The newest %d of %s runs; every run is a line of the history file.", HistoryRuns, Count(len(v.Runs)))
	}
	p.Table(t)
	_, err := p.WriteTo(w)
	return err
}

func (v HistoryView) headlineName() string {
	if v.Command == "compare" {
		return "recommended"
	}
	return "verdict"
}
