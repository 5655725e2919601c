package format

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// zwsp is the zero-width space GitHub's reference filters and autolinker do not
// see through: it is inserted, as an entity, to break a pattern that GitHub would
// turn into a link, a mention or a reference (Renovate and Dependabot do the same).
const zwsp = "&#8203;"

// EscapeMarkdown makes user-controlled text (ids, queries, locales, file names)
// inert inline in GitHub-flavoured Markdown, including inside table cells:
//   - HTML (`<`, `>`, `&`) becomes entities; `|` and the emphasis/link characters
//     (`\ * _ [ ] ~`) are backslash-escaped; backticks become an entity;
//   - `$` (math) becomes `<span>$</span>`, GitHub's documented escape;
//   - mentions (`@`), issue references (`#12`, `GH-12`), commit-like hex words (7 to
//     40 hex digits, not all decimal), bare URLs (`scheme://`) and `www.` autolinks
//     get a zero-width space (&#8203;) that breaks GitHub's pattern;
//   - line breaks and other control characters become spaces; format characters
//     (bidi overrides and isolates, zero-width spaces and joiners, the BOM, soft
//     hyphens: Unicode category Cf) become a visible `(U+202E)`, so an id cannot
//     reorder or hide what a reviewer reads. Invalid UTF-8 becomes U+FFFD.
func EscapeMarkdown(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 8)
	hexBreak := hexWords(s)
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				b.WriteRune(utf8.RuneError)
				continue
			}
		}
		if hexBreak[i] {
			b.WriteString(zwsp)
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
		case '$':
			b.WriteString("<span>$</span>")
		case '@':
			b.WriteString("&#64;" + zwsp)
		case '#':
			b.WriteString("&#35;" + zwsp)
		case ':':
			b.WriteByte(':')
			if strings.HasPrefix(s[i+1:], "//") {
				b.WriteString(zwsp)
			}
		case '.':
			if i >= 3 && strings.EqualFold(s[i-3:i], "www") && (i == 3 || !isWordByte(s[i-4])) {
				b.WriteString(zwsp)
			}
			b.WriteByte('.')
		case '-':
			if i >= 2 && strings.EqualFold(s[i-2:i], "gh") && (i == 2 || !isWordByte(s[i-3])) &&
				i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9' {
				b.WriteString(zwsp)
			}
			b.WriteByte('-')
		case '|', '\\', '*', '_', '[', ']', '~':
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			writeTextRune(&b, r)
		}
	}
	return b.String()
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// hexWords marks, for each word of s that GitHub would link as a commit (7 to 40
// hex digits, not all decimal, bounded by non-word characters), the byte offset
// after its first digit, where EscapeMarkdown breaks it.
func hexWords(s string) map[int]bool {
	var at map[int]bool
	for i := 0; i < len(s); {
		if !isWordByte(s[i]) {
			i++
			continue
		}
		j := i
		hex, letter := true, false
		for j < len(s) && isWordByte(s[j]) {
			c := s[j]
			switch {
			case c >= '0' && c <= '9':
			case c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F':
				letter = true
			default:
				hex = false
			}
			j++
		}
		if n := j - i; hex && letter && n >= 7 && n <= 40 {
			if at == nil {
				at = map[int]bool{}
			}
			at[i+1] = true
		}
		i = j
	}
	return at
}

// SanitizeText makes user-controlled text safe for a terminal and a log line:
// control characters (including newlines and escape sequences) and the line and
// paragraph separators become spaces, and format characters (bidi overrides,
// zero-width characters: Unicode Cf) a visible (U+XXXX).
func SanitizeText(s string) string {
	clean := true
	for _, r := range s {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || r == utf8.RuneError || unicode.Is(unicode.Cf, r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		writeTextRune(&b, r)
	}
	return b.String()
}

// writeTextRune is the one rule of the escapers for a rune of plain text:
// control characters and the line and paragraph separators become a space,
// format characters (Cf) a visible (U+XXXX), anything else itself.
func writeTextRune(b *strings.Builder, r rune) {
	switch {
	case unicode.IsControl(r) || r == '\u2028' || r == '\u2029':
		b.WriteByte(' ')
	case unicode.Is(unicode.Cf, r):
		fmt.Fprintf(b, "(U+%04X)", r)
	default:
		b.WriteRune(r)
	}
}

// CommitPrefix is the first n characters of a commit id as the reports show it
// (all of it when shorter), cut at a character boundary: a hostile "commit" of
// multi-byte characters is not split into invalid UTF-8.
func CommitPrefix(c string, n int) string {
	for i := range c {
		if n == 0 {
			return c[:i]
		}
		n--
	}
	return c
}
