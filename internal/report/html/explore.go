package html

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/report/comparereport"
)

// Point is one measure of one strategy in one run: its mean, its 95% interval
// and its n (NaN: absent), and whether the run's document marks the
// interval unreliable.
type Point struct {
	Mean, Lo, Hi float64
	N            int
	Unreliable   bool
}

// RunMeasures is every measure of every strategy of one compare run:
// strategy -> measure key -> value, as the run's document states it.
type RunMeasures map[string]map[string]Point

// MeasureLabel is a measure key as the dashboard titles and labels it: the
// measure registry's label at cutoff k (dcg_at_k is "DCG@10", recall_at_k
// "recall@10"), as every report prints it; an unregistered key is itself.
func MeasureLabel(key string, k int) string {
	info, ok := metrics.Lookup(key)
	if !ok {
		return key
	}
	return info.LabelAt(k)
}

// measureLabelK is a measure's label at no one k ("DCG@k"), as the chart
// over runs at several cutoffs names it; an unregistered key itself.
func measureLabelK(key string) string {
	if info, ok := metrics.Lookup(key); ok {
		return info.Label + "@k"
	}
	return key
}

// higherIsBetter is the registry's direction of a measure (an unregistered
// key: higher).
func higherIsBetter(key string) bool {
	if info, ok := metrics.Lookup(key); ok {
		return info.HigherIsBetter
	}
	return true
}

// measureKeys are the keys of the measures found in runs, registry order first,
// then any other key by name.
func measureKeys(runs []RunMeasures) []string {
	seen := map[string]bool{}
	for _, r := range runs {
		for _, ms := range r {
			for k := range ms {
				seen[k] = true
			}
		}
	}
	var out, other []string
	for _, k := range metrics.GradedKeys {
		if seen[k] {
			out = append(out, k)
			delete(seen, k)
		}
	}
	for k := range seen {
		other = append(other, k)
	}
	slices.Sort(other)
	return append(out, other...)
}

// StrategyColours gives each strategy its colour (an index into the palette of
// eight): the base strategies in the order given, each NAME+rerank the colour
// of NAME (drawn dashed), a reranked strategy without its base a colour of its
// own. Every chart of a page uses the one map, so a strategy keeps its colour.
func StrategyColours(names []string) map[string]int {
	out := map[string]int{}
	next := 0
	base := func(n string) string {
		if b, ok := strings.CutSuffix(n, RerankSuffix); ok {
			return b
		}
		return n
	}
	for _, n := range names {
		b := base(n)
		if _, ok := out[b]; !ok {
			out[b] = next % 8
			next++
		}
		out[n] = out[b]
	}
	return out
}

// seriesOf is a strategy's legend entry: its colour, dashed when reranked.
func seriesOf(name string, colours map[string]int) Series {
	return Series{Name: name, Color: colours[name], Dashed: strings.HasSuffix(name, RerankSuffix)}
}

// bestOf is the index set of the best values by the measure's direction
// (ties: all); NaN is never best.
func bestOf(vals []float64, higher bool) []bool {
	best := make([]bool, len(vals))
	b, found := 0.0, false
	for _, v := range vals {
		if v != v {
			continue
		}
		if !found || (higher && v > b) || (!higher && v < b) {
			b, found = v, true
		}
	}
	for i, v := range vals {
		best[i] = found && v == b
	}
	return best
}

// exploreRun is one run of the dashboard's embedded data.
type exploreRun struct {
	Label    string
	Current  bool
	Order    []string // strategy names as the run lists them
	Measures RunMeasures
	// Of the chart over the runs: the run's x label (its day), its commit
	// (7 characters), what changed since the run before ("": nothing) and
	// DCG@k's maximum in that run as a heading (dcgOf) and a point's label
	// (dcgTip) print it.
	X, Commit, Changed, Of, Tip string
	// K is the run's cutoff as printed ("0": none stated): the chart over
	// the runs draws a series per strategy and k.
	K string
}

// exploreData writes the JSON the dashboard's script renders from: the
// measures (key, label, direction, the axis of the chart over the runs), the
// strategies' colours, the runs (oldest first, each with the axis of its bar
// chart of each measure, the sentence that gives each measure's scale at
// that run: notes, in keys' order, and its best and worst queries by every
// measure: queries, queriesData's JSON), the run and measure shown without
// script, and the
// axes, each once (a measure or a run names its axis by its index). Every
// number the script shows is here as the page prints it (format.Num,
// FmtCI, Count, format.Tick; format.Missing): a point is [mean, lo, hi, n,
// the mean, the interval, n as printed], the numbers only placing marks,
// and true after them when the run's document marks the interval
// unreliable ("flag" is the title of its mark: the footnote, which the
// run's notes carry).
// Numbers are written in full (format.AppendFloat: shortest round-trip form,
// null when undefined); strings by encoding/json, which escapes <, > and & so
// that the data cannot end its <script> element. Names are sanitised as Esc
// does for the page's text (format characters shown as (U+XXXX)), so the
// script's textContent shows them as the page does.
func exploreData(k int, keys []string, scaleOf func(string) string, colours map[string]int, runs []exploreRun, run int, measure, second string, notes [][]string, queries [][]byte) string {
	// The axes, each once: the charts over the runs, then the bar charts.
	var axes []axis
	index := map[axis]int{}
	axisOf := func(a axis) int {
		i, ok := index[a]
		if !ok {
			i = len(axes)
			index[a] = i
			axes = append(axes, a)
		}
		return i
	}
	over := make([]int, len(keys))
	for i, key := range keys {
		over[i] = axisOf(overAxis(runs, key))
	}
	bars := make([][]int, len(runs))
	for i, r := range runs {
		bars[i] = make([]int, len(keys))
		for j, key := range keys {
			bars[i][j] = axisOf(barAxis(r, key))
		}
	}
	b := []byte(`{"measures":[`)
	str := func(s string) {
		j, _ := json.Marshal(s)
		b = append(b, j...)
	}
	for i, key := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"key":`...)
		str(key)
		b = append(b, `,"label":`...)
		str(MeasureLabel(key, k))
		b = append(b, `,"labelk":`...) // the chart over runs at several k
		str(measureLabelK(key))
		b = append(b, `,"scale":`...)
		str(scaleOf(key))
		b = append(b, `,"higher":`...)
		b = strconv.AppendBool(b, higherIsBetter(key))
		b = append(b, `,"over":`...)
		b = strconv.AppendInt(b, int64(over[i]), 10)
		b = append(b, '}')
	}
	b = append(b, `],"colours":{`...)
	names := make([]string, 0, len(colours))
	for n := range colours {
		names = append(names, n)
	}
	slices.Sort(names)
	for i, n := range names {
		if i > 0 {
			b = append(b, ',')
		}
		str(format.SanitizeText(n))
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(colours[n]), 10)
	}
	b = append(b, `},"dcg":`...)
	str(metrics.KeyDCG)
	b = append(b, `,"missing":`...)
	str(format.Missing)
	b = append(b, `,"mixed":`...)
	str(MixedMaxNote)
	b = append(b, `,"suffix":`...)
	str(RerankSuffix)
	b = append(b, `,"flag":`...)
	str(strings.TrimPrefix(comparereport.UnreliableLine, FlagMark+" "))
	b = append(b, `,"run":`...)
	b = strconv.AppendInt(b, int64(run), 10)
	b = append(b, `,"measure":`...)
	str(measure)
	b = append(b, `,"second":`...)
	str(second)
	b = append(b, `,"runs":[`...)
	for i, r := range runs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"label":`...)
		str(r.Label)
		b = append(b, `,"x":`...)
		str(format.SanitizeText(r.X))
		b = append(b, `,"k":`...)
		str(r.K)
		b = append(b, `,"commit":`...)
		str(format.SanitizeText(r.Commit))
		b = append(b, `,"changed":`...)
		str(format.SanitizeText(r.Changed))
		b = append(b, `,"of":`...)
		str(r.Of)
		b = append(b, `,"tip":`...)
		str(r.Tip)
		b = append(b, `,"strategies":[`...)
		for j, name := range r.Order {
			if j > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"name":`...)
			str(format.SanitizeText(name))
			b = append(b, `,"m":{`...)
			first := true
			for _, key := range keys {
				pt, ok := r.Measures[name][key]
				if !ok {
					continue
				}
				if !first {
					b = append(b, ',')
				}
				first = false
				str(key)
				b = append(b, ":["...)
				b = format.AppendFloat(b, pt.Mean)
				b = append(b, ',')
				b = format.AppendFloat(b, pt.Lo)
				b = append(b, ',')
				b = format.AppendFloat(b, pt.Hi)
				b = append(b, ',')
				b = strconv.AppendInt(b, int64(pt.N), 10)
				// The printed forms hold no character encoding/json
				// would escape (digits, signs, '.', ',', 'e', dashes).
				b = append(b, ',')
				b = format.AppendJSONString(b, format.Num(pt.Mean))
				b = append(b, ',')
				b = format.AppendJSONString(b, FmtCI([2]float64{pt.Lo, pt.Hi}))
				b = append(b, ',')
				b = format.AppendJSONString(b, Count(pt.N))
				if pt.Unreliable { // [7]: the interval is marked (absent: not)
					b = append(b, ",true"...)
				}
				b = append(b, ']')
			}
			b = append(b, "}}"...)
		}
		b = append(b, `],"bars":{`...)
		for j, key := range keys {
			if j > 0 {
				b = append(b, ',')
			}
			str(key)
			b = append(b, ':')
			b = strconv.AppendInt(b, int64(bars[i][j]), 10)
		}
		b = append(b, '}')
		// The scale sentence of each measure (keys' order), for the note
		// under "Per strategy".
		// Each measure's label and scale at the run's k (a run at another k
		// than this one's: "DCG@5", "of 20.639"), for its bars and tables.
		rk := k
		if n, err := strconv.Atoi(r.K); err == nil && n > 0 {
			rk = n
		}
		b = append(b, `,"labels":[`...)
		for j, key := range keys {
			if j > 0 {
				b = append(b, ',')
			}
			str(MeasureLabel(key, rk))
		}
		b = append(b, `],"scales":[`...)
		for j, key := range keys {
			if j > 0 {
				b = append(b, ',')
			}
			scale := scaleOf(key)
			if key == metrics.KeyDCG { // the run's own maximum ("" when unknown)
				scale = ""
				if strings.HasPrefix(r.Of, "of ") {
					scale = r.Of
				}
			}
			str(scale)
		}
		b = append(b, `]`...)
		b = append(b, `,"notes":[`...)
		for j := range keys {
			if j > 0 {
				b = append(b, ',')
			}
			note := ""
			if i < len(notes) && j < len(notes[i]) {
				note = notes[i][j]
			}
			str(note)
		}
		b = append(b, `],"q":`...)
		if i < len(queries) && queries[i] != nil {
			b = append(b, queries[i]...)
		} else {
			b = append(b, "null"...)
		}
		b = append(b, '}')
	}
	b = append(b, `],"axes":[`...)
	for i, a := range axes {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendAxis(b, a)
	}
	b = append(b, "]}"...)
	return string(b)
}

// finite reports whether v is a number the data holds (AppendFloat writes
// NaN and infinities as null, which the script skips).
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// barAxis is the axis of the bar chart of one run and measure the script
// draws: from zero to the largest mean or upper bound of the run's
// strategies in round steps, as BarChart fits its own; a run without a value
// of the measure has the axis 0 to 1 in one step.
func barAxis(r exploreRun, key string) axis {
	hi := 0.0
	for _, name := range r.Order {
		pt, ok := r.Measures[name][key]
		if !ok {
			continue
		}
		for _, v := range []float64{pt.Mean, pt.Hi} {
			if finite(v) && v > hi {
				hi = v
			}
		}
	}
	step := niceStep(hi, 5)
	return axis{lo: 0, hi: math.Max(math.Ceil(hi/step-1e-9)*step, step), step: step}
}

// overAxis is the axis of the chart over the runs of one measure the script
// draws: every strategy's means and intervals in every run, fitted as
// LineChart fits its own.
func overAxis(runs []exploreRun, key string) axis {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, r := range runs {
		for _, name := range r.Order {
			pt, ok := r.Measures[name][key]
			if !ok || !finite(pt.Mean) {
				continue
			}
			lo, hi = math.Min(lo, pt.Mean), math.Max(hi, pt.Mean)
			if finite(pt.Lo) && finite(pt.Hi) {
				lo, hi = math.Min(lo, pt.Lo), math.Max(hi, pt.Hi)
			}
		}
	}
	return lineAxis(lo, hi)
}

// appendAxis appends an axis as the script draws it: {"lo", "hi", "step",
// "ticks"}, tick i at lo + i*step with the label ticks[i] (format.Tick).
func appendAxis(b []byte, a axis) []byte {
	b = append(b, `{"lo":`...)
	b = format.AppendFloat(b, a.lo)
	b = append(b, `,"hi":`...)
	b = format.AppendFloat(b, a.hi)
	b = append(b, `,"step":`...)
	b = format.AppendFloat(b, a.step)
	b = append(b, `,"ticks":[`...)
	for i, t := range a.ticks() {
		if i > 0 {
			b = append(b, ',')
		}
		b = format.AppendJSONString(b, a.label(t))
	}
	return append(b, "]}"...)
}

// scriptHash is the CSP source of an inline script: 'sha256-…' of its text.
func scriptHash(js string) string {
	h := sha256.Sum256([]byte(js))
	return "'sha256-" + base64.StdEncoding.EncodeToString(h[:]) + "'"
}
