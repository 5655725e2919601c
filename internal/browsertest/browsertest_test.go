package browsertest_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/browsertest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	browsertest.Shutdown()
	os.Exit(code)
}

func write(t *testing.T, name, html string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(html), 0o644))
	return p
}

// A clean page passes every assertion and its marks are counted.
func TestCleanPage(t *testing.T) {
	b := browsertest.Start(t)
	p := write(t, "clean.html", `<!doctype html><html><head><meta charset="utf-8"><title>ok</title></head><body>
<h1>Clean</h1><svg viewBox="0 0 100 10" width="100%"><rect data-mark="bar" width="10" height="5"/><rect data-mark="bar" x="20" width="10" height="5"/><rect width="1" height="1"/></svg>
<div style="position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)"><table><tr><td>`+strings.Repeat("wide ", 500)+`</td></tr></table></div>
</body></html>`)
	ms := browsertest.Check(t, b, browsertest.Page{Name: "clean", Path: p, Marks: map[string]int{"[data-mark=bar]": 2}})
	require.Len(t, ms, 2)
	assert.Equal(t, 850, ms[0].Width)
	assert.Equal(t, 1400, ms[1].Width)
}

// The harness sees each defect it is there to catch: a console error, an
// uncaught exception, a request leaving the file (failed, never sent), a page
// that scrolls sideways, a box whose content scrolls, and tall table rows.
func TestDefectsAreSeen(t *testing.T) {
	b := browsertest.Start(t)
	p := write(t, "bad.html", `<!doctype html><html><head><meta charset="utf-8"><title>bad</title></head><body>
<h2>Wide things</h2>
<img src="http://192.0.2.1/pixel.png" alt="">
<div id="wide" style="width:1000px">wide</div>
<div class="scroller" style="width:300px;overflow-x:auto"><div style="width:500px">inner</div></div>
<table><tr><td style="height:300px">tall</td></tr></table>
<script>console.error("boom", 42); throw new Error("uncaught");</script>
</body></html>`)
	ms := browsertest.Measures(t, b, browsertest.Page{Name: "bad", Path: p, Widths: []int{850}, Marks: map[string]int{"rect": 0}})
	require.Len(t, ms, 1)
	m := ms[0]
	assert.Equal(t, []string{"http://192.0.2.1/pixel.png"}, m.External)
	joined := strings.Join(m.ConsoleErrors, "\n")
	assert.Contains(t, joined, "console.error: boom 42")
	assert.Contains(t, joined, "uncaught")
	assert.Greater(t, m.ScrollWidth, m.ClientWidth)
	assert.Equal(t, 850, m.ClientWidth)
	var wide, scroller *browsertest.Overflow
	for i, o := range m.Overflows {
		if strings.HasPrefix(o.Element, "div#wide") {
			wide = &m.Overflows[i]
		}
		if strings.HasPrefix(o.Element, "div.scroller") {
			scroller = &m.Overflows[i]
		}
	}
	require.NotNil(t, wide, "%v", m.Overflows)
	assert.Equal(t, "beyond-viewport", wide.Kind)
	assert.Equal(t, 1000+8-850, wide.Pixels) // body margin 8 px
	assert.Contains(t, wide.Element, `under "Wide things"`)
	require.NotNil(t, scroller, "%v", m.Overflows)
	assert.Equal(t, browsertest.Overflow{Element: scroller.Element, Kind: "scrolls", Pixels: 200}, *scroller)
	require.Len(t, m.TallRows, 1)
	assert.Contains(t, m.TallRows[0], "tall")
	assert.Equal(t, 0, m.Marks["rect"])
}

// Load reuses a finished load's tab (Browser.tab): nothing of one load's
// settings or page reaches the next. Here a page loaded without JavaScript,
// in the dark scheme and narrow, then another with the defaults on the same
// tab (this package's tests run one at a time, so the idle tab is taken):
// its script runs, its scheme is light, its width is its own, and the first
// page's errors and request are not the second's; the first page loaded again
// with JavaScript shows its defects again.
func TestReusedTabStartsClean(t *testing.T) {
	b := browsertest.Start(t)
	const scheme = `<style>html{background:rgb(255,255,255)}@media (prefers-color-scheme: dark){html{background:rgb(0,0,0)}}</style>`
	dirty := write(t, "dirty.html", `<!doctype html><html><head><meta charset="utf-8"><title>dirty</title>`+scheme+`</head><body>
<img src="http://192.0.2.1/pixel.png" alt="">
<script>document.body.append(Object.assign(document.createElement("i"), {className: "ran"})); console.error("dirty");</script>
</body></html>`)
	clean := write(t, "clean.html", `<!doctype html><html><head><meta charset="utf-8"><title>clean</title>`+scheme+`</head><body>
<script>document.body.append(Object.assign(document.createElement("i"), {className: "ran"}));</script>
</body></html>`)
	marks := map[string]int{".ran": 0}
	first := browsertest.Measures(t, b, browsertest.Page{Name: "dirty", Path: dirty, Widths: []int{390}, NoScript: true, Dark: true, Marks: marks})
	require.Len(t, first, 1)
	assert.Equal(t, 0, first[0].Marks[".ran"], "no script ran")
	assert.Equal(t, "rgb(0, 0, 0)", first[0].Background)
	assert.Equal(t, 390, first[0].ClientWidth)
	assert.Equal(t, []string{"http://192.0.2.1/pixel.png"}, first[0].External)

	second := browsertest.Measures(t, b, browsertest.Page{Name: "clean", Path: clean, Widths: []int{850}, Marks: marks})
	require.Len(t, second, 1)
	assert.Equal(t, 1, second[0].Marks[".ran"], "the script ran")
	assert.Equal(t, "rgb(255, 255, 255)", second[0].Background)
	assert.Equal(t, 850, second[0].ClientWidth)
	assert.Empty(t, second[0].ConsoleErrors)
	assert.Empty(t, second[0].External)

	third := browsertest.Measures(t, b, browsertest.Page{Name: "dirty", Path: dirty, Widths: []int{1400}, Marks: marks})
	require.Len(t, third, 1)
	assert.Equal(t, 1, third[0].Marks[".ran"])
	assert.Contains(t, strings.Join(third[0].ConsoleErrors, "\n"), "console.error: dirty")
	assert.Equal(t, []string{"http://192.0.2.1/pixel.png"}, third[0].External)
}

// Text below MinText px is seen wherever a reader sees it: a text node (a
// table's interval line at .8em of 14 px), the content of a ::before (a
// card's label from data-label), an SVG text drawn smaller than its font size
// by its viewBox; each kind reported once per element and size, with how many
// more, text nodes first. Text not shown is not: in a closed <details>, display:none,
// visibility:hidden, screen-reader only; nor text at MinText, nor an SVG text
// drawn larger than its font size.
func TestSmallTextIsSeen(t *testing.T) {
	b := browsertest.Start(t)
	p := write(t, "small.html", `<!doctype html><html><head><meta charset="utf-8"><title>small</title>
<style>body{font-size:14px}.ci{font-size:.8em}td::before{content:attr(data-label);font-size:.85em}</style></head><body>
<h2>Intervals</h2>
<table><tr><td>0.5<span class="ci">[0.4, 0.6]</span></td><td>0.7<span class="ci">[0.6, 0.8]</span></td><td data-label="hit@5">0.9</td></tr></table>
<p style="font-size:12px">twelve</p>
<details><summary>more</summary><p style="font-size:8px">closed</p></details>
<p style="font-size:8px;display:none">none</p><p style="font-size:8px;visibility:hidden">invisible</p>
<div style="position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)"><span style="font-size:8px">sr only</span></div>
<svg viewBox="0 0 100 10" width="50"><text class="shrunk" y="8" style="font-size:12px">half</text></svg>
<svg viewBox="0 0 100 10" width="200"><text y="8" style="font-size:8px">double</text></svg>
</body></html>`)
	page := browsertest.Page{Name: "small", Path: p, Widths: []int{390}}
	ms := browsertest.Measures(t, b, page)
	require.Len(t, ms, 1)
	assert.Equal(t, []string{
		`span.ci under "Intervals": 11.2 px "[0.4, 0.6]" and 1 more like it`,
		`text.shrunk under "more": 6.0 px "half"`,
		`td under "Intervals": 11.9 px "::before hit@5"`,
	}, ms[0].SmallText)
}
