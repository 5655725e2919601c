package github

import (
	"strings"
	"unicode/utf8"
)

// MaxCommentBytes keeps a comment body under GitHub's 65,536-character limit. It
// counts bytes, which is never fewer than characters (UTF-8) nor than UTF-16 units,
// so the limit holds however GitHub counts.
const MaxCommentBytes = 65536 - 536

// Truncate cuts md to at most limit bytes as a last resort, when a report has no
// shorter rendering that fits: at a line boundary when there is one in the last
// quarter, never inside a character, any open <details> closed, and note appended.
// The marker line at the start survives whenever limit leaves room for it.
func Truncate(md string, limit int, note string) string {
	if len(md) <= limit {
		return md
	}
	const closing = "\n</details>\n"
	budget := limit - len(note) - len(closing)
	if budget <= 0 {
		return cut(note, limit)
	}
	s := cut(md, budget)
	if i := strings.LastIndexByte(s, '\n'); i >= budget*3/4 {
		s = s[:i+1]
	}
	if strings.Count(s, "<details>")+strings.Count(s, "<details ") > strings.Count(s, "</details>") {
		s += closing
	}
	return s + note
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
