package github

import (
	"bytes"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/publish/runnertest"
)

// bidiControls are the Unicode bidi controls: the embeddings and overrides
// (U+202A–U+202E), the isolates (U+2066–U+2069) and the marks (U+200E,
// U+200F, U+061C).
const bidiControls = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"

func isBidiControl(r rune) bool { return strings.ContainsRune(bidiControls, r) }

// actionsOut is an Actions inside a runner whose workflow commands go to out.
func actionsOut(t *testing.T, out *bytes.Buffer) *Actions {
	t.Helper()
	a, err := ReadActions(envFunc(map[string]string{"GITHUB_ACTIONS": "true"}), out)
	require.NoError(t, err)
	return a
}

// A server's error text (and any other data) in a workflow command's message
// or properties could hold bidi controls, which make the log line and the
// annotation read otherwise than they say ("failed … GitHub answered 403
// \u202eerutangis dab" shows "bad signature"); an ANSI escape could colour
// or hide part of the line. Every command writes them visible, as the
// reports do: (U+202E), \x1b. At the base commit they passed as they were.
func TestCommandsShowBidiControls(t *testing.T) {
	tests := []struct {
		name  string
		issue func(a *Actions)
		want  string
	}{
		{name: "a server's error text in a warning",
			issue: func(a *Actions) {
				a.Warning("retrieval-gate could not post the PR comment: GitHub answered 403 \u202eerutangis dab\u202c. Check the token.")
			},
			want: "::warning::retrieval-gate could not post the PR comment: GitHub answered 403 (U+202E)erutangis dab(U+202C). Check the token."},
		{name: "every bidi control in a notice",
			issue: func(a *Actions) { a.Notice("x" + bidiControls + "y") },
			want:  "::notice::x(U+202A)(U+202B)(U+202C)(U+202D)(U+202E)(U+2066)(U+2067)(U+2068)(U+2069)(U+200E)(U+200F)(U+061C)y"},
		{name: "an annotation's file, title and message",
			issue: func(a *Actions) {
				a.Annotate("error", []Annotation{{File: "eval/a\u202egnp.jsonl", Line: 3, Title: "gold \u2067id\u2069", Message: "case \u200fc1: gold id \"\u061cg\""}}, 1, 5, "")
			},
			want: "::error file=eval/a(U+202E)gnp.jsonl,line=3,title=gold (U+2067)id(U+2069)::case (U+200F)c1: gold id \"(U+061C)g\""},
		{name: "an ANSI escape and a zero-width space; line ends stay the command's %0A",
			issue: func(a *Actions) { a.Warning("\x1b[8mhidden\x1b[0m a\u200bb\nsecond line\ttab") },
			want:  `::warning::\x1b[8mhidden\x1b[0m a(U+200B)b%0Asecond line` + "\ttab"},
		{name: "a bidi control next to the legacy syntax: shown, and the syntax guarded",
			issue: func(a *Actions) { a.Warning("id ##[\u202eerror]x ##\u200e[group]y") },
			want:  `::warning::id ##\[(U+202E)error]x ##(U+200E)[group]y`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			tc.issue(actionsOut(t, &out))
			assert.Equal(t, tc.want+"\n", out.String())
			assert.False(t, strings.ContainsFunc(out.String(), isBidiControl), "a bidi control survived: %q", out.String())
			cmds := runnertest.Commands(out.String(), runnertest.Registered)
			require.Len(t, cmds, 1, "%+v", cmds)
			assert.NotContains(t, strings.Map(dropIgnorable, out.String()), "##[", "the legacy syntax, once the ignorables are dropped")
		})
	}
}

// dropIgnorable is runnertest's culture-sensitive reading: the characters a
// comparison may skip are not there.
func dropIgnorable(r rune) rune {
	if runnertest.Ignorable(r) {
		return -1
	}
	return r
}

// FuzzCommandText: whatever a warning, a notice or an annotation carries,
// (1) no bidi control (and no other format character) survives into the
// log; (2) the runner (runnertest: "::" after any white space it trims, "##["
// anywhere in a line, also once the characters a culture-sensitive comparison
// ignores are dropped) reads exactly the commands issued, each on its own
// line, with the name it was issued with; and (3) no "##[" remains in any
// line for the legacy syntax to find after the command's own "::".
func FuzzCommandText(f *testing.F) {
	f.Add("GitHub answered 403 \u202eerutangis dab", "t", "eval/a.jsonl", uint8(0))
	f.Add("x"+bidiControls+"y", "\u2066", "a\u202egnp", uint8(1))
	f.Add("##[\u202eerror]x\n::warning::y", "##\u200e[group]", "\u00a0::add-mask::s", uint8(2))
	f.Add("\x1b[31m\r\n\u0085::error::z", ":\u00ad:", "%0A", uint8(3))
	f.Fuzz(func(t *testing.T, msg, title, file string, level uint8) {
		name := []string{"error", "warning", "notice"}[int(level)%3]
		var out bytes.Buffer
		a := actionsOut(t, &out)
		a.Warning(msg)
		a.Annotate(name, []Annotation{{File: file, Line: 1, Title: title, Message: msg}}, 1, 5, "")
		a.Notice(title)
		text := out.String()
		if strings.ContainsFunc(text, func(r rune) bool { return isBidiControl(r) || unicode.Is(unicode.Cf, r) }) {
			t.Fatalf("a bidi control or format character survived: %q", text)
		}
		want := []string{"warning", name, "notice"}
		cmds := runnertest.Commands(text, nil)
		lines := runnertest.Lines(text)
		if len(lines) != len(want) || len(cmds) != len(want) {
			t.Fatalf("%d lines, %d commands for the %d issued: %q", len(lines), len(cmds), len(want), text)
		}
		for i, c := range cmds {
			if c.Line != i+1 || c.Syntax != "::" || c.Name != want[i] {
				t.Fatalf("command %d read as %+v, issued %s: %q", i, c, want[i], text)
			}
			if strings.Contains(strings.Map(dropIgnorable, c.Data), "##[") || strings.Contains(strings.Map(dropIgnorable, c.Info), "##[") {
				t.Fatalf("command %d holds the legacy syntax: %q", i, c.Text)
			}
		}
	})
}
