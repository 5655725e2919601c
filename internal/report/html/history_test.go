package html_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fastjson"

	"github.com/retrieval-gate/retrieval-gate/internal/browsertest"
	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/history"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/report/comparereport"
	rhtml "github.com/retrieval-gate/retrieval-gate/internal/report/html"
)

// compareRuns is a history of n compare runs of the strategies; the qrels
// change at every run listed in relabel. A strategy named "new" appears only
// from the middle run on. pad adds that many failed query ids per strategy (the
// documents of large comparisons list them all).
func compareRuns(n int, strategies []string, relabel map[int]bool, pad int) []history.Record {
	var recs []history.Record
	qrels := "sha256:q0"
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	failed := make([]string, pad)
	for i := range failed {
		failed[i] = fmt.Sprintf("q%07d", i)
	}
	for i := range n {
		if relabel[i] {
			qrels = fmt.Sprintf("sha256:q%d", i)
		}
		ss := map[string]any{}
		for j, s := range strategies {
			if s == "new" && i < n/2 {
				continue
			}
			m := 0.5 + 0.04*float64(j) + 0.02*math.Sin(float64(i+j)/3)
			ss[s] = map[string]any{"n": 300, "missing_from_run": 0, "failed_queries": failed, "metrics": map[string]any{
				"dcg_at_k":  map[string]any{"mean": m, "ci95": []float64{m - 0.03, m + 0.03}, "n": 300, "ci95_method": "bca", "unreliable": false},
				"ndcg_at_k": map[string]any{"mean": m / 2, "ci95": []float64{m/2 - 0.02, m/2 + 0.02}, "n": 300, "ci95_method": "bca", "unreliable": false},
			}}
		}
		// What a compare document always has (comparereport.Read checks it
		// before an earlier run's whole page is drawn from it).
		d := map[string]any{"schema": "retrieval-gate/compare@1", "strategies": ss, "recommended": strategies[len(strategies)-1],
			"k": 10, "gain": "exp", "relevance_scale": []int{0, 3}, "relevant_level": 1, "gates": []any{}, "verdict": "pass",
			"queries":    map[string]any{"judged": 300, "with_relevant": 300, "at_relevant_level": 300},
			"paired":     []any{},
			"statistics": map[string]any{"alpha": 0.05, "resamples": 0, "seed": 0}}
		if i >= n/2 { // the older half (written before max_dcg_at_k) has it derived from k, gain and scale
			d["max_dcg_at_k"] = metrics.MaxDCG(10, 3, metrics.GainExp)
		}
		doc, _ := json.Marshal(d)
		fp := history.Fingerprint{Inputs: map[string]string{"qrels": qrels}, Params: map[string]string{"k": "10"}}
		fp.Digest = "d-" + qrels
		recs = append(recs, history.Record{Schema: history.Schema, Command: "compare", Commit: fmt.Sprintf("%040x", i+1), Branch: "main",
			Time: t0.Add(time.Duration(i) * 24 * time.Hour).Format(time.RFC3339), Document: doc, Fingerprint: fp, Line: i + 1})
	}
	return recs
}

// view builds the history view of records as the report command does.
func view(t testing.TB, recs []history.Record, command, measure string) (rhtml.HistoryView, error) {
	t.Helper()
	b := rhtml.NewHistory("h.jsonl", command, measure)
	var p fastjson.Parser
	for _, r := range recs {
		doc, err := p.ParseBytes(r.Document)
		require.NoError(t, err)
		if err := b.Add(r, doc); err != nil {
			return rhtml.HistoryView{}, err
		}
	}
	return b.View(), nil
}

func TestHistoryView(t *testing.T) {
	recs := compareRuns(12, []string{"bm25", "hybrid", "new"}, map[int]bool{4: true}, 0)
	// A check run in the same file is not charted with the compare runs.
	recs = append(recs[:3:3], append([]history.Record{{Command: "check", Document: json.RawMessage(`{}`), Line: 99}}, recs[3:]...)...)
	v, err := view(t, recs, "compare", "dcg_at_k")
	require.NoError(t, err)
	require.Len(t, v.Runs, 12)
	require.Len(t, v.Series, 3)
	assert.Equal(t, []string{"bm25", "hybrid", "new"}, []string{v.Series[0].Name, v.Series[1].Name, v.Series[2].Name})
	for _, s := range v.Series {
		assert.Len(t, s.Y, 12)
	}
	assert.True(t, math.IsNaN(v.Series[2].Y[0]), "absent before it existed")
	assert.False(t, math.IsNaN(v.Series[2].Y[6]))
	assert.Nil(t, v.Runs[0].Changed)
	assert.Equal(t, []string{"qrels"}, v.Runs[4].Changed)
	assert.Nil(t, v.Runs[5].Changed)

	_, err = view(t, []history.Record{{Command: "compare", Document: json.RawMessage(`[1]`), Line: 7}}, "compare", "dcg_at_k")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "h.jsonl:7: the document is not an object")
}

func historyPage(t testing.TB, recs []history.Record) []byte {
	t.Helper()
	v, err := view(t, recs, "compare", "dcg_at_k")
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, rhtml.History(&b, v))
	return b.Bytes()
}

func TestHistoryGolden(t *testing.T) {
	got := historyPage(t, compareRuns(12, []string{"bm25", "hybrid", "new"}, map[int]bool{4: true, 9: true}, 3))
	golden(t, "history-compare.html", got)
	assert.NotContains(t, string(got), "NaN")
}

// DCG@k over the runs carries its maximum: one for every run in the title and
// the axis; when a run's record does not tell it (no relevance scale, before
// max_dcg_at_k) or the runs differ, each point gives its own and the title says so.
func TestHistoryDCGScale(t *testing.T) {
	recs := compareRuns(4, []string{"bm25"}, nil, 0)
	page := string(historyPage(t, recs))
	assert.Contains(t, page, "measure DCG@10 (of 31.805)</p>")
	assert.Contains(t, page, "<h2>DCG@10 (of 31.805) over the runs</h2>")
	assert.Contains(t, page, `transform="rotate(-90 14 117)">DCG@10 (of 31.805)</text>`)
	assert.Equal(t, 3*4, strings.Count(page, " of 31.805 (95% CI "), "every point, in each drawing with hover text")

	// The first run recorded without a relevance scale nor max_dcg_at_k.
	var d map[string]any
	require.NoError(t, json.Unmarshal(recs[0].Document, &d))
	delete(d, "relevance_scale")
	recs[0].Document, _ = json.Marshal(d)
	page = string(historyPage(t, recs))
	assert.Contains(t, page, "<h2>DCG@10 ("+rhtml.MixedMaxNote+") over the runs</h2>")
	assert.Contains(t, page, "run 2026-01-01 0000000: 0.500, max unknown (95% CI ")
	assert.Equal(t, 3*3, strings.Count(page, " of 31.805 (95% CI "))
}

// Runs that published their report (a history on a branch) link to it; a
// report value that is not reports/NAME.html is never a link.
func TestHistoryReportLinks(t *testing.T) {
	recs := compareRuns(3, []string{"bm25"}, nil, 0)
	plain := string(historyPage(t, recs))
	assert.NotContains(t, plain, "<th scope=\"col\">report</th>", "no report column without reports")

	recs[0].Report = "reports/20260101T000000Z-000000000000-compare.html"
	recs[2].Report = "javascript:alert(1)"
	v, err := view(t, recs, "compare", "dcg_at_k")
	require.NoError(t, err)
	assert.Equal(t, "reports/20260101T000000Z-000000000000-compare.html", v.Runs[0].Report)
	assert.Empty(t, v.Runs[2].Report)
	var b bytes.Buffer
	require.NoError(t, rhtml.History(&b, v))
	page := b.String()
	assert.Contains(t, page, "<th scope=\"col\">report</th>")
	assert.Contains(t, page, `<a href="reports/20260101T000000Z-000000000000-compare.html">report</a>`)
	assert.Equal(t, 1, strings.Count(page, "<a href="))
	assert.NotContains(t, page, "javascript:")
}

// 30 runs × 3 strategies (one from run 16 on): 3 lines, 75 points, 2 markers,
// bands, no overflow.
func TestHistoryInBrowser(t *testing.T) {
	t.Parallel()
	b := browsertest.Start(t)
	path := filepath.Join(t.TempDir(), "history.html")
	require.NoError(t, os.WriteFile(path, historyPage(t, compareRuns(30, []string{"bm25", "hybrid", "new"}, map[int]bool{10: true, 20: true}, 0)), 0o644))
	browsertest.Check(t, b, browsertest.Page{Name: "history", Path: path, Widths: []int{390, 850, 1400}, Marks: map[string]int{
		`path[data-mark="line"]`:    3,
		`circle[data-mark="point"]`: 30 + 30 + 15,
		`line[data-mark="marker"]`:  2,
		`path[data-mark="band"]`:    3,
	}})
}

// BenchmarkHistory reads a history file of 1,000 compare runs × 8 strategies
// and renders the page; html-bytes is its size. small: documents of ~3 KB;
// large: each document lists 1,000 failed queries per strategy (~90 KB).
func BenchmarkHistory(b *testing.B) {
	names := []string{"bm25", "bm25+rerank", "dense", "dense+rerank", "hybrid", "hybrid+rerank", "splade", "splade+rerank"}
	for _, c := range []struct {
		name string
		pad  int
	}{{"small", 0}, {"large", 1000}} {
		b.Run(c.name, func(b *testing.B) {
			file := filepath.Join(b.TempDir(), "history.jsonl")
			for _, r := range compareRuns(1000, names, map[int]bool{100: true, 500: true, 900: true}, c.pad) {
				require.NoError(b, appendRecord(file, r))
			}
			st, _ := os.Stat(file)
			var size countWriter
			for b.Loop() {
				hb := rhtml.NewHistory(file, "compare", "dcg_at_k")
				if err := history.Scan(context.Background(), file, hb.Add); err != nil {
					b.Fatal(err)
				}
				size = countWriter{}
				if err := rhtml.History(&size, hb.View()); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(size.n), "html-bytes")
			b.ReportMetric(float64(st.Size()), "history-bytes")
		})
	}
}

// overRuns is the compare demo's dashboard view over runs: n earlier runs of
// the demo's strategies (the qrels relabelled at the runs in relabel), then the
// demo itself as this run, as the compare command builds it.
func overRuns(t testing.TB, r *compare.Result, n int, relabel map[int]bool) *rhtml.HistoryView {
	t.Helper()
	recs := compareRuns(n, demoStrategies, relabel, 0)
	var doc bytes.Buffer
	require.NoError(t, comparereport.New(r).WriteJSON(&doc))
	last := recs[len(recs)-1]
	recs = append(recs, history.Record{Schema: history.Schema, Command: "compare", Commit: strings.Repeat("f", 40), Branch: "feature",
		Time: "2026-03-01T00:00:00Z", Document: doc.Bytes(), Fingerprint: last.Fingerprint})
	v, err := view(t, recs, "compare", "dcg_at_k")
	require.NoError(t, err)
	v.Branch = "main"
	return &v
}

func renderOver(t testing.TB, r *compare.Result, over *rhtml.HistoryView) []byte {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, rhtml.CompareHTML(&b, comparereport.New(r), r, over))
	return b.Bytes()
}

// With a history the dashboard charts DCG@10 over the runs, this run the
// newest point, with the history page's chart (one line per strategy, bands,
// the relabelled run marked); with no earlier run, or an unreadable history,
// one line says so.
func TestCompareDashboardOverRuns(t *testing.T) {
	r := demoResult(t)
	got := renderOver(t, r, overRuns(t, r, 8, map[int]bool{3: true}))
	golden(t, "compare-history.html", got)
	s := string(got)
	assert.Contains(t, s, "<h2>Over the runs</h2>")
	assert.Contains(t, s, "<title>inputs changed: qrels</title>")
	// The primary measure's chart; the script draws another chosen in
	// "Select metric" from the embedded data.
	assert.Equal(t, 1, strings.Count(s, `<div id="rg-over">`))
	assert.Equal(t, 1, strings.Count(s, `data-mark="marker"`))
	assert.Equal(t, len(demoStrategies), strings.Count(s, `data-mark="band"`))
	assert.Contains(t, s, "<figcaption id=\"chart11-t\">DCG@10 (of 31.805) per run (95% CI bands; dashed vertical lines: inputs changed)</figcaption>")
	assert.Contains(t, s, ": 0.500 of 31.805 (95% CI 0.470–0.530), n = 300 · 0000000</title>")
	assert.NotContains(t, s, "dcg_at_k per run")
	assert.NotContains(t, s, "NaN")
	plain := string(render(t, r))
	assert.NotContains(t, plain, "<h2>Over the runs</h2>", "no history, no section")
	assert.NotContains(t, plain, `id="rg-over"`)

	first := overRuns(t, r, 1, nil)
	first.Runs, first.Series = first.Runs[1:], nil // this run alone
	s = string(renderOver(t, r, first))
	assert.Contains(t, s, "<p>No earlier run of compare in the history h.jsonl on main: this run is the first point of the chart.</p>")
	assert.Equal(t, 0, strings.Count(s, `data-mark="marker"`))

	s = string(renderOver(t, r, &rhtml.HistoryView{Command: "evaluate", Measure: "dcg_at_k", Unread: "GitHub answered <503>"}))
	assert.Contains(t, s, "<p>The history could not be read (GitHub answered &lt;503&gt;): no chart over the runs.</p>")
}

// Newest keeps the newest runs of each series and drops a series with no
// value left.
func TestHistoryViewNewest(t *testing.T) {
	v, err := view(t, compareRuns(10, []string{"bm25", "new"}, map[int]bool{7: true}, 0), "compare", "dcg_at_k")
	require.NoError(t, err)
	n := v.Newest(4)
	require.Len(t, n.Runs, 4)
	assert.Equal(t, v.Runs[6:], n.Runs)
	require.Len(t, n.Series, 2)
	assert.Equal(t, v.Series[0].Y[6:], n.Series[0].Y)
	assert.Equal(t, []string{"qrels"}, n.Runs[1].Changed)
	assert.Len(t, v.Newest(3).Series, 2)
	assert.Equal(t, v, v.Newest(10))
	nan := math.NaN()
	gone := rhtml.HistoryView{Runs: make([]rhtml.RunView, 3), Series: []rhtml.SeriesView{
		{Name: "old", Y: []float64{1, nan, nan}, Lo: []float64{0, nan, nan}, Hi: []float64{2, nan, nan}, N: []int{5, 0, 0}},
		{Name: "kept", Y: []float64{1, 2, 3}, Lo: []float64{0, 1, 2}, Hi: []float64{2, 3, 4}, N: []int{5, 5, 5}}}}
	last := gone.Newest(2)
	require.Len(t, last.Series, 1, "a strategy with no value in the newest runs has no line")
	assert.Equal(t, "kept", last.Series[0].Name)
	assert.Equal(t, []float64{2, 3}, last.Series[0].Y)
}

// The dashboard with its chart over the runs, in Chromium: 9 runs × 5
// strategies more points, 5 more lines, their bands, the one marker, no
// overflow at a phone's, the comment column's and a desktop's width (one
// value undefined: no point, a row "—" with its n in the table); the table the
// script redraws is the page's, n and all.
func TestCompareDashboardOverRunsInBrowser(t *testing.T) {
	t.Parallel()
	b := browsertest.Start(t)
	r := demoResult(t)
	path := filepath.Join(t.TempDir(), "compare-history.html")
	ov := overRuns(t, r, 8, map[int]bool{3: true})
	// Run 3's DCG@10 of the first strategy undefined (null, n 300): "—" with its n.
	name := ov.Series[0].Name
	ov.Series[0].Y[2], ov.Series[0].Lo[2], ov.Series[0].Hi[2] = math.NaN(), math.NaN(), math.NaN()
	pt := ov.Runs[2].Measures[name]["dcg_at_k"]
	pt.Mean, pt.Lo, pt.Hi = math.NaN(), math.NaN(), math.NaN()
	ov.Runs[2].Measures[name]["dcg_at_k"] = pt
	page := renderOver(t, r, ov)
	require.NoError(t, os.WriteFile(path, page, 0o644))
	// The chart over the runs as the script redraws it: its table's rows, each
	// cell's text; the same as the page's own (each value with its n).
	// The bar chart's too (the page's has a column more: the category, the
	// strategy's row of bars).
	const script = `({over: [...document.querySelectorAll("#rg-over .sr-only tbody tr")].map((tr) => [...tr.children].map((c) => c.textContent)),
  bars: [...document.querySelectorAll("#rg-bars .sr-only tbody tr")].map((tr) => [...tr.children].map((c) => c.textContent))})`
	figure := func(id string) [][]string {
		_, s, ok := strings.Cut(string(page), `<div id="`+id+`">`)
		require.True(t, ok)
		s, _, ok = strings.Cut(s, "</figure>")
		require.True(t, ok)
		return srRows(s)
	}
	want, bars := figure("rg-over"), figure("rg-bars")
	require.Len(t, want, 5*9)
	assert.Contains(t, want, []string{name, "2026-01-03 0000000", "—", "", "300"})
	require.Len(t, bars, 5)
	for i, row := range bars {
		require.Len(t, row, 5)
		bars[i] = row[1:] // the strategy, its value, interval and n
	}
	ms := browsertest.Check(t, b, browsertest.Page{Name: "compare-dashboard-history", Path: path, Widths: []int{390, 850, 1400}, Shots: []int{1400}, Script: script, Marks: map[string]int{
		`rect[data-mark="bar"]`:     5,
		`path[data-mark="line"]`:    5 + 5 + 8*5, // over the runs, and each run's relevance by position (8 earlier runs' hidden)
		`circle[data-mark="point"]`: 50 + 5*9 - 1,
		`line[data-mark="marker"]`:  1,
		`path[data-mark="band"]`:    5,
		`.sr-only table`:            3 + 8,
		`line[data-mark="chosen"]`:  1,
	}})
	for _, m := range ms {
		var got struct{ Over, Bars [][]string }
		require.NoError(t, json.Unmarshal(m.Result, &got))
		assert.ElementsMatch(t, want, got.Over, "the redrawn table is the page's, n and all")
		assert.ElementsMatch(t, bars, got.Bars, "the redrawn bars' table is the page's")
	}
}

// checkRuns is a history of n check runs; the runs in withBaseline compared
// with a baseline (their documents have the baseline section, with the delta
// of hit per group), the runs in failing failed min_hit and max_drop_hit.
func checkRuns(n int, withBaseline, failing map[int]bool) []history.Record {
	var recs []history.Record
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		hit := 0.8 - 0.01*float64(i)
		group := func(m float64) map[string]any {
			return map[string]any{"n": 120, "metrics": map[string]any{"retrieval_hit_at_k": map[string]any{"mean": m, "ci95": []float64{m - 0.05, m + 0.05}}}}
		}
		verdict, gates := "pass", []any{map[string]any{"name": "integrity", "status": "pass"}}
		if failing[i] {
			verdict = "fail"
			gates = append(gates, map[string]any{"name": "min_hit", "group": "overall", "status": "fail"}, map[string]any{"name": "max_drop_hit", "status": "fail"})
		}
		doc := map[string]any{"schema": "retrieval-gate/aggregates@1", "verdict": verdict, "gates": gates, "overall": group(hit),
			"by_type": map[string]any{"golden": group(hit + 0.05)}, "by_locale": map[string]any{}}
		if withBaseline[i] {
			d := -0.02 * float64(i%3)
			paired := func(n int) map[string]any {
				return map[string]any{"n": n, "metrics": map[string]any{"retrieval_hit_at_k": map[string]any{"delta": d, "ci95": []float64{d - 0.04, d + 0.04}, "n": n}}}
			}
			doc["baseline"] = map[string]any{"overall": paired(110), "by_type": map[string]any{"golden": paired(60)}, "by_locale": map[string]any{}}
		}
		raw, _ := json.Marshal(doc)
		fp := history.Fingerprint{Digest: "d", Inputs: map[string]string{"kb": "sha256:k"}}
		recs = append(recs, history.Record{Schema: history.Schema, Command: "check", Commit: fmt.Sprintf("%040x", i+1), Branch: "main",
			Time: t0.Add(time.Duration(i) * 24 * time.Hour).Format(time.RFC3339), Document: raw, Fingerprint: fp, Line: i + 1})
	}
	return recs
}

// check's history charts the baseline deltas (delta:KEY), with a gap for the
// runs without a baseline, and lists each run's failed gates.
func TestHistoryCheckDeltasAndFailedGates(t *testing.T) {
	recs := checkRuns(6, map[int]bool{1: true, 2: true, 4: true, 5: true}, map[int]bool{2: true})
	v, err := view(t, recs, "check", "delta:retrieval_hit_at_k")
	require.NoError(t, err)
	require.Len(t, v.Series, 2)
	assert.Equal(t, "overall", v.Series[0].Name)
	assert.Equal(t, "type: golden", v.Series[1].Name)
	o := v.Series[0]
	assert.True(t, math.IsNaN(o.Y[0]), "no baseline: a gap")
	assert.True(t, math.IsNaN(o.Y[3]))
	assert.InDelta(t, -0.04, o.Y[2], 1e-12)
	assert.InDelta(t, -0.08, o.Lo[2], 1e-12)
	assert.Equal(t, 110, o.N[2], "the paired n")
	assert.Equal(t, 60, v.Series[1].N[4])
	assert.Equal(t, []string{"min_hit", "max_drop_hit"}, v.Runs[2].FailedGates)
	assert.Nil(t, v.Runs[1].FailedGates)

	var b bytes.Buffer
	require.NoError(t, rhtml.History(&b, v))
	page := b.String()
	assert.Contains(t, page, `<th scope="col">failed gates</th>`)
	assert.Contains(t, page, `<td data-label="failed gates"><span class="cv">min_hit, max_drop_hit</span></td>`)
	assert.Contains(t, page, "delta:retrieval_hit_at_k per run")
	assert.NotContains(t, page, "NaN")

	// The plain measure is unchanged by the baseline section; compare's runs
	// have no delta and no failed-gates column without a failed gate.
	plain, err := view(t, recs, "check", "retrieval_hit_at_k")
	require.NoError(t, err)
	assert.InDelta(t, 0.78, plain.Series[0].Y[2], 1e-12)
	none, err := view(t, checkRuns(3, nil, nil), "check", "delta:retrieval_hit_at_k")
	require.NoError(t, err)
	assert.Empty(t, none.Series, "no run with a baseline: nothing to chart")
	cmp, err := view(t, compareRuns(3, []string{"bm25"}, nil, 0), "compare", "delta:dcg_at_k")
	require.NoError(t, err)
	assert.Empty(t, cmp.Series)
	assert.NotContains(t, string(historyPage(t, compareRuns(3, []string{"bm25"}, nil, 0))), "failed gates")
}

// The check history of deltas in Chromium: 2 lines of 4 points (two runs
// without a baseline), their bands, the failed-gates column fits at 390 px.
func TestHistoryCheckDeltasInBrowser(t *testing.T) {
	t.Parallel()
	b := browsertest.Start(t)
	v, err := view(t, checkRuns(6, map[int]bool{1: true, 2: true, 4: true, 5: true}, map[int]bool{2: true, 5: true}), "check", "delta:retrieval_hit_at_k")
	require.NoError(t, err)
	var page bytes.Buffer
	require.NoError(t, rhtml.History(&page, v))
	path := filepath.Join(t.TempDir(), "history-check.html")
	require.NoError(t, os.WriteFile(path, page.Bytes(), 0o644))
	browsertest.Check(t, b, browsertest.Page{Name: "history-check-deltas", Path: path, Widths: []int{390, 850, 1400}, Shots: []int{850}, Marks: map[string]int{
		`path[data-mark="line"]`:    2,
		`circle[data-mark="point"]`: 8,
		`line[data-mark="marker"]`:  0,
	}})
}

// bigHistory is a view of n compare runs × the strategies, built directly (the
// reader is not what is measured): inputs change every 997 runs.
func bigHistory(n int, strategies []string) rhtml.HistoryView {
	v := rhtml.HistoryView{Command: "compare", Measure: "dcg_at_k", File: "h.jsonl"}
	t0 := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		r := rhtml.RunView{Time: t0.Add(time.Duration(i) * time.Hour).Format(time.RFC3339), Commit: fmt.Sprintf("%040x", i+1), Branch: "main",
			Headline: strategies[0], Line: i + 1}
		if i > 0 && i%997 == 0 {
			r.Changed = []string{"qrels"}
		}
		v.Runs = append(v.Runs, r)
	}
	for j, s := range strategies {
		sv := rhtml.SeriesView{Name: s}
		for i := range n {
			m := 0.5 + 0.04*float64(j) + 0.02*math.Sin(float64(i+j)/3)
			sv.Y, sv.Lo, sv.Hi, sv.N = append(sv.Y, m), append(sv.Lo, m-0.03), append(sv.Hi, m+0.03), append(sv.N, 300)
		}
		v.Series = append(v.Series, sv)
	}
	return v
}

// The page stays under 5 MB at any history length: 50,000 runs × 8
// strategies (9 MB at 5,000 runs before the chart was bounded; 2.65 MB with
// the summarised points' intervals and commits; 3.3 MB with the chart also
// drawn narrow for a phone).
func TestHistoryPageBounded(t *testing.T) {
	names := []string{"bm25", "bm25+rerank", "dense", "dense+rerank", "hybrid", "hybrid+rerank", "splade", "splade+rerank"}
	for _, c := range []struct {
		runs       int
		strategies []string
	}{{50000, names}, {50000, names[:1]}, {5000, names}, {5000, names[:1]}, {1000, names}} {
		var b countWriter
		require.NoError(t, rhtml.History(&b, bigHistory(c.runs, c.strategies)))
		assert.Less(t, b.n, int64(5_000_000), "%d runs × %d strategies: %d bytes", c.runs, len(c.strategies), b.n)
		t.Logf("%d runs × %d strategies: %d bytes", c.runs, len(c.strategies), b.n) // the sizes docs/history.md gives
	}
}

// HistoryPage reads the history under its caller's context: a page made for
// the history branch stops when the run is signalled (or the branch write's
// timeout ends).
func TestHistoryPageStopsWithContext(t *testing.T) {
	h := []byte(`{"branch":"main","command":"check","commit":"c","document":{"overall":{"n":2,"metrics":{"retrieval_hit_at_k":{"mean":0.5,"n":2,"ci95":[0.1,0.9]}}}},"schema":"retrieval-gate/history@1","time":"2026-01-01T00:00:00Z"}` + "\n")
	page, err := rhtml.HistoryPage(context.Background(), h)
	require.NoError(t, err)
	assert.Contains(t, string(page), "<html")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	page, err = rhtml.HistoryPage(ctx, h)
	require.ErrorIs(t, err, context.Canceled)
	assert.Nil(t, page)
}

// ChartView keeps a short history as it is and summarises the older runs of a
// long one: the newest in full, one point per group of older runs (the last
// of the group, no interval, the group's input changes on it).
func TestHistoryChartView(t *testing.T) {
	short := bigHistory(300, []string{"a", "b"})
	cv, full, older, step := short.ChartView()
	assert.Equal(t, short, cv)
	assert.Equal(t, []int{300, 0, 1}, []int{full, older, step})

	names := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	v := bigHistory(50000, names)
	cv, full, older, step = v.ChartView()
	require.Equal(t, 500, full) // 4,000 points / 8 series
	require.Equal(t, 50000-500, older)
	require.Equal(t, 396, step) // 125 older points at most
	summarised := (older + step - 1) / step
	require.Len(t, cv.Runs, summarised+full)
	assert.Equal(t, v.Runs[len(v.Runs)-full:], cv.Runs[summarised:], "the newest runs in full")
	for j, s := range cv.Series {
		require.Len(t, s.Y, len(cv.Runs))
		// A summarised point is its group's last run: its value, interval and n.
		assert.Equal(t, []float64{v.Series[j].Y[step-1], v.Series[j].Lo[step-1], v.Series[j].Hi[step-1]}, []float64{s.Y[0], s.Lo[0], s.Hi[0]}, "a summarised point keeps its run's interval")
		assert.False(t, math.IsNaN(s.Lo[summarised]), "intervals on the full runs")
	}
	assert.Equal(t, v.Runs[step-1].Commit, cv.Runs[0].Commit, "and its commit")
	// The first group is runs 1..396 (the last of them charted); run 998
	// (index 997) changed its inputs: the group of runs 793..1188 carries it.
	assert.Equal(t, v.Runs[step-1].Line, cv.Runs[0].Line)
	assert.Nil(t, cv.Runs[0].Changed)
	assert.Equal(t, []string{"qrels"}, cv.Runs[997/step].Changed)
	assert.Equal(t, v.Series[0].Y[2*step-1], cv.Series[0].Y[1])
}

// The page of 50,000 runs renders: every line, the bands, no overflow. A
// pointer on the first point of a line (a summarised one: the runs 1–74)
// hovers a point whose tooltip gives what the summary keeps: the charted
// run's value, 95% interval, n and commit, and the runs the point stands for.
func TestHistoryBoundedInBrowser(t *testing.T) {
	t.Parallel()
	b := browsertest.Start(t)
	path := filepath.Join(t.TempDir(), "history.html")
	v := bigHistory(50000, []string{"bm25", "hybrid", "dense"})
	for i := range v.Runs {
		v.Runs[i].Commit = fmt.Sprintf("c%06d", i+1) + strings.Repeat("0", 33)
	}
	var page bytes.Buffer
	require.NoError(t, rhtml.History(&page, v))
	require.NoError(t, os.WriteFile(path, page.Bytes(), 0o644))
	// The tooltip a pointer at the centre of each line's first point shows:
	// the <title> of the element under it, or of its nearest ancestor with
	// one; none where the chart is drawn narrow (a phone's: no pointer
	// hovers, and the narrow drawing carries no hover text).
	const hover = `(() => {
  const svg = [...document.querySelectorAll("figure.chart svg")].find((s) => s.getClientRects().length > 0);
  if (svg.classList.contains("narrow")) return svg.querySelector("title") ? null : [];
  const lines = [...svg.querySelectorAll("path.line")].map((p) => p.querySelector("title").textContent);
  return lines.map((name) => {
    const pt = [...svg.querySelectorAll("circle.pt")].find((c) => c.querySelector("title").textContent.startsWith(name + " · "));
    pt.scrollIntoView({block: "center"});
    const r = pt.getBoundingClientRect();
    let el = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    while (el && ![...el.children].some((k) => k.tagName === "title")) el = el.parentElement;
    return {name, tip: el ? [...el.children].find((k) => k.tagName === "title").textContent : null};
  });
})()`
	// 1,000 full runs (4,000 points / 3 series, capped); the 49,000 older in
	// groups of 148 (333 points at most): 332 points.
	ms := browsertest.Check(t, b, browsertest.Page{Name: "history-bounded", Path: path, Widths: []int{390, 1400}, Shots: []int{390}, Script: hover, Marks: map[string]int{
		`path[data-mark="line"]`:    3,
		`circle[data-mark="point"]`: 3 * (1000 + 332),
		`path[data-mark="band"]`:    3,
	}})
	assert.Equal(t, "bm25 · run "+v.Runs[147].Time[:10]+" c000148: "+rhtml.Fmt(v.Series[0].Y[147])+", max unknown (95% CI "+rhtml.FmtCI([2]float64{v.Series[0].Lo[147], v.Series[0].Hi[147]})+"), n = 300 · c000148 · the last of runs #1–#148",
		firstTip(t, page.String(), "bm25"), "the first point's own tooltip")
	for _, m := range ms {
		var got []struct{ Name, Tip string }
		require.NoError(t, json.Unmarshal(m.Result, &got))
		if m.Width == 390 {
			assert.NotNil(t, got, "the narrow drawing carries no hover text")
			assert.Empty(t, got, "drawn narrow at 390 px")
			continue
		}
		require.Len(t, got, 3)
		for _, g := range got {
			// Points overlap at this density: the pointer hovers the
			// topmost there, a point of the same line among the first groups.
			assert.Regexp(t, `^`+g.Name+` · run \d{4}-\d\d-\d\d c\d{6}: 0\.\d{3}, max unknown \(95% CI 0\.\d{3}–0\.\d{3}\), n = 300 · c\d{6} · the last of runs #\d+–#\d+$`, g.Tip, "width %d", m.Width)
		}
	}
}

// firstTip is the tooltip of the first point of the named line on a page.
func firstTip(t *testing.T, page, name string) string {
	t.Helper()
	m := regexp.MustCompile(`<circle data-mark="point"[^>]*><title>(` + regexp.QuoteMeta(name) + ` · [^<]*)</title>`).FindStringSubmatch(page)
	require.NotNil(t, m, name)
	return m[1]
}

// HistoryOf picks the newest run's command and that command's default measure
// when none is asked for, and says why a history cannot be charted.
func TestHistoryOf(t *testing.T) {
	compareRecs := compareRuns(3, []string{"bm25", "hybrid"}, nil, 0)
	scanOf := func(recs []history.Record) func(func(history.Record, *fastjson.Value) error) error {
		return func(fn func(history.Record, *fastjson.Value) error) error {
			var p fastjson.Parser
			for _, r := range recs {
				doc, err := p.ParseBytes(r.Document)
				if err != nil {
					return err
				}
				if err := fn(r, doc); err != nil {
					return err
				}
			}
			return nil
		}
	}
	for _, tt := range []struct {
		name                  string
		recs                  []history.Record
		command, measure      string
		wantCommand, wantMeas string
		runs                  int
		wantErr               string
	}{
		{name: "newest run's command, its default", recs: compareRecs, wantCommand: "compare", wantMeas: "dcg_at_k", runs: 3},
		{name: "measure asked for", recs: compareRecs, measure: "ndcg_at_k", wantCommand: "compare", wantMeas: "ndcg_at_k", runs: 3},
		{name: "command with no run", recs: compareRecs, command: "check", wantCommand: "check", wantMeas: "retrieval_hit_at_k"},
		{name: "empty history", wantErr: "h.jsonl: the history has no run"},
		{name: "newest of an unknown command", recs: append(compareRecs[:3:3], history.Record{Command: "judge", Document: json.RawMessage(`{}`)}),
			wantErr: `h.jsonl: the newest run is of an unknown command "judge"`},
		{name: "unknown command", recs: compareRecs, command: "judge", wantErr: `no history of command "judge"`},
		{name: "no run has the measure", recs: compareRecs, measure: "nope", wantErr: `report: no run of compare in h.jsonl has the measure "nope"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v, err := rhtml.HistoryOf("h.jsonl", scanOf(tt.recs), tt.command, tt.measure)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantCommand, v.Command)
			assert.Equal(t, tt.wantMeas, v.Measure)
			assert.Len(t, v.Runs, tt.runs)
		})
	}
}

func TestDefaultMeasure(t *testing.T) {
	assert.Equal(t, "retrieval_hit_at_k", rhtml.DefaultMeasure("check"))
	assert.Equal(t, "dcg_at_k", rhtml.DefaultMeasure("compare"))
	assert.Equal(t, "dcg_at_k", rhtml.DefaultMeasure("evaluate"))
	assert.Empty(t, rhtml.DefaultMeasure("judge"))
}

// appendRecord is history.AppendUndo without its warning and undo.
func appendRecord(path string, rec history.Record) error {
	_, err := appendWarn(context.Background(), path, rec)
	return err
}

func TestHistorySummary(t *testing.T) {
	v := rhtml.HistoryView{Command: "check", Measure: "retrieval_hit_at_k", Runs: []rhtml.RunView{{}, {Changed: []string{"kb"}}}, Series: []rhtml.SeriesView{{}}}
	assert.Equal(t, "retrieval-gate report: 2 runs of check, 1 series of retrieval_hit_at_k, 1 input change -> h.html", v.Summary("h.html"))
}

// The chart's table gives every run's value its n: a value undefined in a run
// (null with its n) is "—" with that n; a run without the series has no row.
// Older runs summarised on a long history keep their n.
func TestHistoryTableN(t *testing.T) {
	nan := math.NaN()
	v := rhtml.HistoryView{Command: "compare", Measure: "dcg_at_k", File: "h.jsonl", Runs: []rhtml.RunView{
		{Time: "2026-01-01T00:00:00Z", Commit: strings.Repeat("a", 40)}, {Time: "2026-01-02T00:00:00Z", Commit: strings.Repeat("b", 40)},
		{Time: "2026-01-03T00:00:00Z", Commit: strings.Repeat("c", 40)}},
		Series: []rhtml.SeriesView{
			{Name: "bm25", Y: []float64{0.5, nan, 0.25}, Lo: []float64{0.4, nan, nan}, Hi: []float64{0.6, nan, nan}, N: []int{1200, 7, 3}},
			{Name: "new", Y: []float64{nan, nan, 0.75}, Lo: []float64{nan, nan, 0.7}, Hi: []float64{nan, nan, 0.8}, N: []int{0, 0, 40}},
		}}
	var b bytes.Buffer
	require.NoError(t, rhtml.History(&b, v))
	s := b.String()
	assert.Contains(t, s, `<th scope="col">95% CI</th><th scope="col">n</th></tr></thead>`)
	assert.Equal(t, [][]string{
		{"bm25", "2026-01-01 aaaaaaa", "0.500", "0.400–0.600", "1,200"}, {"bm25", "2026-01-02 bbbbbbb", "—", "", "7"}, {"bm25", "2026-01-03 ccccccc", "0.250", "", "3"},
		{"new", "2026-01-03 ccccccc", "0.750", "0.700–0.800", "40"},
	}, srRows(s))

	long := bigHistory(50000, []string{"bm25"})
	for i := range long.Series[0].N {
		long.Series[0].N[i] = 1000 + i
	}
	cv, _, older, step := long.ChartView()
	require.Positive(t, older)
	assert.Equal(t, long.Series[0].N[step-1], cv.Series[0].N[0], "a summarised point keeps the n of the run it charts")
	b.Reset()
	require.NoError(t, rhtml.History(&b, long))
	rows := srRows(b.String())
	require.Len(t, rows, len(cv.Runs), "a row per point drawn, summarised or not")
	for k, row := range rows {
		require.Len(t, row, 5)
		assert.Equal(t, rhtml.Count(cv.Series[0].N[k]), row[4], "%v", row)
	}
}

// A measure's n is its own (the cases its mean is over: a group's cases
// without gold are not in hit@k), the group's only in a document whose
// measures carry none.
func TestHistoryMeasureN(t *testing.T) {
	recs := checkRuns(2, nil, nil)
	doc := map[string]any{"schema": "retrieval-gate/aggregates@1", "verdict": "pass", "overall": map[string]any{"n": 120, "without_gold": 20,
		"metrics": map[string]any{"retrieval_hit_at_k": map[string]any{"mean": 0.75, "ci95": []float64{0.7, 0.8}, "n": 100}}}}
	raw, err := json.Marshal(doc)
	require.NoError(t, err)
	recs[1].Document = raw
	v, err := view(t, recs, "check", "retrieval_hit_at_k")
	require.NoError(t, err)
	require.NotEmpty(t, v.Series)
	assert.Equal(t, "overall", v.Series[0].Name)
	assert.Equal(t, []int{120, 100}, v.Series[0].N, "the group's n where the measure has none; the measure's own")
	var b bytes.Buffer
	require.NoError(t, rhtml.History(&b, v))
	assert.Contains(t, b.String(), "run 2026-01-02 0000000: 0.750 (95% CI 0.700–0.800), n = 100 · ")
	assert.Contains(t, srRows(b.String()), []string{"overall", "2026-01-02 0000000", "0.750", "0.700–0.800", "100"})
}

// appendWarn is history.AppendUndo without its undo.
func appendWarn(ctx context.Context, path string, rec history.Record) (string, error) {
	w, _, err := history.AppendUndo(ctx, path, rec)
	return w, err
}

// A long history at two cutoffs: the summarised chart keeps a line per k,
// each named with its k, as the full one does (hit@5 and hit@10 are never
// one line, nor two lines of one name).
func TestHistoryChartViewKeepsK(t *testing.T) {
	v := bigHistory(5000, []string{"overall", "overall"})
	for i := range v.Runs {
		v.Runs[i].K = 5
		if i >= 2500 {
			v.Runs[i].K = 10
		}
	}
	v.Measure, v.Command, v.K = "retrieval_hit_at_k", "check", 10
	v.Series[0].K, v.Series[1].K = 5, 10
	for i := range v.Runs { // each line only where its runs are
		j := 1
		if i >= 2500 {
			j = 0
		}
		v.Series[j].Y[i], v.Series[j].Lo[i], v.Series[j].Hi[i], v.Series[j].N[i] = math.NaN(), math.NaN(), math.NaN(), 0
	}
	cv, _, older, _ := v.ChartView()
	require.Positive(t, older, "summarised")
	require.Len(t, cv.Series, 2)
	assert.Equal(t, []int{5, 10}, []int{cv.Series[0].K, cv.Series[1].K})
	assert.Equal(t, "overall · k=5", cv.SeriesName(cv.Series[0]))
	assert.Equal(t, "overall · k=10", cv.SeriesName(cv.Series[1]))
	var b bytes.Buffer
	require.NoError(t, rhtml.History(&b, v))
	assert.Contains(t, b.String(), "overall · k=5")
	assert.Contains(t, b.String(), "overall · k=10")
}

// Runs at two cutoffs: each series names its k, and the page's title, section
// and chart name none ("hit@k"), not the newest run's (hit@2 over a k=5 line).
func TestHistoryMixedKLabel(t *testing.T) {
	v := rhtml.HistoryView{Command: "check", Measure: "retrieval_hit_at_k", File: "h.jsonl", K: 2, Runs: []rhtml.RunView{
		{Time: "2026-01-01T00:00:00Z", Commit: strings.Repeat("a", 40), K: 5},
		{Time: "2026-01-02T00:00:00Z", Commit: strings.Repeat("b", 40), K: 2, Changed: []string{"--k"}}},
		Series: []rhtml.SeriesView{
			{Name: "overall", Y: []float64{0.742, math.NaN()}, Lo: []float64{0.658, math.NaN()}, Hi: []float64{0.813, math.NaN()}, N: []int{132, 0}, K: 5},
			{Name: "overall", Y: []float64{math.NaN(), 0.924}, Lo: []float64{math.NaN(), 0.862}, Hi: []float64{math.NaN(), 0.961}, N: []int{0, 132}, K: 2},
		}}
	var b bytes.Buffer
	require.NoError(t, rhtml.History(&b, v))
	s := b.String()
	assert.Contains(t, s, "· measure hit@k")
	assert.Contains(t, s, "hit@k over the runs")
	assert.Contains(t, s, "overall · k=5")
	assert.NotContains(t, s, "hit@2", "the newest run's k names no other run's series")
	assert.NotContains(t, s, "hit@5")
	// The older cutoff's series is dotted, in its legend and its line, so
	// that two series of one name never look alike; both in the group's
	// colour.
	assert.Contains(t, s, `<li><span class="sw c0 ln dotted"></span>overall · k=5</li>`)
	assert.Contains(t, s, `<li><span class="sw c0 ln"></span>overall · k=2</li>`)
	assert.Contains(t, s, `class="line c0 dotted"`)

	v.Runs[0].K = 2
	v.Series = v.Series[1:]
	b.Reset()
	require.NoError(t, rhtml.History(&b, v))
	assert.Contains(t, b.String(), "· measure hit@2", "one cutoff: the label names it")
}

// More groups than colours: the ninth and on share a colour with an earlier
// one, and are dashed so that no two look alike.
func TestHistoryNinthSeriesDashed(t *testing.T) {
	v := rhtml.HistoryView{Command: "check", Measure: "retrieval_hit_at_k", File: "h.jsonl", K: 5, Runs: []rhtml.RunView{
		{Time: "2026-01-01T00:00:00Z", Commit: strings.Repeat("a", 40), K: 5},
		{Time: "2026-01-02T00:00:00Z", Commit: strings.Repeat("b", 40), K: 5}}}
	for i := range 10 {
		v.Series = append(v.Series, rhtml.SeriesView{Name: fmt.Sprintf("type: t%d", i), Y: []float64{0.5, 0.6}, Lo: []float64{0.4, 0.5}, Hi: []float64{0.6, 0.7}, N: []int{30, 30}, K: 5})
	}
	var b bytes.Buffer
	require.NoError(t, rhtml.History(&b, v))
	s := b.String()
	assert.Contains(t, s, `<li><span class="sw c0 ln"></span>type: t0</li>`)
	assert.Contains(t, s, `<li><span class="sw c0 ln dashed"></span>type: t8</li>`)
	assert.Contains(t, s, `<li><span class="sw c1 ln dashed"></span>type: t9</li>`)
	assert.Equal(t, 2, strings.Count(s, `data-mark="line" class="line c0`), "t0 and t8")
}

// swatchJS reads, for each legend of a line chart, each entry's swatch as
// drawn (its border and background as computed, colour included) and its
// line's (the wide drawing's stroke and dash pattern as computed).
const swatchJS = `(() => [...document.querySelectorAll("figure.chart")].filter((f) => f.querySelector(".legend")).map((f) => {
  const lines = {};
  for (const l of f.querySelectorAll("svg.wide path[data-mark=line]")) {
    const s = getComputedStyle(l);
    lines[l.querySelector("title").textContent] = [s.stroke, s.strokeDasharray].join(" | ");
  }
  return [...f.querySelectorAll(".legend li")].map((li) => {
    const s = getComputedStyle(li.querySelector(".sw"));
    return {name: li.textContent, swatch: [s.color, s.borderTopStyle, s.borderTopWidth, s.height, s.backgroundImage].join(" | "), line: lines[li.textContent]};
  });
}))()`

// A ninth group and on at an older k is drawn dashed and dotted (dash-dot),
// but its legend swatch was drawn dotted (the CSS rule of dotted came after
// dashed's and won): the same swatch as the first group at that k, in the
// same colour, for another line. In Chromium each legend entry's swatch now
// tells its line apart as the line does: two entries share a swatch exactly
// when their lines share a colour and a dash pattern.
func TestHistoryLegendSwatchDrawsItsLineInBrowser(t *testing.T) {
	t.Parallel()
	v := rhtml.HistoryView{Command: "check", Measure: "retrieval_hit_at_k", File: "h.jsonl", K: 2, Runs: []rhtml.RunView{
		{Time: "2026-01-01T00:00:00Z", Commit: strings.Repeat("a", 40), K: 5},
		{Time: "2026-01-02T00:00:00Z", Commit: strings.Repeat("b", 40), K: 2, Changed: []string{"--k"}}}}
	for i, k := range []int{5, 2} {
		for g := range 10 {
			y := []float64{math.NaN(), math.NaN()}
			y[i] = 0.5 + float64(g)/40
			n := []int{0, 0}
			n[i] = 40
			v.Series = append(v.Series, rhtml.SeriesView{Name: fmt.Sprintf("type: t%d", g), Y: y, Lo: y, Hi: y, N: n, K: k})
		}
	}
	var page bytes.Buffer
	require.NoError(t, rhtml.History(&page, v))
	require.Contains(t, page.String(), `<li><span class="sw c0 ln dashed dotted"></span>type: t8 · k=5</li>`, "the case: a ninth group at an older k")
	path := filepath.Join(t.TempDir(), "history.html")
	require.NoError(t, os.WriteFile(path, page.Bytes(), 0o644))
	b := browsertest.Start(t)
	for _, dark := range []bool{false, true} {
		ms := browsertest.Measures(t, b, browsertest.Page{Name: fmt.Sprintf("history-legend-dark-%v", dark), Path: path, Widths: []int{850}, Dark: dark, Script: swatchJS})
		for _, m := range ms {
			var figs [][]struct{ Name, Swatch, Line string }
			require.NoError(t, json.Unmarshal(m.Result, &figs))
			require.Len(t, figs, 1)
			require.Len(t, figs[0], 20)
			lineOf, swatchOf := map[string]string{}, map[string]string{}
			for _, e := range figs[0] {
				require.NotEmpty(t, e.Line, "%s: a line titled as its legend entry", e.Name)
				if other, ok := lineOf[e.Swatch]; ok {
					assert.Equal(t, other, e.Line, "dark %v: %s's swatch (%s) is another line's", dark, e.Name, e.Swatch)
				}
				if other, ok := swatchOf[e.Line]; ok {
					assert.Equal(t, other, e.Swatch, "dark %v: %s's line (%s) has two swatches", dark, e.Name, e.Line)
				}
				lineOf[e.Swatch], swatchOf[e.Line] = e.Line, e.Swatch
			}
			assert.Len(t, swatchOf, 20, "dark %v: twenty lines, each its own look", dark)
		}
	}
}

// The demo's check history after --k changes: six groups at k=5, then at
// k=2, twelve series. Each group keeps its colour (the older cutoff dotted),
// so no two legend entries look alike; colours taken by series index gave
// "overall · k=5" (the first colour, dotted for its older k) and
// "type: golden · k=2" (the ninth series: the first colour again, dotted)
// one look.
func TestHistoryMixedKSeriesDistinct(t *testing.T) {
	v := rhtml.HistoryView{Command: "check", Measure: "retrieval_hit_at_k", File: "h.jsonl", K: 2, Runs: []rhtml.RunView{
		{Time: "2026-01-01T00:00:00Z", Commit: strings.Repeat("a", 40), K: 5},
		{Time: "2026-01-02T00:00:00Z", Commit: strings.Repeat("b", 40), K: 2, Changed: []string{"--k"}}}}
	groups := []string{"overall", "type: adversarial", "type: golden", "locale: en", "locale: es-419", "locale: pt-BR"}
	for i, k := range []int{5, 2} {
		for _, g := range groups {
			y := []float64{math.NaN(), math.NaN()}
			y[i] = 0.7
			n := []int{0, 0}
			n[i] = 40
			v.Series = append(v.Series, rhtml.SeriesView{Name: g, Y: y, Lo: y, Hi: y, N: n, K: k})
		}
	}
	var b bytes.Buffer
	require.NoError(t, rhtml.History(&b, v))
	s := b.String()
	legend := s[strings.Index(s, `<ul class="legend"`):]
	legend = legend[:strings.Index(legend, "</ul>")]
	looks := map[string]string{}
	for _, li := range strings.Split(legend, "<li>")[1:] {
		cls := li[strings.Index(li, `class="`)+len(`class="`):]
		cls = cls[:strings.Index(cls, `"`)]
		name := li[strings.Index(li, "</span>")+len("</span>") : strings.Index(li, "</li>")]
		if other, ok := looks[cls]; ok {
			t.Errorf("%q and %q both drawn %q", other, name, cls)
		}
		looks[cls] = name
	}
	assert.Len(t, looks, 12)
	assert.Contains(t, legend, `<span class="sw c2 ln dotted"></span>type: golden · k=5`)
	assert.Contains(t, legend, `<span class="sw c2 ln"></span>type: golden · k=2`)
}
