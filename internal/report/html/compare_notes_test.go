package html_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/input/trecfile"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/report/comparereport"
	htmlreport "github.com/retrieval-gate/retrieval-gate/internal/report/html"
)

// A scenario's or a diagnosis finding's interval marked unreliable carries
// its mark on the page, with the footnote under its section, as the decision
// card's does: the page never shows such an interval as a plain 95% CI.
func TestCompareScenarioAndFindingMarksHaveFootnotes(t *testing.T) {
	q, err := trecfile.ParseQrels(context.Background(), strings.NewReader("q1 0 g 3\nq2 0 g 2\nq3 0 g 3\n"), "qrels.txt")
	require.NoError(t, err)
	run := func(name string, docs ...string) compare.Input {
		return compare.Input{Name: name, Run: &trecfile.Run{File: name + ".run", K: 10, Queries: []trecfile.RunQuery{{ID: "q1", Docs: docs}, {ID: "q2", Docs: docs}, {ID: "q3", Docs: docs}}}}
	}
	res, err := compare.Compare(q, []compare.Input{run("dense", "x", "g"), run("hybrid", "g", "x")},
		compare.Options{K: 2, Gain: metrics.GainExp, RelevantLevel: 2, Resamples: 200, Seed: 1})
	require.NoError(t, err)
	page := func(d *comparereport.Document) string {
		var b bytes.Buffer
		require.NoError(t, htmlreport.CompareHTML(&b, d, res, nil))
		return b.String()
	}
	foot := htmlreport.Esc(comparereport.UnreliableLine) + "."
	d := comparereport.New(res)
	d.Scenarios = []comparereport.Scenario{{Code: "dense-matches-hybrid", Strategy: "hybrid", Versus: "dense",
		Test: &comparereport.Paired{Strategy: "hybrid", Baseline: "dense", Metric: "dcg_at_k", N: 3, Delta: 0.15, CI95: [2]format.Float{-0.42, 0.72}, PValue: 0.57, Primary: true, Unreliable: true}}}
	d.Findings = []compare.Finding{{Kind: compare.HybridVsLexical, A: "hybrid", B: "bm25",
		Test: compare.Paired{Strategy: "hybrid", Baseline: "bm25", Metric: "dcg_at_k", N: 3, Delta: 0.4, CI: metrics.Interval{Lo: 0.1, Hi: 0.7, N: 3, Unreliable: true}, PHolm: 0.01, Significant: true}}}
	p := page(d)
	todo := p[strings.Index(p, "<h2>What to do</h2>"):]
	todo = todo[:strings.Index(todo[1:], "<h2>")+1]
	assert.Contains(t, todo, "95% CI [-0.420, +0.720]†, Holm p")
	assert.Contains(t, todo, `<p class="note">`+foot+"</p>")
	diag := p[strings.Index(p, "<h2>Diagnosis</h2>"):]
	assert.Contains(t, diag, "95% CI [+0.100, +0.700]†, Holm p")
	assert.Contains(t, diag, `<p class="note">`+foot+"</p>")
	// Nothing marked, no footnote there.
	d.Scenarios[0].Test.Unreliable, d.Findings[0].Test.CI.Unreliable = false, false
	p = page(d)
	todo = p[strings.Index(p, "<h2>What to do</h2>"):]
	todo = todo[:strings.Index(todo[1:], "<h2>")+1]
	assert.NotContains(t, todo, `<p class="note">`+foot)
	assert.NotContains(t, p[strings.Index(p, "<h2>Diagnosis</h2>"):], `<p class="note">`+foot)
}
