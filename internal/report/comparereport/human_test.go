package comparereport

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
)

// humanFixture is 40 queries judged a 3, b 1; people grade a 2 and b 1 on
// the first 20; run A ranks a first, B b first.
func humanFixture(t *testing.T) *compare.Result {
	t.Helper()
	return humanFixtureWith(t, nil)
}

// humanFixtureWith is humanFixture with the queries qs (compare --queries).
func humanFixtureWith(t *testing.T, qs compare.Queries) *compare.Result {
	t.Helper()
	var qr, sh strings.Builder
	var qa, qb []trecfile.RunQuery
	sh.WriteString("query_id,doc_id,grade\n")
	for i := range 40 {
		id := fmt.Sprintf("q%02d", i)
		fmt.Fprintf(&qr, "%s 0 a %d\n%s 0 b 1\n", id, 2+i%2, id)
		if i < 20 {
			fmt.Fprintf(&sh, "%s,a,%d\n%s,b,1\n", id, 1+i%3, id)
		}
		qa = append(qa, trecfile.RunQuery{ID: id, Docs: []string{"a", "b"}})
		qb = append(qb, trecfile.RunQuery{ID: id, Docs: []string{"b", "a"}})
	}
	q, err := trecfile.ParseQrels(context.Background(), strings.NewReader(qr.String()), "q.trec")
	require.NoError(t, err)
	s, err := labelfile.ReadSheet(context.Background(), strings.NewReader(sh.String()), "sheet<x>.csv")
	require.NoError(t, err)
	res, err := compare.Compare(q, []compare.Input{
		{Name: "A", Run: &trecfile.Run{File: "a", Format: "trec", K: 10, Queries: qa}},
		{Name: "B", Run: &trecfile.Run{File: "b", Format: "trec", K: 10, Queries: qb}},
	}, compare.Options{K: 2, Gain: metrics.GainExp, RelevantLevel: 2, Resamples: 200, Seed: 1, HumanSheet: s, Queries: qs, QueriesFile: "cases<y>.jsonl"})
	require.NoError(t, err)
	return res
}

func TestHumanSection(t *testing.T) {
	d := New(humanFixture(t))
	require.NotNil(t, d.Human)
	var txt, md, js bytes.Buffer
	require.NoError(t, d.Text(&txt))
	require.NoError(t, d.Markdown(&md))
	require.NoError(t, d.WriteJSON(&js))
	for _, want := range []string{
		"human-corrected estimates: PPI++ (power-tuned prediction-powered inference): n human = 20 labelled queries (40 graded pairs, sheet<x>.csv).",
		"The recommendation and the gates use the human-corrected figures (PPI++: the judge's values of every query, corrected by 20 human-labelled queries)",
		"human-corrected paired comparisons against A:",
		"The judge against people on the sample: mean signed error +0.275 grade (judge − human) over 40 pairs.",
	} {
		assert.Contains(t, txt.String(), want)
	}
	assert.Contains(t, md.String(), "### Human-corrected estimates")
	assert.Contains(t, md.String(), "sheet&lt;x&gt;.csv", "the file name is escaped in Markdown")
	assert.Contains(t, md.String(), "| human \\ judge | 0 | 1 | 2 | 3 | n | mean signed error |")
	assert.Contains(t, js.String(), `"decides": true`)
	assert.Contains(t, js.String(), `"p_value_method": "ppi++-jackknife-t"`)
	assert.Contains(t, js.String(), `"method": "ppi++-jackknife"`)
	assertSortedKeys(t, js.Bytes()) // "human" among the others
	// Read back from the JSON, the text and Markdown sections are the same.
	back, err := Read(bytes.NewReader(js.Bytes()))
	require.NoError(t, err)
	var txt2, md2 bytes.Buffer
	require.NoError(t, back.Text(&txt2))
	require.NoError(t, back.Markdown(&md2))
	section := func(s, from, to string) string {
		i := strings.Index(s, from)
		require.GreaterOrEqual(t, i, 0, from)
		j := strings.Index(s[i:], to)
		require.GreaterOrEqual(t, j, 0, to)
		return s[i : i+j]
	}
	assert.Equal(t, section(txt.String(), "human-corrected estimates", "mean signed error\n"), section(txt2.String(), "human-corrected estimates", "mean signed error\n"))
	assert.Equal(t, section(md.String(), "### Human-corrected estimates", "| 3 |"), section(md2.String(), "### Human-corrected estimates", "| 3 |"))
	// 20 labelled queries: every corrected interval is marked, and each of
	// the two tables that marks one says why under it.
	// The footnote says what the mark is for a PPI++ interval (metrics.PPI.Interval):
	// a floor on the labelled queries, not the simulated coverage below 95% that
	// marks the judge's intervals (PPI++ covered 0.968 at 10 labelled queries).
	foot := "† unreliable: this PPI++ interval rests on fewer than 30 human-labelled queries, too few to estimate its standard error well (a floor on the labels, not a simulated coverage; a rule-of-three interval, used where the labelled values do not vary, is not marked; docs/statistics.md)"
	for _, sec := range []string{section(txt.String(), "human-corrected estimates", "The judge against people"), section(md.String(), "### Human-corrected estimates", "The judge against people")} {
		assert.Contains(t, sec, UnreliableMark)
		assert.Equal(t, 2, strings.Count(sec, foot), sec)
		assert.NotContains(t, sec, "covers less than 95%")
	}
	hs, ok := d.HumanSection(identity)
	require.True(t, ok)
	assert.Equal(t, foot, hs.Unreliable)
	assert.Equal(t, foot, hs.PairedUnreliable)
	// The dashboard names the paired rows' measures by their labels.
	require.Len(t, hs.PairedMeasures, len(hs.Paired))
	assert.Equal(t, "DCG@2 (primary)", hs.PairedMeasures[0])
	assert.Equal(t, "dcg_at_k", hs.Paired[0].Metric)
	// Without human labels: no key, no section.
	plain := New(compareFixture(t, "x", "y"))
	var pj, pt bytes.Buffer
	require.NoError(t, plain.WriteJSON(&pj))
	require.NoError(t, plain.Text(&pt))
	assert.NotContains(t, pj.String(), `"human"`)
	assert.NotContains(t, pt.String(), "human-corrected")
}

// Issue 34 item 3: with the queries' locales the human section says the
// estimates are stratified (the locales, their weights and labelled
// queries), each corrected measure names its method, the per-locale table
// says when a locale's n is too small for an interval, and the JSON reads
// back to the same text; the same fixture without locales writes none of it.
func TestHumanSectionStratified(t *testing.T) {
	qs := compare.Queries{}
	for i := range 40 {
		loc := "en"
		if i%2 == 1 {
			loc = "pt-BR"
		}
		qs[fmt.Sprintf("q%02d", i)] = compare.Query{Locale: loc}
	}
	d := New(humanFixtureWith(t, qs))
	require.NotNil(t, d.Human.Strata)
	var txt, md, js bytes.Buffer
	require.NoError(t, d.Text(&txt))
	require.NoError(t, d.Markdown(&md))
	require.NoError(t, d.WriteJSON(&js))
	for _, want := range []string{
		"Stratified by locale (cases<y>.jsonl): each locale's PPI++ estimate (its own λ̂ and jackknife standard error) weighted by the locale's share of the measure's evaluated queries: en 0.500 (20 queries, 10 labelled), pt-BR 0.500 (20 queries, 10 labelled).",
		"corrected: PPI++ estimate stratified by locale",
		"human-corrected dcg_at_k (primary) by locale:",
		"n human 10 < 30: too small for an interval",
		"ppi++-stratified-t",
		"PPI++ stratified by locale",
	} {
		assert.Contains(t, txt.String(), want)
	}
	assert.Contains(t, md.String(), "cases&lt;y&gt;.jsonl", "the file name is escaped in Markdown")
	assert.Contains(t, md.String(), "<details><summary>Corrected dcg_at_k (primary) by locale</summary>")
	for _, want := range []string{`"method": "ppi++-stratified"`, `"ci95_method": "ppi++-stratified"`, `"by": "locale"`, `"too_few": true`, `"by_locale": {`, `"min_labelled": 10`} {
		assert.Contains(t, js.String(), want)
	}
	back, err := Read(bytes.NewReader(js.Bytes()))
	require.NoError(t, err)
	var txt2 bytes.Buffer
	require.NoError(t, back.Text(&txt2))
	section := func(s string) string {
		i := strings.Index(s, "human-corrected estimates")
		j := strings.Index(s, "mean signed error\n")
		require.True(t, i >= 0 && j > i)
		return s[i:j]
	}
	assert.Equal(t, section(txt.String()), section(txt2.String()))
	// The pooled fixture writes none of it.
	var pj, pt bytes.Buffer
	plain := New(humanFixture(t))
	require.NoError(t, plain.WriteJSON(&pj))
	require.NoError(t, plain.Text(&pt))
	for _, key := range []string{`"strata"`, `"by_locale"`, `stratified`} {
		assert.NotContains(t, pj.String(), key)
	}
	assert.NotContains(t, pt.String(), "by locale")
}

// constantFixture is comparetest.ConstantDifference compared: every labelled
// human difference B − A is the same, while the judge's vary (λ̂ = 0,
// standard error 0, the estimate not 0).
func constantFixture(t *testing.T) *compare.Result {
	t.Helper()
	q, runs, o, err := comparetest.ConstantDifference(false)
	require.NoError(t, err)
	res, err := compare.Compare(q, runs, o)
	require.NoError(t, err)
	return res
}

// A corrected difference without variation among its labelled queries: every
// format names its exact test and says why it is not the t test, the
// recommendation rests on it, and the basis sentence points to the human
// section where it is elsewhere in the output (text: above, Markdown: below).
func TestHumanConstantDifferenceWords(t *testing.T) {
	d := New(constantFixture(t))
	var txt, md, js bytes.Buffer
	require.NoError(t, d.Text(&txt))
	require.NoError(t, d.Markdown(&md))
	require.NoError(t, d.WriteJSON(&js))
	line := "PPI++'s t statistic has nothing to divide by: p is then the exact sign-flip test of the labelled queries' human paired differences"
	for name, out := range map[string]string{"text": txt.String(), "markdown": md.String()} {
		assert.Contains(t, out, line, name)
		assert.Contains(t, out, "the test the exact sign-flip test of their human differences: the test decides", name)
		assert.Contains(t, out, "Recommended: A, best mean DCG@2, significantly above the runner-up B", name)
		assert.Contains(t, out, "adjusted p = 1.9e-06, n = 20", name)
		// The recommendation says why its interval crosses 0 while its test decides.
		assert.Contains(t, out, "adjusted p = 1.9e-06, n = 20). Note: the labelled queries' differences do not vary", name)
		assert.NotContains(t, out, "not significantly", name)
	}
	assert.Contains(t, txt.String(), "1.9e-06  1.9e-06 human-exact-sign-flip     yes [1]")
	assert.Contains(t, txt.String(), `see "human-corrected estimates" above.`)
	assert.Less(t, strings.Index(txt.String(), "\nhuman-corrected estimates: "), strings.Index(txt.String(), `see "human-corrected estimates" above`))
	assert.Contains(t, md.String(), `see "Human-corrected estimates" below.`)
	assert.Less(t, strings.Index(md.String(), `see "Human-corrected estimates" below`), strings.Index(md.String(), "### Human-corrected estimates"))
	assert.Contains(t, js.String(), `"p_value_method": "human-exact-sign-flip"`)
	assert.Contains(t, js.String(), `"p_value": 1.9073486328125e-06`)
	// The HTML page's section: no pointer to itself, the test in its foot.
	s, ok := d.HumanSection(func(s string) string { return s })
	require.True(t, ok)
	assert.NotContains(t, s.Basis, "see")
	assert.Contains(t, s.PairedFoot, line)
	// Read back from the JSON, the words are the same.
	back, err := Read(bytes.NewReader(js.Bytes()))
	require.NoError(t, err)
	var txt2 bytes.Buffer
	require.NoError(t, back.Text(&txt2))
	assert.Contains(t, txt2.String(), line)
}
