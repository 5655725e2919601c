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
