package html_test

import (
	"bytes"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/report/comparereport"
	rhtml "github.com/retrieval-gate/retrieval-gate/internal/report/html"
)

// Every chart's table for screen readers carries each value's n, in a column
// "n": an undefined value is "—" with its n (no bar, no point drawn: a bar's
// place has a dash), a point
// a line is absent from (n < 0) has no row. A line chart has a column
// "95% CI" when a line carries an interval (its band), and none when no line
// does: a column that would always be empty is left out.
func TestChartTablesCarryN(t *testing.T) {
	nan := math.NaN()
	const withCI, withoutCI = `<th scope="col">95% CI</th><th scope="col">n</th></tr></thead>`, `<th scope="col">mean</th><th scope="col">n</th></tr></thead>`
	for _, c := range []struct {
		name string
		draw func(p *rhtml.Page)
		head string
		want [][]string
	}{
		{"bars", func(p *rhtml.Page) {
			p.BarChart(rhtml.BarChart{Title: "hit@5", Measure: "hit@5", Categories: []string{"overall", "type: empty"}, Series: []rhtml.Series{{Name: "hit@5"}},
				Bars: []rhtml.Bar{{Category: "overall", Value: 0.75, CI: &[2]float64{0.7, 0.8}, N: 1200}, {Category: "type: empty", Value: nan, CI: &[2]float64{nan, nan}, N: 0}}})
		}, withCI, [][]string{{"overall", "hit@5", "0.750", "0.700–0.800", "1,200"}, {"type: empty", "hit@5", "—", "", "0"}}},
		{"lines", func(p *rhtml.Page) {
			p.LineChart(rhtml.LineChart{Title: "by rank", XLabel: "rank", YLabel: "mean", X: []string{"1", "2", "3"}, Series: []rhtml.Series{{Name: "a"}},
				Lines: []rhtml.Line{{Series: 0, Y: []float64{2, nan, nan}, N: []int{2, 0, -1}}}})
		}, withoutCI, [][]string{{"a", "1", "2.000", "2"}, {"a", "2", "—", "0"}}},
		{"lines without n", func(p *rhtml.Page) {
			p.LineChart(rhtml.LineChart{Title: "by rank", XLabel: "rank", YLabel: "mean", X: []string{"1", "2"}, Series: []rhtml.Series{{Name: "a"}},
				Lines: []rhtml.Line{{Series: 0, Y: []float64{2, nan}}}})
		}, withoutCI, [][]string{{"a", "1", "2.000", "unknown"}}},
		{"lines with a band", func(p *rhtml.Page) {
			p.LineChart(rhtml.LineChart{Title: "per run", XLabel: "run", YLabel: "mean", X: []string{"1", "2"}, Series: []rhtml.Series{{Name: "a"}, {Name: "b"}},
				Lines: []rhtml.Line{{Series: 0, Y: []float64{2, 3}, Lo: []float64{1, nan}, Hi: []float64{2.5, nan}, N: []int{4, 5}}, {Series: 1, Y: []float64{1, nan}, N: []int{3, 0}}}})
		}, withCI, [][]string{{"a", "1", "2.000", "1.000–2.500", "4"}, {"a", "2", "3.000", "", "5"}, {"b", "1", "1.000", "", "3"}, {"b", "2", "—", "", "0"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := rhtml.NewPage("t")
			c.draw(p)
			var b bytes.Buffer
			_, err := p.WriteTo(&b)
			require.NoError(t, err)
			s := b.String()
			assert.Contains(t, s, c.head)
			assert.Equal(t, c.want, srRows(s))
			assert.NotContains(t, s, "NaN")
			if c.name != "lines with a band" {
				assert.Equal(t, 1, strings.Count(s, `data-mark="bar"`)+strings.Count(s, `data-mark="point"`), "the defined value alone is drawn")
			}
			if c.name == "bars" { // the undefined bar's dash, in each of the four drawings (with its hover text in all but the narrow)
				assert.Equal(t, 4, strings.Count(s, `<text class="undef" x="`), s)
				assert.Equal(t, 3, strings.Count(s, `<title>type: empty · hit@5: hit@5 undefined, n = 0</title><text class="undef"`), s)
				assert.Contains(t, s, `<title>type: empty · hit@5: hit@5 undefined, n = 0</title><text class="undef"`)
			}
		})
	}
}

// On the dashboard, a strategy whose mean of the charted measure is
// undefined has no bar but a dash where it would start, and the bar chart's table has its row "—" with its n
// (as the script's redraw has).
func TestCompareDashboardUndefinedBar(t *testing.T) {
	page, m := undefinedBM25(t)
	b := bytes.NewBuffer(page)
	_, fig, ok := strings.Cut(b.String(), `<div id="rg-bars">`)
	require.True(t, ok)
	fig, _, ok = strings.Cut(fig, "</figure>")
	require.True(t, ok)
	assert.Equal(t, len(demoStrategies)-1, strings.Count(fig, `data-mark="bar"`))
	assert.Equal(t, 4, strings.Count(fig, `<text class="undef"`), "a dash where its bar would start, in each drawing")
	assert.Contains(t, srRows(fig), []string{"bm25", "bm25", "—", "", rhtml.Count(int(m.N))})
	assert.NotContains(t, fig, "NaN")
}

// undefinedBM25 is the demo's dashboard with bm25's mean DCG@10 (the charted
// measure) undefined, and that measure's entry.
func undefinedBM25(t *testing.T) ([]byte, comparereport.Summary) {
	t.Helper()
	r := freshDemoResult(t) // its document is edited
	doc := comparereport.New(r)
	s := doc.Strategies["bm25"]
	m := s.Metrics["dcg_at_k"]
	nan := format.Float(math.NaN())
	m.Mean, m.CI95 = nan, [2]format.Float{nan, nan}
	s.Metrics["dcg_at_k"] = m
	var b bytes.Buffer
	require.NoError(t, rhtml.CompareHTML(&b, doc, r, nil))
	return b.Bytes(), m
}

// A point whose interval stands alone (its neighbours without one, or the
// only run of a history) shows it: each band subpath of every drawing spans
// some width. A polygon through the one point had none, so a history whose
// runs changed k (each line one point) showed no interval at all.
func TestLoneBandHasWidth(t *testing.T) {
	nan := math.NaN()
	for _, c := range []struct {
		name   string
		y      []float64
		lo, hi []float64
		paths  int // band subpaths in each drawing
	}{
		{"the only run", []float64{0.5}, []float64{0.4}, []float64{0.6}, 1},
		{"between runs without one", []float64{0.5, 0.6, 0.7}, []float64{nan, 0.5, nan}, []float64{nan, 0.7, nan}, 1},
		{"a run of two and a lone one", []float64{0.5, 0.6, nan, 0.7}, []float64{0.4, 0.5, nan, 0.6}, []float64{0.6, 0.7, nan, 0.8}, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := rhtml.NewPage("t")
			x := make([]string, len(c.y))
			for i := range x {
				x[i] = string(rune('1' + i))
			}
			p.LineChart(rhtml.LineChart{Title: "per run", XLabel: "run", YLabel: "mean", X: x, Series: []rhtml.Series{{Name: "a"}},
				Lines: []rhtml.Line{{Series: 0, Y: c.y, Lo: c.lo, Hi: c.hi}}})
			var b bytes.Buffer
			_, err := p.WriteTo(&b)
			require.NoError(t, err)
			bands := regexp.MustCompile(`<path[^>]* class="band c0" d="([^"]*)"`).FindAllStringSubmatch(b.String(), -1)
			require.Len(t, bands, 4, "one band in each drawing")
			for _, band := range bands {
				subs := strings.Split(strings.TrimPrefix(band[1], "M"), "M")
				require.Len(t, subs, c.paths, band[1])
				for _, sub := range subs {
					lo, hi := math.Inf(1), math.Inf(-1)
					// The x of each command: M and L carry "x y", H carries x, V none.
					for _, cmd := range regexp.MustCompile(`(^|[LHV])([-\d.]+)`).FindAllStringSubmatch(sub, -1) {
						if cmd[1] == "V" {
							continue
						}
						v, err := strconv.ParseFloat(cmd[2], 64)
						require.NoError(t, err)
						lo, hi = math.Min(lo, v), math.Max(hi, v)
					}
					assert.Greater(t, hi-lo, 1.0, "band %q spans no width", sub)
				}
			}
		})
	}
}
