package publish

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// forged matches a line the runner would read as a workflow command.
var forged = regexp.MustCompile(`(?m)^[ \t]*::`)

func TestGuardWriter(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain\n", "plain\n"},
		{"::error title=x::boom\n", `\::error title=x::boom` + "\n"},
		{"a\n  ::warning::w\n", "a\n  \\::warning::w\n"},
		{"x\r::add-mask::s\n", "x\r\\::add-mask::s\n"},
		{": not a command\n:a\n", ": not a command\n:a\n"},
		{"in :: the middle\n", "in :: the middle\n"},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		g := NewGuardWriter(&b)
		_, _ = g.Write([]byte(tt.in))
		_ = g.Flush()
		assert.Equal(t, tt.want, b.String(), "%q", tt.in)
	}
	// Byte by byte, the same.
	var b bytes.Buffer
	g := NewGuardWriter(&b)
	for _, c := range []byte("ok\n \t::error::x\n::") {
		_, _ = g.Write([]byte{c})
	}
	_ = g.Flush()
	assert.Equal(t, "ok\n \t\\::error::x\n\\::", b.String())
}

func TestClean(t *testing.T) {
	assert.Equal(t, `kb/a\n::error title=x::.md`, Clean("kb/a\n::error title=x::.md"))
	assert.Equal(t, `a\r\x1b[31m\u2028b`, Clean("a\r\x1b[31m\u2028b"))
	assert.Equal(t, "naïve ü", Clean("naïve ü"))
	assert.False(t, forged.MatchString(Clean("x\n::error::y")))
}

func FuzzGuardWriter(f *testing.F) {
	f.Add("::error::x\n", 3)
	f.Add(" \t:\n::", 1)
	f.Fuzz(func(t *testing.T, s string, chunk int) {
		if chunk < 1 {
			chunk = 1
		}
		var b bytes.Buffer
		g := NewGuardWriter(&b)
		for i := 0; i < len(s); i += chunk {
			_, _ = g.Write([]byte(s[i:min(i+chunk, len(s))]))
		}
		_ = g.Flush()
		out := b.String()
		if forged.MatchString(strings.ReplaceAll(out, "\r", "\n")) {
			t.Fatalf("%q passed as %q", s, out)
		}
		if strings.ReplaceAll(out, `\::`, "::") != s && !strings.Contains(s, `\::`) {
			t.Fatalf("text changed beyond the escape: %q -> %q", s, out)
		}
	})
}
