package publish

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode"
)

// Clean makes a one-line message safe for a log the runner reads: every control
// character (newlines included) and line or paragraph separator is written as an
// escape (\n, \r, \t, \x1b, \u2028), so data inside the message cannot start a new
// line, let alone one the runner would parse as a workflow command.
func Clean(s string) string {
	if !strings.ContainsFunc(s, unsafeRune) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if !unsafeRune(r) {
			b.WriteRune(r)
			continue
		}
		switch r {
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x100 {
				fmt.Fprintf(&b, `\x%02x`, r)
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		}
	}
	return b.String()
}

func unsafeRune(r rune) bool {
	return unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || r == '\u0085'
}

// GuardWriter passes text to w but neutralises every line that starts (after
// spaces and tabs) with "::": a backslash is put before it, so the runner never
// reads data as a workflow command (::error::, ::add-mask::, ::stop-commands::).
// Both "\n" and "\r" end a line. The commands retrieval-gate issues itself go to
// the unguarded writer (Publisher.Stdout). Safe for concurrent use.
type GuardWriter struct {
	mu      sync.Mutex
	w       io.Writer
	start   bool   // at the start of a line
	pending []byte // leading blanks and at most one ':' of a line not yet decided
}

// NewGuardWriter wraps w.
func NewGuardWriter(w io.Writer) *GuardWriter { return &GuardWriter{w: w, start: true} }

func (g *GuardWriter) Write(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]byte, 0, len(p)+8)
	for _, c := range p {
		if !g.start {
			out = append(out, c)
			if c == '\n' || c == '\r' {
				g.start = true
			}
			continue
		}
		switch {
		case c == ' ' || c == '\t':
			if len(g.pending) > 0 && g.pending[len(g.pending)-1] == ':' {
				out = append(out, g.pending...)
				out = append(out, c)
				g.pending, g.start = g.pending[:0], false
				continue
			}
			g.pending = append(g.pending, c)
		case c == ':':
			if len(g.pending) > 0 && g.pending[len(g.pending)-1] == ':' {
				out = append(out, g.pending[:len(g.pending)-1]...)
				out = append(out, '\\', ':', ':')
				g.pending, g.start = g.pending[:0], false
				continue
			}
			g.pending = append(g.pending, c)
		default:
			out = append(out, g.pending...)
			out = append(out, c)
			g.pending = g.pending[:0]
			g.start = c == '\n' || c == '\r'
		}
	}
	if _, err := g.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes what is held back (the blanks, or one ':', that began the last line).
func (g *GuardWriter) Flush() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.pending) == 0 {
		return nil
	}
	_, err := g.w.Write(g.pending)
	g.pending = g.pending[:0]
	return err
}
