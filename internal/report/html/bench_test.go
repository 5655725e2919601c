package html_test

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/report/comparereport"
	rhtml "github.com/retrieval-gate/retrieval-gate/internal/report/html"
)

// bigResult is a comparison of n queries × 8 strategies (four with a reranked
// counterpart) as compare.Run leaves it for that size: per-query values, about a
// third of the queries failed per strategy, large-sample intervals (n × the
// default resamples exceeds the resampling budget).
func bigResult(n int) *compare.Result {
	const M = metrics.NumGraded
	r := &compare.Result{
		Options: compare.Options{K: 10, Gain: metrics.GainExp, RelevantLevel: 2, Baseline: "s0", Resamples: 10000, Seed: 1},
		Judged:  n, Recommended: compare.NoClearWinner,
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range n {
		r.QueryIDs = append(r.QueryIDs, fmt.Sprintf("q%07d", i))
	}
	names := []string{"bm25", "bm25+rerank", "dense", "dense+rerank", "hybrid", "hybrid+rerank", "splade", "splade+rerank"}
	for si, name := range names {
		s := compare.Strategy{Name: name, N: n, RunQueries: n, Values: make([]float64, n*M), ByPosition: make([]float64, 10), ByPositionN: make([]int, 10)}
		for i := range n {
			for m := range M {
				s.Values[i*M+m] = rng.Float64() * (1 + 0.1*float64(si))
			}
			if rng.IntN(3) == 0 {
				s.Failed = append(s.Failed, r.QueryIDs[i])
			}
		}
		for m := range M {
			s.Means[m] = 0.5 + 0.05*float64(si)
			s.CI[m] = metrics.Interval{Lo: s.Means[m] - 0.003, Hi: s.Means[m] + 0.003, N: int64(n), Method: metrics.MethodBCa}
		}
		for p := range s.ByPosition {
			s.ByPosition[p] = 2 / float64(p+2)
		}
		r.Strategies = append(r.Strategies, s)
		if si%2 == 1 { // the reranker finding of each pair, as compare's diagnosis writes it
			r.Findings = append(r.Findings, compare.Finding{Kind: compare.Reranker, A: name, B: names[si-1],
				Test: compare.Paired{Strategy: name, Baseline: names[si-1], Metric: metrics.KeyDCG, Delta: 0.05, CI: metrics.Interval{Lo: 0.04, Hi: 0.06, N: int64(n), Method: metrics.MethodBCa}, P: 1e-4, PHolm: 1e-3, Significant: true}})
		}
	}
	return r
}

type countWriter struct{ n int64 }

func (w *countWriter) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }

// BenchmarkCompareHTML renders the dashboard of 100,000 queries × 8 strategies
// (the adapter's selections and paired tests included); bytes/op is the size of
// the HTML.
func BenchmarkCompareHTML(b *testing.B) {
	r := bigResult(100_000)
	doc := comparereport.New(r) // built once per run for all of compare's outputs
	var w countWriter
	if err := rhtml.CompareHTML(&w, doc, r, nil); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := rhtml.CompareHTML(io.Discard, doc, r, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(w.n), "html-bytes")
}

// BenchmarkCompareHTMLOverRuns is BenchmarkCompareHTML with the chart over the
// runs at its cap: the newest 100 runs × 8 strategies (the view is built by
// the read of the history, not here).
func BenchmarkCompareHTMLOverRuns(b *testing.B) {
	r := bigResult(100_000)
	doc := comparereport.New(r)
	names := []string{"bm25", "bm25+rerank", "dense", "dense+rerank", "hybrid", "hybrid+rerank", "splade", "splade+rerank"}
	v, err := view(b, compareRuns(100, names, map[int]bool{30: true, 70: true}, 0), "compare", "dcg_at_k")
	if err != nil {
		b.Fatal(err)
	}
	var w countWriter
	if err := rhtml.CompareHTML(&w, doc, r, &v); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := rhtml.CompareHTML(io.Discard, doc, r, &v); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(w.n), "html-bytes")
}

// BenchmarkCompareHTMLExplore is the dashboard at the cap of "Select run": the
// newest 100 runs of a history whose every record is a full compare document
// of 8 strategies × 8 measures (the view built by the read of the history, as
// the command builds it, not here); data-bytes is the embedded data, html-bytes
// the whole page.
func BenchmarkCompareHTMLExplore(b *testing.B) {
	r := bigResult(1_000)
	doc := comparereport.New(r)
	var js bytes.Buffer
	if err := doc.WriteJSON(&js); err != nil {
		b.Fatal(err)
	}
	recs := compareRuns(100, []string{"s"}, map[int]bool{30: true, 70: true}, 0)
	for i := range recs {
		recs[i].Document = js.Bytes()
	}
	v, err := view(b, recs, "compare", "dcg_at_k")
	if err != nil {
		b.Fatal(err)
	}
	var page bytes.Buffer
	if err := rhtml.CompareHTML(&page, doc, r, &v); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := rhtml.CompareHTML(io.Discard, doc, r, &v); err != nil {
			b.Fatal(err)
		}
	}
	s := page.String()
	i := strings.Index(s, `id="rg-data">`)
	data := s[i:]
	data = data[:strings.Index(data, "</script>")]
	b.ReportMetric(float64(page.Len()), "html-bytes")
	b.ReportMetric(float64(len(data)), "data-bytes")
}
