package format

import (
	"math"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEscapeMarkdown(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain-id_1", `plain-id\_1`},
		{"a|b", `a\|b`},
		{"`code`", "&#96;code&#96;"},
		{"<img src=x>", "&lt;img src=x&gt;"},
		{"a & b", "a &amp; b"},
		{"@octocat", "&#64;&#8203;octocat"},
		{"fixes #12", "fixes &#35;&#8203;12"},
		// issue 10 item 7: math, autolinks, references, bidi and zero-width characters.
		{"costs $5 and $$x$$", "costs <span>$</span>5 and <span>$</span><span>$</span>x<span>$</span><span>$</span>"},
		{"see https://evil.example/x", "see https:&#8203;//evil.example/x"},
		{"visit www.evil.example", "visit www&#8203;.evil.example"},
		{"WWW.Evil.example", "WWW&#8203;.Evil.example"},
		{"awww.x", "awww.x"},
		{"GH-42 and gh-7", "GH&#8203;-42 and gh&#8203;-7"},
		{"ugh-42 GH-x", "ugh-42 GH-x"},
		{"commit 1a2b3c4d fixed", "commit 1&#8203;a2b3c4d fixed"},
		{"deadbeefcafe", "d&#8203;eadbeefcafe"},
		{"1234567 abcdef 12345678", "1234567 abcdef 12345678"},
		{"en-golden-002", "en-golden-002"},
		{"id\u202Egnp.exe", "id(U+202E)gnp.exe"},
		{"zero\u200Bwidth\u2066iso\uFEFF", "zero(U+200B)width(U+2066)iso(U+FEFF)"},
		{"line1\nline2\r\n", "line1 line2  "},
		{"*b* _i_ [l](u) ~s~ \\", `\*b\* \_i\_ \[l\](u) \~s\~ \\`},
		{"¿Cómo?", "¿Cómo?"},
		{"bad\xffutf8", "bad\uFFFDutf8"},
		{"x:$//y", "x:<span>$</span>//y"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			assert.Equal(t, tt.want, EscapeMarkdown(tt.in))
		})
	}
}

func FuzzEscapeMarkdown(f *testing.F) {
	for _, s := range []string{"a|b", "<x>", "@me", "`", "\n", "\xff", "$x$", "http://a", "www.a", "GH-1", "abc1234", "\u202E", "$\uFE0F", "\uFFFF", "⚠\uFE0F"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e := EscapeMarkdown(s)
		require.True(t, utf8.ValidString(e))
		// The only markup the escaper writes is its own <span>$</span>. It is an
		// HTML tag, which also breaks any pattern around it, so it is replaced by a
		// separator, not removed: ":$//" gives ":<span>$</span>//", which GitHub
		// does not link (removing the span made a "://" the output never has).
		plain := strings.ReplaceAll(e, "<span>$</span>", "\x00")
		for _, bad := range []string{"<", ">", "`", "@", "$", "\n", "\r", "://", "\u202E", "\u200B"} {
			require.NotContains(t, plain, bad)
		}
		prev := rune(-1)
		for _, r := range plain {
			require.False(t, unicode.Is(unicode.Cf, r), "format character %U left in %q", r, e)
			require.False(t, invisible(prev, r), "invisible character %U left in %q", r, e)
			prev = r
		}
		// Every | is escaped (preceded by an odd run of backslashes).
		for i := 0; i < len(e); i++ {
			if e[i] == '|' {
				j := i - 1
				for j >= 0 && e[j] == '\\' {
					j--
				}
				require.Equal(t, 1, (i-1-j)%2, "unescaped | in %q", e)
			}
		}
	})
}

func TestNumbers(t *testing.T) {
	nan := math.NaN()
	assert.Equal(t, "0.700", Num(0.7))
	assert.Equal(t, "999999999.000", Num(999999999))
	assert.Equal(t, "1.700e+308", Num(1.7e308))
	assert.Equal(t, "-1.700e+308", Num(-1.7e308))
	assert.Equal(t, "+1.000e+09", Signed(1e9))
	assert.Equal(t, "0.000", Num(-0.0001), "no -0.000")
	assert.Equal(t, Missing, Num(nan))
	assert.Equal(t, Missing, Num(math.Inf(1)))
	assert.Equal(t, "+0.250", Signed(0.25))
	assert.Equal(t, "-0.080", Signed(-0.08))
	assert.Equal(t, "0.000", Signed(0.0004), "no ±: the reports write ± for the half-width of an interval")
	assert.Equal(t, "0.000", Signed(-0.0004))
	assert.Equal(t, "[0.000, +0.032]", SignedInterval([2]float64{0, 0.032}))
	assert.Equal(t, Missing, Signed(nan))
	assert.Equal(t, "[0.100, 0.900]", Interval([2]float64{0.1, 0.9}))
	assert.Equal(t, Missing, Interval([2]float64{0.1, nan}))
	assert.Equal(t, "[-0.100, +0.200]", SignedInterval([2]float64{-0.1, 0.2}))
	assert.Equal(t, "12.5%", Pct(0.125))
	assert.Equal(t, "0.0470", P(0.047))
	assert.Equal(t, "5.0e-05", P(0.00005))
	assert.Equal(t, "1.0e-300", P(1e-300))
	// A p below 1e-300 (or one that underflowed float64 to 0) never prints as 0.
	assert.Equal(t, "< 1e-300", P(0))
	assert.Equal(t, "< 1e-300", P(5e-324))
	assert.Equal(t, Missing, P(nan))
}

// Significant rounds to significant digits in fixed notation: the float
// noise of a product of tokens and a price (0.0007670999999999999) is gone,
// a small figure keeps its digits, the whole part of a large one is kept.
func TestSignificant(t *testing.T) {
	for _, tc := range []struct {
		v      float64
		digits int
		want   string
	}{
		{0.0007670999999999999, 4, "0.0007671"},
		{0.00030000000000000003, 4, "0.0003"},
		{0.00012300000000000001, 4, "0.000123"},
		{18.9918, 4, "18.99"},
		{1.23e-06, 4, "0.00000123"},
		{12345.67, 4, "12346"},
		{9.99996, 4, "10"},
		{0.00099996, 4, "0.001"},
		{0.5, 4, "0.5"},
		{2, 4, "2"},
		{0, 4, "0"},
		{math.Copysign(0, -1), 4, "0"},
		{-0.00123456, 3, "-0.00123"},
		{-0.000000001, 1, "-0.000000001"},
		{math.NaN(), 4, Missing},
		{math.Inf(1), 4, Missing},
	} {
		assert.Equal(t, tc.want, Significant(tc.v, tc.digits), "%v at %d digits", tc.v, tc.digits)
	}
	// A subnormal keeps its digits too (math.Log10 is off there).
	assert.Equal(t, "0."+strings.Repeat("0", 323)+"4941", Significant(5e-324, CostDigits))
}

// A failing value never reads as equal to its threshold.
func TestDistinct(t *testing.T) {
	for _, tc := range []struct {
		v, th       float64
		wantV, want string
	}{
		{0.6, 0.5, "0.600", "0.500"},
		{0.7, 0.7, "0.700", "0.700"},
		{0.6999997, 0.7, "0.6999997", "0.7000000"},
		{0.7000000000000001, 0.7, "0.7000000000000001", "0.7000000000000000"},
		{math.NaN(), 0.7, Missing, "0.700"},
		{0.5, math.NaN(), "0.500", Missing},
		// A drop of −Δ where Δ is 0 is −0: it read "-0.000" in the gate tables.
		{math.Copysign(0, -1), 0.05, "0.000", "0.050"},
		{-1e-7, 0, "-0.000", "0.000"}, // a value below 0 keeps its sign
	} {
		v, th := Distinct(tc.v, tc.th)
		assert.Equal(t, tc.wantV, v, "%v vs %v", tc.v, tc.th)
		assert.Equal(t, tc.want, th, "%v vs %v", tc.v, tc.th)
		if tc.v != tc.th && !math.IsNaN(tc.v) && !math.IsNaN(tc.th) {
			assert.NotEqual(t, v, th)
		}
	}
}

func TestFloatJSON(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{
		{0.6999997, "0.6999997"}, {2.0 / 3, "0.6666666666666666"}, {1, "1"}, {0, "0"},
		{math.Copysign(0, -1), "0"}, {1e-7, "1e-07"}, {math.NaN(), "null"}, {math.Inf(-1), "null"},
	} {
		b, err := Float(tc.v).MarshalJSON()
		require.NoError(t, err)
		assert.Equal(t, tc.want, string(b))
		var back Float
		require.NoError(t, back.UnmarshalJSON(b))
		if math.IsNaN(tc.v) || math.IsInf(tc.v, 0) {
			assert.True(t, math.IsNaN(back.V()))
		} else {
			assert.Equal(t, tc.v, back.V(), "round trip of %s", tc.want)
		}
	}
	var f Float
	assert.Error(t, f.UnmarshalJSON([]byte(`"x"`)))
}

func TestAppendJSONString(t *testing.T) {
	assert.Equal(t, `"a\"b\\\n\u0001\u2028�"`, string(AppendJSONString(nil, "a\"b\\\n\x01\u2028\xff")))
	// A byte that needs escaping at every offset of the eight-byte fast path
	// (and past it), after plain ASCII: the same as rune by rune.
	for _, special := range []string{"\"", "\\", "\n", "\x01", "\x1f", "\x7f", "é", "\u2028", "\xff", "\xe2\x80"} {
		for pre := range 20 {
			for _, post := range []string{"", "z", "plain ascii tail"} {
				in := strings.Repeat("a", pre) + special + post
				assert.Equal(t, string(appendJSONStringRunes(nil, in)), string(AppendJSONString(nil, in)), "%q", in)
			}
		}
	}
	assert.Equal(t, `"0123456789abcdef"`, string(AppendJSONString(nil, "0123456789abcdef")))
	_ = strings.ToUpper
}

// TestSanitizeTextFormatCharacters: a bidi override or a zero-width character in
// data cannot reorder or hide what a terminal shows (issue 10 item 7).
func TestSanitizeTextFormatCharacters(t *testing.T) {
	assert.Equal(t, "id(U+202E)gnp.exe", SanitizeText("id\u202Egnp.exe"))
	assert.Equal(t, "a b c", SanitizeText("a\u2028b\u2029c"), "line and paragraph separators are spaces")
	assert.Equal(t, "a(U+200B)b c", SanitizeText("a\u200Bb\nc"))
	assert.Equal(t, "plain", SanitizeText("plain"))
}

// Noncharacters and the other invisible characters (default-ignorable code
// points, variation selectors) were printed as they are: two case ids that
// differ by one read the same in a terminal, a PR comment and the HTML page.
// They are shown as (U+XXXX), as the format characters already were, by the
// one rule of SanitizeText and EscapeMarkdown (the HTML escaper is
// SanitizeText's); visible text, emoji and other scripts are left alone.
func TestInvisibleCharactersShown(t *testing.T) {
	tests := []struct{ in, want string }{
		{"en-\uFFFE-a", "en-(U+FFFE)-a"},
		{"en-\uFFFF-b", "en-(U+FFFF)-b"},
		{"en-\uFDD0-c\uFDEF", "en-(U+FDD0)-c(U+FDEF)"},
		{"x\U0001FFFE\U0010FFFF", "x(U+1FFFE)(U+10FFFF)"},
		{"hangul\u3164filler\u115F\u1160\uFFA0", "hangul(U+3164)filler(U+115F)(U+1160)(U+FFA0)"},
		{"cgj\u034Fx", "cgj(U+034F)x"},
		{"vs\uFE00\uFE0F\U000E0100\U000E01EF", "vs(U+FE00)(U+FE0F)(U+E0100)(U+E01EF)"},
		{"tag\U000E0041", "tag(U+E0041)"},
		{"bidi\u061C\u200E\u200F\u2066\u2069", "bidi(U+061C)(U+200E)(U+200F)(U+2066)(U+2069)"},
		{"ignorable\uFFF0\u2065", "ignorable(U+FFF0)(U+2065)"},
		{"visible ¿Cómo? 日本語 한국어 🙂 \uFFFC \uFFFD \uE000", "visible ¿Cómo? 日本語 한국어 🙂 \uFFFC \uFFFD \uE000"},
		// A variation selector is shown but after the symbol or ideograph whose
		// form it selects: an emoji's presentation (the reports' own ⚠️), a
		// kanji's variant in a name; a second one after it is shown.
		{"⚠\uFE0F ❤\uFE0F 葛\U000E0100", "⚠\uFE0F ❤\uFE0F 葛\U000E0100"},
		{"🙂\uFE0F\uFE0F", "🙂\uFE0F(U+FE0F)"},
		{"\uFE0Fstart é\uFE0F 1\uFE0F +\uFE0E", "(U+FE0F)start é(U+FE0F) 1(U+FE0F) +(U+FE0E)"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			assert.Equal(t, tt.want, SanitizeText(tt.in))
			assert.Equal(t, tt.want, EscapeMarkdown(tt.in), "the Markdown escaper shows them alike")
		})
	}
}

func TestShorten(t *testing.T) {
	tests := []struct {
		in   string
		max  int
		want string
		ok   bool
	}{
		{"short", 10, "short", true},
		{"exactly10!", 10, "exactly10!", true},
		{"one two three four five", 12, "one two…", false},
		{"abcdefghijklmnop", 8, "abcdefg…", false},
		{"¿Cómo exporto mis datos?", 10, "¿Cómo…", false},
		{"", 3, "", true},
	}
	for _, tc := range tests {
		got, ok := Shorten(tc.in, tc.max)
		assert.Equal(t, tc.want, got, tc.in)
		assert.Equal(t, tc.ok, ok, tc.in)
		assert.LessOrEqual(t, len([]rune(got)), tc.max, tc.in)
	}
}

// appendJSONStringRunes is AppendJSONString rune by rune: the reference of its
// eight-byte fast path.
func appendJSONStringRunes(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '"' || r == '\\':
			dst = append(dst, '\\', byte(r))
		case r == '\n':
			dst = append(dst, `\n`...)
		case r == '\r':
			dst = append(dst, `\r`...)
		case r == '\t':
			dst = append(dst, `\t`...)
		case r < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[r>>4], hexDigits[r&0xf])
		case r == utf8.RuneError && size == 1:
			dst = append(dst, "\ufffd"...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}

func TestSettingsTicksAndCounts(t *testing.T) {
	assert.Equal(t, "0.05", Full(0.05))
	assert.Equal(t, "0.8", Full(0.8))
	assert.Equal(t, "1e-07", Full(1e-7))
	a, b := 0.1, 0.2
	assert.Equal(t, "0.30000000000000004", Full(a+b), "as set, in full")
	assert.Equal(t, "0.10", Fixed(0.1, 2))
	assert.Equal(t, "12.3", Fixed(12.34, 1))
	assert.Equal(t, "80", Fixed(80, 0))
	for _, tt := range []struct {
		v, step float64
		want    string
	}{
		{0, 5, "0"}, {35, 5, "35"}, {0.4, 0.2, "0.4"}, {0.5, 0.25, "0.50"},
		{0.075, 0.025, "0.075"}, {0.30000000000000004, 0.1, "0.3"}, {2e-6, 1e-6, "0.000002"},
	} {
		assert.Equal(t, tt.want, Tick(tt.v, tt.step), "%v step %v", tt.v, tt.step)
	}
	assert.Equal(t, "0", Thousands(0))
	assert.Equal(t, "999", Thousands(999))
	assert.Equal(t, "1,000", Thousands(1000))
	assert.Equal(t, "100,000", Thousands(100000))
	assert.Equal(t, "-1,234,567", Thousands(-1234567))
}

func TestCount(t *testing.T) {
	assert.Equal(t, "0 runs", Count(0, "run", "runs"))
	assert.Equal(t, "1 run", Count(1, "run", "runs"))
	assert.Equal(t, "2 series", Count(2, "series", "series"))
	assert.Equal(t, "1 more row", Count(int64(1), "more row", "more rows"), "an int64, words before the noun")
	assert.Equal(t, "9223372036854775807 cases", Count(int64(math.MaxInt64), "case", "cases"))
	assert.Equal(t, "-1 cases", Count(-1, "case", "cases"))
}

func TestCutBytes(t *testing.T) {
	for _, tc := range []struct {
		s    string
		max  int
		want string
	}{
		{"card-1", 256, "card-1"},
		{"abcdef", 6, "abcdef"},
		{"abcdef", 4, "abcd…"},
		{"aé", 2, "a…"}, // é is two bytes: the cut does not split it
		{"éé", 3, "é…"},
		{"é", 0, "…"},
	} {
		assert.Equal(t, tc.want, CutBytes(tc.s, tc.max), "%q at %d", tc.s, tc.max)
	}
}

// Clean (it was guard.Clean) wrote a warning's data with its bidi controls
// and invisible characters as they are: a file name "a\u202Egnp.exe" printed
// in "warning: … e.g. …" read as "aexe.png", a zero-width space hid that two
// names differ. They are now shown as the reports show them, (U+XXXX) (the
// rule of SanitizeText and EscapeMarkdown), and line ends and other controls
// still as escapes, so nothing in the data starts a line.
func TestClean(t *testing.T) {
	tests := []struct{ in, want string }{
		{"kb/a\n::error title=x::.md", `kb/a\n::error title=x::.md`},
		{"a\r\x1b[31m\u2028b\t\u0085", `a\r\x1b[31m\u2028b\t\x85`},
		{"naïve ü ⚠️ 漢字", "naïve ü ⚠️ 漢字"},
		{"kb/a\u202Egnp.exe", "kb/a(U+202E)gnp.exe"},
		{"\u202A\u202B\u202C\u202D\u2066\u2067\u2068\u2069\u200E\u200F\u061C", "(U+202A)(U+202B)(U+202C)(U+202D)(U+2066)(U+2067)(U+2068)(U+2069)(U+200E)(U+200F)(U+061C)"},
		{"zero\u200B\u200C\u200D\u2060\uFEFF\u00ADwidth", "zero(U+200B)(U+200C)(U+200D)(U+2060)(U+FEFF)(U+00AD)width"},
		{"tag\U000E0041 \u3164", "tag(U+E0041) (U+3164)"},
		{"bad\xffutf8", "bad\uFFFDutf8"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, Clean(tt.in), "%q", tt.in)
		assert.NotContains(t, Clean(tt.in), "\n")
	}
}

// CaseGold writes both ids by SanitizeText's rule; the quotes show an empty
// gold id.
func TestCaseGold(t *testing.T) {
	assert.Equal(t, `case en-1: gold id "a"`, CaseGold("en-1", "a"))
	assert.Equal(t, `case en-2: gold id ""`, CaseGold("en-2", ""))
	assert.Equal(t, `case x(U+202E) y: gold id "g(U+2066) \ "`, CaseGold("x\u202E\ny", "g\u2066\x1b\\\n"))
}

// Visible is Clean for a text that may span lines (a workflow command's
// message): its line ends and tabs stay, every other control character and
// the line and paragraph separators are escapes, and the bidi controls and
// the other invisible characters are shown.
func TestVisible(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"two\nlines\r\nand\ta tab", "two\nlines\r\nand\ta tab"},
		{"\u202A\u202B\u202C\u202D\u202E\u2066\u2067\u2068\u2069\u200E\u200F\u061C", "(U+202A)(U+202B)(U+202C)(U+202D)(U+202E)(U+2066)(U+2067)(U+2068)(U+2069)(U+200E)(U+200F)(U+061C)"},
		{"GitHub answered 403 \u202Eerutangis dab", "GitHub answered 403 (U+202E)erutangis dab"},
		{"\x1b[8mhidden\x1b[0m\x00\u0085\u2028\u2029", `\x1b[8mhidden\x1b[0m\x00\x85\u2028\u2029`},
		{"zero\u200Bwidth\u00AD", "zero(U+200B)width(U+00AD)"},
		{"naïve ⚠️ 漢字", "naïve ⚠️ 漢字"},
		{"bad\xffutf8", "bad\uFFFDutf8"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, Visible(tt.in), "%q", tt.in)
		assert.Equal(t, Clean(tt.in), Clean(Visible(tt.in)), "Clean of Visible is Clean: %q", tt.in)
	}
}
