package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/gate"
)

// TestReferenceLocaleBothFrontEnds: --reference-locale, and the library's
// Options.ReferenceLocale, take a well-formed BCP 47 tag and put it in the
// case the cases' locales are grouped in, by the one function
// (gate.ParseLocale); a malformed tag is refused by both before anything runs
// (check: --reference-locale: ..., exit 2), with the same reason. The flag took
// any value. A tag no case carries is no error (the reports say so).
func TestReferenceLocaleBothFrontEnds(t *testing.T) {
	const why = ` is not a BCP 47 language tag (such as en, pt-BR, es-419 or zh-Hant-TW): `
	kb, err := gate.LoadKB(context.Background(), repoRoot(t)+"/testdata/demo/kb")
	require.NoError(t, err)
	for _, tc := range []struct {
		value, want, err string // want: the canonical tag; err: the reason after the quoted value
	}{
		{value: "en", want: "en"},
		{value: "pt-br", want: "pt-BR"},
		{value: "PT_br", want: "pt-BR"},
		{value: "zh-hant-tw", want: "zh-Hant-TW"},
		{value: "es-419", want: "es-419"},
		{value: "fr-CA", want: "fr-CA"}, // no case of the demo carries it: no error
		{value: "und", want: "und"},
		{value: "e n!!", err: `subtag "e n!!" holds a character other than an ASCII letter or digit`},
		{value: "en-US-abc", err: `subtag "abc" cannot stand after "en-US"`},
		{value: "english_", err: "it has an empty subtag (two separators in a row, or one at an end)"},
		{value: "e", err: `the language "e" is not 2 to 8 letters`},
	} {
		t.Run(tc.value, func(t *testing.T) {
			var got *checkOptions
			cerr := NewCmdCheck(NewFactory(testEnv()), func(_ context.Context, o *checkOptions) error { got = o; return nil }).
				Run(context.Background(), []string{"--cases", "c.jsonl", "--kb", "kb", "--reference-locale", tc.value})
			lib, lerr := gate.LiveOptions{Check: gate.Options{ReferenceLocale: tc.value}}.Resolve()
			if tc.err == "" {
				require.NoError(t, cerr)
				require.NoError(t, lerr)
				assert.Equal(t, tc.want, got.run.ReferenceLocale, "the CLI")
				assert.Equal(t, tc.want, lib.Check.ReferenceLocale, "the library")
				return
			}
			q := `"` + tc.value + `"`
			require.EqualError(t, cerr, "check: --reference-locale: "+q+why+tc.err)
			assert.Equal(t, ExitInput, ExitCode(cerr))
			assert.Nil(t, got, "nothing ran")
			require.EqualError(t, lerr, "gate: Options.ReferenceLocale: "+q+why+tc.err)
			_, err := gate.Check(context.Background(), strings.NewReader(""), kb, gate.Options{ReferenceLocale: tc.value})
			require.EqualError(t, err, "gate: Options.ReferenceLocale: "+q+why+tc.err, "Check refuses it too")
		})
	}

	// An explicit empty flag is refused (it was und, the locale of cases
	// without one); the library's "" is its zero value, the default en.
	err = NewCmdCheck(NewFactory(testEnv()), func(context.Context, *checkOptions) error { t.Fatal("ran"); return nil }).
		Run(context.Background(), []string{"--cases", "c.jsonl", "--kb", "kb", "--reference-locale", ""})
	require.EqualError(t, err, `check: --reference-locale: ""`+why+"it is empty")
	lib, err := gate.LiveOptions{}.Resolve()
	require.NoError(t, err)
	assert.Equal(t, "en", lib.Check.ReferenceLocale)

	// As an Action input: named by the input, its value quoted once.
	vars := map[string]string{"GITHUB_ACTIONS": "true", "INPUT_COMMAND": "check", "INPUT_CASES": "c.jsonl", "INPUT_KB": "kb", "INPUT_REFERENCE-LOCALE": "en US"}
	env := testEnv()
	env.Getenv = func(k string) string { return vars[k] }
	err = NewCmdCheck(NewFactory(env), func(context.Context, *checkOptions) error { t.Fatal("ran"); return nil }).Run(context.Background(), nil)
	require.EqualError(t, err, `check: action input "reference-locale": "en US"`+why+`subtag "en US" holds a character other than an ASCII letter or digit`)
}
