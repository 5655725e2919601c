package html_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/browsertest"
	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/history"
	"github.com/retrieval-gate/retrieval-gate/internal/input/inputtest"
	"github.com/retrieval-gate/retrieval-gate/internal/input/trecfile"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/report/comparereport"
)

// demoAt is the compare demo at cutoff k with the strategies names.
func demoAt(t *testing.T, k int, names []string) *compare.Result {
	t.Helper()
	ctx := context.Background()
	q, err := inputtest.ReadQrels(ctx, filepath.Join(demo, "qrels.trec"))
	require.NoError(t, err)
	var in []compare.Input
	for _, name := range names {
		run, err := inputtest.ReadRun(ctx, filepath.Join(demo, name+".trec"), k, trecfile.RunOptions{})
		require.NoError(t, err)
		in = append(in, compare.Input{Name: name, Run: run})
	}
	r, err := compare.Compare(q, in, compare.Options{K: k, Gain: metrics.GainExp, RelevantLevel: 2, Resamples: 500, Seed: metrics.DefaultSeed})
	require.NoError(t, err)
	return r
}

// The whole page is the chosen run (issue 32 items 3, 4, 6, 7), in
// Chromium as a reader uses it: three runs of the history (k = 10 with four
// strategies, k = 5 with all five, this run at k = 10 with all five), each
// chosen in "Select run" and compared with its document (the decision, every
// measure, the best queries of each strategy chosen in "Select strategy");
// each measure chosen in "Select metric" puts its column beside the
// primary's in the query tables; the chart over the runs has a line per
// strategy and k; at 390, 850 and 1400 px, light and dark, no number or name
// breaks inside itself and nothing overflows.
func TestCompareWholePageInBrowser(t *testing.T) {
	b := browsertest.Start(t)
	all := demoStrategies
	runs := []*compare.Result{demoAt(t, 10, all[:4]), demoAt(t, 5, all), demoResult(t)}
	docs := make([]*comparereport.Document, len(runs))
	var recs []history.Record
	t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	for i, r := range runs {
		docs[i] = comparereport.New(r)
		var js bytes.Buffer
		require.NoError(t, docs[i].WriteJSON(&js))
		fp := history.Fingerprint{Digest: fmt.Sprintf("d%d", r.K), Inputs: map[string]string{}, Params: map[string]string{"k": fmt.Sprint(r.K)}}
		recs = append(recs, history.Record{Schema: history.Schema, Command: "compare", Commit: fmt.Sprintf("%07x%033d", 0xabc0+i, 0), Branch: "main",
			Time: t0.Add(time.Duration(i) * time.Hour).Format(time.RFC3339), Document: js.Bytes(), Fingerprint: fp, Line: i + 1})
	}
	v, err := view(t, recs, "compare", metrics.KeyDCG)
	require.NoError(t, err)
	v.Branch = "main"
	page := renderOver(t, runs[2], &v)
	path := filepath.Join(t.TempDir(), "compare-runs.html")
	require.NoError(t, os.WriteFile(path, page, 0o644))

	// What each run's document says: the decision, every measure's printed
	// means per strategy, each strategy's first best query.
	type want struct {
		Decision string              `json:"decision"`
		Every    map[string][]string `json:"every"` // strategy -> the means in registry order
		Best     map[string]string   `json:"best"`  // strategy -> its first best query
	}
	wants := make([]want, len(docs))
	for i, d := range docs {
		w := want{Decision: d.DecisionText().Line, Every: map[string][]string{}, Best: map[string]string{}}
		for _, name := range d.Order {
			s := d.Strategies[name]
			for _, m := range metrics.QueryMeasures {
				w.Every[name] = append(w.Every[name], format.Num(s.Metrics[m.Key].Mean.V()))
			}
			w.Best[name] = s.BestQueries[0]
		}
		wants[i] = w
	}
	const choose = `(() => {
  const pick = (sel, value) => { sel.value = value; sel.dispatchEvent(new Event("change", {bubbles: true})); };
  const shown = () => [...document.querySelectorAll(".rg-runpage")].filter((b) => !b.hidden);
  const out = {runs: [], metrics: []};
  const runSel = document.getElementById("rg-run"), metSel = document.getElementById("rg-metric");
  for (const o of [...runSel.options]) {
    pick(runSel, o.value);
    const blocks = shown(), r = {run: Number(o.value), blocks: blocks.map((b) => Number(b.dataset.run)), every: {}, best: {}};
    const dec = blocks[0].querySelector(".decision");
    r.decision = dec ? dec.textContent : "";
    const every = blocks[1].querySelector("[data-part=every] table");
    const heads = [...every.querySelectorAll("thead th")].slice(1).map((th) => th.textContent);
    for (const tr of every.querySelectorAll("tbody tr")) [...tr.querySelectorAll("td")].forEach((td, j) => {
      (r.every[heads[j]] = r.every[heads[j]] || []).push(td.querySelector(".cv").firstChild.textContent);
    });
    const qsel = blocks[1].querySelector(".rg-qstrategy");
    for (const so of [...qsel.options]) {
      pick(qsel, so.value);
      const vis = [...blocks[1].querySelectorAll(".rg-queries")].filter((q) => !q.hidden);
      r.best[so.value] = vis.length === 1 ? vis[0].querySelector("tbody th").textContent : "visible: " + vis.length;
    }
    out.runs.push(r);
  }
  pick(runSel, String(runSel.options.length - 1));
  for (const o of [...metSel.options]) {
    pick(metSel, o.value);
    const cols = [...shown()[1].querySelectorAll(".rg-queries:not([hidden]) table")[0].querySelectorAll("thead th")].filter((th) => !th.hidden).map((th) => th.textContent);
    out.metrics.push({metric: o.textContent, cols, legend: [...document.querySelectorAll("#rg-over .legend li")].map((li) => li.textContent), lines: document.querySelectorAll("#rg-over [data-mark=line]").length});
  }
  return out;
})()`
	// One load at 1400 px chooses every run, strategy and metric, then
	// measures as the other loads do (breaksJS); five more loads measure.
	ms := browsertest.Check(t, b, browsertest.Page{Name: "compare-runs-chosen", Path: path, Widths: []int{1400}, Script: "({...(" + choose + "), ..." + breaksJS + "})"})
	var got struct {
		Runs []struct {
			Run      int                 `json:"run"`
			Blocks   []int               `json:"blocks"`
			Decision string              `json:"decision"`
			Every    map[string][]string `json:"every"`
			Best     map[string]string   `json:"best"`
		} `json:"runs"`
		Metrics []struct {
			Metric string   `json:"metric"`
			Cols   []string `json:"cols"`
			Legend []string `json:"legend"`
			Lines  int      `json:"lines"`
		} `json:"metrics"`
	}
	require.NoError(t, json.Unmarshal(ms[0].Result, &got))
	require.Len(t, got.Runs, len(runs))
	for _, r := range got.Runs {
		w := wants[r.Run]
		assert.Equal(t, []int{r.Run, r.Run}, r.Blocks, "run %d: its two blocks shown, no other", r.Run)
		assert.Equal(t, w.Decision, r.Decision, "run %d", r.Run)
		assert.Equal(t, w.Every, r.Every, "run %d: every measure as its document", r.Run)
		assert.Equal(t, w.Best, r.Best, "run %d: each strategy's best queries", r.Run)
	}
	require.Len(t, got.Metrics, len(metrics.QueryMeasures))
	for _, m := range got.Metrics {
		want := []string{"query", "DCG@10 (of 31.805)"}
		if m.Metric != "DCG@10" {
			want = append(want, m.Metric)
		}
		assert.Equal(t, want, m.Cols, m.Metric)
		// k = 5 and k = 10 are never one line: a series per strategy and k
		// (five at k = 5, five at k = 10).
		assert.Equal(t, 10, m.Lines, m.Metric)
		assert.Contains(t, m.Legend, "dense · k=5", m.Metric)
		assert.Contains(t, m.Legend, "dense · k=10", m.Metric)
	}

	// At every width, light and dark: no overflow, nothing broken inside
	// itself (each word of a table, a figure or a legend on one line), no
	// marker label beyond the plot, the x labels telling the runs apart.
	loads := append(ms, browsertest.Check(t, b, browsertest.Page{Name: "compare-runs", Path: path, Widths: []int{390, 850}, Script: breaksJS})...)
	loads = append(loads, browsertest.Check(t, b, browsertest.Page{Name: "compare-runs-dark", Path: path, Widths: []int{390, 850, 1400}, Dark: true, Script: breaksJS})...)
	for i, m := range loads {
		name := "compare-runs"
		if i >= 3 {
			name += "-dark"
		}
		{
			var br struct {
				Broken []string `json:"broken"`
				Ticks  []string `json:"ticks"`
			}
			require.NoError(t, json.Unmarshal(m.Result, &br))
			assert.Empty(t, br.Broken, "%s at %d px: words broken across lines", name, m.Width)
			assert.Equal(t, []string{"2026-03-01 000abc0", "2026-03-01 000abc1", "2026-03-01 000abc2"}, br.Ticks, "%s at %d px", name, m.Width)
		}
	}
}

// breaksJS returns the words of the tables, figures and legends that the
// layout broke across lines, and the x labels of the chart over the runs.
const breaksJS = `(() => {
  const out = [];
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n; (n = walk.nextNode());) {
    const el = n.parentElement;
    if (!el || !el.closest("td,th,.kpi-value,.legend,caption") || el.closest(".sr-only,[hidden],svg")) continue;
    const re = /\S+/g;
    for (let m; (m = re.exec(n.data));) {
      const r = document.createRange();
      r.setStart(n, m.index); r.setEnd(n, m.index + m[0].length);
      const lines = new Set([...r.getClientRects()].filter((x) => x.width > 0).map((x) => Math.round(x.top)));
      if (lines.size > 1) out.push(m[0]);
    }
  }
  const ticks = [...document.querySelectorAll("#rg-over svg text.tick")].map((t) => t.textContent).filter((s) => /\d\d-\d\d/.test(s));
  return {broken: out, ticks};
})()`
