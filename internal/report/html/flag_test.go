package html_test

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/browsertest"
	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
	"github.com/retrieval-gate/retrieval-gate/internal/report/checkreport"
	"github.com/retrieval-gate/retrieval-gate/internal/report/comparereport"
	"github.com/retrieval-gate/retrieval-gate/internal/report/gatetable"
	rhtml "github.com/retrieval-gate/retrieval-gate/internal/report/html"
)

// flagMark is the mark the page shows after an interval marked unreliable:
// † as an abbreviation titled with note, the footnote without its mark.
func flagMark(note string) string {
	return `<abbr class="flag" title="` + rhtml.Esc(strings.TrimPrefix(note, "† ")) + `">†</abbr>`
}

// flaggedCheck is a check document whose groups, paired comparisons, churn
// and overlap carry intervals marked unreliable where flagged is true, and
// the same figures unmarked where it is false.
func flaggedCheck(flagged bool) *checkreport.Document {
	sum := func(mean, lo, hi float64, n int64, unreliable bool) checkreport.Summary {
		return checkreport.Summary{Mean: format.Float(mean), CI95: [2]format.Float{format.Float(lo), format.Float(hi)}, CI95Method: "hall-t", N: n, Unreliable: unreliable && flagged}
	}
	est := func(mean, lo, hi float64, unreliable bool) checkreport.Estimate {
		return checkreport.Estimate{Mean: format.Float(mean), CI95: [2]format.Float{format.Float(lo), format.Float(hi)}, CI95Method: "hall-t", Unreliable: unreliable && flagged}
	}
	group := func(n int64, hit, recall checkreport.Summary) checkreport.Group {
		return checkreport.Group{N: n, Metrics: map[string]checkreport.Summary{metrics.KeyHit: hit, metrics.KeyRecall: recall, metrics.KeyNDCG: sum(0.5, 0.4, 0.6, n, false)}}
	}
	rbo := est(0.35, 0.28, 0.44, true)
	return &checkreport.Document{Schema: checkreport.Schema, K: 5, Verdict: outcome.Pass, ReferenceLocale: "en",
		Cases:     checkreport.Cases{Total: 41, WithGold: 41},
		Integrity: checkreport.Integrity{OK: true, KBCards: 38},
		Overall:   group(41, sum(0.878, 0.739, 0.951, 41, true), sum(0.809, 0.690, 0.900, 41, false)),
		ByType:    map[string]checkreport.Group{"adversarial": group(7, sum(0.571, 0.202, 0.882, 7, false), sum(0.662, 0.039, 1, 7, true))},
		Baseline: &checkreport.Baseline{Status: checkreport.BaselineCompared, File: "base.jsonl.gz", HeadlineMeasure: metrics.KeyHit,
			Cases: checkreport.BaselineCases{Paired: 41},
			Overall: checkreport.PairedGroup{N: 41, Metrics: map[string]checkreport.Paired{
				metrics.KeyRecall: {Baseline: 0.8, Current: 0.9, Delta: 0.1, CI95: [2]format.Float{-0.097, 0.32}, CI95Method: "hall-t", N: 41, P: 0.125, Test: "sign-flip", Unreliable: flagged},
			}},
			Churn: &checkreport.Churn{Depth: 5, Status: outcome.Off, Overall: checkreport.ChurnGroup{Held: 41, N: 41, Changed: 41,
				ChangedShare: est(1, 0.893, 1, false), Left: est(3.585, 3.107, 3.884, false), RBO: rbo}},
			Overlap: &checkreport.Overlap{Depth: 5, Measure: checkreport.OverlapMeasure, Persistence: 0.9, TopWeight: 0.672,
				Paired:      checkreport.OverlapGroup{N: 41, Changed: 41, Mean: rbo.Mean, CI95: &rbo.CI95, CI95Method: "hall-t", Unreliable: rbo.Unreliable},
				WithoutGold: checkreport.OverlapGroup{Mean: format.Float(math.NaN())}},
		},
	}
}

// An interval the check document marks unreliable keeps its mark in the
// HTML, as in the Markdown: † after it, an abbreviation titled with the
// footnote, and the Markdown's footnote under its table or card: the
// groups (table, chart and the overall card), the paired comparison, the
// churn and the top-k overlap. A document without a marked interval shows
// neither a mark nor a footnote.
func TestCheckHTMLUnreliableFlag(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, rhtml.CheckHTML(&b, flaggedCheck(true)))
	s := b.String()
	mean, paired, est := flagMark(checkreport.UnreliableNote), flagMark(checkreport.PairedUnreliableNote), flagMark(checkreport.EstimateUnreliableNote)
	for _, want := range []string{
		// The overall card: the mark after its interval, the footnote at its foot.
		`<div class="kpi-detail">95% CI 0.739–0.951` + mean + ` · n = 41</div><div class="kpi-detail">` + rhtml.Esc(checkreport.UnreliableNote) + `</div>`,
		// The groups table: the overall hit@5 and the adversarial type's recall@5 (the Markdown's "0.662 [0.039, 1.000]†").
		`<td class="num" data-label="hit@5"><span class="cv">0.878<span class="ci">0.739–0.951` + mean + `</span></span></td><td class="num" data-label="recall@5"><span class="cv">0.809<span class="ci">0.690–0.900</span></span></td>`,
		`<td class="num" data-label="recall@5"><span class="cv">0.662<span class="ci">0.039–1.000` + mean + `</span></span></td>`,
		rhtml.Esc(checkreport.UnreliableNote) + ".</p>",
		// The chart's hover and its table for screen readers.
		"overall · hit@5: hit@5 0.878 (95% CI 0.739–0.951†), n = 41",
		"<td>0.878</td><td>0.739–0.951†</td>",
		// The paired comparison: the interval's mark, the footnote under the table.
		`<span class="ci">[-0.097, +0.320]` + paired + `</span>`,
		rhtml.Esc(checkreport.PairedUnreliableNote) + ".",
		// The churn and the overlap: each mean RBO marked, the footnote in their methods' line.
		"mean RBO 0.350 [0.280, 0.440]" + est + " (n = 41), 41 changed",
		"mean RBO 0.350 [0.280, 0.440]" + est + ".</p>",
		rhtml.Esc(checkreport.EstimateUnreliableNote),
	} {
		contains(t, s, want)
	}
	assert.Equal(t, 6, strings.Count(s, `<abbr class="flag"`), "card, two group cells, paired, churn and overlap")
	assert.Equal(t, 5, strings.Count(s, "† unreliable"), "the footnotes: the card's, the groups table's, the paired table's, the overlap's and the churn's")

	b.Reset()
	require.NoError(t, rhtml.CheckHTML(&b, flaggedCheck(false)))
	s = b.String()
	assert.False(t, strings.Contains(s, "†") || strings.Contains(s, "unreliable"), "no interval is marked: no mark, no footnote")
	assert.Contains(t, s, `<div class="kpi-detail">95% CI 0.739–0.951 · n = 41</div></div>`)
}

// A paired interval computed over the clusters of cases in families is
// marked by its number of clusters: the HTML's mark and footnote say so, as
// the Markdown's do, rather than blaming a measure without a known range.
func TestCheckHTMLPairedUnreliableOverClusters(t *testing.T) {
	d := flaggedCheck(true)
	p := d.Baseline.Overall.Metrics[metrics.KeyRecall]
	p.Clusters = 4
	d.Baseline.Overall.Metrics[metrics.KeyRecall] = p
	var b bytes.Buffer
	require.NoError(t, rhtml.CheckHTML(&b, d))
	s := b.String()
	contains(t, s, `<span class="ci">[-0.097, +0.320]`+flagMark(checkreport.PairedClustersUnreliableNote)+`</span>`)
	contains(t, s, rhtml.Esc(checkreport.PairedClustersUnreliableNote)+".")
	assert.NotContains(t, s, rhtml.Esc(checkreport.PairedUnreliableNote))
}

// flaggedCompare is the compare demo's document with the best strategy's
// DCG@10, the recommendation's test and the reranker tests marked
// unreliable (flagged), or as computed (none is).
func flaggedCompare(t *testing.T, flagged bool) (*comparereport.Document, *compare.Result, string) {
	r := freshDemoResult(t) // its findings are the document's: edited below
	d := comparereport.New(r)
	best := d.Order[0]
	for _, name := range d.Order {
		if d.Strategies[name].Metrics[metrics.KeyDCG].Mean > d.Strategies[best].Metrics[metrics.KeyDCG].Mean {
			best = name
		}
	}
	if flagged {
		s := d.Strategies[best].Metrics[metrics.KeyDCG]
		s.Unreliable = true
		d.Strategies[best].Metrics[metrics.KeyDCG] = s
		require.NotNil(t, d.RecommendationTest)
		d.RecommendationTest.Unreliable = true
		for i := range d.Findings {
			if d.Findings[i].Kind == compare.Reranker {
				d.Findings[i].Test.CI.Unreliable = true
			}
		}
		for i := range d.Rerankers { // the same findings, as the JSON carries them
			d.Rerankers[i].Unreliable = true
		}
	}
	return d, r, best
}

// An interval the compare document marks unreliable keeps its mark in the
// dashboard: the best-mean card and the decision card (the mark after the
// interval, the footnote at the card's foot), "Per strategy" (its table,
// its chart's hover and the note under the tables, with the point marked in
// the script's data), every measure, the buckets and base vs reranker, each
// table with the Markdown's footnote. Without a marked interval: no mark,
// no footnote, no marked point.
func TestCompareHTMLUnreliableFlag(t *testing.T) {
	d, r, best := flaggedCompare(t, true)
	var b bytes.Buffer
	require.NoError(t, rhtml.CompareHTML(&b, d, r, nil))
	s := b.String()
	mark, note := flagMark(comparereport.UnreliableLine), rhtml.Esc(comparereport.UnreliableLine)
	dcg := d.Strategies[best].Metrics[metrics.KeyDCG]
	ci := rhtml.FmtCI([2]float64{dcg.CI95[0].V(), dcg.CI95[1].V()})
	l := d.RecommendationTest
	for _, want := range []string{
		`<div class="kpi-detail">` + rhtml.Esc(best) + ` · 95% CI ` + ci + mark + ` · n = `,
		`<div class="kpi-detail">` + note + `</div>`,
		format.Signed(l.CI95[1].V()) + mark + ", Holm p = ",
		`<span class="ci">` + ci + mark + ` · n = ` + rhtml.Count(int(dcg.N)) + `</span>`, // per strategy, every measure and base vs reranker
		"(95% CI " + ci + "†), n = ",                                                      // the bar's hover
		`<span id="rg-scale">DCG@10 is out of 31.805`,                                     // the note under the tables…
		note + ".</span></p>", // …ends with the footnote
		`"` + ci + `","` + rhtml.Count(int(dcg.N)) + `",true]`, // the point in the script's data
		`"flag":"` + strings.TrimPrefix(comparereport.UnreliableLine, "† ") + `"`,
	} {
		contains(t, s, want)
	}
	assert.Equal(t, 1, strings.Count(s, ",true]"), "one point is marked")
	every := s[strings.Index(s, `id="rg-every"`):]
	every = every[:strings.Index(every, "</p>")]
	assert.Equal(t, 1, strings.Count(every, `<abbr class="flag"`), "every measure: the best strategy's DCG@10")
	assert.Contains(t, every, note+".", "every measure: its footnote")
	rr := s[strings.Index(s, "<h2>Base vs reranker"):]
	rr = rr[:strings.Index(rr, "</p>")]
	assert.Equal(t, 2+1, strings.Count(rr, `<abbr class="flag"`), "base vs reranker: two paired intervals and the best strategy's DCG@10")
	assert.Contains(t, rr, note+".", "base vs reranker: its footnote")

	d, r, _ = flaggedCompare(t, false)
	b.Reset()
	require.NoError(t, rhtml.CompareHTML(&b, d, r, nil))
	s = b.String()
	assert.False(t, strings.Contains(s, `<abbr class="flag"`) || strings.Contains(s, "†") || strings.Contains(s, ",true]"),
		"no mark, no footnote, no marked point (the script writes the mark as an escape)")
}

// The flagged dashboard in Chromium at a phone's, the comment column's and
// a desktop's width: the script's "Per strategy" table marks the interval
// (an abbreviation titled with the footnote), the note under the tables
// ends with the footnote, and the marks widen nothing past the page.
func TestCompareHTMLUnreliableFlagInBrowser(t *testing.T) {
	t.Parallel()
	d, r, best := flaggedCompare(t, true)
	var page bytes.Buffer
	require.NoError(t, rhtml.CompareHTML(&page, d, r, nil))
	path := filepath.Join(t.TempDir(), "compare-flag.html")
	require.NoError(t, os.WriteFile(path, page.Bytes(), 0o644))
	script := `(() => { const a = [...document.querySelectorAll("#rg-table abbr.flag")];
	  return {marks: a.length, strategy: a.length ? a[0].closest("td").dataset.strategy : "", title: a.length ? a[0].title : "",
	    note: document.getElementById("rg-scale").textContent}; })()`
	b := browsertest.Start(t)
	for _, m := range browsertest.Check(t, b, browsertest.Page{Name: "compare-flag", Path: path, Widths: []int{390, 850, 1400}, Shots: []int{390}, Script: script}) {
		var got struct {
			Marks           int
			Strategy, Title string
			Note            string
		}
		require.NoError(t, json.Unmarshal(m.Result, &got))
		assert.Equal(t, 1, got.Marks, "at %d px", m.Width)
		assert.Equal(t, best, got.Strategy, "at %d px", m.Width)
		assert.Equal(t, strings.TrimPrefix(comparereport.UnreliableLine, "† "), got.Title, "at %d px", m.Width)
		assert.True(t, strings.HasSuffix(got.Note, comparereport.UnreliableLine+"."), "at %d px: %q", m.Width, got.Note)
	}
}

// The flagged check page in Chromium: the marks and footnotes widen
// nothing past the page at any width.
func TestCheckHTMLUnreliableFlagInBrowser(t *testing.T) {
	t.Parallel()
	var page bytes.Buffer
	require.NoError(t, rhtml.CheckHTML(&page, flaggedCheck(true)))
	path := filepath.Join(t.TempDir(), "check-flag.html")
	require.NoError(t, os.WriteFile(path, page.Bytes(), 0o644))
	b := browsertest.Start(t)
	browsertest.Check(t, b, browsertest.Page{Name: "check-flag", Path: path, Widths: []int{390, 850, 1400}, Shots: []int{390}, Marks: map[string]int{`rect[data-mark="bar"]`: 2}})
}

// contains is assert.Contains without the page in its message.
func contains(t *testing.T, page, want string) {
	t.Helper()
	if !strings.Contains(page, want) {
		t.Errorf("the page lacks %q", want)
	}
}

// The tables of "Per strategy" (DCG@k and mean relevance@k, base and
// reranked) and "Base vs reranker" show the n of every mean, interval and
// difference, as the "Every measure" table does: each interval is followed by
// its n (the verdict's Holm p is not an interval).
func TestCompareHTMLTablesShowN(t *testing.T) {
	d, r, best := flaggedCompare(t, false)
	var b bytes.Buffer
	require.NoError(t, rhtml.CompareHTML(&b, d, r, nil))
	s := b.String()
	n := ` · n = ` + rhtml.Count(int(d.Strategies[best].Metrics[metrics.KeyDCG].N)) + `</span>`
	for _, start := range []string{`id="rg-table"`, `id="rg-table2"`, `Base vs reranker (this run)`} {
		i := strings.Index(s, start)
		require.GreaterOrEqual(t, i, 0, start)
		part := s[i:]
		part = part[:strings.Index(part, "</table>")]
		cis := strings.Count(part, `<span class="ci">`) - strings.Count(part, `<span class="ci">Holm p = `) // the verdict's p has no n of its own
		require.Positive(t, cis, start)
		assert.Equal(t, cis, strings.Count(part, " · n = "), "%s: every interval with its n", start)
		assert.Contains(t, part, n, start)
	}
}

// flaggedGates is the compare demo gated on bm25 (gatedDemo) with the
// paired tests its not_beaten gate cites marked unreliable, as compare marks
// an interval whose method covers less than 95% at its n: the gate's reason
// then carries the mark.
func flaggedGates(t *testing.T) (*comparereport.Document, *compare.Result) {
	t.Helper()
	r := demoResultGated(t, gatedDemo)
	marked := 0
	for i := range r.Gates {
		for j := range r.Gates[i].Why {
			for k := range r.Gates[i].Why[j].Tests {
				r.Gates[i].Why[j].Tests[k].Unreliable = true
				marked++
			}
		}
	}
	require.Positive(t, marked, "not_beaten cites the tests of the strategies above bm25")
	return comparereport.New(r), r
}

// gateSection is the page's gate table and the note under it.
func gateSection(t *testing.T, page string) string {
	t.Helper()
	i := strings.Index(page, "<h2>Gates: ")
	require.GreaterOrEqual(t, i, 0, "the gates' section")
	s := page[i:]
	return s[:strings.Index(s, "</p>")+len("</p>")]
}

// The mark of an unreliable interval in a gate's reason is the page's flag,
// as everywhere else on the page: an abbreviation whose title (its hover
// text, and its accessible name) says what the footnote under the table
// says; no bare mark is left. The footnote is the gates' own
// (GatesUnreliableLine; check's page: gatetable.UnreliableNote). Without a
// marked interval: no mark, no footnote.
func TestGateTableUnreliableFlag(t *testing.T) {
	d, r := flaggedGates(t)
	var b bytes.Buffer
	require.NoError(t, rhtml.CompareHTML(&b, d, r, nil))
	s := gateSection(t, b.String())
	foot := d.GatesUnreliableLine()
	marks := strings.Count(s, flagMark(foot))
	require.Positive(t, marks, "the reason's marks are flags: %s", s)
	assert.Equal(t, marks+1, strings.Count(s, "†"), "every mark a flag, and the footnote's")
	assert.Contains(t, s, `<p class="note">`+rhtml.Esc(foot)+"</p>", "the footnote under the table")

	// check's page has the same gate table: a churn gate whose interval is
	// marked, with check's footnote.
	cd := flaggedCheck(false)
	cd.Gates = gatetable.FromOutcome(outcome.Gates{{Name: "min_rbo", Group: outcome.GroupOverall, Measure: "rbo", Status: outcome.Fail, Threshold: 0.5, Value: 0.35, N: 41,
		Why: []outcome.Clause{{Code: outcome.RBOBelow, Value: 0.35, Threshold: 0.5, N: 41}, {Code: outcome.Interval95, Lo: 0.28, Hi: 0.44, Test: "hall-t", N: 41, Unreliable: true}}}})
	cd.Verdict = outcome.Fail
	b.Reset()
	require.NoError(t, rhtml.CheckHTML(&b, cd))
	s = b.String()
	s = s[strings.Index(s, "<h2>Gates</h2>"):]
	s = s[:strings.Index(s, "</p>")]
	assert.Contains(t, s, "0.440]"+flagMark(gatetable.UnreliableNote)+" (hall-t, n = 41)")
	assert.Equal(t, 2, strings.Count(s, "†"), "the flag and the footnote")

	b.Reset()
	plain := demoResultGated(t, gatedDemo)
	require.NoError(t, rhtml.CompareHTML(&b, comparereport.New(plain), plain, nil))
	s = b.String()
	s = s[strings.Index(s, "<h2>Gates: "):]
	s = s[:strings.Index(s, "</table>")]
	assert.NotContains(t, s, "†")
	assert.NotContains(t, s, `<abbr class="flag"`)
}

// The flagged gate table in Chromium at a phone's (its card layout), the
// comment column's and a desktop's width: every mark in it is the flag,
// titled with the footnote, and nothing is wider than the page.
func TestGateTableUnreliableFlagInBrowser(t *testing.T) {
	t.Parallel()
	d, r := flaggedGates(t)
	var page bytes.Buffer
	require.NoError(t, rhtml.CompareHTML(&page, d, r, nil))
	path := filepath.Join(t.TempDir(), "compare-gates-flag.html")
	require.NoError(t, os.WriteFile(path, page.Bytes(), 0o644))
	script := `(() => { const h = [...document.querySelectorAll("h2")].find(h => h.textContent.startsWith("Gates: "));
	  const table = h.nextElementSibling.querySelector("table");
	  const walk = document.createTreeWalker(table, NodeFilter.SHOW_TEXT);
	  let marks = 0, bare = 0; const titles = [];
	  for (let n; (n = walk.nextNode());) {
	    const k = n.textContent.split("†").length - 1; if (!k) continue;
	    marks += k;
	    const a = n.parentElement.closest("abbr.flag");
	    if (!a || n.textContent !== "†") { bare += k; continue; }
	    titles.push(a.title);
	  }
	  return {marks, bare, titles: [...new Set(titles)], foot: h.nextElementSibling.nextElementSibling.textContent}; })()`
	b := browsertest.Start(t)
	foot := d.GatesUnreliableLine()
	for _, m := range browsertest.Check(t, b, browsertest.Page{Name: "compare-gates-flag", Path: path, Widths: []int{390, 850, 1400}, Shots: []int{390}, Script: script}) {
		var got struct {
			Marks, Bare int
			Titles      []string
			Foot        string
		}
		require.NoError(t, json.Unmarshal(m.Result, &got))
		assert.Positive(t, got.Marks, "at %d px", m.Width)
		assert.Zero(t, got.Bare, "at %d px: a mark without its title", m.Width)
		assert.Equal(t, []string{strings.TrimPrefix(foot, "† ")}, got.Titles, "at %d px", m.Width)
		assert.Equal(t, foot, got.Foot, "at %d px", m.Width)
	}
}
