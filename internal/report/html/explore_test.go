package html_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/browsertest"
	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/report/comparereport"
	rhtml "github.com/retrieval-gate/retrieval-gate/internal/report/html"
)

// embedded is the dashboard's data block, as the script reads it.
type embedded struct {
	Measures []struct {
		Key, Label string
		Higher     bool
		Over       int // an index into Axes
	}
	Colours map[string]int
	Run     int
	Measure string
	Missing string
	Runs    []struct {
		Label      string
		Strategies []struct {
			Name string
			M    map[string]point
		}
		Bars map[string]int // indexes into Axes
	}
	Axes []axis
}

// point is one measure of one strategy in one run as the data holds it:
// [mean, lo, hi, n] placing its marks (null: undefined), then the mean, the
// interval and n as the page prints them.
type point struct {
	Mean, Lo, Hi          *float64
	N                     int
	Text, Interval, Count string
}

func (p *point) UnmarshalJSON(b []byte) error {
	var a [7]json.RawMessage
	if err := json.Unmarshal(b, &a); err != nil {
		return err
	}
	for i, dst := range []any{&p.Mean, &p.Lo, &p.Hi, &p.N, &p.Text, &p.Interval, &p.Count} {
		if err := json.Unmarshal(a[i], dst); err != nil {
			return err
		}
	}
	return nil
}

// value is a number of the data, NaN for null.
func value(v *float64) float64 {
	if v == nil {
		return math.NaN()
	}
	return *v
}

// axis is a chart's axis as the data holds it: tick i at Lo + i*Step,
// labelled Ticks[i].
type axis struct {
	Lo, Hi, Step float64
	Ticks        []string
}

func dataOf(t *testing.T, page string) embedded {
	t.Helper()
	const open = `<script type="application/json" id="rg-data">`
	i := strings.Index(page, open)
	require.GreaterOrEqual(t, i, 0)
	raw := page[i+len(open):]
	raw = raw[:strings.Index(raw, "</script>")]
	var d embedded
	require.NoError(t, json.Unmarshal([]byte(raw), &d))
	return d
}

// The embedded data: every run of the history (this run the newest, shown
// without script), every measure compare computed with its registry label,
// each strategy's colour shared by its reranked counterpart.
func TestCompareDashboardEmbedsRuns(t *testing.T) {
	r := demoResult(t)
	d := dataOf(t, string(renderOver(t, r, overRuns(t, r, 8, map[int]bool{3: true}))))
	require.Len(t, d.Runs, 9)
	assert.Equal(t, 8, d.Run)
	assert.Equal(t, "run 9 of 9 · 2026-03-01 · fffffff · feature (this run)", d.Runs[8].Label)
	assert.Equal(t, "run 1 of 9 · 2026-01-01 · 0000000 · main", d.Runs[0].Label)
	assert.Equal(t, "dcg_at_k", d.Measure)
	var labels, registry []string
	for _, m := range d.Measures {
		labels = append(labels, m.Label)
		assert.True(t, m.Higher, m.Key)
	}
	for _, m := range metrics.QueryMeasures {
		registry = append(registry, m.LabelAt(r.K))
	}
	assert.Equal(t, registry, labels, "every registered measure, in the registry's order")
	assert.Equal(t, map[string]int{"bm25": 0, "dense": 1, "dense+rerank": 1, "hybrid": 2, "hybrid+rerank": 2}, d.Colours)
	// This run's values are the document's, in full.
	for _, s := range d.Runs[8].Strategies {
		want := r.Strategies[r.StrategyIndex(s.Name)].Means[0]
		assert.Equal(t, want, *s.M["dcg_at_k"].Mean, s.Name)
	}
	// Without a history: this run alone.
	d = dataOf(t, string(render(t, r)))
	require.Len(t, d.Runs, 1)
	assert.Equal(t, "this run", d.Runs[0].Label)
}

// Every number the script shows is in the data as the page prints it: each
// point's mean, interval and n (format.Num, FmtCI, Count), each axis's tick
// labels (format.Tick), and the missing glyph.
func TestCompareDashboardDataIsPrinted(t *testing.T) {
	r := demoResult(t)
	d := dataOf(t, string(renderOver(t, r, overRuns(t, r, 8, map[int]bool{3: true}))))
	assert.Equal(t, format.Missing, d.Missing)
	ticks := func(a axis) {
		require.NotEmpty(t, a.Ticks)
		assert.Greater(t, a.Step, 0.0)
		for i, label := range a.Ticks {
			assert.Equal(t, format.Tick(a.Lo+float64(i)*a.Step, a.Step), label)
		}
		assert.InDelta(t, a.Hi, a.Lo+float64(len(a.Ticks)-1)*a.Step, a.Step*1e-6, "the last tick is the top")
	}
	points := 0
	for _, a := range d.Axes {
		ticks(a)
	}
	for _, m := range d.Measures {
		require.Less(t, m.Over, len(d.Axes))
	}
	for _, run := range d.Runs {
		require.Len(t, run.Bars, len(d.Measures), run.Label)
		for _, m := range d.Measures {
			require.Less(t, run.Bars[m.Key], len(d.Axes))
			assert.Equal(t, 0.0, d.Axes[run.Bars[m.Key]].Lo, "bars start at zero")
		}
		for _, s := range run.Strategies {
			for key, p := range s.M {
				points++
				assert.Equal(t, format.Num(value(p.Mean)), p.Text, "%s %s %s", run.Label, s.Name, key)
				assert.Equal(t, rhtml.FmtCI([2]float64{value(p.Lo), value(p.Hi)}), p.Interval, "%s %s %s", run.Label, s.Name, key)
				assert.Equal(t, rhtml.Count(p.N), p.Count, "%s %s %s", run.Label, s.Name, key)
			}
		}
	}
	cur := d.Runs[len(d.Runs)-1]
	require.Len(t, cur.Strategies, 5)
	for _, s := range cur.Strategies {
		assert.Len(t, s.M, len(metrics.QueryMeasures), "this run: every measure of %s", s.Name)
	}
	assert.Greater(t, points, 5*len(metrics.QueryMeasures), "and the earlier runs'")
}

// The method lines state what the document states: BCa and Wilson intervals,
// the exact McNemar test of hit, never a method it did not use.
func TestCompareDashboardMethods(t *testing.T) {
	s := string(render(t, demoResult(t)))
	var bca, wilson []string // the registry's measures: Wilson for the 0/1 ones
	for _, m := range metrics.QueryMeasures {
		if m.Scale == metrics.ScaleBinary {
			wilson = append(wilson, m.LabelAt(10))
		} else {
			bca = append(bca, m.LabelAt(10))
		}
	}
	assert.Contains(t, s, "95% intervals of the means: BCa bootstrap (2,000 resamples, seed 1) for "+strings.Join(bca, ", ")+"; Wilson score with continuity correction for "+strings.Join(wilson, ", ")+".")
	assert.Contains(t, s, "exact McNemar for hit@10")
	assert.Contains(t, s, "adjusted by Holm within each measure across the strategies; significant when the adjusted p &lt; 0.05.")
	assert.NotContains(t, s, "percentile bootstrap")
	v := viewOf(demoResult(t))
	for _, m := range v.Methods {
		assert.NotContains(t, m, "_", "a method or measure key, not its words: %s", m)
	}
}

// In Chromium, light and dark, at a phone's, the comment column's and a
// desktop's width: choosing an earlier run and nDCG@10 draws that run's
// nDCG@10 (bars and table equal to the embedded data, the best bold), shows
// the nDCG@10 chart over the runs only, and every strategy keeps one colour
// (bars, legend, lines over the runs), its reranked counterpart dashed.
func TestCompareDashboardExploreInBrowser(t *testing.T) {
	t.Parallel()
	page, loads := exploreLoads(t)
	d := dataOf(t, string(page))
	type mark struct{ S, V, Colour, Dash string }
	var got struct {
		Controls             bool
		Shown, Caption, Axis string
		Bars, Swatches       []mark
		Lines                []mark
		Over                 string
		OverAxis             []string
		Chosen               float64
		RunX                 []float64
		Points               []string
		Broken               []string
		Ticks, OverTicks     []string
		Cells                []struct {
			S, V   string
			Strong bool
		}
	}
	run := d.Runs[2]
	want := map[string]string{}
	best := 0.0
	for _, s := range run.Strategies {
		v := *s.M["ndcg_at_k"].Mean
		want[s.Name] = format.Num(v)
		best = max(best, v)
	}
	require.Len(t, want, 5)
	for _, dark := range []bool{false, true} {
		browsertest.Assert(t, browsertest.Page{Name: fmt.Sprintf("compare-explore-dark-%v", dark), Marks: exploreMarks}, loads[dark])
		for _, m := range loads[dark] {
			at := fmt.Sprintf("dark %v, %d px", dark, m.Width)
			require.NoError(t, json.Unmarshal(exploreResult(t, m).Explore, &got), at)
			assert.True(t, got.Controls, at)
			assert.Empty(t, got.Broken, "%s: table headers broken inside a word", at)
			assert.Equal(t, "Shown: run 3 of 9 · 2026-01-03 · 0000000 · main · nDCG@10", got.Shown, at)
			assert.Equal(t, "nDCG@10", got.Caption, at)
			assert.Equal(t, "nDCG@10", got.Axis, at)
			assert.Equal(t, "nDCG@10 per run (95% CI bands; dashed vertical lines: inputs changed)", got.Over, at)
			assert.Equal(t, []string{"run", "nDCG@10"}, got.OverAxis, at)
			require.Len(t, got.RunX, 5, at)
			assert.Equal(t, got.RunX[0], got.Chosen, "%s: the chosen run is marked on the chart over the runs", at)
			// The axes' labels are the data's, as internal/format printed them.
			assert.Equal(t, d.Axes[run.Bars["ndcg_at_k"]].Ticks, got.Ticks, at)
			for _, m := range d.Measures {
				if m.Key == "ndcg_at_k" {
					assert.Equal(t, d.Axes[m.Over].Ticks, got.OverTicks, at)
				}
			}
			// Every point over the runs is the embedded value of its run.
			var points []string
			for _, rn := range d.Runs {
				for _, st := range rn.Strategies {
					points = append(points, st.Name+"="+format.Num(*st.M["ndcg_at_k"].Mean))
				}
			}
			assert.ElementsMatch(t, points, got.Points, at)
			require.Len(t, got.Bars, 5, at)
			require.Len(t, got.Cells, 5, at)
			for _, c := range got.Cells {
				assert.Equal(t, want[c.S], c.V, "%s: %s", at, c.S)
				assert.Equal(t, c.V == format.Num(best), c.Strong, "%s: %s bold only when best", at, c.S)
			}
			colour := map[string]string{}
			for _, bar := range got.Bars {
				assert.Equal(t, want[bar.S], bar.V, "%s: %s", at, bar.S)
				colour[bar.S] = bar.Colour
				assert.Equal(t, strings.HasSuffix(bar.S, rhtml.RerankSuffix), bar.Dash != "none", "%s: %s dashed when reranked", at, bar.S)
			}
			assert.Equal(t, colour["dense"], colour["dense+rerank"], at)
			assert.Equal(t, colour["hybrid"], colour["hybrid+rerank"], at)
			assert.NotEqual(t, colour["dense"], colour["hybrid"], at)
			assert.NotEqual(t, colour["dense"], colour["bm25"], at)
			require.Len(t, got.Swatches, 5, at)
			for _, sw := range got.Swatches {
				assert.Equal(t, colour[sw.S], sw.Colour, "%s: swatch of %s", at, sw.S)
				assert.Equal(t, strings.HasSuffix(sw.S, rhtml.RerankSuffix), sw.Dash == "dashed", "%s: swatch of %s", at, sw.S)
			}
			require.Len(t, got.Lines, 5, at)
			for _, l := range got.Lines {
				assert.Equal(t, colour[l.S], l.Colour, "%s: line of %s keeps its colour", at, l.S)
				assert.Equal(t, strings.HasSuffix(l.S, rhtml.RerankSuffix), l.Dash != "none", "%s: line of %s", at, l.S)
			}
		}
	}
}

// With scripts off the page is read as before: this run, the primary
// measure (its bars and its chart over the runs), no selector shown (it
// could not act), nothing wider than the page.
func TestCompareDashboardWithoutScript(t *testing.T) {
	t.Parallel()
	b := browsertest.Start(t)
	r := demoResult(t)
	path := filepath.Join(t.TempDir(), "compare-noscript.html")
	require.NoError(t, os.WriteFile(path, renderOver(t, r, overRuns(t, r, 8, map[int]bool{3: true})), 0o644))
	for _, m := range browsertest.Check(t, b, browsertest.Page{Name: "compare-noscript", Path: path, Widths: []int{390, 850}, Shots: []int{390}, NoScript: true, Marks: map[string]int{
		`#rg-bars rect[data-mark="bar"]`:  5,
		`#rg-controls[hidden]`:            1,
		`#rg-over path[data-mark="line"]`: 5,
		`#rg-over [data-mark="chosen"]`:   0,
		`#rg-table strong`:                1,
	}}) {
		assert.Empty(t, m.ConsoleErrors)
	}
}

// A method the dashboard has no words for is named as the document states
// it, for the measures it was used for: the lines follow the document.
func TestCompareDashboardMethodsFollowTheDocument(t *testing.T) {
	r := freshDemoResult(t) // its document is edited
	doc := comparereport.New(r)
	for i := range doc.Paired {
		if doc.Paired[i].Metric == "ndcg_at_k" {
			doc.Paired[i].PValueMethod = "saddlepoint"
		}
	}
	s := doc.Strategies["bm25"]
	m := s.Metrics["mrr_at_k"]
	m.CI95Method = "bca-expanded"
	s.Metrics["mrr_at_k"] = m
	var b bytes.Buffer
	require.NoError(t, rhtml.CompareHTML(&b, doc, r, nil))
	out := b.String()
	assert.Contains(t, out, "saddlepoint for nDCG@10")
	assert.Contains(t, out, "bca-expanded for MRR@10")
	assert.NotContains(t, out, "sign-flip randomization (2,000 resamples, seed 1) for DCG@10, nDCG@10")
}

// In Chromium, the chart over the runs the script redraws for DCG@10 carries
// its maximum as the page draws it: in the title, the axis and every point's
// label ("9.242 of 31.805"), as the history page and the PR comment's trend do
// (the explore page's loads: 9 runs, at 390, 850 and 1400 px, light and dark).
func TestCompareDashboardOverRunsDCGScaleInBrowser(t *testing.T) {
	t.Parallel()
	_, loads := exploreLoads(t)
	type view struct {
		Over string
		Axis []string
		Tips []string
	}
	var got struct{ Before, Other, After view }
	for _, m := range slices.Concat(loads[false], loads[true]) {
		at := fmt.Sprintf("%d px, background %s", m.Width, m.Background)
		require.NoError(t, json.Unmarshal(exploreResult(t, m).DCG, &got), at)
		for name, v := range map[string]view{"drawn by the page": got.Before, "redrawn by the script": got.After} {
			assert.Equal(t, "DCG@10 (of 31.805) per run (95% CI bands; dashed vertical lines: inputs changed)", v.Over, "%s, %s", at, name)
			assert.Equal(t, []string{"run", "DCG@10 (of 31.805)"}, v.Axis, "%s, %s", at, name)
			require.Len(t, v.Tips, 5*9, "%s, %s", at, name)
			for _, tip := range v.Tips {
				assert.Regexp(t, `: [0-9.]+ of 31\.805 \(95% CI `, tip, "%s, %s", at, name)
			}
		}
		assert.Equal(t, "nDCG@10 per run (95% CI bands; dashed vertical lines: inputs changed)", got.Other.Over, at)
		for _, tip := range got.Other.Tips {
			assert.NotContains(t, tip, "31.805", at)
		}
	}
}

// exploreJS is what TestCompareDashboardExploreInBrowser reads: it chooses run
// 3 of 9 and nDCG@10, then reads what the page draws.
const exploreJS = `(() => {
  const pick = (id, text) => {
    const s = document.getElementById(id);
    const o = [...s.options].find((o) => o.textContent.startsWith(text));
    s.value = o.value;
    s.dispatchEvent(new Event("change", {bubbles: true}));
  };
  pick("rg-run", "run 3 of 9");
  pick("rg-metric", "nDCG@10");
  const cs = (e) => getComputedStyle(e);
  return {
    controls: !document.getElementById("rg-controls").hidden,
    shown: document.getElementById("rg-shown").textContent,
    caption: document.querySelector("#rg-table caption").textContent,
    axis: document.querySelector("#rg-bars .axis-label").textContent,
    bars: [...document.querySelectorAll("#rg-bars rect[data-mark=bar]")].map((r) => ({s: r.dataset.strategy, v: r.dataset.value, colour: cs(r).fill, dash: cs(r).strokeDasharray})),
    cells: [...document.querySelectorAll("#rg-table td[data-strategy]")].map((td) => ({s: td.dataset.strategy, v: td.dataset.value, strong: !!td.querySelector("strong")})),
    swatches: [...document.querySelectorAll("#rg-bars .legend li")].map((li) => ({s: li.textContent, colour: cs(li.firstChild).color, dash: cs(li.firstChild).borderTopStyle})),
    over: document.querySelector("#rg-over figcaption").textContent,
    overAxis: [...document.querySelectorAll("#rg-over svg.wide .axis-label")].map((e) => e.textContent),
    chosen: Number(document.querySelector("#rg-over [data-mark=chosen]").getAttribute("x1")),
    runX: [...document.querySelectorAll("#rg-over circle[data-mark=point]")].filter((c) => c.querySelector("title").textContent.includes("run 2026-01-03 0000000:")).map((c) => Number(c.getAttribute("cx"))),
    points: [...document.querySelectorAll("#rg-over circle[data-mark=point]")].map((c) => c.querySelector("title").textContent.split(" \u00b7 ")[0] + "=" + c.dataset.value),
    // A header word drawn on two lines is broken inside it.
    broken: [...document.querySelectorAll("thead th")].flatMap((th) => {
      const t = th.firstChild, out = [];
      if (!t || t.nodeType !== 3) return out;
      for (const w of t.data.matchAll(/\S+/g)) {
        const r = document.createRange();
        r.setStart(t, w.index); r.setEnd(t, w.index + w[0].length);
        if (new Set([...r.getClientRects()].map((q) => Math.round(q.top))).size > 1) out.push(w[0]);
      }
      return out;
    }),
    lines: [...document.querySelectorAll("#rg-over path[data-mark=line]")].map((p) => ({s: p.querySelector("title").textContent, colour: cs(p).stroke, dash: cs(p).strokeDasharray})),
    ticks: [...document.querySelectorAll("#rg-bars svg.wide text.tick")].map((e) => e.textContent),
    overTicks: [...document.querySelectorAll("#rg-over svg.wide text.tick[text-anchor=end]")].map((e) => e.textContent),
  };
})()`

// dcgScaleJS is what TestCompareDashboardOverRunsDCGScaleInBrowser reads: the
// chart over the runs as drawn, after choosing nDCG@10, and after choosing
// DCG@10 again.
const dcgScaleJS = `(() => {
  const s = document.getElementById("rg-metric");
  const read = () => ({
    over: document.querySelector("#rg-over figcaption").textContent,
    axis: [...document.querySelectorAll("#rg-over svg.wide .axis-label")].map((e) => e.textContent),
    tips: [...document.querySelectorAll("#rg-over circle[data-mark=point] title")].map((t) => t.textContent),
  });
  const pick = (text) => {
    s.value = [...s.options].find((o) => o.textContent.startsWith(text)).value;
    s.dispatchEvent(new Event("change", {bubbles: true}));
  };
  const before = read();
  pick("nDCG@10");
  const other = read();
  pick("DCG@10");
  return {before, other, after: read()};
})()`

// exploreMarks are the chart marks TestCompareDashboardExploreInBrowser counts
// after its script.
var exploreMarks = map[string]int{`#rg-bars rect[data-mark="bar"]`: 5, `#rg-over path[data-mark="line"]`: 5, `#rg-over circle[data-mark="point"]`: 5 * 9, `#rg-over [data-mark="chosen"]`: 1, `#rg-over [data-mark="marker"]`: 1}

// explore holds the loads of the compare demo's dashboard over 8 earlier runs
// (the qrels relabelled at run 4) that three tests read in Chromium:
// TestCompareDashboardOverRunsDCGScaleInBrowser,
// TestCompareDashboardSeedFiguresInBrowser and
// TestCompareDashboardExploreInBrowser. One load per width (390, 850 and
// 1400 px), light and dark, runs their scripts in turn: the DCG scale's
// first (it reads the page as drawn, and ends on DCG@10), the seed's figures'
// next (nDCG@10, then DCG@10), Explore's last (run 3 and nDCG@10); then it
// counts the marks of Explore and of the seed's figures (the buckets table and
// the scenarios, which no choice redraws). Each test asserts its part of the
// same six loads, where the three loaded the page twelve times.
var explore struct {
	once sync.Once
	page []byte
	ms   map[bool][]*browsertest.Measure // dark -> the loads at 390, 850 and 1400 px
}

// exploreLoads returns the explore page and its loads, loading it on first use.
func exploreLoads(t *testing.T) ([]byte, map[bool][]*browsertest.Measure) {
	t.Helper()
	explore.once.Do(func() {
		b := browsertest.Start(t)
		r := demoResult(t)
		page := renderOver(t, r, overRuns(t, r, 8, map[int]bool{3: true}))
		path := filepath.Join(t.TempDir(), "compare-explore.html")
		require.NoError(t, os.WriteFile(path, page, 0o644))
		marks := maps.Clone(exploreMarks)
		maps.Copy(marks, seedMarks(r))
		ms := map[bool][]*browsertest.Measure{}
		// Shot at one width each (1400 light, 390 dark): compare-dashboard is
		// shot at every width; every width is measured and clicked.
		shots := map[bool][]int{false: {1400}, true: {390}}
		for _, dark := range []bool{false, true} {
			ms[dark] = browsertest.Measures(t, b, browsertest.Page{Name: fmt.Sprintf("compare-explore-dark-%v", dark), Path: path, Widths: []int{390, 850, 1400},
				Shots: shots[dark], Dark: dark, Marks: marks, Script: "({dcg: " + dcgScaleJS + ", seed: " + seedFiguresJS + ", explore: " + exploreJS + "})"})
		}
		explore.page, explore.ms = page, ms
	})
	require.NotNil(t, explore.ms, "the explore page did not load: see the test that loaded it first")
	return explore.page, explore.ms
}

// exploreResult is what the scripts of one load of the explore page returned.
func exploreResult(t *testing.T, m *browsertest.Measure) (r struct{ DCG, Seed, Explore json.RawMessage }) {
	t.Helper()
	require.NoError(t, json.Unmarshal(m.Result, &r), "at %d px", m.Width)
	return r
}

// The best and worst queries at a phone's width, for every measure of
// "Select metric" and every strategy of "Select strategy": the lists by a
// measure other than the primary have a second value column, and with the
// query ids and the two column headings kept on one line each ("mean
// relevance@10", "DCG@10 (of 31.805)") the table ran past the page (by 7 px
// here, by up to 109 px with the evaluate demo's ids, es-419-adversarial-014).
// At most 480 px they wrap at their spaces and hyphens. One load at 390 px.
func TestCompareQueryListsFitPhone(t *testing.T) {
	t.Parallel()
	b := browsertest.Start(t)
	path := filepath.Join(t.TempDir(), "compare-queries.html")
	require.NoError(t, os.WriteFile(path, render(t, demoResult(t)), 0o644))
	const js = `(() => {
  const out = {lists: 0, wide: []};
  const met = document.getElementById("rg-metric"), cw = document.documentElement.clientWidth;
  for (const sel of document.querySelectorAll(".rg-qstrategy")) {
    if (!sel.getClientRects().length) continue;
    for (let m = 0; m < met.options.length; m++) for (let i = 0; i < sel.options.length; i++) {
      if (i === 0) { met.selectedIndex = m; met.dispatchEvent(new Event("change")); }
      sel.selectedIndex = i; sel.dispatchEvent(new Event("change"));
      for (const t of document.querySelectorAll(".rg-qtable")) {
        if (!t.getClientRects().length) continue;
        out.lists++;
        const r = t.getBoundingClientRect().right;
        if (r > cw + 0.5) out.wide.push(t.querySelector("caption").textContent + ": right edge at " + r.toFixed(0) + " px");
      }
      if (document.documentElement.scrollWidth > cw) out.wide.push(met.options[m].textContent + " / " + sel.value + ": the page scrolls sideways");
    }
  }
  return out;
})()`
	ms := browsertest.Measures(t, b, browsertest.Page{Name: "compare-queries-390", Path: path, Widths: []int{390}, Shots: []int{}, Script: js})
	var got struct {
		Lists int
		Wide  []string
	}
	require.NoError(t, json.Unmarshal(ms[0].Result, &got))
	assert.Equal(t, 10*len(demoStrategies)*2, got.Lists, "every measure × strategy, best and worst")
	assert.Empty(t, got.Wide, "query lists wider than a 390 px page")
}
