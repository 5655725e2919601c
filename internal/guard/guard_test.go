package guard

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/publish/runnertest"
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
		// Issue 20 item 1: the legacy syntax, anywhere in a line.
		{"a1 ##[stop-commands]tok\n", "a1 ##\\[stop-commands]tok\n"},
		{"en ##[error]forged\n", "en ##\\[error]forged\n"},
		{"###[add-mask]s", "###\\[add-mask]s"},
		{"# [x] #x[ ## [", "# [x] #x[ ## ["},
		{"#\u00ad#\u200b[set-output name=a]b\n", "#\u00ad#\u200b\\[set-output name=a]b\n"},
		// Issue 20 item 2: every white space the runner trims, and what a
		// culture-sensitive comparison ignores.
		{"\u00a0::add-mask::s\n", "\u00a0\\::add-mask::s\n"},
		{"\u3000::error::x\n", "\u3000\\::error::x\n"},
		{"\u0085::error::x\n", "\u0085\\::error::x\n"},
		{"\u2003\u205f\v\f::notice::x", "\u2003\u205f\v\f\\::notice::x"},
		{":\u00ad:error::x", "\\:\u00ad:error::x"},
		{"\ufeff::error::x", "\ufeff\\::error::x"},
		{"\x00::error::x", "\x00\\::error::x"},
		{"\u00a0: :x", "\u00a0: :x"},
	}
	for _, tt := range tests {
		for _, chunk := range []int{1, 2, 3, 1 << 20} {
			var b bytes.Buffer
			g := NewWriter(&b)
			for i := 0; i < len(tt.in); i += chunk {
				_, _ = g.Write([]byte(tt.in[i:min(i+chunk, len(tt.in))]))
			}
			_ = g.Flush()
			assert.Equal(t, tt.want, b.String(), "%q in chunks of %d", tt.in, chunk)
			assert.Empty(t, runnertest.Commands(b.String(), nil), "%q", tt.in)
		}
	}
	// Every white space the runner trims, one by one (issue 20 item 2), and
	// every ignorable character between '#', '#' and '['.
	for r := rune(0); r <= 0x10ffff; r++ {
		if r >= 0xd800 && r <= 0xdfff {
			continue
		}
		if runnertest.IsWhiteSpace(r) || runnertest.Ignorable(r) {
			for _, in := range []string{string(r) + "::error::x", "a#" + string(r) + "#[error]x", string(r) + ":" + string(r) + ":error::x"} {
				var b bytes.Buffer
				g := NewWriter(&b)
				_, _ = g.Write([]byte(in))
				_ = g.Flush()
				require.Empty(t, runnertest.Commands(b.String(), nil), "%U: %q", r, b.String())
			}
		}
	}
}

// A Flush that ends inside a possible command: a later write cannot complete it.
func TestGuardWriterFlushThenWrite(t *testing.T) {
	for _, parts := range [][2]string{{" :", ":error::x"}, {"#", "#[error]x"}, {"##", "[error]x"}, {"#\u00ad", "#[error]"}} {
		var b bytes.Buffer
		g := NewWriter(&b)
		_, _ = g.Write([]byte(parts[0]))
		_ = g.Flush()
		_, _ = g.Write([]byte(parts[1]))
		_ = g.Flush()
		assert.Empty(t, runnertest.Commands(b.String(), nil), "%q", b.String())
	}
}

// Held-back text is bounded: a line of a million blanks or ignorables is written
// as it comes, and stays harmless.
func TestGuardWriterBoundedHold(t *testing.T) {
	for _, in := range []string{strings.Repeat(" ", 1e6) + "::error::x", "#" + strings.Repeat("\u200b", 1e6) + "#[error]x", ":" + strings.Repeat("\x00", 1e6) + ":error::x"} {
		var b countingWriter
		g := NewWriter(&b)
		_, _ = g.Write([]byte(in))
		assert.Greater(t, b.n, len(in)-2*maxPending, "written before Flush")
		_ = g.Flush()
		assert.Empty(t, runnertest.Commands(b.String(), nil))
	}
}

type countingWriter struct {
	bytes.Buffer
	n int
}

func (c *countingWriter) Write(p []byte) (int, error) { c.n += len(p); return c.Buffer.Write(p) }

// FuzzGuardWriter: whatever the text and however it is split into writes, the
// runner (as runnertest reads it, with any command name) finds no command in the
// guarded output, and the guard changed nothing but inserting backslashes.
func FuzzGuardWriter(f *testing.F) {
	f.Add("::error::x\n", 3)
	f.Add(" \t:\n::", 1)
	f.Add("a1 ##[stop-commands]tok\n", 2)
	f.Add("\u00a0::add-mask::s\n\u3000::error::x", 1)
	f.Add("#\u00ad#\u200b[x]", 1)
	f.Fuzz(func(t *testing.T, s string, chunk int) {
		if chunk < 1 {
			chunk = 1
		}
		var b bytes.Buffer
		g := NewWriter(&b)
		for i := 0; i < len(s); i += chunk {
			_, _ = g.Write([]byte(s[i:min(i+chunk, len(s))]))
		}
		_ = g.Flush()
		out := b.String()
		if cmds := runnertest.Commands(out, nil); len(cmds) > 0 {
			t.Fatalf("%q passed as %q: the runner reads %+v", s, out, cmds[0])
		}
		if forged.MatchString(strings.ReplaceAll(out, "\r", "\n")) {
			t.Fatalf("%q passed as %q", s, out)
		}
		if !strings.Contains(s, `\`) && strings.ReplaceAll(out, `\`, "") != s {
			t.Fatalf("text changed beyond the escapes: %q -> %q", s, out)
		}
	})
}

// Error guards an error's text as Text does, unwraps to it, and is the error
// itself when nothing needs guarding.
func TestError(t *testing.T) {
	require.NoError(t, Error(nil))
	clean := errors.New("cases.jsonl:3: duplicate key \"a\"")
	require.Same(t, clean, Error(clean))
	wrapped := fmt.Errorf("stdin:1: %w", context.Canceled)
	require.Same(t, wrapped, Error(wrapped))

	cause := fmt.Errorf("stdin:1: duplicate key \"##[error]x\"\n::warning::y: %w", context.Canceled)
	err := Error(cause)
	assert.Equal(t, "stdin:1: duplicate key \"##\\[error]x\"\n\\::warning::y: context canceled", err.Error())
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, cause, errors.Unwrap(err))
	assert.Equal(t, err.Error(), Error(err).Error(), "guarding twice changes nothing")
}
