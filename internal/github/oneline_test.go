package github

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A branch name or a server's message quoted in a warning (no baseline, a
// failed upsert) kept its bidi overrides and zero-width characters: "main"
// with a U+202E could make the line read other than it is. They are shown as
// the reports show them, (U+XXXX).
func TestOneLine(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Not Found", "Not Found"},
		{"a\nb\r\x1b[31mc\u2028d\u2029e", "a b  [31mc d e"},
		{strings.Repeat("é", 201), strings.Repeat("é", 200) + "…"},
		{strings.Repeat("x", 200), strings.Repeat("x", 200)},
		{"feat/\u202Etxt.exe\u200B", "feat/(U+202E)txt.exe(U+200B)"},
		{"bad\xff", "bad\uFFFD"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, OneLine(tt.in))
	}
}
