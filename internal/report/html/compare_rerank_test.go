package html_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/input/trecfile"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/report/comparereport"
	htmlreport "github.com/retrieval-gate/retrieval-gate/internal/report/html"
)

// rerankComparison is a comparison of strategies and their reranked
// counterparts over 20 queries, each query with one relevant document "r"
// (grade 3) and one other "x": rank[name][i] is where strategy name puts "r"
// for query i (1 or 2).
func rerankComparison(t *testing.T, rank map[string]func(i int) int, o compare.Options) *compare.Result {
	t.Helper()
	return rerankComparisonOf(t, []string{"a", "a+rerank", "b", "b+rerank"}, rank, o)
}

// rerankComparisonOf is rerankComparison of the strategies names.
func rerankComparisonOf(t *testing.T, names []string, rank map[string]func(i int) int, o compare.Options) *compare.Result {
	t.Helper()
	var qr strings.Builder
	const queries = 20
	for i := range queries {
		fmt.Fprintf(&qr, "q%02d 0 r 3\nq%02d 0 x 0\n", i, i)
	}
	q, err := trecfile.ParseQrels(context.Background(), strings.NewReader(qr.String()), "q.trec")
	require.NoError(t, err)
	var in []compare.Input
	for _, name := range names {
		var qs []trecfile.RunQuery
		for i := range queries {
			docs := []string{"r", "x"}
			if rank[name](i) == 2 {
				docs = []string{"x", "r"}
			}
			qs = append(qs, trecfile.RunQuery{ID: fmt.Sprintf("q%02d", i), Docs: docs})
		}
		in = append(in, compare.Input{Name: name, Run: &trecfile.Run{File: name, Format: "trec", K: 2, Queries: qs}})
	}
	res, err := compare.Compare(q, in, o)
	require.NoError(t, err)
	return res
}

// The base-vs-reranker table's foot names the test each pair's p comes from
// (the finding's p_value_method, as the methods line words it), never a test
// that was not run, and the measure the test is on.
func TestCompareRerankTestNamed(t *testing.T) {
	first := func(int) int { return 1 }
	second := func(int) int { return 2 }
	someFirst := func(i int) int { // b+rerank lifts "r" to the top on 6 of 20 queries
		if i < 6 {
			return 1
		}
		return 2
	}
	tests := []struct {
		name string
		rank map[string]func(int) int
		o    compare.Options
		foot string
		head string // the Δ column's head: the test's measure
	}{
		{"one test for every pair: exact sign-flip",
			map[string]func(int) int{"a": second, "a+rerank": someFirst, "b": second, "b+rerank": someFirst},
			compare.Options{K: 2, Gain: metrics.GainExp, RelevantLevel: 2, Resamples: 200, Seed: 1},
			"p: exact sign-flip, Holm-adjusted with the report's other paired comparisons on DCG@2;", "Δ DCG@2"},
		{"two tests: none for an identical pair, exact sign-flip for the other",
			map[string]func(int) int{"a": first, "a+rerank": first, "b": second, "b+rerank": someFirst},
			compare.Options{K: 2, Gain: metrics.GainExp, RelevantLevel: 2, Resamples: 200, Seed: 1},
			"p: none: every paired difference is 0 (p = 1) for a; exact sign-flip for b; each Holm-adjusted with the report's other paired comparisons on DCG@2;", "Δ DCG@2"},
		{"the primary measure named",
			map[string]func(int) int{"a": second, "a+rerank": someFirst, "b": second, "b+rerank": someFirst},
			compare.Options{K: 2, Gain: metrics.GainExp, RelevantLevel: 2, Resamples: 200, Seed: 1, Primary: metrics.KeyNDCGGraded},
			"p: exact sign-flip, Holm-adjusted with the report's other paired comparisons on nDCG@2;", "Δ nDCG@2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := rerankComparison(t, tt.rank, tt.o)
			var methods []string
			for _, f := range res.Findings {
				if f.Kind == compare.Reranker {
					methods = append(methods, f.Test.PMethod)
				}
			}
			require.Len(t, methods, 2, "a finding per reranked pair")
			var b bytes.Buffer
			require.NoError(t, htmlreport.CompareHTML(&b, comparereport.New(res), res, nil))
			page := b.String()
			section := page[strings.Index(page, "<h2>Base vs reranker"):]
			i := strings.Index(section, "Δ is reranked − base")
			require.GreaterOrEqual(t, i, 0)
			foot := section[i : i+strings.Index(section[i:], "</p>")]
			// The table is on the test's measure: its head and caption, and
			// the means of that measure (nDCG@2 is at most 1, DCG@2 up to 7).
			table := section[:i]
			assert.Contains(t, table, `<th scope="col" class="num">`+tt.head+`</th>`)
			assert.Contains(t, table, "<caption>"+strings.TrimPrefix(tt.head, "Δ "))
			if tt.o.Primary == metrics.KeyNDCGGraded {
				assert.NotContains(t, table, "DCG@2 (of", "no DCG in a table on nDCG")
				assert.Contains(t, table, `<span class="cv">0.631<span class="ci">`, "b's mean nDCG@2: 1/log2(3)")
			}
			assert.Contains(t, foot, htmlreport.Esc(tt.foot))
			assert.NotContains(t, foot, "randomization", "no randomization test was run: %v", methods)
		})
	}
}

// rerankSection is the page's "Base vs reranker" section of this run: its
// table and the note under it.
func rerankSection(t *testing.T, page string) string {
	t.Helper()
	i := strings.Index(page, "<h2>Base vs reranker (this run)")
	require.GreaterOrEqual(t, i, 0)
	s := page[i:]
	return s[:strings.Index(s, "<h2>")+len("<h2>")+strings.Index(s[len("<h2>"):], "<h2>")]
}

// A compare report rendered again from its JSON (report --from, an earlier
// run of the history) shows the reranker tests as the run's own page does:
// the JSON carries them ("rerankers"). One written before it did says the
// test is not there.
func TestCompareRerankTestReadBack(t *testing.T) {
	first := func(int) int { return 1 }
	second := func(int) int { return 2 }
	res := rerankComparison(t, map[string]func(int) int{"a": second, "a+rerank": first, "b": first, "b+rerank": second},
		compare.Options{K: 2, Gain: metrics.GainExp, RelevantLevel: 2, Resamples: 200, Seed: 1})
	d := comparereport.New(res)
	var js, fresh bytes.Buffer
	require.NoError(t, d.WriteJSON(&js))
	require.NoError(t, htmlreport.CompareHTML(&fresh, d, res, nil))
	want := rerankSection(t, fresh.String())
	require.Contains(t, want, "reranker helps")
	require.Contains(t, want, "reranker hurts")

	back, err := comparereport.Read(bytes.NewReader(js.Bytes()))
	require.NoError(t, err)
	var page bytes.Buffer
	require.NoError(t, htmlreport.CompareHTML(&page, back, nil, nil))
	assert.Equal(t, want, rerankSection(t, page.String()), "the same tests, read back")

	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(js.Bytes(), &m))
	delete(m, "rerankers")
	written, err := json.Marshal(m)
	require.NoError(t, err)
	back, err = comparereport.Read(bytes.NewReader(written))
	require.NoError(t, err)
	page.Reset()
	require.NoError(t, htmlreport.CompareHTML(&page, back, nil, nil))
	s := rerankSection(t, page.String())
	assert.Equal(t, 2, strings.Count(s, "not tested here"), "a document written before the JSON carried them")
	assert.Contains(t, s, "the test behind Δ and p is not in this run&#39;s JSON report")
}

// compare pairs a reranked run with its base by the names' words (compare's
// diagnosis: "dense" and "dense-ce", "bm25" and "bm25_rr"), and its JSON's
// rerankers and the text report list those pairs; the dashboard's base vs
// reranker table lists the same ones, each with the reranked run's name
// where it is not NAME+rerank. It used to pair NAME and NAME+rerank only
// and read "No strategy has a reranked counterpart" beside the JSON's two.
func TestCompareRerankPairsAsCompare(t *testing.T) {
	first := func(int) int { return 1 }
	second := func(int) int { return 2 }
	res := rerankComparisonOf(t, []string{"dense", "dense-ce", "bm25", "bm25_rr"},
		map[string]func(int) int{"dense": second, "dense-ce": first, "bm25": first, "bm25_rr": second},
		compare.Options{K: 2, Gain: metrics.GainExp, RelevantLevel: 2, Resamples: 200, Seed: 1})
	d := comparereport.New(res)
	require.Len(t, d.Rerankers, 2)
	var b bytes.Buffer
	require.NoError(t, htmlreport.CompareHTML(&b, d, res, nil))
	s := rerankSection(t, b.String())
	assert.NotContains(t, s, "No strategy has a reranked counterpart")
	assert.Contains(t, s, "reranked: dense-ce")
	assert.Contains(t, s, "reranked: bm25_rr")
	assert.Contains(t, s, "reranker helps")
	assert.Contains(t, s, "reranker hurts")
	assert.Less(t, strings.Index(s, "reranked: bm25_rr"), strings.Index(s, "reranked: dense-ce"), "in the chart's order: bm25's group first (the better DCG)")
}
