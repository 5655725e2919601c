// Package guard keeps data from forging a GitHub Actions workflow command in
// what the commands and the public packages print: the rules of the Actions
// runner (a "::" after any white space it trims at a line start, "##[" anywhere
// in a line), applied to a stream (Writer) and to a text (Text); a one-line
// message is internal/format's Clean.
package guard

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Writer passes text to w but neutralises everything the Actions runner
// would read as a workflow command, in both of its syntaxes:
//
//   - "::" at the start of a line, after any white space the runner trims (.NET's
//     char.IsWhiteSpace: tab to carriage return, space, U+0085, U+00A0, U+1680,
//     U+2000–U+200A, U+2028, U+2029, U+202F, U+205F, U+3000): a backslash is
//     put before it ("\::error::…");
//   - "##[" anywhere in a line (the legacy syntax, which the runner finds at any
//     position): a backslash is put before the "[" ("##\[stop-commands]…").
//
// The runner compares culture-sensitively, so characters it may ignore (controls,
// format characters such as U+00AD or U+200B, other default-ignorable code points)
// count as white space at the start of a line and are skipped between the ':' of
// "::" and the '#', '#' and '[' of "##[". "\n" and "\r" end a line, as in the
// runner's ReadLine. The commands
// retrieval-gate issues itself go to the unguarded writer (Publisher.Stdout). Safe
// for concurrent use. internal/publish/runnertest reads output as the runner does;
// the tests and FuzzGuardWriter check the guard against it.
type Writer struct {
	mu      sync.Mutex
	w       io.Writer
	state   guardState
	pending []byte // text held back: a possible start of a command
	mark    int    // in pending: the first ':' (stColon) or the last '#' (stHash2)
	tail    []byte // an incomplete UTF-8 sequence at the end of the last write
	cut     bool   // Flush wrote a possible start of a command
}

type guardState uint8

const (
	stStart guardState = iota // at the start of a line; pending holds blanks
	stColon                   // blanks, ':' and ignorables at the start of a line
	stMid                     // inside a line
	stHash1                   // '#' and ignorables
	stHash2                   // '#', ignorables, '#' and ignorables
)

// maxPending bounds what the guard holds back: past it, the held text is written
// with a backslash where it could still become a command.
const maxPending = 4096

// NewWriter wraps w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write calls write with w behind a Writer and flushes it, also
// when write fails: what the public packages' text writers (report's and
// gate's WriteText) print reaches a CI log as the command's guarded standard
// output does, with no workflow command a document's text could forge.
func Write(w io.Writer, write func(io.Writer) error) error {
	g := NewWriter(w)
	err := write(g)
	if ferr := g.Flush(); err == nil {
		err = ferr
	}
	return err
}

func (g *Writer) Write(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	in := p
	if len(g.tail) > 0 {
		in = append(g.tail, p...)
		g.tail = nil
	}
	out := make([]byte, 0, len(in)+len(g.pending)+8)
	for len(in) > 0 {
		if !utf8.FullRune(in) {
			g.tail = append([]byte(nil), in...)
			break
		}
		r, size := utf8.DecodeRune(in)
		out = g.step(out, r, in[:size])
		in = in[size:]
	}
	if _, err := g.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// step passes one rune (its bytes b) through the state machine.
func (g *Writer) step(out []byte, r rune, b []byte) []byte {
	if g.cut {
		g.cut = false
		if !lineEnd(r) {
			out = append(out, '\\')
		}
	}
	if lineEnd(r) {
		out = append(append(out, g.pending...), b...)
		g.pending, g.state = g.pending[:0], stStart
		return out
	}
	switch g.state {
	case stStart:
		switch {
		case r == ':':
			g.mark = len(g.pending)
			g.pending, g.state = append(g.pending, b...), stColon
			return out
		case blank(r):
			g.pending = append(g.pending, b...)
			if len(g.pending) > maxPending {
				// Whatever follows cannot be a command: it is not at the start.
				out = append(append(out, g.pending...), '\\')
				g.pending, g.state = g.pending[:0], stMid
			}
			return out
		}
	case stColon:
		switch {
		case r == ':':
			out = append(out, g.pending[:g.mark]...)
			out = append(append(out, '\\'), g.pending[g.mark:]...)
			out = append(out, b...)
			g.pending, g.state = g.pending[:0], stMid
			return out
		case Ignorable(r):
			return g.hold(out, b)
		}
	case stHash1:
		switch {
		case r == '#':
			g.mark = len(g.pending)
			g.pending, g.state = append(g.pending, b...), stHash2
			return out
		case Ignorable(r):
			return g.hold(out, b)
		}
	case stHash2:
		switch {
		case r == '[':
			out = append(append(append(out, g.pending...), '\\'), b...)
			g.pending, g.state = g.pending[:0], stMid
			return out
		case r == '#':
			// "###": the last two '#' may still start "##[".
			out = append(out, g.pending[:g.mark]...)
			g.pending = append(g.pending[:0], g.pending[g.mark:]...)
			g.mark = len(g.pending)
			g.pending = append(g.pending, b...)
			return out
		case Ignorable(r):
			return g.hold(out, b)
		}
	}
	// Nothing held can become a command any more: write it, then r inside a line.
	out = append(out, g.pending...)
	g.pending = g.pending[:0]
	if r == '#' {
		g.pending, g.state = append(g.pending, b...), stHash1
		return out
	}
	g.state = stMid
	return append(out, b...)
}

// hold keeps an ignorable rune inside a possible command; past maxPending the held
// text is written with a backslash after it, which no command can continue.
func (g *Writer) hold(out, b []byte) []byte {
	g.pending = append(g.pending, b...)
	if len(g.pending) <= maxPending {
		return out
	}
	out = append(append(out, g.pending...), '\\')
	g.pending, g.state = g.pending[:0], stMid
	return out
}

// lineEnd: the runner's line ends (StreamReader.ReadLine: "\n", "\r"). U+0085,
// U+2028 and U+2029 do not end its lines: they are white space at their start,
// and U+0085 (a control) may be ignored inside "##[".
func lineEnd(r rune) bool { return r == '\n' || r == '\r' }

// blank is what may precede "::" at the start of a line: what the runner trims,
// and what a culture-sensitive comparison may ignore.
func blank(r rune) bool { return IsRunnerWhiteSpace(r) || Ignorable(r) }

// IsRunnerWhiteSpace is .NET's char.IsWhiteSpace, which the runner's TrimStart
// uses: U+0009–U+000D, U+0020, U+0085, U+00A0 and the separators (Zs, Zl, Zp).
func IsRunnerWhiteSpace(r rune) bool {
	switch {
	case r >= 0x09 && r <= 0x0d, r == 0x20, r == 0x85, r == 0xa0:
		return true
	}
	return r > 0xff && (unicode.Is(unicode.Zs, r) || unicode.Is(unicode.Zl, r) || unicode.Is(unicode.Zp, r))
}

// Ignorable reports whether a culture-sensitive comparison may skip r: controls
// (Cc), format characters (Cf), Unicode's other default-ignorable code points and
// the variation selectors.
func Ignorable(r rune) bool {
	return unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r) ||
		unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) || unicode.Is(unicode.Variation_Selector, r)
}

// Text is s as a Writer writes it, flushed: for text that is not a
// stream but may still be shown in a log (the job summary, which a later step
// may cat): "##[" anywhere and "::" at the start of a line get their backslash.
// Markdown reads "\[" and "\:" as "[" and ":"; a code block shows the backslash,
// as the guarded log does.
func Text(s string) string {
	var b strings.Builder
	g := NewWriter(&b)
	_, _ = g.Write([]byte(s)) // a strings.Builder never fails
	_ = g.Flush()
	return b.String()
}

// Flush writes what is held back (blanks, a ':' or '#' that began a possible
// command, an incomplete rune).
func (g *Writer) Flush() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.pending) == 0 && len(g.tail) == 0 {
		return nil
	}
	_, err := g.w.Write(append(g.pending, g.tail...))
	g.pending, g.tail = g.pending[:0], nil
	if g.state != stStart && g.state != stMid {
		// The text written may be the start of a command that a later write
		// would complete: that write begins with a backslash.
		g.state, g.cut = stMid, true
	}
	return err
}

// Error is err with its text as Text writes it, for the errors the public
// packages return: a caller prints them where the runner may read them
// (t.Fatal(err) in a test run by a workflow's job), and their text can hold
// data (a key, an id, an option's value: `duplicate key "##[error]x"`). It
// unwraps to err, so errors.Is and errors.As see through it; it is err itself
// (nil for nil) when its text needs nothing.
func Error(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	safe := Text(msg)
	if safe == msg {
		return err
	}
	return &guardedError{msg: safe, err: err}
}

// guardedError is an error whose text Error guarded.
type guardedError struct {
	msg string
	err error
}

func (e *guardedError) Error() string { return e.msg }
func (e *guardedError) Unwrap() error { return e.err }

// JSON returns the JSON text b (a value or lines of values) with nothing
// inside its strings that Writer would change: every rune Ignorable would
// skip is written as a \u escape (a pair of them past U+FFFF), and so is a
// "[" that follows "##" (\u005b), so the guarded stream passes the text as
// it is and a JSON reader decodes the very strings b held. Outside strings
// JSON text has no '#', ':' only between a key and its value, and white
// space only around its tokens; a line of JSON text starts with its first
// token, never a ':'. b is returned unchanged when there is nothing to
// escape; invalid UTF-8 is kept as it is.
func JSON(b []byte) []byte {
	var out []byte // nil until the first escape
	last := 0      // b[:last] is in out
	inString, hashes := false, 0
	for i := 0; i < len(b); {
		c := b[i]
		if !inString {
			inString = c == '"'
			i++
			continue
		}
		switch {
		case c == '"':
			inString, hashes = false, 0
			i++
			continue
		case c == '\\':
			// An escape: "\uXXXX" or a two-byte one, which no rune here continues.
			hashes = 0
			if i+1 < len(b) && b[i+1] == 'u' {
				i += 6
			} else {
				i += 2
			}
			continue
		case c == '#':
			hashes++
			i++
			continue
		case c == '[' && hashes >= 2:
			out = append(append(out, b[last:i]...), `\u005b`...)
			i++
			last, hashes = i, 0
			continue
		}
		hashes = 0
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 || !Ignorable(r) {
			i += max(size, 1)
			continue
		}
		out = append(out, b[last:i]...)
		if r > 0xffff {
			hi, lo := utf16.EncodeRune(r)
			out = fmt.Appendf(out, `\u%04x\u%04x`, hi, lo)
		} else {
			out = fmt.Appendf(out, `\u%04x`, r)
		}
		i += size
		last = i
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}
