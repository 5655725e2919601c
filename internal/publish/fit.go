package publish

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/retrieval-gate/retrieval-gate/internal/format"
)

// MaxCommentBytes keeps a comment body under GitHub's 65,536-character limit
// (the REST API refuses a longer body with 422 "body is too long (maximum is
// 65536 characters)"; "Create an issue comment" documents no number). It
// counts bytes, which is never fewer than characters (UTF-8) nor than UTF-16
// units, so the limit holds however GitHub counts; the footer (the run's link)
// is counted within it, and the margin is spare.
const MaxCommentBytes = 65536 - 536

// MaxSummaryBytes is GitHub's limit on a step's job summary, 1 MiB
// ("Workflow commands for GitHub Actions", "Adding a job summary").
const MaxSummaryBytes = 1 << 20

// Fit returns md followed by footer when they fit in limit bytes. Otherwise,
// in order, until one fits: render(n) for n = 200, 100, ... 1 listed items and
// then -1 (none) when render is set; the tables of the smallest rendering
// shortened, largest first, each keeping its header and first rows and saying
// how many rows it dropped; and as a last resort a cut at a line boundary
// (Truncate), which keeps the report's closing paragraph. Prose (the verdict,
// the gates' reasons, the integrity summary) is never removed before the
// tables are. note (which states the cut) is appended whenever the report is
// not md, and footer (the publisher's own last line: the link to the run)
// always comes last, whole: a cut never reaches it. The marker on md's first
// line survives every cut whenever limit leaves room for it.
func Fit(md string, render func(maxListed int) string, limit int, note, footer string) string {
	if len(md)+len(footer) <= limit {
		return md + footer
	}
	if len(note)+len(footer) >= limit {
		footer = "" // no room for both: the cut is said first
	}
	limit -= len(footer)
	room := limit - len(note)
	if room <= 0 {
		return cut(note, limit)
	}
	s := md
	if render != nil {
		for n := 200; ; n /= 2 {
			if n == 0 {
				n = -1
			}
			s = render(n)
			if len(s) <= room || n < 0 {
				break
			}
		}
		if len(s) <= room {
			return s + note + footer
		}
	}
	if t := ShortenTables(s, room); len(t) <= room {
		return t + note + footer
	} else {
		s = t
	}
	return Truncate(s, limit, note) + footer
}

// minRows is how many body rows a shortened table keeps at least.
const minRows = 3

// table is one GFM table of a document: lines[head] is its header row,
// lines[head+1] the delimiter row, then rows body rows.
type table struct{ head, rows int }

// ShortenTables drops body rows from the largest tables of md, each keeping its
// first rows and a last row "… N more rows not shown", until md fits in limit bytes
// or every table is down to minRows. A table of minRows or fewer rows (the gates)
// is never touched.
func ShortenTables(md string, limit int) string {
	lines := strings.SplitAfter(md, "\n")
	tables := findTables(lines)
	keep := make([]int, len(tables))
	size := make([]int, len(tables))
	for i, t := range tables {
		keep[i] = t.rows
		for _, l := range lines[t.head+2 : t.head+2+t.rows] {
			size[i] += len(l)
		}
	}
	render := func() string {
		var b strings.Builder
		next := 0
		for i := 0; i < len(lines); i++ {
			if next < len(tables) && i == tables[next].head+2 {
				t := tables[next]
				for _, l := range lines[i : i+keep[next]] {
					b.WriteString(l)
				}
				if dropped := t.rows - keep[next]; dropped > 0 {
					fmt.Fprintf(&b, "| … %s not shown (cut to fit the size limit) |\n", format.Count(dropped, "more row", "more rows"))
				}
				i += t.rows - 1
				next++
				continue
			}
			b.WriteString(lines[i])
		}
		return b.String()
	}
	s := md
	for len(s) > limit {
		// The table with the most bytes still shown gives up half its rows.
		best, bestSize := -1, 0
		for i := range tables {
			if keep[i] > minRows {
				shown := size[i] * keep[i] / max(tables[i].rows, 1)
				if shown > bestSize {
					best, bestSize = i, shown
				}
			}
		}
		if best < 0 {
			break
		}
		keep[best] = max(keep[best]/2, minRows)
		s = render()
	}
	return s
}

func findTables(lines []string) []table {
	var out []table
	for i := 0; i+1 < len(lines); i++ {
		if !isRow(lines[i]) || !isDelimiter(lines[i+1]) {
			continue
		}
		t := table{head: i}
		j := i + 2
		for j < len(lines) && isRow(lines[j]) {
			j++
		}
		t.rows = j - i - 2
		out = append(out, t)
		i = j - 1
	}
	return out
}

func isRow(l string) bool {
	l = strings.TrimSpace(l)
	return strings.HasPrefix(l, "|") && strings.HasSuffix(l, "|") && len(l) >= 2
}

func isDelimiter(l string) bool {
	l = strings.TrimSpace(l)
	if !isRow(l) {
		return false
	}
	return strings.Trim(l, "|-: ") == "" && strings.Contains(l, "-")
}

// Truncate cuts md to at most limit bytes as a last resort: at a line boundary
// when there is one in the last quarter, never inside a character, any open
// <details> closed, md's closing paragraph kept (ClosingParagraph: a report's
// last line, such as compare's method line) and note appended. The marker line
// at the start survives whenever limit leaves room for it.
func Truncate(md string, limit int, note string) string {
	if len(md) <= limit {
		return md
	}
	const closing = "\n</details>\n"
	budget := limit - len(note) - len(closing)
	if budget <= 0 {
		return cut(note, limit)
	}
	tail := ClosingParagraph(md)
	if len(tail)+1 > budget/2 {
		tail = "" // the head (marker, verdict, gates) comes first
	}
	if tail != "" {
		budget -= len(tail) + 1 // and a blank line before it
	}
	s := cut(md[:len(md)-len(tail)], budget)
	if i := strings.LastIndexByte(s, '\n'); i >= budget*3/4 {
		s = s[:i+1]
	}
	if strings.Count(s, "<details>")+strings.Count(s, "<details ") > strings.Count(s, "</details>") {
		s += closing
	}
	if tail != "" {
		if !strings.HasSuffix(s, "\n") {
			s += "\n"
		}
		s += "\n" + tail
	}
	return s + note
}

// maxClosing bounds the closing paragraph a cut keeps.
const maxClosing = 2048

// ClosingParagraph is md's last paragraph, after its last blank line, with its
// line ends, when it is a short paragraph of prose (at most maxClosing bytes,
// at most 20 lines): no table row, no <details> tag, no code fence. It is ""
// otherwise, or when md has no blank line.
func ClosingParagraph(md string) string {
	body := strings.TrimRight(md, "\n")
	i := strings.LastIndex(body, "\n\n")
	if i < 0 {
		return ""
	}
	p := md[i+2:]
	if strings.TrimSpace(p) == "" || len(p) > maxClosing || strings.Count(p, "\n") > 20 || strings.Contains(p, "<details") || strings.Contains(p, "</details>") || strings.Contains(p, "```") {
		return ""
	}
	for _, l := range strings.Split(p, "\n") {
		if isRow(l) {
			return ""
		}
	}
	return p
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
