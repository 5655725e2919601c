package html_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
	rhtml "github.com/retrieval-gate/retrieval-gate/internal/report/html"
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
	t.Parallel()
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
	// means per strategy, each strategy's best and worst queries by each
	// measure (issue 32 item 4: id, text where the run had --queries, the
	// measure's value and the primary's, as printed) and each measure's
	// scale under "Per strategy".
	type want struct {
		Decision string              `json:"decision"`
		Every    map[string][]string `json:"every"` // strategy -> the means in registry order
		Lists    map[string]qlists   `json:"lists"` // "strategy by key" -> its tables
		Scale    map[string]string   `json:"scale"` // measure label -> the note
	}
	wants := make([]want, len(docs))
	for i, d := range docs {
		w := want{Decision: d.DecisionText().Line, Every: map[string][]string{}, Lists: map[string]qlists{}, Scale: map[string]string{}}
		for _, m := range metrics.QueryMeasures { // "Select metric" names them at this run's k
			w.Scale[m.LabelAt(runs[len(runs)-1].K)] = scaleWords(d, m.Key)
		}
		for _, name := range d.Order {
			s := d.Strategies[name]
			for _, m := range metrics.QueryMeasures {
				w.Every[name] = append(w.Every[name], format.Num(s.Metrics[m.Key].Mean.V()))
				l := s.QueriesByMeasure[m.Key]
				if m.Key == d.Primary {
					assert.Equal(t, comparereport.Ranked{Best: s.BestQueries, Worst: s.WorstQueries}, l, "the primary's lists")
				}
				label := m.LabelAt(d.K)
				head := []string{"query"}
				if len(d.QueryTexts) > 0 {
					head = append(head, "text")
				}
				keys := []string{m.Key}
				if m.Key != d.Primary {
					keys = append(keys, d.Primary)
				}
				for _, k := range keys {
					h := metrics.QueryMeasures[metrics.QueryIndex(k)].LabelAt(d.K)
					if k == metrics.KeyDCG {
						h += " (of " + format.Num(d.MaxDCGAtK.V()) + ")"
					}
					head = append(head, h)
				}
				rows := func(ids []string) [][]string {
					var out [][]string
					for _, id := range ids {
						row := []string{id}
						if len(d.QueryTexts) > 0 {
							text, _ := format.Shorten(d.QueryTexts[id], comparereport.QueryCell)
							row = append(row, text)
						}
						for _, k := range keys {
							row = append(row, format.Num(s.QueryValues[id][k].V()))
						}
						out = append(out, row)
					}
					return out
				}
				w.Lists[name+" by "+m.Key] = qlists{Captions: []string{"Best of " + name + " by " + label, "Worst of " + name + " by " + label},
					Head: head, Best: rows(l.Best), Worst: rows(l.Worst)}
			}
		}
		wants[i] = w
	}
	// The last run gave its queries' texts; the first two did not.
	require.NotEmpty(t, docs[2].QueryTexts)
	require.Empty(t, docs[0].QueryTexts)
	const choose = `(() => {
  const pick = (sel, value) => { sel.value = value; sel.dispatchEvent(new Event("change", {bubbles: true})); };
  const shown = () => [...document.querySelectorAll(".rg-runpage")].filter((b) => !b.hidden);
  const out = {runs: [], metrics: []};
  const runSel = document.getElementById("rg-run"), metSel = document.getElementById("rg-metric");
  for (const o of [...runSel.options]) {
    pick(runSel, o.value);
    const blocks = shown(), r = {run: Number(o.value), blocks: blocks.map((b) => Number(b.dataset.run)), every: {}, best: {},
      bars: document.querySelector("#rg-bars figcaption").textContent, shown: document.getElementById("rg-shown").textContent,
      table: document.querySelector("#rg-table caption").textContent};
    const dec = blocks[0].querySelector(".decision");
    r.decision = dec ? dec.textContent : "";
    const every = blocks[1].querySelector("[data-part=every] table");
    const heads = [...every.querySelectorAll("thead th")].slice(1).map((th) => th.textContent);
    for (const tr of every.querySelectorAll("tbody tr")) [...tr.querySelectorAll("td")].forEach((td, j) => {
      (r.every[heads[j]] = r.every[heads[j]] || []).push(td.querySelector(".cv").firstChild.textContent);
    });
    // Each measure, then each strategy: the one list shown, as drawn.
    const qsel = blocks[1].querySelector(".rg-qstrategy");
    r.lists = {}; r.scale = {};
    const cells = (tr) => [...tr.children].map((c) => c.textContent);
    for (const mo of [...metSel.options]) {
      pick(metSel, mo.value);
      r.scale[mo.textContent] = document.getElementById("rg-scale").textContent;
      for (const so of [...qsel.options]) {
        pick(qsel, so.value);
        const vis = [...blocks[1].querySelectorAll(".rg-queries")].filter((q) => !q.hidden);
        if (vis.length !== 1) { r.lists[so.value + " by " + mo.textContent] = {captions: ["visible: " + vis.length]}; continue; }
        const tabs = [...vis[0].querySelectorAll("table")];
        // The key of the measure drawn: its column, the first of the values.
        r.lists[vis[0].dataset.strategy + " by " + tabs[0].querySelector("thead th.num").dataset.key] = {
          captions: tabs.map((t) => t.querySelector("caption").textContent),
          head: cells(tabs[0].querySelector("thead tr")),
          best: [...tabs[0].querySelectorAll("tbody tr")].map(cells),
          worst: [...tabs[1].querySelectorAll("tbody tr")].map(cells),
        };
      }
    }
    pick(metSel, String([...metSel.options].findIndex((o) => o.defaultSelected)));
    out.runs.push(r);
  }
  pick(runSel, String(runSel.options.length - 1));
  for (const o of [...metSel.options]) {
    pick(metSel, o.value);
    out.metrics.push({metric: o.textContent, legend: [...document.querySelectorAll("#rg-over .legend li")].map((li) => li.textContent), lines: document.querySelectorAll("#rg-over [data-mark=line]").length,
      over: document.querySelector("#rg-over figcaption").textContent,
      dotted: [...document.querySelectorAll("#rg-over .legend li")].filter((li) => li.querySelector(".sw").classList.contains("dotted")).map((li) => li.textContent),
      dottedLines: [...document.querySelectorAll("#rg-over [data-mark=line]")].filter((l) => l.classList.contains("dotted")).length});
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
			Lists    map[string]qlists   `json:"lists"`
			Scale    map[string]string   `json:"scale"`
			Bars     string              `json:"bars"`
			Shown    string              `json:"shown"`
			Table    string              `json:"table"`
		} `json:"runs"`
		Metrics []struct {
			Metric string   `json:"metric"`
			Legend []string `json:"legend"`
			Lines  int      `json:"lines"`
			Over   string   `json:"over"`
			Dotted []string `json:"dotted"`
			DLines int      `json:"dottedLines"`
		} `json:"metrics"`
	}
	require.NoError(t, json.Unmarshal(ms[0].Result, &got))
	require.Len(t, got.Runs, len(runs))
	for _, r := range got.Runs {
		w := wants[r.Run]
		assert.Equal(t, []int{r.Run, r.Run}, r.Blocks, "run %d: its two blocks shown, no other", r.Run)
		assert.Equal(t, w.Decision, r.Decision, "run %d", r.Run)
		assert.Equal(t, w.Every, r.Every, "run %d: every measure as its document", r.Run)
		assert.Equal(t, w.Lists, r.Lists, "run %d: each strategy's best and worst queries by each measure", r.Run)
		assert.Equal(t, w.Scale, r.Scale, "run %d: each measure's scale", r.Run)
		// The run's bars, table and "Shown" line name the measure at the
		// run's own k, with its own maximum (run 1 is at k = 5: it said
		// DCG@10 (of 31.805) there).
		dcg := metrics.QueryMeasures[metrics.QueryIndex(metrics.KeyDCG)].LabelAt(runs[r.Run].K)
		assert.True(t, strings.HasPrefix(r.Bars, dcg+" (of "+rhtml.Fmt(runs[r.Run].MaxDCG())+") per strategy"), "run %d: %s", r.Run, r.Bars)
		assert.Equal(t, dcg+" (of "+rhtml.Fmt(runs[r.Run].MaxDCG())+")", r.Table, "run %d", r.Run)
		assert.True(t, strings.HasSuffix(r.Shown, " · "+dcg), "run %d: %s", r.Run, r.Shown)
	}
	// Choosing a measure reorders the lists: MRR's best queries of
	// hybrid+rerank are not DCG's.
	var l map[string]qlists
	for _, r := range got.Runs {
		if r.Run == 2 {
			l = r.Lists
		}
	}
	assert.NotEqual(t, l["hybrid+rerank by dcg_at_k"].Best, l["hybrid+rerank by mrr_at_k"].Best)
	// The texts are the queries': the first best query of bm25 by DCG@10.
	first := l["bm25 by dcg_at_k"].Best[0]
	require.Len(t, first, 3) // id, text, DCG@10 (the primary)
	assert.Equal(t, docs[2].QueryTexts[first[0]], first[1])
	assert.Regexp(t, `^(How do I|What is the quickest way to|can't) `, first[1])
	require.Len(t, got.Metrics, len(metrics.QueryMeasures))
	for _, m := range got.Metrics {
		// k = 5 and k = 10 are never one line: a series per strategy and k
		// (five at k = 5, five at k = 10).
		assert.Equal(t, 10, m.Lines, m.Metric)
		assert.Contains(t, m.Legend, "dense · k=5", m.Metric)
		assert.Contains(t, m.Legend, "dense · k=10", m.Metric)
		// Runs at two cutoffs: the chart names the measure at k, not at this run's 10.
		assert.NotContains(t, m.Over, "@10", m.Metric)
		assert.Contains(t, m.Over, "@k", m.Metric)
		// The older cutoff's five series are dotted (legend and line): "dense
		// · k=5" and "dense · k=10" share dense's colour.
		assert.Len(t, m.Dotted, 5, m.Metric)
		assert.Contains(t, m.Dotted, "dense · k=5", m.Metric)
		assert.NotContains(t, m.Dotted, "dense · k=10", m.Metric)
		assert.Equal(t, 5, m.DLines, m.Metric)
	}

	// At every width, light and dark: no overflow, nothing broken inside
	// itself (each word of a table, a figure or a legend on one line), no
	// marker label beyond the plot, the x labels telling the runs apart.
	// The light loads show MRR@10 and the dark ones recall@10 (two value
	// columns and the texts in the best and worst queries).
	metric := func(label string) string {
		return `(() => { const s = document.getElementById("rg-metric"); s.value = [...s.options].find((o) => o.textContent === "` + label +
			`").value; s.dispatchEvent(new Event("change")); return ` + breaksJS + `; })()`
	}
	loads := append(ms, browsertest.Check(t, b, browsertest.Page{Name: "compare-runs", Path: path, Widths: []int{390, 850}, Shots: []int{390}, Script: metric("MRR@10")})...)
	loads = append(loads, browsertest.Check(t, b, browsertest.Page{Name: "compare-runs-dark", Path: path, Widths: []int{390, 850, 1400}, Shots: []int{1400}, Dark: true, Script: metric("recall@10")})...)
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

// qlists are a strategy's best and worst tables by one measure, as drawn:
// their captions, the header row and each row's cells.
type qlists struct {
	Captions []string   `json:"captions"`
	Head     []string   `json:"head"`
	Best     [][]string `json:"best"`
	Worst    [][]string `json:"worst"`
}

// scaleWords is the note on the scale of measure key at the run of d, as a
// reader should read it under "Per strategy".
func scaleWords(d *comparereport.Document, key string) string {
	m := metrics.QueryMeasures[metrics.QueryIndex(key)]
	label := m.LabelAt(d.K)
	switch {
	case key == metrics.KeyDCG:
		return fmt.Sprintf("%s is out of %s, the maximum possible: %d results of relevance 3 with the exp gain.", label, format.Num(d.MaxDCGAtK.V()), d.K)
	case m.Scale == metrics.ScaleUnit:
		return label + " lies between 0 and 1."
	case m.Scale == metrics.ScaleBinary:
		return label + " is 0 or 1 for each query: its mean is the share of queries where it is 1."
	}
	return label + " lies between 0 and 3, the highest relevance in the qrels."
}

// brokenWordsJS is a function (root, keep) of the page: the words of the text
// under root whose element keep takes that the layout broke across lines.
const brokenWordsJS = `((root, keep) => {
  const out = [];
  const walk = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let n; (n = walk.nextNode());) {
    if (!keep(n.parentElement)) continue;
    const re = /\S+/g;
    for (let m; (m = re.exec(n.data));) {
      const r = document.createRange();
      r.setStart(n, m.index); r.setEnd(n, m.index + m[0].length);
      const lines = new Set([...r.getClientRects()].filter((x) => x.width > 0).map((x) => Math.round(x.top)));
      if (lines.size > 1) out.push(m[0]);
    }
  }
  return out;
})`

// breaksJS returns the words of the tables, figures and legends that the
// layout broke across lines (a query's text, prose, aside), and the x labels of the chart over the runs
// (its wide drawing's: the narrow one, shown at 390 px, labels as many as fit at its size).
// A query's text (.qtext) is prose: it wraps as a paragraph does.
const breaksJS = `(() => {
  const out = ` + brokenWordsJS + `(document.body, (el) => el && el.closest("td,th,.kpi-value,.legend,caption") && !el.closest(".sr-only,[hidden],svg,.qtext"));
  const ticks = [...document.querySelectorAll("#rg-over svg.wide text.tick")].map((t) => t.textContent).filter((s) => /\d\d-\d\d/.test(s));
  return {broken: out, ticks};
})()`
