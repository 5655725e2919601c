package format

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// EscapeMarkdown makes user-controlled text (ids, queries, locales, file names)
// inert inline in GitHub-flavoured Markdown, including inside table cells: HTML
// (`<`, `>`, `&`) becomes entities, `|` and the emphasis/link characters
// (`\ * _ [ ] ~`) are backslash-escaped, backticks, `@` (mentions) and `#`
// (issue references) become numeric entities, and line breaks and other control
// characters become spaces. Invalid UTF-8 becomes U+FFFD.
func EscapeMarkdown(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				b.WriteRune(utf8.RuneError)
				continue
			}
		}
		switch r {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '`':
			b.WriteString("&#96;")
		case '@':
			b.WriteString("&#64;")
		case '#':
			b.WriteString("&#35;")
		case '|', '\\', '*', '_', '[', ']', '~':
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
				b.WriteByte(' ')
				continue
			}
			b.WriteRune(r)
		}
	}
	return b.String()
}

// SanitizeText makes user-controlled text safe for a terminal: control
// characters (including newlines and escape sequences) become spaces.
func SanitizeText(s string) string {
	clean := true
	for _, r := range s {
		if unicode.IsControl(r) || r == utf8.RuneError {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
}
