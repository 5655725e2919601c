package gate

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParseLocale: a reference locale is a well-formed BCP 47 tag (RFC 5646's
// syntax), put in the case the cases' locales are grouped in; anything else is
// an error saying what is wrong (the flag took any value: "e n!!" gave a
// report of deltas against "e n!!").
func TestParseLocale(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"en", "en"},
		{"pt-br", "pt-BR"},
		{"PT_br", "pt-BR"},
		{" es-419 ", "es-419"},
		{"zh-hant-tw", "zh-Hant-TW"},
		{"und", "und"},
		{"haw", "haw"},
		{"zh-yue-HK", "zh-yue-HK"},           // an extended language subtag
		{"zh-min-nan", "zh-min-nan"},         // two, a regular grandfathered tag
		{"sl-rozaj-biske", "sl-rozaj-biske"}, // variants
		{"de-CH-1996", "de-CH-1996"},         // a variant of a digit and three
		{"en-US-u-ca-gregory", "en-US-u-ca-gregory"},
		{"en-a-bbb-x-a-ccc", "en-a-bbb-x-a-ccc"},
		{"x-whatever", "x-whatever"}, // private use alone
		{"i-klingon", "i-klingon"},   // an irregular grandfathered tag
		{"en-GB-oed", "en-GB-oed"},
		{"abcdefgh", "abcdefgh"},
		{"english-language", "english-language"}, // a language of 7 letters and a variant of 8 // a language of 5 to 8 letters is well-formed
	} {
		got, err := ParseLocale(tc.in)
		require.NoError(t, err, "%q", tc.in)
		assert.Equal(t, tc.want, got, "%q", tc.in)
		assert.Equal(t, CanonicalLocale(tc.in), got, "%q: the cases' canonical form", tc.in)
	}
	for _, tc := range []struct{ in, why string }{
		{"", "it is empty"},
		{"   ", "it is empty"},
		{"e n", `subtag "e n" holds a character other than an ASCII letter or digit`},
		{"en.US", `subtag "en.US" holds a character other than an ASCII letter or digit`},
		{"en--US", "it has an empty subtag (two separators in a row, or one at an end)"},
		{"en-", "it has an empty subtag (two separators in a row, or one at an end)"},
		{"e", `the language "e" is not 2 to 8 letters`},
		{"12", `the language "12" is not 2 to 8 letters`},
		{"i-foo", `the language "i" is not 2 to 8 letters`},
		{"toolongtag", `subtag "toolongtag" is longer than 8 characters`},
		{"en-US-abc", `subtag "abc" cannot stand after "en-US"`},
		{"en-US-US", `subtag "US" cannot stand after "en-US"`},
		{"en-Latn-Latn", `subtag "Latn" cannot stand after "en-Latn"`},
		{"en-x", `the singleton "x" needs a subtag after it`},
		{"en-a", `the singleton "a" needs a subtag after it`},
		{"en-a-b", `the singleton "a" needs a subtag after it`},
		{"x", `the singleton "x" needs a subtag after it`},
		{"zh-abc-def-ghi-jkl", `subtag "jkl" cannot stand after "zh-abc-def-ghi"`}, // at most three extlangs
		{"ès", `subtag "ès" holds a character other than an ASCII letter or digit`},
	} {
		_, err := ParseLocale(tc.in)
		require.Error(t, err, "%q", tc.in)
		assert.Equal(t, strconv.Quote(tc.in)+" is not a BCP 47 language tag (such as en, pt-BR, es-419 or zh-Hant-TW): "+tc.why, err.Error())
	}
}

// FuzzParseLocale: never a panic; a tag taken is the cases' canonical form of
// the input, and is taken again as it is.
func FuzzParseLocale(f *testing.F) {
	for _, s := range []string{"en", "pt_br", "zh-Hant-TW", "en-US-x-twain", "i-klingon", "e n", "en--", "x", "de-CH-1996", "en-a-bb-c-dd"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseLocale(s)
		if err != nil {
			assert.Empty(t, got)
			return
		}
		assert.Equal(t, CanonicalLocale(s), got)
		again, err := ParseLocale(got)
		require.NoError(t, err, "%q from %q", got, s)
		assert.Equal(t, got, again)
	})
}
