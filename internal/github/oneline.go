package github

import (
	"strings"
	"unicode"
)

// OneLine makes a value (a GitHub message, a branch or artifact name, a network
// error) safe to quote in a one-line message: control characters and line or
// paragraph separators become spaces, and it is cut at 200 characters.
func OneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, s)
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "…"
	}
	return s
}
