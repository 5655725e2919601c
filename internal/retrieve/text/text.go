// Package text turns text into the terms that the lexical scorers (BM25 and the
// hash embedder) count: lower-cased runs of Unicode letters and digits, with the
// accents of Latin letters folded (é -> e, ç -> c, ñ -> n), so that "sesión" and
// "sesion" are the same term. No stemming and no stop words: IDF weighting takes
// care of frequent words, and the KB may be in any language.
package text

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Tokens returns the terms of s in order (repeats kept).
func Tokens(s string) []string {
	return AppendTokens(nil, s)
}

// AppendTokens appends the terms of s to dst.
func AppendTokens(dst []string, s string) []string {
	var b strings.Builder
	flush := func() {
		if b.Len() > 0 {
			dst = append(dst, b.String())
			b.Reset()
		}
	}
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		s = s[n:]
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			switch {
			case r < utf8.RuneSelf:
				if 'A' <= r && r <= 'Z' {
					r += 'a' - 'A'
				}
				b.WriteRune(r) // one byte: r < utf8.RuneSelf
			default:
				r = unicode.ToLower(r)
				if int(r) < len(fold) && fold[r] != "" {
					b.WriteString(fold[r])
				} else {
					b.WriteRune(r)
				}
			}
			continue
		}
		if unicode.Is(unicode.Mn, r) { // a combining accent: fold it away
			continue
		}
		flush()
	}
	flush()
	return dst
}

// fold maps lower-case accented Latin letters (Latin-1 Supplement and Latin
// Extended-A) to their base letters; "" means no folding.
var fold [0x180]string

func init() {
	pairs := []struct{ from, to string }{
		{"àáâãäåāăą", "a"}, {"çćĉċč", "c"}, {"ďđ", "d"}, {"èéêëēĕėęě", "e"},
		{"ĝğġģ", "g"}, {"ĥħ", "h"}, {"ìíîïĩīĭįı", "i"}, {"ĵ", "j"}, {"ķ", "k"},
		{"ĺļľŀł", "l"}, {"ñńņňŉ", "n"}, {"òóôõöøōŏő", "o"}, {"ŕŗř", "r"},
		{"śŝşš", "s"}, {"ţťŧ", "t"}, {"ùúûüũūŭůűų", "u"}, {"ŵ", "w"},
		{"ýÿŷ", "y"}, {"źżž", "z"}, {"ß", "ss"}, {"æ", "ae"}, {"œ", "oe"},
	}
	for _, p := range pairs {
		for _, r := range p.from {
			fold[r] = p.to
		}
	}
}
