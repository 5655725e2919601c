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
//   - line breaks and other control characters become spaces; invisible
//     characters (see invisible: format characters such as bidi overrides and
//     isolates, zero-width spaces and joiners, the BOM and soft hyphens; the
//     other default-ignorable code points and Hangul fillers; a variation
//     selector but after a symbol or ideograph; noncharacters such as U+FFFE,
//     U+FFFF and U+FDD0–U+FDEF) become a
//     visible `(U+202E)`, so an id cannot reorder or hide what a reviewer reads.
//     Invalid UTF-8 becomes U+FFFD.
func EscapeMarkdown(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 8)
	hexBreak := hexWords(s)
	prev := rune(-1)
	for i, r := range s {
		before := prev
		prev = r
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
			writeTextRune(&b, before, r)
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
// paragraph separators become spaces, and invisible characters (bidi overrides,
// zero-width characters, noncharacters: see invisible) a visible (U+XXXX).
func SanitizeText(s string) string {
	clean, prev := true, rune(-1)
	for _, r := range s {
		if lineBreaking(r) || r == utf8.RuneError || invisible(prev, r) {
			clean = false
			break
		}
		prev = r
	}
	if clean {
		return s
	}
	var b strings.Builder
	prev = -1
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		writeTextRune(&b, prev, r)
		prev = r
	}
	return b.String()
}

// Clean makes a one-line message (a warning that names a file, a URL, a flag's
// value) safe for a log the runner reads and honest to its reader: every
// control character (newlines included) and line or paragraph separator is
// written as an escape (\n, \r, \t, \x1b, \u2028), so data inside the message
// cannot start a new line, let alone one the runner would parse as a workflow
// command; and invisible characters (bidi overrides and isolates, zero-width
// characters, soft hyphens: see invisible) become a visible (U+XXXX), as in
// SanitizeText and EscapeMarkdown, so a file name cannot make the line read
// other than it is. Invalid UTF-8 becomes U+FFFD.
func Clean(s string) string { return escapeText(s, false) }

// Visible is s as Clean writes it but for its line ends and tabs ("\n", "\r"
// and "\t" stay as they are): for a text that may span lines and is still
// read in a log, a workflow command's message (whose escaping carries its line
// ends as %0A) and an annotation's fields. The other control characters
// (an ANSI escape's \x1b, U+0085) and the line and paragraph separators are
// written as escapes, and invisible characters (bidi controls: the embeddings
// and overrides U+202A–U+202E, the isolates U+2066–U+2069, the marks U+200E,
// U+200F and U+061C; zero-width characters, soft hyphens: see invisible) become
// a visible (U+XXXX), so no data can make the line read otherwise than it
// says. Invalid UTF-8 becomes U+FFFD.
func Visible(s string) string { return escapeText(s, true) }

// escapeText is Clean, or with lines Visible.
func escapeText(s string, lines bool) string {
	prev := rune(-1)
	if !strings.ContainsFunc(s, func(r rune) bool {
		bad := (lineBreaking(r) && !(lines && lineKept(r))) || r == utf8.RuneError || invisible(prev, r)
		prev = r
		return bad
	}) {
		return s
	}
	var b strings.Builder
	prev = -1
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		switch {
		case lines && lineKept(r):
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case lineBreaking(r) && r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case lineBreaking(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			writeTextRune(&b, prev, r)
		}
		prev = r
	}
	return b.String()
}

// lineKept: the line ends and the tab Visible keeps.
func lineKept(r rune) bool { return r == '\n' || r == '\r' || r == '\t' }

// lineBreaking: the control characters and the line and paragraph separators,
// which the escapers never write as they are.
func lineBreaking(r rune) bool {
	return unicode.IsControl(r) || r == '\u2028' || r == '\u2029'
}

// writeTextRune is the one rule of the escapers for a rune of plain text (prev
// the rune before it, -1 at the start): control characters and the line and
// paragraph separators become a space, invisible characters a visible
// (U+XXXX), anything else itself.
func writeTextRune(b *strings.Builder, prev, r rune) {
	switch {
	case lineBreaking(r):
		b.WriteByte(' ')
	case invisible(prev, r):
		fmt.Fprintf(b, "(U+%04X)", r)
	default:
		b.WriteRune(r)
	}
}

// invisible reports whether r, after prev, shows nothing, or nothing
// reliable, where a reader expects a character, so that two ids that differ
// by it read the same or an id reorders the text around it: the format
// characters (Unicode category Cf: bidi controls, zero-width characters, the
// BOM, soft hyphens, tags), the other default-ignorable code points (Unicode's
// Other_Default_Ignorable_Code_Point: the combining grapheme joiner U+034F,
// the Hangul fillers U+115F, U+1160, U+3164 and U+FFA0, U+FFF0–U+FFF8, …),
// the noncharacters (U+FDD0–U+FDEF and the last two code points of every
// plane, U+FFFE and U+FFFF among them), which no text should carry and a
// terminal draws as nothing or as a box, and a variation selector
// (U+FE00–U+FE0F, U+E0100–U+E01EF) but after the symbol or ideograph it
// selects a form of: "⚠️" (U+26A0 U+FE0F, an emoji's presentation, which the
// reports' own words use) and a Han ideograph's variant in a Japanese name
// stay as they are; after a letter, an ASCII character, at the start or after
// another selector (a run of them smuggles data) it is shown.
func invisible(prev, r rune) bool {
	if r <= 0x7F {
		return false
	}
	if unicode.Is(unicode.Variation_Selector, r) {
		return prev <= 0x7F || !(unicode.IsSymbol(prev) || unicode.Is(unicode.Ideographic, prev))
	}
	return unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) || unicode.Is(unicode.Noncharacter_Code_Point, r)
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

// CaseGold is how every plain-text output names an integrity problem's case
// and gold id (the text report, the annotations, JUnit, Code Quality): `case
// C: gold id "G"`, both ids escaped by SanitizeText, the one rule the
// Markdown and HTML reports apply to the same ids in their own syntax (a bidi
// override is (U+202E) in each; Go's %q wrote it \u202e beside the case id's
// (U+202E)). The quotes show an empty gold id (`gold id ""`); they are not an
// escape, and a quote inside the id is written as it is.
func CaseGold(caseID, goldID string) string {
	return "case " + SanitizeText(caseID) + `: gold id "` + SanitizeText(goldID) + `"`
}
