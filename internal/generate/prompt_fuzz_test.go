package generate_test

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/generate"
	"github.com/retrieval-gate/retrieval-gate/internal/input/inputtest"
)

// FuzzParsePrompt: generate's --prompt template. A template ParsePrompt
// accepts holds {{document}}, and every placeholder in it, as a scan written
// apart from the parser's regular expression finds them ("{{", blanks, a name
// of letters, digits, '_', '.' or '-' not starting with a digit, '.' or '-',
// blanks, "}}"), is one generate fills; its version is "file:" and the base
// name. A refused one names the first unknown placeholder at its line
// (p.txt:N:), or the missing {{document}} (p.txt:).
func FuzzParsePrompt(f *testing.F) {
	for _, s := range []string{"Write {{questions}} questions in {{locale}}: {{document}}", "{{document}} {{answer_format}} {{keywords}}",
		"{{ document }}", "{{document}}\n{{query}}", "{{locale}}", "", "{{document}} {{documents}} {{x.y-z}} {{1}} {{{document}}}",
		"\ufeff{{document}} in {{locale}}", "{{document}}\n\xff{{locale}}", "\ufeff\ufeff{{document}}"} {
		f.Add(s)
	}
	known := map[string]bool{"{{document}}": true, "{{locale}}": true, "{{questions}}": true, "{{keywords}}": true, "{{answer_format}}": true}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := generate.ParsePrompt("dir/p.txt", []byte(s))
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
			require.EqualError(t, err, fmt.Sprintf("dir/p.txt:%d: the prompt template is not valid UTF-8 (byte 0x%02x)", 1+strings.Count(s[:bad], "\n"), s[bad]))
			return
		}
		phs := inputtest.Placeholders(s)
		if err == nil {
			require.Equal(t, s, p.Template)
			require.Equal(t, "file:p.txt", p.Version)
			require.Contains(t, s, "{{document}}")
			for _, ph := range phs {
				require.True(t, known[ph.Text], "%q accepted with the placeholder %q", s, ph.Text)
			}
			return
		}
		msg := err.Error()
		if strings.HasPrefix(msg, "dir/p.txt: prompt template has no {{document}}") {
			require.NotContains(t, s, "{{document}}")
			for _, ph := range phs {
				require.True(t, known[ph.Text], "%q: a missing placeholder reported before the unknown %q", s, ph.Text)
			}
			return
		}
		require.NotEmpty(t, phs, "%q refused (%v) without a placeholder", s, err)
		first, unknown := inputtest.FirstUnknown(phs, known)
		require.True(t, unknown, "%q refused (%v) with every placeholder known", s, err)
		require.Contains(t, msg, fmt.Sprintf("dir/p.txt:%d: unknown placeholder %q", first.Line, first.Text))
	})
}
