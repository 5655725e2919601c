package html_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/browsertest"
	"github.com/retrieval-gate/retrieval-gate/internal/cli"
	"github.com/retrieval-gate/retrieval-gate/internal/history"
	"github.com/retrieval-gate/retrieval-gate/internal/report/comparereport"
	rhtml "github.com/retrieval-gate/retrieval-gate/internal/report/html"
)

// minChartText is the smallest chart text a reader is shown, CSS px as
// rendered (the font size times the scale of its SVG): 8–9 px at 390 px was
// too small to read on a phone, and the marker labels' 12 units were 11.7 px
// at 390; every text of a page is held to the same (browsertest.MinText).
const minChartText = browsertest.MinText

// minChartFill is the least share of its box's width a chart is drawn over:
// a drawing of one width, 640 px at most, left the right half of the
// history page's chart empty at 1400 px and a fifth of every chart's at 850.
const minChartFill = 0.97

// chartTextJS measures every chart's text as rendered (the charts hidden,
// in a closed section or another run's page, are not): the smallest size,
// the texts below minChartText, the tick labels that overlap another of
// their SVG, the texts outside their SVG's box (cut off, or drawn over
// the page beside it), how many of the charts shown are the narrow drawing,
// the charts drawn over less than minChartFill of their box's width (a
// drawing of a fixed width beside an empty stretch), and the figures whose
// drawings differ in their marks.
const chartTextJS = `(() => {
  const out = {charts: 0, narrow: 0, texts: 0, min: 1e9, small: [], overlaps: [], outside: [], unfilled: [], marks: []};
  const shown = (e) => e.getClientRects().length > 0;
  const say = (t) => '"' + t.textContent.slice(0, 40) + '" (' + t.getAttribute("class") + ")";
  for (const svg of document.querySelectorAll(".chart svg")) {
    if (!shown(svg)) continue;
    out.charts++;
    if (svg.classList.contains("narrow")) out.narrow++;
    const scale = svg.getScreenCTM().a, box = svg.getBoundingClientRect();
    const fig = svg.closest("figure"), room = fig.getBoundingClientRect().width;
    if (box.width < ` + "%[2]v" + ` * room) out.unfilled.push(fig.querySelector("figcaption").textContent.slice(0, 40) + ": " + svg.getAttribute("class") + " " + box.width.toFixed(0) + " px of " + room.toFixed(0));
    const ticks = [];
    for (const t of svg.querySelectorAll("text")) {
      const r = t.getBoundingClientRect();
      if (!shown(t) || r.width === 0) continue;
      out.texts++;
      const px = parseFloat(getComputedStyle(t).fontSize) * scale;
      out.min = Math.min(out.min, px);
      if (px < ` + "%[1]v" + `) out.small.push(say(t) + " " + px.toFixed(1) + " px");
      if (r.left < box.left - 1 || r.right > box.right + 1) out.outside.push(say(t) + " spans " + r.left.toFixed(0) + "–" + r.right.toFixed(0) + " of " + box.left.toFixed(0) + "–" + box.right.toFixed(0));
      if (t.classList.contains("tick")) ticks.push([t, r]);
    }
    for (let i = 0; i < ticks.length; i++) for (let j = i + 1; j < ticks.length; j++) {
      const [a, ra] = ticks[i], [b, rb] = ticks[j];
      if (ra.left < rb.right - 0.5 && rb.left < ra.right - 0.5 && ra.top < rb.bottom - 0.5 && rb.top < ra.bottom - 0.5) out.overlaps.push(say(a) + " and " + say(b));
    }
  }
  // Each figure's drawings draw the same marks as its wide one.
  for (const fig of document.querySelectorAll("figure.chart")) {
    const w = fig.querySelector("svg.wide");
    for (const cls of ["narrow", "wider", "widest"]) {
      const n = fig.querySelector("svg." + cls);
      if (!w || !n) { out.marks.push(fig.querySelector("figcaption").textContent + ": not drawn wide and " + cls); continue; }
      for (const sel of ["rect.bar", "path.whisker", "text.value", "text.undef", "text.cat", "path.line", "path.band", "circle.pt", "line.marker", "line.chosen"]) {
        const a = w.querySelectorAll(sel).length, b = n.querySelectorAll(sel).length;
        if (a !== b) out.marks.push(fig.querySelector("figcaption").textContent + ": " + a + " " + sel + " wide, " + b + " " + cls);
      }
    }
  }
  return out;
})()`

// chartText is what chartTextJS returned.
type chartText struct {
	Charts, Narrow, Texts    int
	Min                      float64
	Small, Overlaps, Outside []string
	Unfilled                 []string
	Marks                    []string
}

// Every chart the package draws (the check page's bars, the compare
// dashboard's bars and relevance by rank, with and without its script, the
// chart over the runs on the dashboard and on the history page, markers and
// all), in Chromium at a phone's, the comment column's and a desktop's
// width: each text of each chart shown is at least minChartText px as
// rendered (the narrow drawing at 390 px, the wider or widest one at 850 and
// 1400 or the wide one in a column of the dashboard's grid), no tick label
// overlaps another, no text runs outside its chart, every chart spans its
// box's width (minChartFill) and the drawings of a chart draw the same marks.
func TestChartTextReadableInBrowser(t *testing.T) {
	t.Parallel()
	b := browsertest.Start(t)
	dir := t.TempDir()
	r := demoResult(t)
	write := func(name string, page []byte) string {
		path := filepath.Join(dir, name+".html")
		require.NoError(t, os.WriteFile(path, page, 0o644))
		return path
	}
	hist, err := view(t, compareRuns(12, []string{"bm25", "hybrid", "new"}, map[int]bool{4: true, 9: true}, 3), "compare", "dcg_at_k")
	require.NoError(t, err)
	var hp bytes.Buffer
	require.NoError(t, rhtml.History(&hp, hist))
	deltas, err := view(t, checkRuns(6, map[int]bool{1: true, 2: true, 4: true, 5: true}, map[int]bool{2: true, 5: true}), "check", "delta:retrieval_hit_at_k")
	require.NoError(t, err)
	var dp bytes.Buffer
	require.NoError(t, rhtml.History(&dp, deltas))
	over := renderOver(t, r, overRuns(t, r, 8, map[int]bool{3: true}))
	for _, c := range []struct {
		name, path string
		noScript   bool
		charts     int // the charts shown with every section open
	}{
		{"check", write("check", runCheck(t, checkDemo+"/cases.jsonl", cli.ExitOK)), false, 1},
		{"compare", write("compare", render(t, r)), false, 2},
		{"compare-history", write("compare-history", over), false, 3},
		{"compare-history-noscript", write("compare-history-noscript", over), true, 3},
		{"history", write("history", hp.Bytes()), false, 1},
		{"history-check-deltas", write("history-deltas", dp.Bytes()), false, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			ms := browsertest.Measures(t, b, browsertest.Page{Name: "chart-text-" + c.name, Path: c.path, Widths: []int{390, 850, 1400}, Shots: []int{390},
				OpenDetails: true, NoScript: c.noScript, Script: fmt.Sprintf(chartTextJS, minChartText, minChartFill)})
			for _, m := range ms {
				var got chartText
				require.NoError(t, json.Unmarshal(m.Result, &got), "at %d px", m.Width)
				t.Logf("%s at %d px: %d charts, %d texts, the smallest %.1f px", c.name, m.Width, got.Charts, got.Texts, got.Min)
				assert.Equal(t, c.charts, got.Charts, "%s at %d px: the charts shown", c.name, m.Width)
				assert.Empty(t, got.Small, "%s at %d px: chart text below %v px", c.name, m.Width, minChartText)
				assert.Empty(t, got.Overlaps, "%s at %d px: tick labels overlapping", c.name, m.Width)
				assert.Empty(t, got.Outside, "%s at %d px: chart text outside its chart", c.name, m.Width)
				assert.Empty(t, got.Unfilled, "%s at %d px: a chart narrower than its box", c.name, m.Width)
				assert.Empty(t, got.Marks, "%s at %d px: the drawings' marks", c.name, m.Width)
				narrow := 0
				if m.Width == 390 {
					narrow = c.charts // a chart box under 480 px
				}
				assert.Equal(t, narrow, got.Narrow, "%s at %d px: the narrow drawings shown", c.name, m.Width)
			}
		})
	}
}

// A strategy whose mean of the charted measure is undefined has a dash where
// its bar would start on the dashboard, in the page's drawing (no script) and
// in the script's, at a phone's width and a desktop's.
func TestUndefinedBarDashInBrowser(t *testing.T) {
	t.Parallel()
	b := browsertest.Start(t)
	page, _ := undefinedBM25(t)
	path := filepath.Join(t.TempDir(), "undefined.html")
	require.NoError(t, os.WriteFile(path, page, 0o644))
	const js = `(() => [...document.querySelectorAll("#rg-bars svg")].filter((e) => e.getClientRects().length > 0)
  .map((svg) => [...svg.querySelectorAll("text.undef")].filter((e) => e.getClientRects().length > 0).map((e) => e.textContent)))()`
	for _, noScript := range []bool{false, true} {
		ms := browsertest.Measures(t, b, browsertest.Page{Name: fmt.Sprintf("undefined-bar-noscript-%v", noScript), Path: path,
			Widths: []int{390, 1400}, NoScript: noScript, Script: js})
		for _, got := range ms {
			var dashes [][]string
			require.NoError(t, json.Unmarshal(got.Result, &dashes))
			assert.Equal(t, [][]string{{"—"}}, dashes, "no script %v, at %d px: one chart shown, one dash", noScript, got.Width)
		}
	}
}

// The dashboard's chart over the runs as its script draws it (the page's
// own drawing is TestLoneBandHasWidth's): a strategy new in this run has one
// point, and its interval shows as a band of some width, not a polygon
// through one point. One load at 1400 px.
func TestLoneBandInBrowser(t *testing.T) {
	t.Parallel()
	b := browsertest.Start(t)
	r := demoResult(t)
	recs := compareRuns(3, demoStrategies[:4], nil, 0) // hybrid+rerank is new in this run
	var doc bytes.Buffer
	require.NoError(t, comparereport.New(r).WriteJSON(&doc))
	recs = append(recs, history.Record{Schema: history.Schema, Command: "compare", Commit: strings.Repeat("f", 40), Branch: "main",
		Time: "2026-03-01T00:00:00Z", Document: doc.Bytes(), Fingerprint: recs[len(recs)-1].Fingerprint})
	v, err := view(t, recs, "compare", "dcg_at_k")
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "lone.html")
	require.NoError(t, os.WriteFile(path, renderOver(t, r, &v), 0o644))
	const js = `(() => [...document.querySelectorAll("#rg-over svg path.band")].filter((p) => p.getClientRects().length > 0)
  .map((p) => p.getAttribute("class") + " " + p.getBBox().width.toFixed(1)))()`
	ms := browsertest.Measures(t, b, browsertest.Page{Name: "lone-band", Path: path, Widths: []int{1400}, Shots: []int{}, Script: js})
	var got []string
	require.NoError(t, json.Unmarshal(ms[0].Result, &got))
	require.Len(t, got, len(demoStrategies), "a band per strategy")
	for _, g := range got {
		f := strings.Fields(g)
		w, err := strconv.ParseFloat(f[len(f)-1], 64)
		require.NoError(t, err)
		assert.Greater(t, w, 1.0, "band %s", g)
	}
}
