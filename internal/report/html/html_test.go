package html_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/browsertest"
	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/floor"
	"github.com/retrieval-gate/retrieval-gate/internal/input/inputtest"
	"github.com/retrieval-gate/retrieval-gate/internal/input/trecfile"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
	"github.com/retrieval-gate/retrieval-gate/internal/report/comparereport"
	rhtml "github.com/retrieval-gate/retrieval-gate/internal/report/html"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// TestMain ends the package's one Chromium after the tests. The browser tests
// (…InBrowser, TestCompareDashboardWithoutScript) run in parallel, as many at
// once as go test's -parallel (GOMAXPROCS by default): each opens tabs of that
// browser (browsertest.Start) and spends most of its time waiting on it, on
// the load, the script and the screenshot.
func TestMain(m *testing.M) {
	code := m.Run()
	browsertest.Shutdown()
	if demoShared.r != nil && sharedDemoUnchanged() != 0 {
		code = 1
	}
	os.Exit(code)
}

const demo = "../../../testdata/compare"

// demoStrategies are the compare demo's runs, in command-line order.
var demoStrategies = []string{"bm25", "dense", "dense+rerank", "hybrid", "hybrid+rerank"}

// demoResult is the compare demo's result, computed once for the package's
// tests (2,000 resamples of five strategies, about a tenth of a second of CPU
// each time; two dozen tests read it). A test reads it and never changes it:
// TestMain checks, after the tests, that it still renders as a fresh one
// does. A test that edits a result takes its own (freshDemoResult).
func demoResult(t testing.TB) *compare.Result {
	t.Helper()
	demoShared.once.Do(func() { demoShared.r, demoShared.err = computeDemo(compare.GateOptions{}) })
	require.NoError(t, demoShared.err)
	return demoShared.r
}

// demoShared is demoResult's result.
var demoShared struct {
	once sync.Once
	r    *compare.Result
	err  error
}

// freshDemoResult is the compare demo computed anew: for a test that edits the
// result (or what is built from it) or checks that a second computation is
// byte-identical.
func freshDemoResult(t testing.TB) *compare.Result { return demoResultGated(t, compare.GateOptions{}) }

// sharedDemoUnchanged is TestMain's check that no test changed demoResult's
// result: its page is a fresh result's, byte for byte (0), or it says what
// differs (1).
func sharedDemoUnchanged() int {
	fresh, err := computeDemo(compare.GateOptions{})
	var a, b bytes.Buffer
	if err == nil {
		err = rhtml.CompareHTML(&a, comparereport.New(demoShared.r), demoShared.r, nil)
	}
	if err == nil {
		err = rhtml.CompareHTML(&b, comparereport.New(fresh), fresh, nil)
	}
	switch {
	case err != nil:
		fmt.Fprintln(os.Stderr, "the shared compare demo result:", err)
		return 1
	case !bytes.Equal(a.Bytes(), b.Bytes()):
		fmt.Fprintln(os.Stderr, "a test changed the shared compare demo result (demoResult): its page is no longer a fresh result's; give that test freshDemoResult")
		return 1
	}
	return 0
}

// demoResultGated is the compare demo with the gates of g.
func demoResultGated(t testing.TB, g compare.GateOptions) *compare.Result {
	t.Helper()
	r, err := computeDemo(g)
	require.NoError(t, err)
	return r
}

// computeDemo runs compare on the demo with the gates of g.
func computeDemo(g compare.GateOptions) (*compare.Result, error) {
	ctx := context.Background()
	q, err := inputtest.ReadQrels(ctx, filepath.Join(demo, "qrels.trec"))
	if err != nil {
		return nil, err
	}
	var in []compare.Input
	for _, name := range demoStrategies {
		run, err := inputtest.ReadRun(ctx, filepath.Join(demo, name+".trec"), 10, trecfile.RunOptions{})
		if err != nil {
			return nil, err
		}
		in = append(in, compare.Input{Name: name, Run: run})
	}
	// The demo's queries (compare --queries): the best and worst show their texts.
	f, err := os.Open(filepath.Join(demo, "queries.jsonl"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	qs, err := compare.ReadQueries(ctx, f, "queries.jsonl")
	if err != nil {
		return nil, err
	}
	return compare.Compare(q, in, compare.Options{K: 10, Gain: metrics.GainExp, RelevantLevel: 2, Resamples: 2000, Seed: metrics.DefaultSeed, Gate: g,
		Queries: qs, QueriesFile: "queries.jsonl"})
}

func viewOf(r *compare.Result) rhtml.CompareView {
	return rhtml.CompareViewOf(comparereport.New(r), r, nil)
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "go test ./internal/report/html -update creates %s", path)
	if string(want) == string(got) {
		return
	}
	w, g := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	for i := 0; i < max(len(w), len(g)); i++ {
		if i >= len(w) || i >= len(g) || w[i] != g[i] {
			at := func(l []string) string {
				if i < len(l) {
					return l[i]
				}
				return "(end of file)"
			}
			t.Fatalf("golden file %s differs at line %d (go test ./internal/report/html -update rewrites it):\nwant: %.300s\ngot:  %.300s", path, i+1, at(w), at(g))
		}
	}
}

func render(t testing.TB, r *compare.Result) []byte {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, rhtml.CompareHTML(&b, comparereport.New(r), r, nil))
	return b.Bytes()
}

// The dashboard of the compare demo: golden, byte-identical on a second run,
// self-contained.
func TestCompareDashboardGolden(t *testing.T) {
	r := demoResult(t)
	got := render(t, r)
	assert.Contains(t, string(got), "rbp_at_k · p = 0.8", "a measure's own parameters under its key")
	for i := range metrics.QueryMeasures { // every registered measure has its row
		assert.Contains(t, string(got), `<span class="ci">`+rhtml.Esc(metrics.QueryMeasures[i].Key), metrics.QueryMeasures[i].Key)
	}
	golden(t, "compare-demo.html", got)
	assert.Equal(t, got, render(t, freshDemoResult(t)), "same input, same bytes")
	for _, banned := range []string{"http://", "https://", "<link", "@import", "url(", "src=", "unsafe-inline", "unsafe-eval"} {
		assert.NotContains(t, string(got), banned)
	}
	// One data block and one script, the script allowed by its hash alone.
	s := string(got)
	assert.Equal(t, 2, strings.Count(s, "<script"))
	assert.Contains(t, s, `<script type="application/json" id="rg-data">{`)
	i := strings.Index(s, "<script>") + len("<script>")
	js := s[i : i+strings.Index(s[i:], "</script>")]
	sum := sha256.Sum256([]byte(js))
	assert.Contains(t, s, "script-src 'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'")
	assert.Regexp(t, `content="default-src 'none'; style-src 'sha256-[A-Za-z0-9+/=]+'; img-src data:; script-src 'sha256-[A-Za-z0-9+/=]+'; base-uri 'none'; form-action 'none'"`, s)
}

func TestCompareViewPairsAndSamples(t *testing.T) {
	v := viewOf(demoResult(t))
	names := func(g [2]int) [2]string {
		var out [2]string
		for i, x := range g {
			if x >= 0 {
				out[i] = v.Strategies[x].Name
			}
		}
		return out
	}
	var groups [][2]string
	for _, g := range v.Groups {
		groups = append(groups, names(g))
	}
	// Sorted by the better of each pair's mean dcg; bm25 has no reranked run.
	assert.Equal(t, [][2]string{{"hybrid", "hybrid+rerank"}, {"dense", "dense+rerank"}, {"bm25", ""}}, groups)
	require.Len(t, v.Pairs, 2)
	assert.Equal(t, "hybrid+rerank", v.Pairs[0].Test.A)
	assert.Equal(t, "hybrid", v.Pairs[0].Test.B)
	assert.Equal(t, "hybrid+rerank", v.Strategies[v.Best].Name)
	assert.Equal(t, 113, v.Evaluated)
	// Every strategy's best and worst queries by every measure, as the
	// document lists them (compare.Handful each), in the measure's order,
	// with their values.
	require.Len(t, v.QueryStrategies, len(v.Strategies))
	for _, qs := range v.QueryStrategies {
		require.Len(t, qs.By, metrics.NumGraded, qs.Strategy)
		for key, l := range qs.By {
			assert.Len(t, l.Best, compare.Handful, qs.Strategy)
			assert.Len(t, l.Worst, compare.Handful, qs.Strategy)
			for i := 1; i < len(l.Best); i++ {
				assert.GreaterOrEqual(t, l.Best[i-1].Values[key], l.Best[i].Values[key], "%s by %s", qs.Strategy, key)
				assert.LessOrEqual(t, l.Worst[i-1].Values[key], l.Worst[i].Values[key], "%s by %s", qs.Strategy, key)
			}
		}
	}
	for _, s := range v.Strategies {
		assert.LessOrEqual(t, len(s.FailedSample), rhtml.Sample)
	}
}

// User-controlled text (strategy names, query ids) is escaped.
func TestCompareEscapes(t *testing.T) {
	v := viewOf(freshDemoResult(t))
	v.Strategies[0].Name = `<img src=x onerror=alert(1)>&"`
	l := v.QueryStrategies[0].By[v.Primary]
	l.Best[0].ID = "</td><script>x</script>"
	l.Best[1].Text = "</td><script>y</script>\u202e"
	v.Texts = true
	// The embedded data of "Select run" cannot end its element or reorder text.
	d := comparereport.New(freshDemoResult(t))
	evil := "</script><img src=x onerror=alert(1)>\u202e"
	d.Order[0] = evil
	d.Strategies[evil] = d.Strategies["bm25"]
	var page bytes.Buffer
	require.NoError(t, rhtml.CompareHTML(&page, d, freshDemoResult(t), nil))
	assert.NotContains(t, page.String(), "<img src=x")
	assert.Equal(t, 2, strings.Count(page.String(), "</script>"))
	assert.Contains(t, page.String(), `"name":"\u003c/script\u003e\u003cimg src=x onerror=alert(1)\u003e(U+202E)"`)
	var b bytes.Buffer
	require.NoError(t, rhtml.Compare(&b, v))
	s := b.String()
	assert.NotContains(t, s, "<img src=x")
	assert.NotContains(t, s, "<script>x")
	assert.NotContains(t, s, "<script>y")
	assert.Contains(t, s, "&lt;/td&gt;&lt;script&gt;y&lt;/script&gt;(U+202E)</td>")
	assert.Contains(t, s, "&lt;img src=x onerror=alert(1)&gt;&amp;&#34;")
}

// In Chromium at a phone's, the comment column's and a desktop's width: no
// console error, no request, no horizontal overflow, and one mark per value:
// 5 bars, 5 lines of 10 points.
func TestCompareDashboardInBrowser(t *testing.T) {
	t.Parallel()
	b := browsertest.Start(t)
	path := filepath.Join(t.TempDir(), "compare.html")
	require.NoError(t, os.WriteFile(path, render(t, demoResult(t)), 0o644))
	marks := map[string]int{
		`rect[data-mark="bar"]`:     5,
		`path[data-mark="line"]`:    5,
		`circle[data-mark="point"]`: 50,
		`.sr-only table`:            2,
	}
	for _, m := range browsertest.Check(t, b, browsertest.Page{Name: "compare-dashboard", Path: path, Widths: []int{390, 850, 1400}, Marks: marks, Script: captionsJS}) {
		assert.Equal(t, "rgb(255, 255, 255)", m.Background)
		caps := assertCaptions(t, "compare-dashboard", m)
		// The reranker table's caption, its measure and scale ("DCG@10 (of
		// 31.805)"), reads on one line at every width: at 390 px, where the
		// table is a card per row, it wrapped word by word.
		i := slices.IndexFunc(caps, func(c caption) bool { return c.Section == "Base vs reranker (this run)" })
		require.GreaterOrEqual(t, i, 0, "at %d px: the reranker table's caption", m.Width)
		assert.Equal(t, "DCG@10 (of 31.805)", caps[i].Text)
		assert.Equal(t, 1, caps[i].Lines, "at %d px: %q on one line", m.Width, caps[i].Text)
	}
	// With the gates: their table fits too.
	gated := filepath.Join(t.TempDir(), "compare-gated.html")
	require.NoError(t, os.WriteFile(gated, render(t, demoResultGated(t, gatedDemo)), 0o644))
	browsertest.Check(t, b, browsertest.Page{Name: "compare-dashboard-gates", Path: gated, Widths: []int{390, 850, 1400}, Shots: []int{850}, Marks: marks})
	// The same page in dark mode.
	for _, m := range browsertest.Check(t, b, browsertest.Page{Name: "compare-dashboard-dark", Path: path, Widths: []int{850}, Marks: marks, Dark: true}) {
		assert.Equal(t, "rgb(13, 17, 23)", m.Background)
	}
}

// captionsJS measures every table caption the page shows (none of a table
// for screen readers, of a hidden run's block or of a collapsed section):
// its text, the heading of its section, its box and its table's, and the
// lines its text takes.
const captionsJS = `(() => [...document.querySelectorAll("caption")].filter((c) => !c.closest(".sr-only,[hidden]") && c.getClientRects().length > 0).map((c) => {
  const r = c.getBoundingClientRect(), t = c.closest("table").getBoundingClientRect(), range = document.createRange();
  range.selectNodeContents(c);
  const hs = [...document.querySelectorAll("h2")].filter((h) => h.compareDocumentPosition(c) & Node.DOCUMENT_POSITION_FOLLOWING);
  return {text: c.textContent, section: hs.length ? hs[hs.length - 1].textContent : "", left: r.left, right: r.right, width: r.width, table: t.width,
    lines: new Set([...range.getClientRects()].filter((x) => x.width > 0).map((x) => Math.round(x.top))).size, vw: document.documentElement.clientWidth};
}))()`

// caption is what captionsJS measures of a caption.
type caption struct {
	Text, Section                 string
	Left, Right, Width, Table, VW float64
	Lines                         int
}

// assertCaptions checks the captions captionsJS measured (m.Result): each
// inside the page and as wide as its table, so that its words wrap only
// where its table's width makes them (a caption squeezed into a narrower box
// wraps word by word: a table laid out as cards below 700 px left its
// caption the width of its longest word). It returns them.
func assertCaptions(t *testing.T, name string, m *browsertest.Measure) []caption {
	t.Helper()
	var caps []caption
	require.NoError(t, json.Unmarshal(m.Result, &caps))
	require.NotEmpty(t, caps, "%s at %d px: the page's captions", name, m.Width)
	for _, c := range caps {
		at := fmt.Sprintf("%s at %d px: %q under %q", name, m.Width, c.Text, c.Section)
		assert.GreaterOrEqual(t, c.Left, -0.5, at)
		assert.LessOrEqual(t, c.Right, c.VW+0.5, at)
		assert.GreaterOrEqual(t, c.Width, c.Table-1, "%s: the caption is narrower than its table", at)
	}
	return caps
}

// gatedDemo gates the compare demo on bm25: a floor it passes, a floor it
// fails, and not_beaten, which it fails.
var gatedDemo = compare.GateOptions{Strategy: "bm25", FailIfBeaten: true, Floors: floor.List{
	{Measure: "ndcg_at_k", Group: outcome.GroupOverall, Value: 0.1}, {Measure: "dcg_at_k", Group: outcome.GroupOverall, Value: 9}}}

// compare's dashboard shows the gates asked for, as the Markdown does, and no
// gate section without them.
func TestCompareDashboardGates(t *testing.T) {
	s := string(render(t, demoResultGated(t, gatedDemo)))
	assert.Contains(t, s, "<h2>Gates: fail</h2>")
	for _, g := range []string{"floor:ndcg_at_k", "floor:dcg_at_k", "not_beaten"} {
		assert.Contains(t, s, `<tr><th scope="row">`+g+`</th><td data-label="group"><span class="cv">strategy:bm25</span></td>`, g)
	}
	assert.Equal(t, 3, strings.Count(s, `<span class="cv">strategy:bm25</span>`))
	assert.Equal(t, 2, strings.Count(s, "<strong>fail</strong>"), "the failed gates are marked")
	assert.NotContains(t, string(render(t, demoResult(t))), "Gates")
}

func TestEsc(t *testing.T) {
	assert.Equal(t, "a&lt;b&gt; &amp;&#39;&#34; c\uFFFD", rhtml.Esc("a<b>\n&'\"\tc\xff"))
	// Format characters are shown, not obeyed: a bidi override cannot reorder an id.
	assert.Equal(t, "id(U+202E)gnp.exe zero(U+200B)width", rhtml.Esc("id\u202Egnp.exe zero\u200Bwidth"))
	// So are noncharacters and the other invisible characters, as the terminal shows them.
	assert.Equal(t, "en-(U+FFFF)-b en-(U+3164)-d x(U+FE0F)", rhtml.Esc("en-\uFFFF-b en-\u3164-d x\uFE0F"))
	assert.True(t, strings.HasPrefix(rhtml.Count(1234567), "1,234,567"))
	assert.Equal(t, "-1,000", rhtml.Count(-1000))
	assert.Equal(t, "999", rhtml.Count(999))
}
