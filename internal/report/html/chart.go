package html

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/retrieval-gate/retrieval-gate/internal/format"
)

// Series is one data series of a chart: its legend name, its colour (an index
// into the page's colour-blind-safe palette of eight) and whether it is drawn
// dashed (bars: hatched).
type Series struct {
	Name   string
	Color  int
	Dashed bool
	// Dotted (lines) tells apart series that share a colour and a dash: a
	// strategy or group at an earlier run's other cutoff.
	Dotted bool
}

// Bar is one bar: a value of a series in a category, with its 95% interval (nil:
// none) and its n. An undefined value (NaN) draws no bar but a "—" where it
// would start; the chart's table lists it as "—" with its n.
type Bar struct {
	Category string
	Series   int
	Value    float64
	CI       *[2]float64
	N        int
	// Style, when set, is the bar's own colour, dash and name (a strategy's,
	// the same in every chart of the page); else its series'.
	Style *Series
	// Unreliable: the report marks the interval unreliable; its hover and
	// its row of the table for screen readers show FlagMark after it (the
	// footnote is under the table beside the chart).
	Unreliable bool
}

// BarChart is a horizontal bar chart: one row per category, top to bottom in the
// order given (the caller sorts), one bar per series in each row, interval
// whiskers, the value as a label, and the axis from 0 to a round number above the
// largest value or interval bound.
type BarChart struct {
	Title      string
	Measure    string // the axis label, e.g. "DCG@10"
	Categories []string
	Series     []Series // the bars of a category, one slot each, top to bottom
	Bars       []Bar
	// Legend, when set, is listed instead of Series (the bars' own styles).
	Legend []Series
}

// Line is one series of a line chart; Lo and Hi (optional, len(Y)) draw its
// interval as a band.
type Line struct {
	Series int
	Y      []float64
	Lo, Hi []float64
	Label  []string // optional hover text per point (default: the value)
	// Of is optional text right after each point's value, its scale
	// (" of 31.805", ", max unknown"): DCG@k's maximum in that point's run.
	Of []string
	// N is each point's n (len(Y)), the n column of the chart's table: a
	// point without a value (NaN) is a row "—" with its n, unless its n is
	// negative (absent from that point: no row). Nil: the n is not known
	// (a report written before it was recorded): "unknown" in the column,
	// and a point without a value has no row.
	N []int
}

// Marker is a vertical mark at point X of a line chart (e.g. "inputs changed").
type Marker struct {
	X     int
	Label string
}

// LineChart draws one line per series over the shared X points, with points
// carrying their values on hover, optional interval bands and markers; the y axis
// is fitted to the data.
type LineChart struct {
	Title   string
	XLabel  string
	YLabel  string
	X       []string // the points' labels, left to right
	Series  []Series
	Lines   []Line
	Markers []Marker
}

// hasBands reports whether a line of the chart carries an interval at some
// point (Lo and Hi both defined there).
func (c LineChart) hasBands() bool {
	for _, l := range c.Lines {
		for i := range l.Y {
			if i < len(l.Lo) && i < len(l.Hi) && !math.IsNaN(l.Lo[i]) && !math.IsNaN(l.Hi[i]) {
				return true
			}
		}
	}
	return false
}

// Every chart is drawn four times, in one figure, each SVG scaled to its
// box: narrow (360 user units), wide (560), wider (840) and widest (1200).
// The style sheet shows the one whose width is nearest its chart box's, so
// that the chart fills its box with its 14-unit text at 12–18 px: narrow in a
// box under 480 px (a phone's: 370 px at 390, where the wide one's text
// would be 9 px; 14 px there, 12 px at 320), wide in one of 480–720 px,
// wider in one of 720–1080 (818 px at 850: 13.6 px) and widest above (1288
// px, the page's widest, at 1400: 15 px). Only the wide one carries the
// marks' data-mark (the page's marks are counted once); the narrow one has
// no hover text either (a phone does not hover): the table for screen
// readers beside them is the wide one's.
type layout struct {
	w        float64 // the viewBox's width, user units
	labelMax float64 // a bar chart's category labels are clipped to this width
	class    string  // the SVG's class, which the style sheet shows by its box's width
	tips     bool    // the marks carry their hover text
	marks    bool    // the marks carry data-mark
}

var (
	wide    = layout{w: chartW, labelMax: 180, class: "wide", tips: true, marks: true}
	narrow  = layout{w: 360, labelMax: 140, class: "narrow"}
	wider   = layout{w: 840, labelMax: 240, class: "wider", tips: true}
	widest  = layout{w: 1200, labelMax: 300, class: "widest", tips: true}
	layouts = []layout{wide, narrow, wider, widest}
)

// open is the SVG element of a chart of this layout.
func (l layout) open(height float64, title string) string {
	return `<svg class="` + l.class + `" viewBox="0 0 ` + px(l.w) + " " + px(height) + `" role="img" aria-label="` + Esc(title) + `" focusable="false">` + "\n"
}

// mark is the data-mark attribute of a mark of kind (the wide chart's alone).
func (l layout) mark(kind string) string {
	if !l.marks {
		return ""
	}
	return ` data-mark="` + kind + `"`
}

// tip is a mark's hover text, as the first child of its element (none in the narrow chart).
func (l layout) tip(text string) string {
	if !l.tips {
		return ""
	}
	return "<title>" + Esc(text) + "</title>"
}

// labelEvery is how often tick labels spaced gap apart are labelled so
// that the widest, widest wide, does not touch the next (1: every tick).
func labelEvery(gap, widest float64) int {
	every := 1
	for gap > 0 && float64(every)*gap < widest+6 && every < maxTicks {
		every++
	}
	return every
}

const (
	chartW    = 560 // the wide chart's SVG user units; the SVG scales to its box (480–720 px wide)
	charW     = 7.7 // average width of a 14-unit sans-serif character
	barH      = 18
	barGap    = 3
	groupGap  = 12
	axisH     = 34
	valueRoom = 52
)

// niceStep is the round tick step (1, 2, 2.5 or 5 × 10^k) for about n ticks over span.
func niceStep(span float64, n int) float64 {
	if span <= 0 || math.IsNaN(span) || math.IsInf(span, 0) {
		return 1
	}
	raw := span / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if raw <= m*mag*(1+1e-9) {
			return m * mag
		}
	}
	return 10 * mag
}

// axis is a fitted axis: [lo, hi] in steps of step.
type axis struct{ lo, hi, step float64 }

func fitAxis(lo, hi float64, fromZero bool) axis {
	if math.IsNaN(lo) || math.IsInf(lo, 0) {
		lo = 0
	}
	if math.IsNaN(hi) || math.IsInf(hi, 0) || hi <= lo {
		hi = lo + 1
	}
	if fromZero && lo > 0 {
		lo = 0
	}
	step := niceStep(hi-lo, 5)
	if math.IsInf(hi-lo, 0) { // values near ±MaxFloat64: the halved span does not overflow
		step = 2 * niceStep(hi/2-lo/2, 5)
	}
	a := axis{lo: math.Floor(lo/step+1e-9) * step, hi: math.Ceil(hi/step-1e-9) * step, step: step}
	if math.IsInf(a.lo, 0) || math.IsInf(a.hi, 0) {
		a.lo, a.hi = lo, hi
	}
	if a.hi <= a.lo {
		a.hi = a.lo + step
	}
	return a
}

// lineAxis is the y axis of a line chart over values from lo to hi (lo +Inf:
// none, 0 to 1): from zero, unless every value sits far from it (then the axis
// starts at a round number below the data, so close lines stay apart).
func lineAxis(lo, hi float64) axis {
	if math.IsInf(lo, 1) {
		lo, hi = 0, 1
	}
	return fitAxis(lo, hi, lo <= 0.5*hi)
}

// maxTicks bounds an axis's ticks: a fitted axis has about 5; a span too small
// for the magnitude of its values (1e300 to the next float) would otherwise
// add a step that does not move the value, forever.
const maxTicks = 32

func (a axis) ticks() []float64 {
	var t []float64
	for i := 0; i < maxTicks; i++ {
		v := a.lo + float64(i)*a.step
		if v > a.hi+a.step*1e-6 || (i > 0 && v <= t[i-1]) {
			break
		}
		t = append(t, v)
	}
	return t
}

// frac is where v lies on the axis, 0 at lo and 1 at hi (halved, so that a span
// near ±MaxFloat64 does not overflow); the middle on an axis too narrow for the
// magnitude of its values (1e21 + 1 is 1e21: lo and hi are equal).
func (a axis) frac(v float64) float64 {
	span := a.hi/2 - a.lo/2
	if !(span > 0) || math.IsInf(span, 0) {
		return 0.5
	}
	return (v/2 - a.lo/2) / span
}

func (a axis) label(v float64) string { return format.Tick(v, a.step) }

// px formats an SVG coordinate with one decimal.
func px(v float64) string { return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64) }

// clip shortens a label to about max pixels, ending in "…".
func clip(s string, maxPx float64) string {
	maxRunes := int(maxPx/charW + 0.5)
	if utf8.RuneCountInString(s) <= maxRunes {
		return s
	}
	r := []rune(s)
	return string(r[:max(maxRunes-1, 1)]) + "…"
}

func textWidth(s string) float64 { return float64(utf8.RuneCountInString(s)) * charW }

// loneBand is the width of a lone point's interval band (user units).
const loneBand = 8

// legend lists the series with a swatch drawn as their marks are: a box
// (bars; a dashed series: a tint with a dashed outline, as its bars) or a
// short line (lines; solid or dashed).
func (p *Page) legend(series []Series, line bool) {
	if len(series) < 2 {
		return
	}
	p.raw(`<ul class="legend" aria-hidden="true">`)
	for _, s := range series {
		cls := "sw c" + strconv.Itoa(s.Color%8)
		if line {
			cls += " ln"
		}
		if s.Dashed {
			cls += " dashed"
		}
		if s.Dotted && line {
			cls += " dotted"
		}
		p.raw(`<li><span class="` + cls + `"></span>` + Esc(s.Name) + "</li>")
	}
	p.raw("</ul>\n")
}

func ciText(ci *[2]float64) string {
	if ci == nil {
		return ""
	}
	return "95% CI " + FmtCI(*ci)
}

// BarChart adds a horizontal bar chart, its legend and a visually hidden table of
// its values for screen readers.
func (p *Page) BarChart(c BarChart) {
	id := p.id("chart")
	hi := 0.0
	for _, b := range c.Bars {
		if math.IsNaN(b.Value) {
			continue
		}
		hi = math.Max(hi, b.Value)
		if b.CI != nil {
			hi = math.Max(hi, b.CI[1])
		}
	}
	ax := fitAxis(0, hi, true)
	var s strings.Builder
	s.WriteString(`<figure class="chart" aria-labelledby="` + id + `-t"><figcaption id="` + id + `-t">` + Esc(c.Title) + "</figcaption>\n")
	p.raw(s.String())
	s.Reset()
	if c.Legend != nil {
		p.legend(c.Legend, false)
	} else {
		p.legend(c.Series, false)
	}
	for _, lay := range layouts {
		c.svg(&s, ax, lay)
	}
	// Table fallback.
	s.WriteString(`<div class="sr-only"><table><caption>` + Esc(c.Title) + `</caption><thead><tr><th scope="col">category</th><th scope="col">series</th><th scope="col">` + Esc(c.Measure) + `</th><th scope="col">95% CI</th><th scope="col">n</th></tr></thead><tbody>`)
	for _, cat := range c.Categories {
		for _, b := range c.Bars {
			if b.Category != cat {
				continue
			}
			name := ""
			if b.Style != nil {
				name = b.Style.Name
			} else if b.Series < len(c.Series) {
				name = c.Series[b.Series].Name
			}
			ci := ""
			if b.CI != nil && !math.IsNaN(b.Value) {
				ci = FmtCI(*b.CI) + format.MarkIf(b.Unreliable)
			}
			s.WriteString("<tr><th scope=\"row\">" + Esc(cat) + "</th><td>" + Esc(name) + "</td><td>" + Fmt(b.Value) + "</td><td>" + ci + "</td><td>" + Count(b.N) + "</td></tr>")
		}
	}
	s.WriteString("</tbody></table></div>\n</figure>\n")
	p.raw(s.String())
}

// svg draws the chart's SVG in layout lay on the axis ax.
func (c BarChart) svg(s *strings.Builder, ax axis, lay layout) {
	labelW := 0.0
	for _, cat := range c.Categories {
		labelW = math.Max(labelW, textWidth(cat))
	}
	labelW = math.Min(labelW, lay.labelMax)
	labelMax := labelW
	labelW += 8
	plotX0, plotX1 := labelW, lay.w-valueRoom
	x := func(v float64) float64 { return plotX0 + ax.frac(v)*(plotX1-plotX0) }
	ns := max(len(c.Series), 1)
	groupH := float64(ns)*barH + float64(ns-1)*barGap
	height := 8 + float64(len(c.Categories))*(groupH+groupGap) + axisH
	s.WriteString(lay.open(height, c.Title))
	plotBottom := height - axisH
	// Grid and axis: a line at every tick, a label at as many as fit.
	ticks := ax.ticks()
	widest := 0.0
	for _, t := range ticks {
		widest = math.Max(widest, textWidth(ax.label(t)))
	}
	every := 1
	if len(ticks) > 1 {
		every = labelEvery(x(ticks[1])-x(ticks[0]), widest)
	}
	for i, t := range ticks {
		tx := px(x(t))
		s.WriteString(`<line class="gl" x1="` + tx + `" x2="` + tx + `" y1="4" y2="` + px(plotBottom) + `"/>`)
		if i%every == 0 {
			s.WriteString(`<text class="tick" x="` + tx + `" y="` + px(plotBottom+15) + `" text-anchor="middle">` + ax.label(t) + "</text>")
		}
		s.WriteString("\n")
	}
	s.WriteString(`<line class="axis" x1="` + px(plotX0) + `" x2="` + px(plotX0) + `" y1="4" y2="` + px(plotBottom) + `"/>`)
	s.WriteString(`<text class="axis-label" x="` + px((plotX0+plotX1)/2) + `" y="` + px(height-3) + `" text-anchor="middle">` + Esc(c.Measure) + "</text>\n")
	for ci, cat := range c.Categories {
		y0 := 8 + float64(ci)*(groupH+groupGap)
		s.WriteString(`<text class="cat" x="` + px(plotX0-6) + `" y="` + px(y0+groupH/2+4) + `" text-anchor="end"><title>` + Esc(cat) + "</title>" + Esc(clip(cat, labelMax)) + "</text>\n")
		for _, b := range c.Bars {
			if b.Category != cat {
				continue
			}
			sr := Series{}
			if b.Series < len(c.Series) {
				sr = c.Series[b.Series]
			}
			by := y0 + float64(b.Series)*(barH+barGap)
			if b.Style != nil {
				sr = *b.Style
			}
			if math.IsNaN(b.Value) {
				// An undefined value: no bar, the tables' dash where it would
				// start (a group without a gold-carrying case, n = 0).
				tip := cat
				if sr.Name != "" {
					tip += " · " + sr.Name
				}
				tip += ": " + c.Measure + " undefined, n = " + Count(b.N)
				s.WriteString(`<g>` + lay.tip(tip) + `<text class="undef" x="` + px(plotX0+4) + `" y="` + px(by+barH/2+4) + `">` + format.Missing + "</text></g>\n")
				continue
			}
			cls := "bar c" + strconv.Itoa(sr.Color%8)
			if sr.Dashed {
				cls += " hatch"
			}
			tip := cat
			if sr.Name != "" {
				tip += " · " + sr.Name
			}
			tip += ": " + c.Measure + " " + Fmt(b.Value)
			if b.CI != nil {
				tip += " (" + ciText(b.CI) + format.MarkIf(b.Unreliable) + ")"
			}
			tip += ", n = " + Count(b.N)
			w := math.Max(x(b.Value)-plotX0, 0)
			s.WriteString(`<g>` + lay.tip(tip) + `<rect` + lay.mark("bar") + ` class="` + cls + `" x="` + px(plotX0) + `" y="` + px(by) + `" width="` + px(w) + `" height="` + strconv.Itoa(barH) + `"/>`)
			end := x(b.Value)
			if b.CI != nil {
				lo, hi, my := px(x(b.CI[0])), px(x(b.CI[1])), px(by+barH/2)
				s.WriteString(`<path class="whisker" d="M` + lo + " " + my + "H" + hi + "M" + lo + " " + px(by+3) + "V" + px(by+barH-3) + "M" + hi + " " + px(by+3) + "V" + px(by+barH-3) + `"/>`)
				end = math.Max(end, x(b.CI[1]))
			}
			s.WriteString(`<text class="value" x="` + px(end+4) + `" y="` + px(by+barH/2+4) + `">` + Fmt(b.Value) + "</text></g>\n")
		}
	}
	s.WriteString("</svg>\n")
}

// LineChart adds a line chart, its legend and a visually hidden table of its
// values for screen readers.
func (p *Page) LineChart(c LineChart) {
	id := p.id("chart")
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, l := range c.Lines {
		for i, v := range l.Y {
			if math.IsNaN(v) {
				continue
			}
			lo, hi = math.Min(lo, v), math.Max(hi, v)
			if i < len(l.Lo) && i < len(l.Hi) && !math.IsNaN(l.Lo[i]) && !math.IsNaN(l.Hi[i]) {
				lo, hi = math.Min(lo, l.Lo[i]), math.Max(hi, l.Hi[i])
			}
		}
	}
	ax := lineAxis(lo, hi)
	p.raw(`<figure class="chart" aria-labelledby="` + id + `-t"><figcaption id="` + id + `-t">` + Esc(c.Title) + "</figcaption>\n")
	p.legend(c.Series, true)
	var s strings.Builder
	for _, lay := range layouts {
		c.svg(&s, ax, lay)
	}
	// The table: every point with its value, interval and n, as the bar
	// charts' tables; a value undefined at a point is "—" with its n. A
	// chart without interval bands (compare's mean relevance by rank: no
	// interval is computed there) has no interval column, rather than one
	// that is always empty.
	bands := c.hasBands()
	ciHead, ciCell := "", func(string) string { return "" }
	if bands {
		ciHead, ciCell = `<th scope="col">95% CI</th>`, func(ci string) string { return "<td>" + ci + "</td>" }
	}
	s.WriteString(`<div class="sr-only"><table><caption>` + Esc(c.Title) + `</caption><thead><tr><th scope="col">series</th><th scope="col">` + Esc(c.XLabel) + `</th><th scope="col">` + Esc(c.YLabel) + `</th>` + ciHead + `<th scope="col">n</th></tr></thead><tbody>`)
	for _, l := range c.Lines {
		name := ""
		if l.Series < len(c.Series) {
			name = c.Series[l.Series].Name
		}
		for i, v := range l.Y {
			n := "unknown"
			if i < len(l.N) {
				if l.N[i] < 0 {
					continue // absent from that point
				}
				n = Count(l.N[i])
			} else if math.IsNaN(v) {
				continue // no value and no n
			}
			val, ci := "—", ""
			if !math.IsNaN(v) {
				val = Fmt(v)
				if i < len(l.Lo) && i < len(l.Hi) && !math.IsNaN(l.Lo[i]) && !math.IsNaN(l.Hi[i]) {
					ci = FmtCI([2]float64{l.Lo[i], l.Hi[i]})
				}
			}
			s.WriteString(`<tr><th scope="row">` + Esc(name) + "</th><td>" + Esc(c.X[i]) + "</td><td>" + val + "</td>" + ciCell(ci) + "<td>" + n + "</td></tr>")
		}
	}
	s.WriteString("</tbody></table></div>\n</figure>\n")
	p.raw(s.String())
}

// svg draws the chart's SVG in layout lay on the y axis ax.
func (c LineChart) svg(s *strings.Builder, ax axis, lay layout) {
	// The x labels are centred on their points: the right margin holds half the widest.
	widest := 0.0
	for _, lab := range c.X {
		widest = math.Max(widest, math.Min(textWidth(lab), 140))
	}
	const left, top = 54.0, 10.0
	right := math.Max(16, widest/2+4)
	height := 264.0
	plotBottom := height - axisH - 6 // the x labels sit below the lowest y label
	n := len(c.X)
	x := func(i int) float64 {
		if n <= 1 {
			return (left + lay.w - right) / 2
		}
		return left + float64(i)/float64(n-1)*(lay.w-right-left)
	}
	y := func(v float64) float64 { return plotBottom - ax.frac(v)*(plotBottom-top) }
	s.WriteString(lay.open(height, c.Title))
	for _, t := range ax.ticks() {
		ty := px(y(t))
		s.WriteString(`<line class="gl" x1="` + px(left) + `" x2="` + px(lay.w-right) + `" y1="` + ty + `" y2="` + ty + `"/>`)
		s.WriteString(`<text class="tick" x="` + px(left-6) + `" y="` + px(y(t)+4) + `" text-anchor="end">` + ax.label(t) + "</text>\n")
	}
	// X labels: evenly spaced, as many as fit without touching.
	every := 1
	if n > 1 {
		slot := (lay.w - right - left) / float64(n-1) // room per point
		every = max(1, int(math.Ceil((widest+10)/slot)))
	}
	for i, lab := range c.X {
		if i%every != 0 {
			continue
		}
		// Centred on its point, but for the first and last labels: inside the chart.
		lab = clip(lab, 140)
		lx := math.Min(math.Max(x(i), textWidth(lab)/2), lay.w-textWidth(lab)/2)
		s.WriteString(`<text class="tick" x="` + px(lx) + `" y="` + px(plotBottom+20) + `" text-anchor="middle">` + Esc(lab) + "</text>")
	}
	s.WriteString("\n" + `<line class="axis" x1="` + px(left) + `" x2="` + px(lay.w-right) + `" y1="` + px(plotBottom) + `" y2="` + px(plotBottom) + `"/>`)
	s.WriteString(`<text class="axis-label" x="` + px((left+lay.w-right)/2) + `" y="` + px(height-3) + `" text-anchor="middle">` + Esc(c.XLabel) + "</text>")
	s.WriteString(`<text class="axis-label" x="14" y="` + px((top+plotBottom)/2) + `" text-anchor="middle" transform="rotate(-90 14 ` + px((top+plotBottom)/2) + `)">` + Esc(c.YLabel) + "</text>\n")
	for mi, m := range c.Markers {
		mx := px(x(m.X))
		s.WriteString(`<g>` + lay.tip(m.Label) + `<line` + lay.mark("marker") + ` class="marker" x1="` + mx + `" x2="` + mx + `" y1="` + px(top) + `" y2="` + px(plotBottom) + `"/>`)
		// A label only where it fits before the next marker and inside the
		// plot (no label overlaps another or is cut); the hover has it.
		end := lay.w - right
		if mi+1 < len(c.Markers) {
			end = x(c.Markers[mi+1].X) - 4
		}
		if lab := clip(m.Label, 220); x(m.X)+3+textWidth(lab) <= end {
			s.WriteString(`<text class="marker-label" x="` + px(x(m.X)+3) + `" y="` + px(top+10) + `">` + Esc(lab) + "</text>")
		}
		s.WriteString("</g>\n")
	}
	for _, l := range c.Lines {
		sr := Series{}
		if l.Series < len(c.Series) {
			sr = c.Series[l.Series]
		}
		col := "c" + strconv.Itoa(sr.Color%8)
		ok := func(i int) bool { return !math.IsNaN(l.Y[i]) }
		hasBand := len(l.Lo) == len(l.Y) && len(l.Hi) == len(l.Y)
		inBand := func(i int) bool { return ok(i) && !math.IsNaN(l.Lo[i]) && !math.IsNaN(l.Hi[i]) }
		if hasBand {
			// One band polygon per run of consecutive points with an interval.
			var d strings.Builder
			for i := 0; i < len(l.Y); {
				if !inBand(i) {
					i++
					continue
				}
				j := i
				for j < len(l.Y) && inBand(j) {
					j++
				}
				if j == i+1 {
					// A lone point (its neighbours without an interval, or
					// the only run): a polygon through it alone has no
					// area, so its interval is a bar loneBand units wide.
					x0, x1 := px(x(i)-loneBand/2), px(x(i)+loneBand/2)
					d.WriteString("M" + x0 + " " + px(y(l.Hi[i])) + "H" + x1 + "V" + px(y(l.Lo[i])) + "H" + x0 + "Z")
					i = j
					continue
				}
				for m := i; m < j; m++ {
					d.WriteString(map[bool]string{true: "M", false: "L"}[m == i] + px(x(m)) + " " + px(y(l.Hi[m])))
				}
				for m := j - 1; m >= i; m-- {
					d.WriteString("L" + px(x(m)) + " " + px(y(l.Lo[m])))
				}
				d.WriteString("Z")
				i = j
			}
			if d.Len() > 0 {
				s.WriteString(`<path` + lay.mark("band") + ` class="band ` + col + `" d="` + d.String() + `"/>` + "\n")
			}
		}
		// The line breaks where a point is absent.
		var d strings.Builder
		for i := range l.Y {
			if !ok(i) {
				continue
			}
			if i == 0 || !ok(i-1) {
				d.WriteString("M")
			} else {
				d.WriteString("L")
			}
			d.WriteString(px(x(i)) + " " + px(y(l.Y[i])))
		}
		cls := "line " + col
		if sr.Dashed {
			cls += " dashed"
		}
		if sr.Dotted {
			cls += " dotted"
		}
		if !lay.tips {
			s.WriteString(`<path class="` + cls + `" d="` + d.String() + `"/>` + "\n")
		} else {
			s.WriteString(`<path` + lay.mark("line") + ` class="` + cls + `" d="` + d.String() + `"><title>` + Esc(sr.Name) + "</title></path>\n")
		}
		for i, v := range l.Y {
			if math.IsNaN(v) {
				continue
			}
			if !lay.tips {
				s.WriteString(`<circle class="pt ` + col + `" cx="` + px(x(i)) + `" cy="` + px(y(v)) + `" r="3"/>`)
				continue
			}
			tip := sr.Name + " · " + c.XLabel + " " + c.X[i] + ": " + Fmt(v)
			if i < len(l.Of) {
				tip += l.Of[i]
			}
			if i < len(l.Lo) && i < len(l.Hi) && !math.IsNaN(l.Lo[i]) && !math.IsNaN(l.Hi[i]) {
				tip += " (95% CI " + FmtCI([2]float64{l.Lo[i], l.Hi[i]}) + ")"
			}
			if i < len(l.Label) && l.Label[i] != "" {
				tip += ", " + l.Label[i]
			}
			s.WriteString(`<circle` + lay.mark("point") + ` class="pt ` + col + `" cx="` + px(x(i)) + `" cy="` + px(y(v)) + `" r="3"><title>` + Esc(tip) + "</title></circle>")
		}
		s.WriteString("\n")
	}
	s.WriteString("</svg>\n")
}
