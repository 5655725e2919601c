package browsertest

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// ScreenshotsEnv names the directory the screenshots are saved into (CI keeps it
// as an artifact); unset, none are saved.
const ScreenshotsEnv = "RG_SCREENSHOTS"

// Widths are the page widths every report is checked at: GitHub's comment
// column and a wide desktop window.
var Widths = []int{850, 1400}

var (
	shared     *Browser
	sharedErr  error
	sharedOnce sync.Once
)

// Start returns the package's browser, launched on first use. Without Chromium
// the test is skipped with a message, except when $CI is set: there a missing
// browser is a failure, so CI can never skip the browser tests silently (the
// project's rule for the Chroma tests). The caller's TestMain should call
// Shutdown.
func Start(t testing.TB) *Browser {
	t.Helper()
	path, err := Find()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%v: CI is set, and the browser tests must run there (.ci/run installs Debian's chromium)", err)
		}
		t.Skipf("%v: skipping the browser test", err)
	}
	sharedOnce.Do(func() { shared, sharedErr = Launch(path) })
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	return shared
}

// Shutdown ends the shared browser, if one was started.
func Shutdown() {
	if shared != nil {
		shared.Close()
	}
}

// Page is a report page to check in the browser.
type Page struct {
	Name  string         // screenshot base name: NAME-WIDTH.png
	Path  string         // the HTML file
	Marks map[string]int // CSS selector -> the number of chart marks expected
	// OpenDetails opens every <details> first (what a reader who expands sees).
	OpenDetails bool
	Widths      []int // default Widths
	Dark        bool  // prefers-color-scheme: dark
	// Script is evaluated after each load, before measuring (Options.Script).
	Script string
	// NoScript disables JavaScript (Options.NoScript).
	NoScript bool
	// Shots are the widths whose screenshot is taken into $RG_SCREENSHOTS
	// (nil: every width). A full-page screenshot is about 40% of a browser
	// test's CPU, and every width asserts the layout (Assert) whether or
	// not it is shot: a page variant is shot at one width, the main pages
	// at each.
	Shots []int
	// GitHubStyle says the page is drawn by GitHub's stylesheet (a Markdown
	// comment in the comment column: its inline code is GitHub's 85% of 14
	// px), not the project's: its text below MinText is not asserted.
	GitHubStyle bool
}

// Check loads the page at each width and asserts no console error, no request
// leaving the file, no horizontal overflow, no text below MinText px and the
// expected marks; it saves the
// screenshots into $RG_SCREENSHOTS. It returns the measures.
func Check(t *testing.T, b *Browser, p Page) []*Measure {
	t.Helper()
	ms := Measures(t, b, p)
	Assert(t, p, ms)
	return ms
}

// Assert is Check's assertions on measures already taken (Measures): no
// console error, no request leaving the file, no horizontal overflow, no
// text below MinText px (but on a GitHubStyle page), and the
// marks of p (a subset of those measured). Tests that read one set of loads
// each assert their part.
func Assert(t *testing.T, p Page, ms []*Measure) {
	t.Helper()
	for _, m := range ms {
		w := " at " + strconv.Itoa(m.Width) + " px: "
		for _, e := range m.ConsoleErrors {
			t.Errorf("%s%sconsole error: %s", p.Name, w, e)
		}
		for _, u := range m.External {
			t.Errorf("%s%srequest leaving the file: %s", p.Name, w, u)
		}
		if m.ScrollWidth > m.ClientWidth {
			t.Errorf("%s%sthe page scrolls sideways: scrollWidth %d > clientWidth %d", p.Name, w, m.ScrollWidth, m.ClientWidth)
		}
		for _, o := range m.Overflows {
			t.Errorf("%s%soverflow: %s", p.Name, w, o)
		}
		if !p.GitHubStyle {
			for _, s := range m.SmallText {
				t.Errorf("%s%stext below %d px: %s", p.Name, w, MinText, s)
			}
		}
		for sel, want := range p.Marks {
			if got := m.Marks[sel]; got != want {
				t.Errorf("%s%s%d chart marks %q, want %d", p.Name, w, got, sel, want)
			}
		}
	}
}

// Measures loads the page at each width, saves the screenshots and returns what
// it measured, asserting nothing.
func Measures(t *testing.T, b *Browser, p Page) []*Measure {
	t.Helper()
	widths := p.Widths
	if len(widths) == 0 {
		widths = Widths
	}
	dir := os.Getenv(ScreenshotsEnv)
	var sels []string
	for sel := range p.Marks {
		sels = append(sels, sel)
	}
	var out []*Measure
	for _, width := range widths {
		shot := dir != "" && (p.Shots == nil || slices.Contains(p.Shots, width))
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		m, err := b.Load(ctx, p.Path, Options{Width: width, Marks: sels, OpenDetails: p.OpenDetails, Screenshot: shot, FastPNG: true, Dark: p.Dark, Script: p.Script, NoScript: p.NoScript})
		cancel()
		if err != nil {
			t.Fatalf("%s at %d px: %v\nbrowser stderr:\n%s", p.Name, width, err, b.Stderr())
		}
		if shot {
			if err := os.MkdirAll(dir, 0o755); err != nil { //nolint:gosec // G301: the screenshots directory (RG_SCREENSHOTS), a CI artifact others read
				t.Fatal(err)
			}
			name := strings.NewReplacer("/", "-", " ", "-").Replace(p.Name) + "-" + strconv.Itoa(width) + ".png"
			if err := os.WriteFile(filepath.Join(dir, name), m.PNG, 0o644); err != nil { //nolint:gosec // G306: a screenshot for the CI artifact, as above
				t.Fatal(err)
			}
		}
		out = append(out, m)
	}
	return out
}
