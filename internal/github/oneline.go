package github

import (
	"github.com/retrieval-gate/retrieval-gate/internal/format"
)

// OneLine makes a value (a GitHub message, a branch or artifact name, a network
// error) safe to quote in a one-line message: it is cut at 200 characters, and
// then control characters and line or paragraph separators become spaces and
// invisible characters (bidi overrides, zero-width characters) a visible
// (U+XXXX), by the reports' rule (format.SanitizeText).
func OneLine(s string) string {
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "…"
	}
	return format.SanitizeText(s)
}
