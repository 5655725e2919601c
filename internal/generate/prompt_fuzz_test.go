package generate_test

import (
	"fmt"
	"strings"
	"testing"

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
		"{{ document }}", "{{document}}\n{{query}}", "{{locale}}", "", "{{document}} {{documents}} {{x.y-z}} {{1}} {{{document}}}"} {
		f.Add(s)
	}
	known := map[string]bool{"{{document}}": true, "{{locale}}": true, "{{questions}}": true, "{{keywords}}": true, "{{answer_format}}": true}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := generate.ParsePrompt("dir/p.txt", []byte(s))
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
