package checkreport_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/check"
	"github.com/retrieval-gate/retrieval-gate/internal/floor"
	"github.com/retrieval-gate/retrieval-gate/internal/gate"
	"github.com/retrieval-gate/retrieval-gate/internal/guard"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
	"github.com/retrieval-gate/retrieval-gate/internal/report/checkreport"
)

// hostileNames are type names and locale tags that the floor syntax, a POSIX
// shell, a YAML literal block or the Actions runner may read otherwise.
var hostileNames = []string{
	"multi hop", `say "hi"`, `"quoted"`, `back\slash`, `a\"b`, "it's", "C#", "#lead", "a=b", "=", "x==0.5",
	"a@b", "@", "type:x", "locale:y", ": colon", "a::b", "::error::x", " lead", "trail ", "  ", "\t",
	"line\nbreak", "cr\rlf", "nul\x00x", "tab\tx", "ação", "日本語", "emoji 🙂", "\u00a0nbsp", "x\u3000",
	"\u2028sep", "zw\u200bsp", "rtl\u202eevil", "bad\xffutf8", "\ufffd", "x ##[error title=FORGED]y",
	"x#\u00ad#[warning title=FORGED]y", "x#\ufe0f#[add-mask]FORGED", "###[", "$(rm -rf /)", "`id`", "$HOME",
	"a | b", "a > b", "- dash", "~tilde", "{brace}", "[list]", "*star", "&anchor", "!tag", "%pct", "a;b",
	strings.Repeat("long ", 100), strings.Repeat("x", 990), strings.Repeat("#", 300),
}

// TestSuggestFloorsRoundTrip: every line --suggest-floors prints for pasting,
// read as the runner shows it (GuardText), as a shell reads the flag and as the
// floors Action input gives it, parses through check's floor grammar back to
// exactly the group and the value suggested.
func TestSuggestFloorsRoundTrip(t *testing.T) {
	for _, name := range hostileNames {
		for _, group := range []string{floor.TypePrefix + name, floor.LocalePrefix + gate.CanonicalLocale(name)} {
			t.Run(fmt.Sprintf("%q", group), func(t *testing.T) { assertRoundTrip(t, group, 0.42) })
		}
	}
}

func FuzzSuggestFloorsRoundTrip(f *testing.F) {
	for _, name := range hostileNames {
		f.Add(name, false, uint8(42))
		f.Add(name, true, uint8(7))
	}
	f.Fuzz(func(t *testing.T, name string, locale bool, v uint8) {
		if name == "" || v == 0 || v > 100 {
			t.Skip("no such group or floor: an empty type is golden; a floor is in (0, 1]")
		}
		group := floor.TypePrefix + name
		if locale {
			group = floor.LocalePrefix + gate.CanonicalLocale(name)
		}
		assertRoundTrip(t, group, float64(v)/100)
	})
}

// assertRoundTrip renders a suggestion on group and parses its flag and its
// floors-input line back.
func assertRoundTrip(t *testing.T, group string, value float64) {
	t.Helper()
	o := floor.Observed{Measure: metrics.KeyHit, Group: group, Binary: true,
		Summary: metrics.Summary{N: 10000, Mean: value + 0.005, CI95: [2]float64{value, value + 0.01}, Method: metrics.MethodWilson}}
	s := floor.Suggest(o)
	if s.Refused != "" {
		assert.Equal(t, floor.RefusedLong, s.Refused, "%q: only a name too long for an expression is refused", group)
		_, err := check.FloorGrammar.Parse(floor.Spec{Measure: o.Measure, Group: group, Value: value}.String())
		assert.ErrorContains(t, err, "too long", "%q: refused only when Parse would refuse it", group)
		return
	}
	require.InDelta(t, value, s.Spec.Value, 1e-12)
	var b strings.Builder
	require.NoError(t, checkreport.SuggestedFloorsText(&b, []floor.Suggestion{s}, 5))
	out := guard.Text(b.String())
	flags, input := pasteLines(t, out)
	require.Len(t, flags, 1, "%q:\n%s", group, out)
	require.Len(t, input, 1, "%q:\n%s", group, out)
	word, ok := unshell(flags[0])
	require.True(t, ok, "%q: the flag is one shell word: %s", group, flags[0])
	var fromFlag, fromInput floor.List
	require.NoError(t, check.FloorGrammar.AddLines(&fromFlag, word), "%q: the flag %s", group, flags[0])
	require.NoError(t, check.FloorGrammar.AddLines(&fromInput, input[0]), "%q: the floors line %s", group, input[0])
	for _, l := range []floor.List{fromFlag, fromInput} {
		require.Len(t, l, 1)
		assert.Equal(t, floor.Spec{Measure: metrics.KeyHit, Group: group, Value: s.Spec.Value}, l[0], "%q", group)
	}
	assert.NotEqual(t, outcome.GroupOverall, group)
}

// pasteLines are the --floor words and the floors input lines of a report.
func pasteLines(t *testing.T, out string) (flags, input []string) {
	t.Helper()
	_, rest, ok := strings.Cut(out, "\nas flags:\n")
	require.True(t, ok, out)
	fl, in, ok := strings.Cut(rest, "\nas the floors Action input:\n  floors: |\n")
	require.True(t, ok, out)
	for _, l := range strings.Split(strings.TrimSuffix(fl, "\n"), "\n") {
		l, ok := strings.CutPrefix(l, "  --floor ")
		require.True(t, ok, "a flag line: %q", l)
		flags = append(flags, strings.TrimSuffix(l, " \\"))
	}
	for _, l := range strings.Split(strings.TrimSuffix(in, "\n"), "\n") {
		l, ok := strings.CutPrefix(l, "    ")
		require.True(t, ok, "an input line: %q", l)
		input = append(input, l)
	}
	return flags, input
}

// unshell reads s as one POSIX shell word of the two forms a suggestion uses:
// bare characters that need no quoting, or single-quoted runs joined by \'.
func unshell(s string) (string, bool) {
	if !strings.HasPrefix(s, "'") {
		return s, !strings.ContainsAny(s, " \t\n'\"\\$`|&;<>()*?[]#~{}!")
	}
	var b strings.Builder
	for len(s) > 0 {
		switch {
		case strings.HasPrefix(s, `\'`):
			b.WriteByte('\'')
			s = s[2:]
		case s[0] == '\'':
			i := strings.IndexByte(s[1:], '\'')
			if i < 0 {
				return "", false
			}
			b.WriteString(s[1 : 1+i])
			s = s[2+i:]
		default:
			return "", false
		}
	}
	return b.String(), true
}
