package github

import (
	"fmt"
	"unicode/utf8"
)

// MaxCommentBytes keeps a comment body under GitHub's 65,536-character limit. It
// counts bytes, which is never fewer than characters (UTF-8) nor than UTF-16 units,
// so the limit holds however GitHub counts.
const MaxCommentBytes = 65536 - 536

// Render renders a report listing at most maxListed entries in each of its case
// lists (missed cases, integrity problems); maxListed < 0 lists everything.
type Render func(maxListed int) (string, error)

// Static renders a fixed Markdown text that has no lists to shorten.
func Static(markdown string) Render {
	return func(int) (string, error) { return markdown, nil }
}

// listSteps are the list lengths tried, longest first, when a report does not fit.
var listSteps = []int{1000, 500, 200, 100, 50, 20, 10, 5, 0}

// Fitted is a report fitted to a size limit.
type Fitted struct {
	Markdown  string
	Listed    int  // the list length used; -1 when nothing was shortened
	Truncated bool // even empty lists did not fit: the text was cut
}

// Shortened reports whether anything was left out.
func (f Fitted) Shortened() bool { return f.Listed >= 0 || f.Truncated }

// Fit renders a report within limit bytes: whole if it fits, else with its case
// lists shortened step by step (and a note, from note(listed), saying so), and as a
// last resort cut at a character boundary with the note appended.
func Fit(render Render, limit int, note func(listed int) string) (Fitted, error) {
	full, err := render(-1)
	if err != nil {
		return Fitted{}, err
	}
	if len(full) <= limit {
		return Fitted{Markdown: full, Listed: -1}, nil
	}
	for _, n := range listSteps {
		md, err := render(n)
		if err != nil {
			return Fitted{}, err
		}
		md += note(n)
		if len(md) <= limit {
			return Fitted{Markdown: md, Listed: n}, nil
		}
	}
	md, err := render(0)
	if err != nil {
		return Fitted{}, err
	}
	tail := "\n\n…\n" + note(0)
	return Fitted{Markdown: cut(md, limit-len(tail)) + tail, Listed: 0, Truncated: true}, nil
}

// cut returns the longest prefix of s of at most n bytes that ends on a character
// boundary.
func cut(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// ShortenedNote is the note appended to a report whose lists were shortened.
func ShortenedNote(where, limit, fullAt string) func(int) string {
	return func(listed int) string {
		return fmt.Sprintf("\n\n> [!NOTE]\n> The case lists in this %s were shortened to at most %d entries each to stay within %s. %s\n", where, listed, limit, fullAt)
	}
}
