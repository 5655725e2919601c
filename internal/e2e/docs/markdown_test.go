package docs

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
)

// The Markdown pages render as their authors meant (issue 32 item 13): each is
// parsed by goldmark with GitHub Flavored Markdown, the renderer GitHub's own
// follows (CommonMark + GFM), and the test fails on what turns prose into code
// or code into prose:
//
//   - a code fence that is never closed (the rest of the page becomes code);
//   - a fence opener followed by prose (```` ``` The file is read…````): CommonMark
//     reads the prose as the block's info string, and the block swallows what
//     follows up to the next bare fence;
//   - a fence opener with an info string inside a code block (```` ```yaml ````
//     as a line of a block: an earlier fence was not closed where it was meant
//     to be, so the blocks and the prose between them swapped places);
//   - a heading (## …) inside a code block that is not Markdown or text, which
//     is a heading the page lost;
//   - a relative link to a file that does not exist, or to an anchor that no
//     heading of its target page makes (GitHub's heading ids).

// markdownPages are the pages checked: the README, every docs/*.md and the
// repository's other top-level guides.
func markdownPages(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob("docs/*.md")
	require.NoError(t, err)
	return append([]string{"README.md", "CONTRIBUTING.md", "ARCHITECTURE.md", "BENCHMARKS.md"}, pages...)
}

var gfmParser = goldmark.New(goldmark.WithExtensions(extension.GFM)).Parser()

// infoWord is an info string that names a language (yaml, sh, json, go, text, …).
var infoWord = regexp.MustCompile(`^[A-Za-z0-9_+.-]*$`)

// fenceLine is a line that opens or closes a fence (up to 3 spaces of indent).
var fenceLine = regexp.MustCompile("^ {0,3}(`{3,}|~{3,})(.*)$")

// headingLine is an ATX heading of level 2 or more.
var headingLine = regexp.MustCompile(`^ {0,3}#{2,6}\s+\S`)

// proseBlocks are the info strings of blocks whose lines may be Markdown.
var proseBlocks = map[string]bool{"": true, "text": true, "markdown": true, "md": true}

// lineOf is the 1-based line of byte offset off in src.
func lineOf(src []byte, off int) int { return bytes.Count(src[:off], []byte("\n")) + 1 }

// markdownProblems are the problems of one page; pageAnchors gives the anchors
// of another page (relative to the repository root) for its links.
func markdownProblems(file string, src []byte, exists func(string) bool, pageAnchors func(string) (map[string]bool, error)) []string {
	var out []string
	add := func(line int, f string, args ...any) {
		out = append(out, fmt.Sprintf("%s:%d: %s", file, line, fmt.Sprintf(f, args...)))
	}
	doc := gfmParser.Parse(text.NewReader(src))
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.FencedCodeBlock:
			checkFence(src, n, add)
		case *ast.Link:
			checkLink(file, string(n.Destination), lineNear(src, n), exists, pageAnchors, add)
		case *ast.Image:
			checkLink(file, string(n.Destination), lineNear(src, n), exists, pageAnchors, add)
		}
		return ast.WalkContinue, nil
	})
	return out
}

// lineNear is the line of the first text under n (links carry no position of
// their own), else of the block that holds it.
func lineNear(src []byte, n ast.Node) int {
	for c := n; c != nil; c = c.Parent() {
		if c.Type() == ast.TypeBlock && c.Lines().Len() > 0 {
			return lineOf(src, c.Lines().At(0).Start)
		}
		for ch := c.FirstChild(); ch != nil; ch = ch.NextSibling() {
			if t, ok := ch.(*ast.Text); ok {
				return lineOf(src, t.Segment.Start)
			}
		}
	}
	return 0
}

func checkFence(src []byte, n *ast.FencedCodeBlock, add func(int, string, ...any)) {
	info := ""
	if n.Info != nil {
		info = strings.TrimSpace(string(n.Info.Segment.Value(src)))
	}
	lines := n.Lines()
	opener := 0
	switch {
	case n.Info != nil:
		opener = lineOf(src, n.Info.Segment.Start)
	case lines.Len() > 0:
		opener = lineOf(src, lines.At(0).Start) - 1
	}
	if !infoWord.MatchString(info) {
		add(opener, "a fence opener followed by prose (%q): put the fence on a line of its own, the text after it", info)
	}
	end := 0 // the offset after the block's last content line
	if lines.Len() > 0 {
		end = lines.At(lines.Len() - 1).Stop
	} else if n.Info != nil {
		end = n.Info.Segment.Stop
		if i := bytes.IndexByte(src[end:], '\n'); i >= 0 {
			end += i + 1
		} else {
			end = len(src)
		}
	}
	if rest := bytes.TrimSpace(src[end:]); len(rest) == 0 || !closesFence(src[end:]) {
		add(opener, "the code fence opened here is not closed: the rest of the page is code")
	}
	lang, _, _ := strings.Cut(info, " ")
	fence := openerFence(src, opener)
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		line := strings.TrimRight(string(seg.Value(src)), "\r\n")
		// A fence that could close the block (its character, at least as long)
		// but is followed by text does not close it.
		if m := fenceLine.FindStringSubmatch(line); m != nil && fence != "" && m[1][0] == fence[0] && len(m[1]) >= len(fence) {
			switch tail := strings.TrimSpace(m[2]); {
			case !infoWord.MatchString(tail):
				add(lineOf(src, seg.Start), "a fence followed by prose (%q) does not close the code block opened at line %d: put the fence on a line of its own, the text after it", tail, opener)
			default:
				add(lineOf(src, seg.Start), "a fence opener (%q) inside the code block opened at line %d: that block was not closed where it was meant to be", strings.TrimSpace(line), opener)
			}
		}
		if headingLine.MatchString(line) && !proseBlocks[strings.ToLower(lang)] {
			add(lineOf(src, seg.Start), "a heading inside the %s code block opened at line %d: a fence above it is not closed", lang, opener)
		}
	}
}

// openerFence is the fence (``` or ~~~, as long as written) on line n of src.
func openerFence(src []byte, n int) string {
	if n < 1 {
		return ""
	}
	lines := bytes.SplitN(src, []byte("\n"), n+1)
	if len(lines) < n {
		return ""
	}
	m := fenceLine.FindSubmatch(lines[n-1])
	if m == nil {
		return ""
	}
	return string(m[1])
}

// closesFence reports whether the next line of rest closes a fence.
func closesFence(rest []byte) bool {
	line, _, _ := bytes.Cut(rest, []byte("\n"))
	m := fenceLine.FindSubmatch(bytes.TrimRight(line, "\r"))
	return m != nil && len(bytes.TrimSpace(m[2])) == 0
}

// checkLink checks a relative link of file: its target exists, and its anchor
// is a heading of the target page (or of file itself for "#anchor").
func checkLink(file, dest string, line int, exists func(string) bool, pageAnchors func(string) (map[string]bool, error), add func(int, string, ...any)) {
	if dest == "" || strings.Contains(dest, "://") || strings.HasPrefix(dest, "mailto:") || strings.HasPrefix(dest, "/") {
		return
	}
	path, anchor, _ := strings.Cut(dest, "#")
	target := file
	if path != "" {
		target = filepath.Clean(filepath.Join(filepath.Dir(file), path))
		if !exists(target) {
			add(line, "link %q: %s does not exist", dest, target)
			return
		}
	}
	if anchor == "" || !strings.HasSuffix(target, ".md") {
		return
	}
	anchors, err := pageAnchors(target)
	if err != nil {
		add(line, "link %q: %v", dest, err)
		return
	}
	if !anchors[anchor] {
		add(line, "link %q: %s has no heading with the anchor #%s", dest, target, anchor)
	}
}

// explicitAnchor is an HTML anchor a page sets itself.
var explicitAnchor = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)

// anchors are the ids GitHub gives the headings of a page (its heading text
// lowercased, punctuation dropped, spaces as hyphens; a repeated id gets -1,
// -2, …), and the page's own <a id> and <a name> anchors.
func anchors(src []byte) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	doc := gfmParser.Parse(text.NewReader(src))
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if h, ok := n.(*ast.Heading); ok && entering {
			slug := githubSlug(plainText(src, h))
			id := slug
			if k := seen[slug]; k > 0 {
				id = fmt.Sprintf("%s-%d", slug, k)
			}
			seen[slug]++
			out[id] = true
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	for _, m := range explicitAnchor.FindAllSubmatch(src, -1) {
		out[string(m[1])] = true
	}
	return out
}

// plainText is the text of n's inline content, code spans included.
func plainText(src []byte, n ast.Node) string {
	var b strings.Builder
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch c := c.(type) {
		case *ast.Text:
			b.Write(c.Segment.Value(src))
			if c.SoftLineBreak() || c.HardLineBreak() {
				b.WriteByte(' ')
			}
		case *ast.String:
			b.Write(c.Value)
		}
		return ast.WalkContinue, nil
	})
	return b.String()
}

// githubSlug is GitHub's id of a heading's text: lowercased, every character
// but letters, digits, marks, spaces, hyphens and underscores dropped, each
// space a hyphen.
func githubSlug(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func TestMarkdownRenders(t *testing.T) {
	cache := map[string]map[string]bool{}
	pageAnchors := func(p string) (map[string]bool, error) {
		if a, ok := cache[p]; ok {
			return a, nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		cache[p] = anchors(src)
		return cache[p], nil
	}
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }
	pages := markdownPages(t)
	require.GreaterOrEqual(t, len(pages), 18)
	for _, page := range pages {
		src, err := os.ReadFile(page)
		require.NoError(t, err)
		for _, p := range markdownProblems(page, src, exists, pageAnchors) {
			t.Error(p)
		}
	}
}

// Each problem is found, and nothing else is.
func TestMarkdownProblems(t *testing.T) {
	other := map[string]string{
		"docs/a.md": "# A page\n\n## The first part: `x`\n\n## Part\n\n## Part\n\n<a id=\"kept\"></a>\n",
	}
	exists := func(p string) bool { _, ok := other[p]; return ok || p == "docs/img.png" }
	pageAnchors := func(p string) (map[string]bool, error) { return anchors([]byte(other[p])), nil }
	for name, tc := range map[string]struct {
		page string
		want []string
	}{
		"fine": {page: "# T\n\n```sh\n# a comment\nretrieval-gate check\n```\n\n```text\n### Trend on main\n```\n\n" +
			"[a](a.md) [b](a.md#the-first-part-x) [c](a.md#part-1) [d](a.md#kept) [e](#t) ![i](img.png) [w](https://example.com/x#y)\n"},
		"prose after the closing fence": {
			page: "# T\n\n```sh\nretrieval-gate report\n``` The file is read in one pass,\nmore prose\n\n## Lost\n\n```\n",
			want: []string{
				`p.md:5: a fence followed by prose ("The file is read in one pass,") does not close the code block opened at line 3: put the fence on a line of its own, the text after it`,
				"p.md:8: a heading inside the sh code block opened at line 3: a fence above it is not closed",
			},
		},
		"prose after the opening fence": {
			page: "# T\n\n``` Run this:\nretrieval-gate report\n```\n",
			want: []string{`p.md:3: a fence opener followed by prose ("Run this:"): put the fence on a line of its own, the text after it`},
		},
		"a longer fence holds a shorter one": {page: "# T\n\n````text\n```yaml\nx: 1\n```\n````\n"},
		"unclosed": {page: "# T\n\n```sh\nretrieval-gate check\n\n## Lost\n",
			want: []string{
				"p.md:3: the code fence opened here is not closed: the rest of the page is code",
				"p.md:6: a heading inside the sh code block opened at line 3: a fence above it is not closed",
			}},
		"closed by the next block's fence": {page: "# T\n\n```sh\nretrieval-gate check\n\nText.\n\n```yaml\nname: x\n```\n",
			want: []string{`p.md:8: a fence opener ("` + "```yaml" + `") inside the code block opened at line 3: that block was not closed where it was meant to be`}},
		"links": {page: "# T\n\nSee [x](missing.md), [y](a.md#nope) and [z](#t-2).\n",
			want: []string{
				`p.md:3: link "missing.md": docs/missing.md does not exist`,
				`p.md:3: link "a.md#nope": docs/a.md has no heading with the anchor #nope`,
				`p.md:3: link "#t-2": docs/p.md has no heading with the anchor #t-2`,
			}},
	} {
		t.Run(name, func(t *testing.T) {
			other["docs/p.md"] = tc.page
			got := markdownProblems("docs/p.md", []byte(tc.page), exists, pageAnchors)
			want := make([]string, len(tc.want))
			for i, w := range tc.want {
				want[i] = "docs/" + w
			}
			if len(tc.want) == 0 {
				want = nil
			}
			assert.Equal(t, want, got)
		})
	}
}
