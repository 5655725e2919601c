package github

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestOneLine(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Not Found", "Not Found"},
		{"a\nb\r\x1b[31mc\u2028d\u2029e", "a b  [31mc d e"},
		{strings.Repeat("é", 201), strings.Repeat("é", 200) + "…"},
		{strings.Repeat("x", 200), strings.Repeat("x", 200)},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, OneLine(tt.in))
	}
}
