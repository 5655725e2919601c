package html

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/valyala/fastjson"

	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/history"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/trend"
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
	Report               string   // the run's published HTML report, relative to the history ("" when none)
	FailedGates          []string // the names of the run's gates that failed, in the document's order
	// Measures is every measure of every strategy of a compare run (nil for
	// check): the compare dashboard's "Select run" and "Select metric".
	Measures RunMeasures
	// MaxDCG is the largest DCG@k possible in a compare run (trend.MaxDCG:
	// recorded in its document, or derived from its k, gain and relevance
	// scale; NaN when the record does not tell it); 0 for check.
	MaxDCG float64
	// Document is a compare run's document as the history keeps it (nil for
	// check): the compare dashboard's page of that run.
	Document []byte
	// K is the run's cutoff (0: its document states none). Runs at
	// different k are never one series (SplitByK).
	K int
}

// dcgOf is DCG@k's scale in run r as a heading states it: "of 31.805", or
// "max unknown" for a run recorded without it.
func dcgOf(r RunView) string {
	if r.MaxDCG > 0 {
		return "of " + Fmt(r.MaxDCG)
	}
	return "max unknown"
}

// dcgTip is what follows a DCG@k value of run r in a point's label:
// " of 31.805", or ", max unknown".
func dcgTip(r RunView) string {
	if r.MaxDCG > 0 {
		return " of " + Fmt(r.MaxDCG)
	}
	return ", max unknown"
}

// dcgScale is the scale of the charted measure over the view's runs: for
// DCG@k, "of 31.805" when every run has that maximum (mixed false); when the
// runs differ (a k, gain or relevance scale that changed, or a run recorded
// without it) "" and mixed, each point then carrying its own; "" for every
// other measure.
func (v HistoryView) dcgScale() (scale string, mixed bool) {
	if v.Measure != metrics.KeyDCG || !compareLike(v.Command) || len(v.Runs) == 0 {
		return "", false
	}
	first := dcgOf(v.Runs[0])
	for _, r := range v.Runs[1:] {
		if dcgOf(r) != first {
			return "", true
		}
	}
	return first, false
}

// MixedMaxNote is what a chart over the runs of DCG@k says when the maximum
// differs between its runs.
const MixedMaxNote = "the maximum DCG differs between runs: each point gives its own"

// scaledLabel is label() with DCG@k's scale: "DCG@10 (of 31.805)"; with a
// maximum that differs between the runs, "DCG@10 (the maximum DCG differs …)".
func (v HistoryView) scaledLabel() string {
	scale, mixed := v.dcgScale()
	if mixed {
		scale = MixedMaxNote
	}
	return scaled(v.label(), scale)
}

// DeltaPrefix prefixes a check measure to chart its baseline delta: the
// measure "delta:retrieval_hit_at_k" is the document's baseline section's
// paired delta (current − baseline) of retrieval_hit_at_k per group, with its
// 95% interval; a run without a baseline has none (a gap).
const DeltaPrefix = "delta:"

// SeriesView is one line of the history chart: a strategy or a group, its
// value (NaN: absent from that run) and 95% interval per run.
type SeriesView struct {
	Name   string
	Y      []float64
	Lo, Hi []float64
	N      []int
	// K is the cutoff of the runs the series joins (a strategy or group at
	// another k is another series).
	K int
}

// MixedK reports whether the view's runs have more than one cutoff: each
// series then names its k.
func (v HistoryView) MixedK() bool {
	k := 0
	for _, r := range v.Runs {
		if r.K > 0 {
			if k > 0 && r.K != k {
				return true
			}
			k = r.K
		}
	}
	return false
}

// SeriesName is a series as the chart's legend names it: with its k when
// the runs' cutoffs differ ("dense · k=5").
func (v HistoryView) SeriesName(s SeriesView) string {
	if s.K > 0 && v.MixedK() {
		return s.Name + " · k=" + strconv.Itoa(s.K)
	}
	return s.Name
}

// HistoryView is everything the history page shows.
type HistoryView struct {
	Command, Measure, File string
	Runs                   []RunView // oldest first
	Series                 []SeriesView
	// Branch, when set, is the only branch whose runs were kept (the compare
	// dashboard's chart: the base branch's runs, and this run).
	Branch string
	// Unread, when set, says why the history could not be read (the dashboard
	// shows it instead of the chart).
	Unread string
	// groups are, for each of the first Runs that stands for a group of
	// older runs (ChartView), the group's first and last run, numbered from
	// 1 as the runs table numbers them: its hover names them.
	groups [][2]int
	// K is the cutoff of the newest run that states one (0: none): the
	// measures' labels (DCG@10).
	K int
}

// label is the charted measure as the pages label it: the registry's label
// at the runs' cutoff (a baseline delta: "Δ hit@5"), else the key. When the
// runs are at more than one cutoff it names none ("hit@k"): each series names
// its own (SeriesName), and the newest run's k would mislabel the others.
func (v HistoryView) label() string {
	if v.K <= 0 {
		return v.Measure
	}
	at := func(key string) string {
		if info, ok := metrics.Lookup(key); ok && v.MixedK() {
			return info.Label + "@k"
		}
		return MeasureLabel(key, v.K)
	}
	if key, ok := strings.CutPrefix(v.Measure, DeltaPrefix); ok && !compareLike(v.Command) {
		return "Δ " + at(key)
	}
	return at(v.Measure)
}

func (v HistoryView) branchText() string {
	if v.Branch == "" {
		return ""
	}
	return " on " + v.Branch
}

// compareLike reports whether a command's documents are compare's
// (retrieval-gate/compare@1): compare's, and evaluate's, whose record holds its
// compare stage's report.
func compareLike(command string) bool { return command == "compare" || command == "evaluate" }

// HistoryBuilder collects the runs of one command, one record at a time, so a
// long history is read in one pass with memory for the charted values only.
type HistoryBuilder struct {
	v     HistoryView
	index map[string]int
	prev  *history.Fingerprint
}

// NewHistory starts the view of command's runs charting measure.
func NewHistory(file, command, measure string) *HistoryBuilder {
	return &HistoryBuilder{v: HistoryView{Command: command, Measure: measure, File: file}, index: map[string]int{}}
}

func num(v *fastjson.Value) float64 {
	if v == nil || v.Type() != fastjson.TypeNumber {
		return math.NaN() // null: no value
	}
	return v.GetFloat64()
}

// Add takes one record and its parsed document (check: retrieval-gate/aggregates@1,
// compare: retrieval-gate/compare@1): the measure of every strategy (compare) or
// group (check: overall, each type, each locale). Records of other commands are
// skipped. It reads values and computes none.
func (b *HistoryBuilder) Add(rec history.Record, doc *fastjson.Value) error {
	if rec.Command != b.v.Command {
		return nil
	}
	if doc == nil || doc.Type() != fastjson.TypeObject {
		return fmt.Errorf("%s:%d: the document is not an object", b.v.File, rec.Line)
	}
	run := RunView{Time: rec.Time, Commit: rec.Commit, Branch: rec.Branch, Line: rec.Line, Headline: string(doc.GetStringBytes("verdict"))}
	if history.ReportPath.MatchString(rec.Report) {
		run.Report = rec.Report
	}
	if compareLike(b.v.Command) {
		run.Headline = string(doc.GetStringBytes("recommended"))
		run.MaxDCG = trend.MaxDCG(doc)
		run.Document = doc.MarshalTo(nil) // rec.Document is nil: the scan parsed it
	}
	if b.prev != nil && b.prev.Digest != rec.Fingerprint.Digest {
		run.Changed = rec.Fingerprint.Changed(*b.prev)
		if len(run.Changed) == 0 {
			run.Changed = []string{"fingerprint"}
		}
	}
	for _, g := range doc.GetArray("gates") {
		if string(g.GetStringBytes("status")) == "fail" {
			run.FailedGates = append(run.FailedGates, string(g.GetStringBytes("name")))
		}
	}
	if k := doc.GetInt("k"); k > 0 {
		b.v.K = k
		run.K = k
	}
	fp := rec.Fingerprint
	b.prev = &fp
	i := len(b.v.Runs)
	b.v.Runs = append(b.v.Runs, run)
	// A measure's value in a group: its mean, or (delta:KEY, check) the
	// baseline section's delta of KEY, each with its interval and n: the
	// measure's own n (the cases or queries its mean is over), the group's
	// in a document whose measures carry none.
	key, value, nOf := b.v.Measure, "mean", func(g, m *fastjson.Value) int {
		if m.Exists("n") {
			return m.GetInt("n")
		}
		return g.GetInt("n")
	}
	delta := !compareLike(b.v.Command) && strings.HasPrefix(key, DeltaPrefix)
	if delta {
		key, value, nOf = strings.TrimPrefix(key, DeltaPrefix), "delta", func(_, m *fastjson.Value) int { return m.GetInt("n") }
		doc = doc.Get("baseline")
		if doc == nil || doc.Type() != fastjson.TypeObject {
			return nil // no baseline: a gap in every series
		}
	}
	add := func(name string, g *fastjson.Value) {
		m := g.Get("metrics", key)
		if m == nil || m.Type() != fastjson.TypeObject {
			return
		}
		id := name + "\x00" + strconv.Itoa(run.K) // a series per name and k
		j, ok := b.index[id]
		if !ok {
			j = len(b.v.Series)
			b.index[id] = j
			b.v.Series = append(b.v.Series, SeriesView{Name: name, K: run.K})
		}
		sv := &b.v.Series[j]
		sv.pad(i)
		sv.Y, sv.Lo, sv.Hi, sv.N = append(sv.Y, num(m.Get(value))), append(sv.Lo, num(m.Get("ci95", "0"))), append(sv.Hi, num(m.Get("ci95", "1"))), append(sv.N, nOf(g, m))
	}
	groups := func(prefix string, o *fastjson.Value) {
		obj, err := o.Object()
		if err != nil {
			return
		}
		var keys []string
		obj.Visit(func(k []byte, _ *fastjson.Value) { keys = append(keys, string(k)) })
		slices.Sort(keys)
		for _, k := range keys {
			add(prefix+k, obj.Get(k))
		}
	}
	if compareLike(b.v.Command) {
		if s := doc.Get("strategies"); s != nil {
			groups("", s)
			b.v.Runs[i].Measures = runMeasures(s)
		}
		return nil
	}
	if o := doc.Get("overall"); o != nil {
		add("overall", o)
	}
	for _, g := range []struct{ key, prefix string }{{"by_type", "type: "}, {"by_locale", "locale: "}} {
		if o := doc.Get(g.key); o != nil {
			groups(g.prefix, o)
		}
	}
	return nil
}

// runMeasures reads every measure of every strategy of a compare document's
// "strategies" object: its mean, interval and n (null: NaN; the n the
// strategy's when the measure has none) and whether its interval is marked
// unreliable.
func runMeasures(strategies *fastjson.Value) RunMeasures {
	obj, err := strategies.Object()
	if err != nil {
		return nil
	}
	out := RunMeasures{}
	obj.Visit(func(name []byte, s *fastjson.Value) {
		ms, err := s.Get("metrics").Object()
		if err != nil {
			return
		}
		m := map[string]Point{}
		ms.Visit(func(key []byte, v *fastjson.Value) {
			if v.Type() != fastjson.TypeObject {
				return
			}
			n := v.GetInt("n")
			if !v.Exists("n") { // a document whose measures carry no n: the strategy's, as the chart's (HistoryBuilder)
				n = s.GetInt("n")
			}
			m[string(key)] = Point{Mean: num(v.Get("mean")), Lo: num(v.Get("ci95", "0")), Hi: num(v.Get("ci95", "1")), N: n, Unreliable: v.GetBool("unreliable")}
		})
		out[string(name)] = m
	})
	return out
}

// ForMeasure is v charting another measure of compare's runs (each run's
// Measures); a view whose runs carry no measures, or the measure v already
// charts, is v itself.
func (v HistoryView) ForMeasure(key string) HistoryView {
	if key == v.Measure || !slices.ContainsFunc(v.Runs, func(r RunView) bool { return r.Measures != nil }) {
		return v
	}
	out := v
	out.Measure, out.Series = key, nil
	index := map[string]int{} // name and k -> series
	for i, r := range v.Runs {
		names := make([]string, 0, len(r.Measures))
		for n := range r.Measures {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			pt, ok := r.Measures[n][key]
			if !ok {
				continue
			}
			id := n + "\x00" + strconv.Itoa(r.K) // a series per name and k
			j, ok := index[id]
			if !ok {
				j = len(out.Series)
				index[id] = j
				out.Series = append(out.Series, SeriesView{Name: n, K: r.K})
			}
			sv := &out.Series[j]
			sv.pad(i)
			sv.Y, sv.Lo, sv.Hi, sv.N = append(sv.Y, pt.Mean), append(sv.Lo, pt.Lo), append(sv.Hi, pt.Hi), append(sv.N, pt.N)
		}
	}
	for j := range out.Series {
		out.Series[j].pad(len(out.Runs))
	}
	return out
}

// RunTick is run i's label on the x axis of a chart over the runs: its day
// and short commit, so runs of one day are told apart ("2026-12-05
// a1edbd4"); without a time, its number.
func RunTick(i int, r RunView) string {
	s := strconv.Itoa(i + 1)
	if len(r.Time) >= 10 {
		s = r.Time[:10]
	}
	if c := format.CommitPrefix(r.Commit, 7); c != "" {
		s += " " + c
	}
	return s
}

// pad fills the runs before i where the series was absent.
func (sv *SeriesView) pad(i int) {
	for len(sv.Y) < i {
		sv.Y, sv.Lo, sv.Hi, sv.N = append(sv.Y, math.NaN()), append(sv.Lo, math.NaN()), append(sv.Hi, math.NaN()), append(sv.N, 0)
	}
}

// View returns the collected history.
func (b *HistoryBuilder) View() HistoryView {
	for j := range b.v.Series {
		b.v.Series[j].pad(len(b.v.Runs))
	}
	return b.v
}

// Newest is v with its newest n runs only (each series cut alike); a run's
// input change stays marked, measured against the run before it.
func (v HistoryView) Newest(n int) HistoryView {
	drop := len(v.Runs) - n
	if drop <= 0 {
		return v
	}
	v.Runs = v.Runs[drop:]
	series := make([]SeriesView, 0, len(v.Series))
	for _, s := range v.Series {
		s.Y, s.Lo, s.Hi, s.N = s.Y[drop:], s.Lo[drop:], s.Hi[drop:], s.N[drop:]
		if slices.ContainsFunc(s.Y, func(y float64) bool { return !math.IsNaN(y) }) {
			series = append(series, s)
		}
	}
	v.Series = series
	return v
}

// The history page's chart is bounded whatever the history's length
// (docs/history.md): the newest runs are drawn in full (value, 95% band, hover
// n and commit) up to chartFullPoints points (runs × series, at least
// chartMinFullRuns and at most chartMaxFullRuns runs); the older runs are
// summarised in at most chartOlderPoints points: one run in every step (the
// last of each group of step consecutive runs) with its value, interval, n
// and commit, its hover naming the group's runs, an input change anywhere in
// the group marked on it. Each point is drawn four times (layout), three of
// them with its hover text: 5,000 points keep the page of 8 strategies near
// 4.3 MB (6,000 and 2,000 made it 6.9 MB once the chart was drawn for every
// width).
const (
	chartFullPoints  = 4000
	chartMinFullRuns = 20
	chartMaxFullRuns = 1000
	chartOlderPoints = 1000
)

// ChartView is v as the history page charts it: the newest full runs as they
// are, the older ones summarised (each point is the last run of its group,
// with that run's value, interval, n and commit).
// step is how many older runs each summarised point stands for (1 when none
// are summarised); older is how many runs are older than the full ones.
func (v HistoryView) ChartView() (cv HistoryView, full, older, step int) {
	ns := max(1, len(v.Series))
	full = min(max(chartFullPoints/ns, chartMinFullRuns), chartMaxFullRuns)
	older = len(v.Runs) - full
	if older <= 0 {
		return v, len(v.Runs), 0, 1
	}
	slots := max(chartOlderPoints/ns, 1)
	step = (older + slots - 1) / slots
	var idx []int // the runs charted, oldest first
	cv = v
	cv.Runs = nil
	for a := 0; a < older; a += step {
		b := min(a+step, older)
		r := v.Runs[b-1]
		r.Changed = nil
		for _, o := range v.Runs[a:b] {
			for _, c := range o.Changed {
				if !slices.Contains(r.Changed, c) {
					r.Changed = append(r.Changed, c)
				}
			}
		}
		idx = append(idx, b-1)
		cv.Runs = append(cv.Runs, r)
		cv.groups = append(cv.groups, [2]int{a + 1, b})
	}
	for i := older; i < len(v.Runs); i++ {
		idx = append(idx, i)
		cv.Runs = append(cv.Runs, v.Runs[i])
	}
	cv.Series = make([]SeriesView, 0, len(v.Series))
	for _, s := range v.Series {
		c := SeriesView{Name: s.Name, K: s.K, Y: make([]float64, len(idx)), Lo: make([]float64, len(idx)), Hi: make([]float64, len(idx)), N: make([]int, len(idx))}
		for k, i := range idx {
			c.Y[k], c.Lo[k], c.Hi[k], c.N[k] = s.Y[i], s.Lo[i], s.Hi[i], s.N[i]
		}
		if slices.ContainsFunc(c.Y, func(y float64) bool { return !math.IsNaN(y) }) {
			cv.Series = append(cv.Series, c)
		}
	}
	return cv, full, older, step
}

// History writes the history page: the measure over the runs, one line per
// strategy or group with its interval as a band, the runs whose inputs changed
// marked, and the newest HistoryRuns runs listed.
func History(w io.Writer, v HistoryView) error {
	p := NewPage("retrieval-gate history: " + v.Command)
	runs := Count(len(v.Runs)) + " runs"
	if len(v.Runs) == 1 {
		runs = "1 run"
	}
	p.Subtitle(fmt.Sprintf("%s of %s in %s · measure %s", runs, v.Command, v.File, v.scaledLabel()))
	if len(v.Runs) == 0 {
		p.Para("No run of " + v.Command + " in the history.")
		_, err := p.WriteTo(w)
		return err
	}
	changes := len(changeMarkers(v))
	first, last := v.Runs[0], v.Runs[len(v.Runs)-1]
	kpis := []Indicator{
		{Label: "Runs", Value: Count(len(v.Runs)), Detail: first.Time + " to " + last.Time},
		{Label: "Latest", Value: last.Headline, Detail: format.CommitPrefix(last.Commit, 7) + " · " + last.Branch + " · " + last.Time},
		{Label: "Input changes", Value: Count(changes), Detail: "runs whose fingerprint differs from the run before (marked on the chart)"},
	}
	p.Indicators(kpis)
	p.Section(v.scaledLabel() + " over the runs")
	var colours map[string]int
	if compareLike(v.Command) {
		names := make([]string, len(v.Series))
		for j, s := range v.Series {
			names[j] = s.Name
		}
		colours = StrategyColours(names)
	}
	cv, full, older, step := v.ChartView()
	p.runsChart(cv, 0, colours)
	if older > 0 {
		per := "one point for every " + Count(step) + " runs (the last of each group)"
		if step == 1 {
			per = "one point each"
		}
		p.Note(fmt.Sprintf("The chart draws the newest %s runs in full; the %s older runs are summarised: %s, with that run's value, 95%% interval, n and commit (its hover names the runs it stands for), an input change anywhere in the group marked on it. Every run is a line of the history file.",
			Count(full), Count(older), per))
	}

	p.Section("Runs (newest first)")
	t := Table{Head: []string{"run", "commit", v.headlineName(), "inputs changed"}, Cards: true}
	// A report column only when some listed run published its report (a history
	// on a branch, --history-branch with --html).
	reports := false
	for i := len(v.Runs) - 1; i >= 0 && i >= len(v.Runs)-HistoryRuns; i-- {
		reports = reports || v.Runs[i].Report != ""
	}
	// The failed gates: always for check (its history is the gate's), for
	// compare when a listed run had one (--gate-strategy).
	gates := !compareLike(v.Command)
	for i := len(v.Runs) - 1; i >= 0 && i >= len(v.Runs)-HistoryRuns; i-- {
		gates = gates || len(v.Runs[i].FailedGates) > 0
	}
	if gates {
		t.Head = append(t.Head, "failed gates")
	}
	if reports {
		t.Head = append(t.Head, "report")
	}
	for i := len(v.Runs) - 1; i >= 0 && i >= len(v.Runs)-HistoryRuns; i-- {
		r := v.Runs[i]
		changed := "—"
		if r.Changed != nil {
			changed = strings.Join(r.Changed, ", ")
		}
		row := []Cell{
			{Text: "#" + strconv.Itoa(i+1), Sub: r.Time},
			{Text: format.CommitPrefix(r.Commit, 7), Sub: r.Branch},
			{Text: r.Headline},
			{Text: changed},
		}
		if gates {
			failed := "—"
			if len(r.FailedGates) > 0 {
				failed = strings.Join(r.FailedGates, ", ")
			}
			row = append(row, Cell{Text: failed})
		}
		if reports {
			c := Cell{Text: "—"}
			if r.Report != "" {
				c = Cell{Text: "report", Href: r.Report}
			}
			row = append(row, c)
		}
		t.Rows = append(t.Rows, row)
	}
	if len(v.Runs) > HistoryRuns {
		t.Foot = fmt.Sprintf("The newest %d of %s runs; every run is a line of the history file.", HistoryRuns, Count(len(v.Runs)))
	}
	p.Table(t)
	_, err := p.WriteTo(w)
	return err
}

// changeMarkers are the chart's marks: the runs whose fingerprint differs from
// the run before, with what changed.
func changeMarkers(v HistoryView) []Marker {
	var markers []Marker
	for i, r := range v.Runs {
		if r.Changed != nil {
			markers = append(markers, Marker{X: i, Label: "inputs changed: " + strings.Join(r.Changed, ", ")})
		}
	}
	return markers
}

// runsChart is the one chart of a measure over runs (the history page, the
// compare dashboard): one line per strategy or group with its 95% interval as
// a band, the runs whose inputs changed marked with a dashed line, and its note.
func (p *Page) runsChart(v HistoryView, k int, colours map[string]int) {
	xs := make([]string, len(v.Runs))
	for i, r := range v.Runs {
		xs[i] = RunTick(i, r)
	}
	var series []Series
	var lines []Line
	newestK := 0 // the cutoff of the newest run that states one
	for _, r := range v.Runs {
		if r.K > 0 {
			newestK = r.K
		}
	}
	group := map[string]int{} // a group's colour, the same at every cutoff
	for j, s := range v.Series {
		// A group keeps its colour across cutoffs (the older ones dotted,
		// below), as a strategy does; a ninth group and on shares a colour
		// with an earlier one: dashed.
		g, ok := group[s.Name]
		if !ok {
			g = len(group)
			group[s.Name] = g
		}
		sr := Series{Name: v.SeriesName(s), Color: g % 8, Dashed: g >= 8}
		if colours != nil {
			sr = seriesOf(s.Name, colours)
			sr.Name = v.SeriesName(s)
		}
		if v.MixedK() && s.K > 0 && s.K != newestK { // a strategy at an older cutoff: its colour, dotted
			sr.Dotted = true
		}
		series = append(series, sr)
		labels := make([]string, len(s.N))
		// The table's n per run: a run without the series' value and
		// without an n is one the series is absent from (no row).
		ns := make([]int, len(s.N))
		for i, n := range s.N {
			labels[i] = "n = " + Count(n) + " · " + format.CommitPrefix(v.Runs[i].Commit, 7)
			if i < len(v.groups) && v.groups[i][0] < v.groups[i][1] {
				labels[i] += " · the last of runs #" + strconv.Itoa(v.groups[i][0]) + "–#" + strconv.Itoa(v.groups[i][1])
			}
			ns[i] = n
			if n == 0 && math.IsNaN(s.Y[i]) {
				ns[i] = -1
			}
		}
		line := Line{Series: j, Y: s.Y, Lo: s.Lo, Hi: s.Hi, Label: labels, N: ns}
		if scale, mixed := v.dcgScale(); scale != "" || mixed {
			line.Of = make([]string, len(v.Runs))
			for i, r := range v.Runs {
				line.Of[i] = dcgTip(r)
			}
		}
		lines = append(lines, line)
	}
	if k > 0 {
		v.K = k
	}
	// The title carries DCG@k's scale (or says it differs between the runs);
	// the axis the scale when it is one.
	label, axis := v.scaledLabel(), v.label()
	if _, mixed := v.dcgScale(); !mixed {
		axis = label
	}
	p.LineChart(LineChart{Title: label + " per run (95% CI bands; dashed vertical lines: inputs changed)", XLabel: "run", YLabel: axis, X: xs, Series: series, Lines: lines, Markers: changeMarkers(v)})
	p.Note("A dashed vertical line marks a run whose inputs (knowledge base, cases, qrels, runs) or parameters differ from the run before: a jump there may come from relabelling, not from retrieval.")
}

func (v HistoryView) headlineName() string {
	if compareLike(v.Command) {
		return "recommended"
	}
	return "verdict"
}

// defaultMeasure is the measure charted when none is asked for, per command a
// history holds.
var defaultMeasure = map[string]string{"check": "retrieval_hit_at_k", "compare": "dcg_at_k", "evaluate": "dcg_at_k"}

// DefaultMeasure is the measure the history page of command's runs charts by
// default; "" when the history holds no runs of such a command.
func DefaultMeasure(command string) string { return defaultMeasure[command] }

// HistoryOf reads a history in one pass (scan calls its function with each
// record) into the view of command's runs charting measure: an empty command is
// the newest run's, an empty measure its default (the view's Command and
// Measure say which). file names the history in messages.
func HistoryOf(file string, scan func(func(history.Record, *fastjson.Value) error) error, command, measure string) (HistoryView, error) {
	// One pass: a view per command, the newest run's command picked after.
	builders := map[string]*HistoryBuilder{}
	for cmd, m := range defaultMeasure {
		if measure != "" {
			m = measure
		}
		builders[cmd] = NewHistory(file, cmd, m)
	}
	newest, runs := "", 0
	err := scan(func(rec history.Record, doc *fastjson.Value) error {
		runs++
		newest = rec.Command
		if b := builders[rec.Command]; b != nil {
			return b.Add(rec, doc)
		}
		return nil
	})
	if err != nil {
		return HistoryView{}, fmt.Errorf("failed to read the history: %w", err)
	}
	if command == "" {
		if runs == 0 {
			return HistoryView{}, fmt.Errorf("%s: the history has no run", file)
		}
		if builders[newest] == nil {
			return HistoryView{}, fmt.Errorf("%s: the newest run is of an unknown command %q", file, newest)
		}
		command = newest
	}
	if builders[command] == nil {
		return HistoryView{}, fmt.Errorf("%s: no history of command %q: want check, compare or evaluate", file, command)
	}
	v := builders[command].View()
	if len(v.Runs) > 0 && len(v.Series) == 0 {
		return HistoryView{}, fmt.Errorf("report: no run of %s in %s has the measure %q", command, file, v.Measure)
	}
	return v, nil
}

// HistoryPage is the history page of a whole history file h (a history
// branch's index.html): the newest run's command, its default measure. The
// read of h stops when ctx ends (a signal, the branch write's timeout).
func HistoryPage(ctx context.Context, h []byte) ([]byte, error) {
	v, err := HistoryOf(history.FileName, func(fn func(history.Record, *fastjson.Value) error) error {
		return history.ScanReader(ctx, history.FileName, bytes.NewReader(h), fn)
	}, "", "")
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := History(&b, v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Summary is report's line about the page of v written to out: the runs,
// series and input changes charted.
func (v HistoryView) Summary(out string) string {
	changes := 0
	for _, r := range v.Runs {
		if r.Changed != nil {
			changes++
		}
	}
	return fmt.Sprintf("retrieval-gate report: %s of %s, %s of %s, %s -> %s", format.Count(len(v.Runs), "run", "runs"), v.Command,
		format.Count(len(v.Series), "series", "series"), v.Measure, format.Count(changes, "input change", "input changes"), out)
}
