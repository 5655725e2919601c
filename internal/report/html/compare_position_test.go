package html_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/browsertest"
	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/input/trecfile"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/report/comparereport"
	rhtml "github.com/retrieval-gate/retrieval-gate/internal/report/html"
)

// holeResult has a rank where nothing is judged: "a" retrieves only
// unjudged documents at rank 2, "b" nothing at rank 3.
func holeResult(t *testing.T) *compare.Result {
	t.Helper()
	q, err := trecfile.ParseQrels(context.Background(), strings.NewReader("q1 0 g 3\nq2 0 g 2\nq2 0 h 1\n"), "qrels.txt")
	require.NoError(t, err)
	runs := map[string][][]string{"a": {{"g", "x", "h"}, {"g", "y", "h"}}, "b": {{"x", "g"}, {"h", "g"}}}
	var in []compare.Input
	for _, name := range []string{"a", "b"} {
		d := runs[name]
		in = append(in, compare.Input{Name: name, Run: &trecfile.Run{File: name + ".run", K: 10, Queries: []trecfile.RunQuery{{ID: "q1", Docs: d[0]}, {ID: "q2", Docs: d[1]}}}})
	}
	r, err := compare.Compare(q, in, compare.Options{K: 3, Gain: metrics.GainExp, RelevantLevel: 2, Resamples: 200, Seed: 1})
	require.NoError(t, err)
	return r
}

// positionFigure is the SVG of the chart of mean relevance by rank.
func positionFigure(t *testing.T, page string) string {
	t.Helper()
	_, rest, ok := strings.Cut(page, "<h2>Mean relevance by result position (this run)</h2>")
	require.True(t, ok)
	fig, _, ok := strings.Cut(rest, "</figure>")
	require.True(t, ok)
	return fig
}

// A rank with no judged result is a gap in its line, not a point at 0; every
// point says its n of judged results.
func TestCompareDashboardPositionGaps(t *testing.T) {
	r := holeResult(t)
	a, b := r.Strategies[0], r.Strategies[1]
	assert.Equal(t, []int{2, 0, 1}, a.ByPositionN)
	assert.True(t, math.IsNaN(a.ByPosition[1]))
	assert.Equal(t, []int{1, 2, 0}, b.ByPositionN)
	var buf bytes.Buffer
	require.NoError(t, rhtml.CompareHTML(&buf, comparereport.New(r), r, nil))
	page := buf.String()
	fig := positionFigure(t, page)
	assert.Equal(t, 4, strings.Count(fig, `data-mark="point"`), "two defined ranks each")
	for _, tip := range []string{"a · rank 1: 2.500, n = 2 judged", "a · rank 3: 1.000, n = 1 judged", "b · rank 1: 1.000, n = 1 judged", "b · rank 2: 2.500, n = 2 judged"} {
		assert.Contains(t, fig, "<title>"+tip+"</title>")
	}
	assert.NotContains(t, fig, "rank 2: 0", "no drop to 0")
	lines := regexp.MustCompile(`data-mark="line" class="[^"]*" d="([^"]*)"`).FindAllStringSubmatch(fig, -1)
	require.Len(t, lines, 2)
	assert.Equal(t, 2, strings.Count(lines[0][1], "M"), "a's line breaks at rank 2: %s", lines[0][1])
	assert.NotContains(t, lines[0][1], "L", "a has no two adjacent defined ranks")
	assert.Equal(t, 1, strings.Count(lines[1][1], "M"), "b's line stops at rank 2: %s", lines[1][1])
	assert.Contains(t, page, "a rank with none judged has no point")
	assert.NotContains(t, page, "A missing result counts 0")
}

// A report written before n per rank (no relevance_by_position_n) reads back
// as written: its means count unjudged results as 0, and the page says so.
func TestCompareDashboardPositionOldReport(t *testing.T) {
	r := holeResult(t)
	doc := comparereport.New(r)
	for _, s := range doc.Strategies {
		s.RelevanceByPositionN = nil
	}
	var buf bytes.Buffer
	require.NoError(t, rhtml.CompareHTML(&buf, doc, r, nil))
	assert.Contains(t, buf.String(), "Written before n per rank: an unjudged or missing result counts 0.")
	assert.NotContains(t, positionFigure(t, buf.String()), "judged</title>")
}

func TestCompareDashboardPositionGapsInBrowser(t *testing.T) {
	t.Parallel()
	br := browsertest.Start(t)
	r := holeResult(t)
	var buf bytes.Buffer
	require.NoError(t, rhtml.CompareHTML(&buf, comparereport.New(r), r, nil))
	path := filepath.Join(t.TempDir(), "compare-gaps.html")
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
	// The chart's points as drawn: their y against the axis's 0.
	const script = `(() => {
  const fig = [...document.querySelectorAll("figure.chart")].find((f) => f.querySelector("figcaption").textContent.startsWith("Mean relevance (0–3) at each rank"));
  const svg = fig.querySelector("svg");
  const zero = [...svg.querySelectorAll("text.tick")].find((t) => t.getAttribute("text-anchor") === "end" && Number(t.textContent) === 0);
  return {
    points: [...svg.querySelectorAll('circle[data-mark="point"]')].map((c) => ({tip: c.querySelector("title").textContent, y: c.getBBox().y + c.getBBox().height / 2})),
    lines: [...svg.querySelectorAll('path[data-mark="line"]')].map((p) => p.getAttribute("d")),
    zeroY: zero ? Number(zero.getAttribute("y")) - 4 : null,
  };
})()`
	ms := browsertest.Check(t, br, browsertest.Page{Name: "compare-gaps", Path: path, Widths: []int{390, 1400}, Shots: []int{390}, Script: script,
		Marks: map[string]int{`path[data-mark="line"]`: 2}})
	for _, m := range ms {
		var got struct {
			Points []struct {
				Tip string
				Y   float64
			}
			Lines []string
			ZeroY *float64
		}
		require.NoError(t, json.Unmarshal(m.Result, &got))
		require.Len(t, got.Points, 4, "no point where nothing is judged")
		require.NotNil(t, got.ZeroY)
		for _, p := range got.Points {
			assert.Contains(t, p.Tip, "judged")
			assert.Less(t, p.Y, *got.ZeroY-1, "%s: drawn above 0", p.Tip)
		}
		assert.Equal(t, 2, strings.Count(got.Lines[0], "M"), "a gap in a's line")
	}
}

// srRows are the rows of the screen-reader tables in s (the charts' values),
// each its cells' text.
func srRows(s string) [][]string {
	var rows [][]string
	for _, tbl := range regexp.MustCompile(`(?s)<div class="sr-only"><table>.*?</table></div>`).FindAllString(s, -1) {
		for _, tr := range regexp.MustCompile(`<tr><th scope="row">.*?</tr>`).FindAllString(tbl, -1) {
			var row []string
			for _, c := range regexp.MustCompile(`<t[hd][^>]*>([^<]*)</t[hd]>`).FindAllStringSubmatch(tr, -1) {
				row = append(row, c[1])
			}
			rows = append(rows, row)
		}
	}
	return rows
}

// The chart's table gives every rank its n of judged results, a rank with
// none judged "—" with n 0 (the hover text's n, now readable without a mouse).
// It has no interval column: compare computes no interval of the mean
// relevance at a rank, and the renderer computes none.
func TestCompareDashboardPositionTableN(t *testing.T) {
	r := holeResult(t)
	var buf bytes.Buffer
	require.NoError(t, rhtml.CompareHTML(&buf, comparereport.New(r), r, nil))
	fig := positionFigure(t, buf.String())
	assert.Contains(t, fig, `<th scope="col">mean relevance</th><th scope="col">n</th></tr></thead>`)
	assert.NotContains(t, fig, "95% CI")
	assert.Equal(t, [][]string{
		{"a", "1", "2.500", "2"}, {"a", "2", "—", "0"}, {"a", "3", "1.000", "1"},
		{"b", "1", "1.000", "1"}, {"b", "2", "2.500", "2"}, {"b", "3", "—", "0"},
	}, srRows(fig))

	// A report written before n per rank: its n is not known, and says so.
	doc := comparereport.New(r)
	for _, s := range doc.Strategies {
		s.RelevanceByPositionN = nil
	}
	buf.Reset()
	require.NoError(t, rhtml.CompareHTML(&buf, doc, r, nil))
	rows := srRows(positionFigure(t, buf.String()))
	require.NotEmpty(t, rows)
	for _, row := range rows {
		require.Len(t, row, 4)
		assert.Equal(t, "unknown", row[3], "%v", row)
	}
}
