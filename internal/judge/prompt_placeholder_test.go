package judge_test

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/inputtest"
	"github.com/retrieval-gate/retrieval-gate/internal/judge"
)

// A --prompt template's placeholder that the judge does not know was sent to
// the model as it was written ({{documents}}, {{ query }}, a misspelt
// {{answer_format}}, which also left the answer format unsaid where it meant
// to place it): it is refused at its line.
func TestParsePromptRefusesAnUnknownPlaceholder(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"Query: {{query}}\nDocument: {{document}}\n{{answer_fromat}}\n", `p.txt:3: unknown placeholder "{{answer_fromat}}"`},
		{"Query: {{ query }}\n{{query}} {{document}}\n", `p.txt:1: unknown placeholder "{{ query }}"`},
		{"{{query}}\n\n{{document}} and {{documents}}", `p.txt:3: unknown placeholder "{{documents}}"`},
	} {
		_, err := judge.ParsePrompt("p.txt", []byte(tc.text))
		var ie *input.Error
		require.ErrorAs(t, err, &ie, tc.text)
		assert.Contains(t, err.Error(), tc.want)
	}
	for _, ok := range []string{
		"{{query}} {{document}} {{answer_format}}",
		"{{query}}\n{{document}}\nAnswer in JSON: {\"score\": {\"a\": 1}}", // braces that are not a placeholder
		judge.DefaultPrompt().Template,
	} {
		_, err := judge.ParsePrompt("p.txt", []byte(ok))
		require.NoError(t, err, ok)
	}
}

// FuzzParsePrompt: a template ParsePrompt accepts holds {{query}} and
// {{document}}, and every placeholder in it, as a scan written apart from the
// parser's regular expression finds them ("{{", blanks, a name of letters,
// digits, '_', '.' or '-' not starting with a digit, '.' or '-', blanks,
// "}}"), is one the judge fills; a refused one is an error at a line of the
// template (p.txt:N: with N from 1 to its lines, or p.txt: for a missing
// placeholder) that names an unknown placeholder at that line, or a missing
// one.
func FuzzParsePrompt(f *testing.F) {
	for _, s := range []string{"Q {{query}} D {{document}}", "{{query}}{{document}}{{answer_format}}", "{{ query }}\n{{query}}{{document}}",
		"{{query}}\n{{document}}\n{{documents}}", "{{query}} {{document}} {{x.y-z}} {{1}} {{{query}}}", "{{query}} {{document}} {{\n\tq\n}}", "", "{{document}}",
		"\ufeffQ {{query}} D {{document}}", "Q {{query}}\nD \xc3{{document}}", "\ufeff\ufeff{{query}}{{document}}"} {
		f.Add(s)
	}
	known := map[string]bool{judge.QueryPlaceholder: true, judge.DocumentPlaceholder: true, judge.FormatPlaceholder: true}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := judge.ParsePrompt("p.txt", []byte(s))
		// The file's text: without a byte order mark, and valid UTF-8 or an
		// error at the line of its first invalid byte (judge.PromptText).
		s = strings.TrimPrefix(s, "\ufeff")
		if !utf8.ValidString(s) {
			bad := 0
			for i, r := range s {
				if r == utf8.RuneError {
					if _, n := utf8.DecodeRuneInString(s[i:]); n == 1 {
						bad = i
						break
					}
				}
			}
			require.EqualError(t, err, fmt.Sprintf("p.txt:%d: the prompt template is not valid UTF-8 (byte 0x%02x)", 1+strings.Count(s[:bad], "\n"), s[bad]))
			return
		}
		phs := inputtest.Placeholders(s)
		if err == nil {
			require.Equal(t, s, p.Template)
			require.Contains(t, s, judge.QueryPlaceholder)
			require.Contains(t, s, judge.DocumentPlaceholder)
			for _, ph := range phs {
				require.True(t, known[ph.Text], "%q accepted with the placeholder %q", s, ph.Text)
			}
			return
		}
		msg := err.Error()
		if strings.HasPrefix(msg, "p.txt: prompt template has no ") {
			for _, ph := range phs {
				require.True(t, known[ph.Text], "%q: a missing placeholder reported before the unknown %q", s, ph.Text)
			}
			return
		}
		require.NotEmpty(t, phs, "%q refused (%v) without a placeholder", s, err)
		first, unknown := inputtest.FirstUnknown(phs, known)
		require.True(t, unknown, "%q refused (%v) with every placeholder known", s, err)
		require.Contains(t, msg, fmt.Sprintf("p.txt:%d: unknown placeholder %q", first.Line, first.Text))
	})
}

// A --prompt template (judge's and generate's) is read as every input is: a
// UTF-8 byte order mark is dropped, so the same template saved with and
// without one is one prompt (one hash, the cache keys of one prompt, the same
// system message; the mark was sent to the model as U+FEFF), and a byte that
// is not UTF-8, which reached the model as U+FFFD while the hash was of the
// file's bytes, is an error at its line (CONTRIBUTING.md, Bad input).
func TestParsePromptReadsItsFileAsText(t *testing.T) {
	const tmpl = "Grade {{document}} for {{query}}.\n"
	plain, err := judge.ParsePrompt("p.txt", []byte(tmpl))
	require.NoError(t, err)
	bom, err := judge.ParsePrompt("p.txt", append([]byte("\xef\xbb\xbf"), tmpl...))
	require.NoError(t, err)
	assert.Equal(t, plain.Hash, bom.Hash)
	assert.Equal(t, plain.Template, bom.Template)
	assert.Equal(t, plain.Messages("q", "d", judge.FormatJSON), bom.Messages("q", "d", judge.FormatJSON))

	_, err = judge.ParsePrompt("p.txt", []byte("Grade {{document}}\nfor \xff{{query}}.\n"))
	require.EqualError(t, err, "p.txt:2: the prompt template is not valid UTF-8 (byte 0xff)")
	var ie *input.Error
	require.ErrorAs(t, err, &ie)
}
