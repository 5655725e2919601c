package html_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/compare/comparetest"
	"github.com/retrieval-gate/retrieval-gate/internal/input/labelfile"
	"github.com/retrieval-gate/retrieval-gate/internal/input/trecfile"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/report/comparereport"
	"github.com/retrieval-gate/retrieval-gate/internal/report/gatetable"
	htmlreport "github.com/retrieval-gate/retrieval-gate/internal/report/html"
)

func TestCompareHumanSection(t *testing.T) {
	var qr, sh strings.Builder
	var qa []trecfile.RunQuery
	sh.WriteString("query_id,doc_id,grade\n")
	for i := range 30 {
		id := fmt.Sprintf("q%02d", i)
		fmt.Fprintf(&qr, "%s 0 a %d\n", id, 1+i%3)
		if i < 10 {
			fmt.Fprintf(&sh, "%s,a,%d\n", id, i%4)
		}
		qa = append(qa, trecfile.RunQuery{ID: id, Docs: []string{"a"}})
	}
	q, err := trecfile.ParseQrels(context.Background(), strings.NewReader(qr.String()), "q.trec")
	require.NoError(t, err)
	s, err := labelfile.ReadSheet(context.Background(), strings.NewReader(sh.String()), "<b>sheet</b>.csv")
	require.NoError(t, err)
	res, err := compare.Compare(q, []compare.Input{{Name: "A<script>", Run: &trecfile.Run{File: "a", Format: "trec", K: 10, Queries: qa}}},
		compare.Options{K: 1, Gain: metrics.GainExp, RelevantLevel: 2, Resamples: 200, Seed: 1, HumanSheet: s})
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, htmlreport.CompareHTML(&b, comparereport.New(res), res, nil))
	page := b.String()
	assert.Contains(t, page, "Human-corrected estimates")
	assert.Contains(t, page, "The recommendation and the gates use the human-corrected figures")
	assert.Contains(t, page, "&lt;b&gt;sheet&lt;/b&gt;.csv")
	assert.Contains(t, page, "A&lt;script&gt;")
	assert.NotContains(t, page, "<b>sheet")
	assert.Contains(t, page, "mean signed error")
	// 10 labelled queries: the corrected intervals are marked, each mark an
	// abbreviation of its footnote, the footnote under the table.
	human := page[strings.Index(page, "Human-corrected estimates"):]
	assert.Contains(t, human, `<abbr class="flag" title="unreliable: this PPI++ interval rests on fewer than 30 human-labelled queries, too few to estimate its standard error well (a floor on the labels, not a simulated coverage; a rule-of-three interval, used where the labelled values do not vary, is not marked; docs/statistics.md)">†</abbr>`)
	hs, ok := comparereport.New(res).HumanSection(htmlreport.Esc)
	require.True(t, ok)
	assert.Contains(t, human, htmlreport.Esc(hs.Unreliable))
	// Measures by their labels, as everywhere on the page, never by their JSON keys.
	section := human[:strings.Index(human, "<h2>Per strategy</h2>")]
	assert.NotContains(t, section, "covers less than 95%", "a PPI++ mark is a floor on the labels, not a simulated coverage")
	assert.Contains(t, section, `<span class="cv">DCG@1 (primary)</span>`)
	assert.NotContains(t, section, "dcg_at_k")
	// The best-mean card shows the judge's mean: said so, beside a decision on the corrected figures.
	assert.Contains(t, page, `<div class="kpi-label">Best DCG@1 (judge only)</div>`)
	// Without human labels, no section.
	res.Human = nil
	b.Reset()
	require.NoError(t, htmlreport.CompareHTML(&b, comparereport.New(res), res, nil))
	assert.NotContains(t, b.String(), "Human-corrected estimates")
	assert.Contains(t, b.String(), `<div class="kpi-label">Best DCG@1</div>`)
}

// A corrected difference whose 20 labelled queries all differ by the same
// amount: the page's methods line and the corrected table's foot name the
// exact sign-flip test of the human differences, and the basis sentence,
// printed inside "Human-corrected estimates", does not point to that section.
func TestCompareHumanConstantDifference(t *testing.T) {
	q, runs, o, err := comparetest.ConstantDifference(false)
	require.NoError(t, err)
	res, err := compare.Compare(q, runs, o)
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, htmlreport.CompareHTML(&b, comparereport.New(res), res, nil))
	page := b.String()
	assert.Contains(t, page, "exact sign-flip test of the labelled queries&#39; human paired differences (their corrected difference does not vary: p = 2·0.5^n when all n are equal) for DCG@2")
	assert.Contains(t, page, "PPI++&#39;s t statistic has nothing to divide by")
	assert.Contains(t, page, "corrected by 20 human-labelled queries).")
	// The decision card says why its interval crosses 0 while its test decides.
	assert.Contains(t, page, "Holm p = 1.9e-06, n = 20); the labelled queries&#39; differences do not vary")
	assert.NotContains(t, page, `see &#34;Human-corrected estimates&#34;`)
	assert.NotContains(t, page, `see "Human-corrected estimates"`)
}

// With human labels the decision card's interval is the corrected one, and so
// are the intervals the gates cite (they decide on the corrected figures): a
// mark on one is footnoted with the human-corrected words (a floor on the
// labelled queries), not the judge's (a simulated coverage), on the page as in
// the text and Markdown reports.
func TestCompareHumanDecisionMark(t *testing.T) {
	var qr, sh strings.Builder
	var qa, qb []trecfile.RunQuery
	sh.WriteString("query_id,doc_id,grade\n")
	for i := range 40 {
		id := fmt.Sprintf("q%02d", i)
		fmt.Fprintf(&qr, "%s 0 a %d\n%s 0 b %d\n", id, 1+i%3, id, i%2)
		if i < 10 {
			fmt.Fprintf(&sh, "%s,a,%d\n%s,b,%d\n", id, i%4, id, (i+1)%3)
		}
		qa = append(qa, trecfile.RunQuery{ID: id, Docs: []string{"a"}})
		qb = append(qb, trecfile.RunQuery{ID: id, Docs: []string{"b"}})
	}
	q, err := trecfile.ParseQrels(context.Background(), strings.NewReader(qr.String()), "q.trec")
	require.NoError(t, err)
	s, err := labelfile.ReadSheet(context.Background(), strings.NewReader(sh.String()), "sheet.csv")
	require.NoError(t, err)
	res, err := compare.Compare(q, []compare.Input{{Name: "A", Run: &trecfile.Run{File: "a", Format: "trec", K: 10, Queries: qa}},
		{Name: "B", Run: &trecfile.Run{File: "b", Format: "trec", K: 10, Queries: qb}}},
		compare.Options{K: 1, Gain: metrics.GainExp, RelevantLevel: 2, Resamples: 200, Seed: 1, HumanSheet: s,
			Gate: compare.GateOptions{Strategy: "B", FailIfBeaten: true}})
	require.NoError(t, err)
	d := comparereport.New(res)
	require.NotNil(t, d.RecommendationTest)
	require.True(t, d.RecommendationTest.Unreliable, "10 labelled queries: the corrected interval is marked")
	var b bytes.Buffer
	require.NoError(t, htmlreport.CompareHTML(&b, d, res, nil))
	page := b.String()
	card := page[strings.Index(page, `<div class="kpi-label">Decision</div>`):]
	card = card[:strings.Index(card, `<div class="kpi-label">Queries evaluated</div>`)]
	want := d.DecisionUnreliableLine()
	assert.True(t, strings.HasPrefix(want, "† unreliable: this PPI++ interval rests on fewer than 30 human-labelled queries"), want)
	assert.Contains(t, card, `<abbr class="flag" title="`+htmlreport.Esc(strings.TrimPrefix(want, "† "))+`">†</abbr>`)
	assert.Contains(t, card, htmlreport.Esc(want))
	assert.NotContains(t, card, "covers less than 95%")
	// The gate table: not_beaten cites the corrected test, marked.
	require.Len(t, d.Gates, 1)
	require.True(t, d.Gates[0].Unreliable, d.Gates[0].Reason)
	assert.Equal(t, want, d.GatesUnreliableLine())
	gates := page[strings.Index(page, "<h2>Gates"):]
	gates = gates[:4+strings.Index(gates[4:], "<h2>")] // to the next section
	assert.Contains(t, gates, `<p class="note">`+htmlreport.Esc(want)+`</p>`)
	var text, md bytes.Buffer
	require.NoError(t, d.Text(&text))
	require.NoError(t, d.Markdown(&md))
	for name, out := range map[string]string{"text": text.String(), "markdown": md.String()} {
		assert.NotContains(t, out, gatetable.UnreliableNote, name)
		assert.Contains(t, out, want, name)
	}
	// Without human labels the gates' footnote is every gate table's.
	d.Human = nil
	assert.Equal(t, gatetable.UnreliableNote, d.GatesUnreliableLine())
}
