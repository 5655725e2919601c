package html_test

import (
	"encoding/json"
	"fmt"
	"html"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/browsertest"
	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/report/comparereport"
	rhtml "github.com/retrieval-gate/retrieval-gate/internal/report/html"
)

// The seed's figures on the dashboard, without a browser: DCG@10 with its
// maximum, the buckets and mean relevance per strategy, the scenarios with
// rule and action, and the registry's labels (no short label, no rename).
func TestCompareDashboardSeedFigures(t *testing.T) {
	r := demoResult(t)
	s := string(render(t, r))
	doc := comparereport.New(r)
	has := func(sub string, args ...any) {
		t.Helper()
		assert.Positive(t, strings.Count(s, sub), "missing %q %v", sub, args) // not Contains: it would print the whole page
	}
	has(`<div class="kpi-value">` + format.Num(r.Strategies[r.StrategyIndex("hybrid+rerank")].Means[0]) + ` of 31.805</div>`)
	has("DCG@10 (of 31.805) per strategy (95% CI whiskers), this run")
	has("DCG@10 is out of 31.805, the maximum possible: 10 results of relevance 3 with the exp gain.")
	has("<span class=\"ci\">dcg_at_k · of 31.805</span>")
	for _, short := range []string{">dcg@10<", ">P@10<", ">R@10<", ">rel@10<", "dcg@10"} {
		assert.Zero(t, strings.Count(s, short), short)
	}
	require.NotEmpty(t, doc.Scenarios)
	for _, sc := range doc.ScenarioTexts() {
		has(`data-scenario="` + sc.Code + `"`)
		has("<strong>" + html.EscapeString(sc.Todo()) + "</strong>")
	}
	for name, st := range doc.Strategies {
		b := st.RelevanceBuckets
		has(format.Pct(b.HighlyRelevant.V()), name)
		has("n = "+rhtml.Count(b.N)+" judged documents", name)
	}
}

// In Chromium, light and dark, at a phone's, the comment column's and a
// desktop's width (the explore page's loads, 9 runs): the DCG@10 scale in the KPI, the table caption and the bar chart's title
// (also when the script redraws them for the chosen metric), the buckets table
// equal to the document, the scenarios listed, the "Every measure" labels the
// registry's, and no header broken inside a word.
func TestCompareDashboardSeedFiguresInBrowser(t *testing.T) {
	t.Parallel()
	r := demoResult(t)
	_, loads := exploreLoads(t)
	doc := comparereport.New(r)
	var got struct {
		NDCGCaption, Caption, Title, KPI string
		Axis                             string
		Buckets                          [][]string
		BucketHead, Scenarios, Every     []string
		Broken                           []string
	}
	var every []string
	for _, m := range metrics.QueryMeasures {
		every = append(every, m.LabelAt(10))
	}
	var codes []string
	for _, sc := range doc.Scenarios {
		codes = append(codes, sc.Code)
	}
	for _, dark := range []bool{false, true} {
		browsertest.Assert(t, browsertest.Page{Name: fmt.Sprintf("compare-explore-dark-%v", dark), Marks: seedMarks(r)}, loads[dark])
		for _, m := range loads[dark] {
			at := fmt.Sprintf("dark %v, %d px", dark, m.Width)
			require.NoError(t, json.Unmarshal(exploreResult(t, m).Seed, &got), at)
			assert.Empty(t, got.Broken, "%s: table headers broken inside a word", at)
			assert.Equal(t, "nDCG@10", got.NDCGCaption, at)
			assert.Equal(t, "DCG@10 (of 31.805)", got.Caption, at)
			assert.Equal(t, "DCG@10 (of 31.805) per strategy (95% CI whiskers), run 9 of 9 · 2026-03-01 · fffffff · feature (this run)", got.Title, at)
			assert.Equal(t, "DCG@10 (of 31.805)", got.Axis, "%s: the bar chart's axis", at)
			assert.True(t, strings.HasSuffix(got.KPI, " of 31.805"), "%s: %q", at, got.KPI)
			assert.Equal(t, []string{"strategy", "mean relevance@10", "highly relevant (3)", "relevant+ (≥ 2)", "not relevant (≤ 1)"}, got.BucketHead, at)
			require.Len(t, got.Buckets, 5, at)
			for _, row := range got.Buckets {
				s := doc.Strategies[row[0]]
				require.NotNil(t, s, "%s: %v", at, row)
				assert.Equal(t, []string{row[0], format.Num(s.Metrics[metrics.KeyMeanRel].Mean.V()),
					format.Pct(s.RelevanceBuckets.HighlyRelevant.V()), format.Pct(s.RelevanceBuckets.RelevantPlus.V()), format.Pct(s.RelevanceBuckets.NotRelevant.V())}, row, at)
			}
			assert.Equal(t, codes, got.Scenarios, at)
			assert.Equal(t, every, got.Every, at)
		}
	}
}

// seedFiguresJS is what TestCompareDashboardSeedFiguresInBrowser reads, after
// choosing nDCG@10 and then DCG@10.
const seedFiguresJS = `(() => {
  const pick = (id, text) => {
    const s = document.getElementById(id);
    const o = [...s.options].find((o) => o.textContent === text);
    s.value = o.value;
    s.dispatchEvent(new Event("change", {bubbles: true}));
  };
  const out = {};
  pick("rg-metric", "nDCG@10");
  out.ndcgCaption = document.querySelector("#rg-table caption").textContent;
  pick("rg-metric", "DCG@10");
  out.caption = document.querySelector("#rg-table caption").textContent;
  out.title = document.querySelector("#rg-bars figcaption").textContent;
  out.axis = document.querySelector("#rg-bars .axis-label").textContent;
  out.kpi = document.querySelector(".kpi-value").textContent;
  out.buckets = [...document.querySelectorAll("#rg-buckets tbody tr")].map((tr) => [...tr.children].map((c) => { const v = c.querySelector(".cv") || c; return v.firstChild ? v.firstChild.textContent : ""; }));
  out.bucketHead = [...document.querySelectorAll("#rg-buckets thead th")].map((th) => th.textContent);
  out.scenarios = [...document.querySelectorAll("#rg-scenarios li")].map((li) => li.dataset.scenario);
  out.every = [...document.querySelectorAll("#rg-every tbody th")].map((th) => th.firstChild.textContent);
  out.broken = [...document.querySelectorAll("thead th")].flatMap((th) => {
    const t = th.firstChild, res = [];
    if (!t || t.nodeType !== 3) return res;
    for (const w of t.data.matchAll(/\S+/g)) {
      const r = document.createRange();
      r.setStart(t, w.index); r.setEnd(t, w.index + w[0].length);
      if (new Set([...r.getClientRects()].map((q) => Math.round(q.top))).size > 1) res.push(w[0]);
    }
    return res;
  });
  return out;
})()`

// seedMarks are the marks TestCompareDashboardSeedFiguresInBrowser counts on
// the dashboard of r (the compare demo): a row of the buckets table per
// strategy, an item per scenario.
func seedMarks(r *compare.Result) map[string]int {
	return map[string]int{`#rg-buckets tbody tr`: 5, `#rg-scenarios li`: len(comparereport.New(r).Scenarios)}
}
