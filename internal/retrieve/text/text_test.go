package text

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"golang.org/x/text/unicode/norm"
	"golang.org/x/text/unicode/runenames"
)

func TestTokens(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"empty", "", nil},
		{"punctuation splits", "Reset your password, then sign-in!", []string{"reset", "your", "password", "then", "sign", "in"}},
		{"accents fold", "Sesión ÇA Não", []string{"sesion", "ca", "nao"}},
		{"combining accent", "se\u0301sion", []string{"sesion"}},
		{"digits kept", "2FA in 14 days", []string{"2fa", "in", "14", "days"}},
		{"eszett", "Straße", []string{"strasse"}},
		{"non latin kept", "пароль 密码", []string{"пароль", "密码"}},
		// Chinese and Japanese write no spaces between words, and Korean
		// attaches its particles: a run of their characters gives its
		// overlapping pairs, so that a word inside it is a term (重置密码
		// "reset the password" has 密码 "password"); one character alone is
		// its own term; a change to Latin letters or digits ends the run.
		{"chinese pairs", "如何重置密码？", []string{"如何", "何重", "重置", "置密", "密码"}},
		{"japanese pairs", "パスワードを忘れた", []string{"パス", "スワ", "ワー", "ード", "ドを", "を忘", "忘れ", "れた"}},
		{"korean pairs", "비밀번호를 재설정", []string{"비밀", "밀번", "번호", "호를", "재설", "설정"}},
		{"one cjk character", "书 と 2024年 API密钥", []string{"书", "と", "2024", "年", "api", "密钥"}},
		{"cjk between latin", "v2版本ok", []string{"v2", "版本", "ok"}},
		// Thai, Lao, Khmer and Burmese write no spaces between words either:
		// the pairs of their characters, each with its marks (รหัสผ่าน
		// "password" is ร หั ส ผ่ า น), so that รหัส "code" inside it is
		// found by its own pairs.
		{"thai pairs", "รหัสผ่าน", []string{"รหั", "หัส", "สผ่", "ผ่า", "าน"}},
		{"thai word in a sentence", "รีเซ็ตรหัส", []string{"รีเ", "เซ็", "ซ็ต", "ตร", "รหั", "หัส"}},
		{"lao pairs", "ລະຫັດ", []string{"ລະ", "ະຫັ", "ຫັດ"}},
		{"khmer pairs with a subscript", "ក្រុម", []string{"ក្រុ", "រុម"}},
		{"burmese pairs", "စကားဝှက်", []string{"စကား", "ကားဝှ", "ဝှက်"}},
		{"a thai digit ends the run", "ข้อ๑ok", []string{"ข้อ", "1ok"}},
		// Every apostrophe ends a word, however it was typed.
		{"apostrophes", "м'ясо мʼясо Hawaiʻi don’t", []string{"м", "ясо", "м", "ясо", "hawai", "i", "don", "t"}},
		// Accented Latin letters beyond Latin Extended-A fold as the Latin-1
		// ones do, and as their decomposed (NFD) spelling does: Romanian ș/ț
		// (comma below, U+0219/U+021B) as its cedilla ş/ţ, Vietnamese (Latin
		// Extended Additional), Pinyin tone marks (Latin Extended-B).
		{"romanian comma below", "Știri țară ştiri ţară", []string{"stiri", "tara", "stiri", "tara"}},
		{"vietnamese", "Tiếng Việt Tie\u0302\u0301ng", []string{"tieng", "viet", "tieng"}},
		{"vietnamese horn", "Người dùng ƯU", []string{"nguoi", "dung", "uu"}},
		{"pinyin", "Nǐ hǎo", []string{"ni", "hao"}},
		{"no decomposition kept", "ə ƃ ɓ ꝑ", []string{"ə", "ƃ", "ɓ", "ꝑ"}},
		// Latin letters with a stroke or a bar fold to their base letter, as
		// ø, đ and ł always did, though Unicode gives them no decomposition.
		{"stroke letters", "ƀ Ƀ ǥ Ǥ ɨ Ɨ ɉ Ɉ ƚ Ƚ ƶ Ƶ", []string{"b", "b", "g", "g", "i", "i", "j", "j", "l", "l", "z", "z"}},
		{"stroke letters beyond extended-b", "Ⱥⱥ Ⱦⱦ Ᵽᵽ Ɵɵ Ꞹꞹ Ꞩꞩ", []string{"aa", "tt", "pp", "oo", "uu", "ss"}},
		{"stroke letter in a word", "Ɨnƚand", []string{"inland"}},
		{"accent on a stroke letter or a ligature", "ǿ Ǿ ǣ Ǽ", []string{"o", "o", "ae", "ae"}},
		// Greek capitals carry no accent and final sigma is a letter of its
		// own: "λόγος", "λογος" and "ΛΟΓΟΣ" are one word (tonos U+0301 and
		// the precomposed ό fold as Latin accents do).
		{"greek tonos and final sigma", "λόγος ΛΟΓΟΣ λογος λο\u0301γος Λόγος", []string{"λογοσ", "λογοσ", "λογοσ", "λογοσ", "λογοσ"}},
		{"greek every accented vowel", "ά έ ή ί ό ύ ώ Ά Έ Ή Ί Ό Ύ Ώ", []string{"α", "ε", "η", "ι", "ο", "υ", "ω", "α", "ε", "η", "ι", "ο", "υ", "ω"}},
		{"greek dialytika", "ϊ ϋ ΐ ΰ Ϊ Ϋ ΜΑΪΟΥ Μαΐου", []string{"ι", "υ", "ι", "υ", "ι", "υ", "μαιου", "μαιου"}},
		{"greek sigma inside a word", "σύστημα ΣΎΣΤΗΜΑ", []string{"συστημα", "συστημα"}},
		{"polytonic greek", "ἀρχῇ ἐν ἀρχῆ Ῥόδος", []string{"αρχη", "εν", "αρχη", "ροδοσ"}},
		// Devanagari vowel signs (ि U+093F, ा U+093E) are spacing marks (Mc):
		// they belong to the word (UAX #29, WB4), which must not split into its
		// consonants, or "कब" (when) would share every term with "किताब" (book).
		{"spacing marks stay in the word", "किताब कब", []string{"किताब", "कब"}},
		{"tamil vowel sign and pulli", "தமிழ்", []string{"தமிழ்"}},
		{"spacing mark with no letter before it", "\u093F किताब", []string{"किताब"}},
		// A virama (U+094D, Bengali U+09CD, Tamil pulli U+0BCD) is a
		// nonspacing mark that spells its word: dropped, it made प्रकार
		// (kind) the term of परकार (compass), স্বর (voice) that of সবর
		// (patience), and பல் (tooth) that of பல (many).
		{"hindi virama", "प्रकार परकार", []string{"प्रकार", "परकार"}},
		{"bengali virama", "স্বর সবর", []string{"স্বর", "সবর"}},
		{"tamil pulli", "பல் பல", []string{"பல்", "பல"}},
		// The vowel signs that are nonspacing marks (Devanagari े, ु,
		// Bengali ু, Tamil ீ) and the anusvara and candrabindu spell the
		// word as the spacing ones do: मेरा (my) is not मरा (died), कुल (total)
		// is not कल (tomorrow), বুক (chest) is not বক (heron), வீடு (house)
		// is not வடு (scar), हँसी (laughter) is not हसी.
		{"nonspacing vowel signs", "मेरा मरा कुल कल", []string{"मेरा", "मरा", "कुल", "कल"}},
		{"bengali and tamil nonspacing vowel signs", "বুক বক வீடு வடு", []string{"বুক", "বক", "வீடு", "வடு"}},
		{"anusvara and candrabindu", "हँसी हंस हस", []string{"हँसी", "हंस", "हस"}},
		// A nukta makes another consonant: ज़रा (a little) is not जरा (old
		// age), Bengali বড়ি is not বডি. Written precomposed (U+095B, U+09DC)
		// or decomposed, it is the same term.
		{"nukta", "ज़रा जरा", []string{"ज\u093cरा", "जरा"}},
		{"nukta precomposed and decomposed", "\u095bरा \u091c\u093cरा \u09dcি \u09a1\u09bcি", []string{"ज\u093cरा", "ज\u093cरा", "\u09a1\u09bcি", "\u09a1\u09bcি"}},
		// A joiner after a virama only chooses how the conjunct is drawn
		// (the half form of क्‍ष, Sinhala ශ්‍රී): the word does not end there and
		// is the term of its spelling without the joiner. A Persian
		// non-joiner still separates (the prefix می from its verb).
		{"joiners inside an indic word", "क्\u200dष क्\u200cष क्ष ශ්\u200dරී", []string{"क्ष", "क्ष", "क्ष", "ශ්රී"}},
		{"persian non-joiner separates", "می\u200cخواهم", []string{"می", "خواهم"}},
		{"variation selectors dropped", "ᠠ\u180bᠨ\u180c ᠠᠨ 葛\U000e0100", []string{"ᠠᠨ", "ᠠᠨ", "葛"}},
		// Invisible format characters are no word boundary (UAX #29, WB4):
		// a soft hyphen from HTML's &shy;, a word joiner, a byte order mark,
		// a direction mark. A zero-width space and the Arabic number sign
		// still separate.
		// Decimal digits of every script are the ASCII digits: Arabic-Indic,
		// Persian, Devanagari, Bengali, fullwidth, Thai.
		{"decimal digits", "٢٠٢٤ ۲۰۲۴ २०२४ ২০২৪ ２０２４ ๒๐๒๔ 2024", []string{"2024", "2024", "2024", "2024", "2024", "2024", "2024"}},
		{"digits in a word", "ISO\u00a0９００１ v٣ ４g", []string{"iso", "9001", "v3", "4g"}},
		// Ligatures (from a PDF's text layer), fullwidth Latin (from Japanese
		// text), halfwidth katakana and Arabic presentation forms are the
		// letters they stand for; so are the digraph letters and long s.
		{"latin ligatures", "\ufb01nd the \ufb02ow, o\ufb00er, e\ufb03cient, \ufb05ory", []string{"find", "the", "flow", "offer", "efficient", "story"}},
		{"fullwidth latin", "ＡＰＩキー Ｒｅｓｅｔ", []string{"api", "キー", "reset"}},
		{"halfwidth katakana", "ｶﾞｲﾄﾞ ガイド", []string{"ガイ", "イド", "ガイ", "イド"}},
		{"arabic presentation forms", "\ufedf\ufe8e \ufefb \ufe8e\ufee0\ufea4\ufeb4\ufe8e\ufe8f لا الحساب", []string{"لا", "لا", "الحساب", "لا", "الحساب"}},
		{"digraph letters and long s", "ĳs Ĳssel ǅemal Ǉubljana ǌegov ſtraße", []string{"ijs", "ijssel", "dzemal", "ljubljana", "njegov", "strasse"}},
		{"presentation form beside invalid utf-8", "\xef\xac\ufb01\xff", []string{"fi"}},
		{"soft hyphen", "Pass\u00adwort Ver\u00adsiche\u00adrung", []string{"passwort", "versicherung"}},
		{"invisible format characters", "in\u2060for\ufeffma\u200etion \ufeffBOM", []string{"information", "bom"}},
		{"zero-width space separates", "ภาษา\u200bไทย foo\u200bbar", []string{"ภา", "าษ", "ษา", "ไท", "ทย", "foo", "bar"}},
		{"arabic number sign separates", "سنة\u0600١٢", []string{"سنة", "12"}},
		{"thai tone marks", "ข้าว ขาว ข่าว", []string{"ข้า", "าว", "ขา", "าว", "ข่า", "าว"}},
		{"arabic vowel marks still folded", "كَتَبَ كتب", []string{"كتب", "كتب"}},
		// The hamza and madda on an alef are left out as often as the vowel
		// marks: أحمد, احمد and أَحْمَد are one term, and so are إسلام and آخر
		// typed without them. ؤ and ئ, whose seat is another letter, stay.
		{"arabic alef with hamza or madda", "أحمد احمد أَحْمَد ا\u0654حمد إسلام اسلام آخر اخر ٱلله", []string{"احمد", "احمد", "احمد", "احمد", "اسلام", "اسلام", "اخر", "اخر", "الله"}},
		// A tatweel (U+0640) stretches a word to justify its line.
		{"arabic tatweel", "كتـــاب كتاب الـعـربـيـة العربية", []string{"كتاب", "كتاب", "العربية", "العربية"}},
		{"arabic hamza on waw and yeh kept", "رؤية روية سئل سيل", []string{"رؤية", "روية", "سئل", "سيل"}},
		{"hebrew points still folded", "שָׁלוֹם שלום", []string{"שלום", "שלום"}},
		// Composed first (NFC): a word written decomposed is the term of its
		// precomposed spelling, Hangul jamo and the kana voicing mark
		// included, and a Cyrillic й written и + breve stays й (мой "my" is
		// not мои "my", plural).
		{"hangul jamo", "\u1112\u1161\u11ab\u1100\u116e\u11a8 한국", []string{"한국", "한국"}},
		{"kana voicing mark", "\u304b\u3099 が か", []string{"が", "が", "か"}},
		{"cyrillic short i", "мои\u0306 мой мои", []string{"мой", "мой", "мои"}},
		// Russian writes ё as е in most text: ещё, ЕЩЁ, еще and ещё typed
		// decomposed are one term, and so are the optional accents of
		// Bulgarian ѝ (her) and Macedonian ѐ. Ukrainian ї is a letter.
		{"cyrillic yo", "ещё ЕЩЁ еще еще\u0308 Ёлка", []string{"еще", "еще", "еще", "еще", "елка"}},
		{"bulgarian and macedonian accents", "ѝ Ѝ и ѐ Ѐ", []string{"и", "и", "и", "е", "е"}},
		{"ukrainian yi kept", "її Її", []string{"її", "її"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Tokens(tt.in))
		})
	}
}

// TestPrecomposedFoldsAsDecomposed: every Latin or Greek letter whose
// canonical decomposition (Unicode NFD) is a base letter and accents gives the
// term of its base letter, and the terms of that decomposition, upper and
// lower case, in Latin-1 Supplement, Latin Extended-A and -B, Latin Extended
// Additional, Greek and Coptic and Greek Extended: a KB written precomposed
// matches queries typed decomposed or without the accents, and an accent is
// folded whatever block its letter is in.
func TestPrecomposedFoldsAsDecomposed(t *testing.T) {
	for _, block := range []struct {
		name   string
		lo, hi rune
		base   *unicode.RangeTable
		least  int
	}{
		{"Latin", 0xc0, 0x250, unicode.Latin, 250},
		{"Latin Extended Additional", 0x1e00, 0x1f00, unicode.Latin, 200},
		{"Greek and Coptic", 0x370, 0x400, unicode.Greek, 20},
		{"Greek Extended", 0x1f00, 0x2000, unicode.Greek, 200},
	} {
		t.Run(block.name, func(t *testing.T) {
			checked := 0
			for r := block.lo; r < block.hi; r++ {
				s := string(r)
				d := norm.NFD.String(s)
				b, _ := utf8.DecodeRuneInString(d)
				if !unicode.IsLetter(r) || d == s || !unicode.Is(block.base, b) || !unicode.IsLetter(b) {
					continue
				}
				checked++
				assert.Equal(t, Tokens(string(b)), Tokens(s), "%U %s", r, s)
				assert.Equal(t, Tokens(d), Tokens(s), "%U %s", r, s)
			}
			assert.GreaterOrEqual(t, checked, block.least)
		})
	}
}

// TestStrokeLettersFold: every Latin letter Unicode names "LATIN SMALL (or
// CAPITAL) LETTER X WITH STROKE" (or BAR, DOUBLE BAR, DIAGONAL, OBLIQUE or
// SHORT STROKE OVERLAY), or "LATIN SMALL LETTER BARRED X", X an ASCII letter,
// is the term x, but the medieval abbreviation letters of Latin Extended-D
// (U+A740–U+A75F: ꝁ kalendae, ꝑ per, ꝗ quod), which stay as they are.
func TestStrokeLettersFold(t *testing.T) {
	stroke := regexp.MustCompile(`^LATIN (?:SMALL|CAPITAL) LETTER ([A-Z]) WITH (?:STROKE|BAR|DOUBLE BAR|DIAGONAL STROKE|OBLIQUE STROKE|SHORT STROKE OVERLAY)$|^LATIN SMALL LETTER BARRED ([A-Z])$`)
	checked := 0
	for r := rune(0x80); r <= unicode.MaxRune; r++ {
		m := stroke.FindStringSubmatch(runenames.Name(r))
		if m == nil || !unicode.Is(unicode.Latin, r) {
			continue
		}
		s := string(r)
		if 0xa740 <= r && r < 0xa760 {
			assert.Equal(t, []string{string(unicode.ToLower(r))}, Tokens(s), "%U %s %s", r, s, m[0])
			continue
		}
		checked++
		assert.Equal(t, []string{strings.ToLower(m[1] + m[2])}, Tokens(s), "%U %s %s", r, s, m[0])
	}
	assert.GreaterOrEqual(t, checked, 60)
}

// TestDigitValues: every decimal digit (category Nd) is the ASCII digit of
// its value, which its Unicode name says ("ARABIC-INDIC DIGIT FOUR").
func TestDigitValues(t *testing.T) {
	names := []string{"ZERO", "ONE", "TWO", "THREE", "FOUR", "FIVE", "SIX", "SEVEN", "EIGHT", "NINE"}
	checked := 0
	for r := rune(0x80); r <= unicode.MaxRune; r++ {
		if !unicode.IsDigit(r) {
			continue
		}
		checked++
		tokens := Tokens(string(r))
		if !assert.Len(t, tokens, 1, "%U", r) {
			continue
		}
		v := tokens[0][0] - '0'
		if assert.Len(t, tokens[0], 1, "%U", r) && assert.Less(t, v, byte(10), "%U", r) {
			assert.True(t, strings.HasSuffix(runenames.Name(r), " "+names[v]), "%U %s is not %d", r, runenames.Name(r), v)
		}
	}
	assert.Greater(t, checked, 600)
}

// FuzzTokens: Tokens gives the reference tokenizer's terms (below), none of
// them empty, for any string, valid UTF-8 or not.
func FuzzTokens(f *testing.F) {
	f.Add("Olá, ¿cómo estás?")
	f.Add("\u212a\u00c5 \xff\xfeab\xc3 Straße")
	f.Fuzz(func(t *testing.T, s string) {
		got := Tokens(s)
		for _, tok := range got {
			if tok == "" {
				t.Fatalf("empty token from %q", s)
			}
		}
		if want := referenceTokens(s); !slices.Equal(want, got) {
			t.Fatalf("Tokens(%q) = %q, want %q", s, got, want)
		}
	})
}

// referenceTokens is the tokenizer as it was before Each (a strings.Builder per
// term, the unicode tables for every rune): Each must give the same terms.
func referenceTokens(s string) []string {
	var compat strings.Builder
	for rest := s; len(rest) > 0; {
		r, n := utf8.DecodeRuneInString(rest)
		if 0xfb00 <= r && r < 0xfe00 || 0xfe70 <= r && r < 0xfeff || 0xff00 <= r && r < 0xfff0 {
			compat.WriteString(norm.NFKC.String(string(r)))
		} else {
			compat.WriteString(rest[:n]) // invalid UTF-8 stays as it is
		}
		rest = rest[n:]
	}
	s = norm.NFC.String(compat.String())
	var dst []string
	var b strings.Builder
	var last rune
	var units []string // a run of CJK characters, each with its marks
	flush := func() {
		switch {
		case len(units) == 1:
			dst = append(dst, units[0])
		case len(units) > 1:
			for i := 1; i < len(units); i++ {
				dst = append(dst, units[i-1]+units[i])
			}
		case b.Len() > 0:
			dst = append(dst, b.String())
		}
		units = nil
		b.Reset()
	}
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		s = s[n:]
		if r == tatweel {
			continue
		}
		if unicode.IsDigit(r) {
			if units != nil {
				flush()
			}
			b.WriteByte('0' + digit(r))
			last = r
			continue
		}
		if r == 0x2bc || r == 0x2bb { // modifier letter apostrophe, turned comma
			flush()
			continue
		}
		if l := unicode.ToLower(r); unicode.IsLetter(r) && (l == 'ー' || unicode.In(l, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul, unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar)) {
			if units == nil {
				flush()
			}
			units = append(units, string(l))
			last = l
			continue
		}
		if unicode.IsLetter(r) {
			if units != nil {
				flush()
			}
			switch {
			case r < utf8.RuneSelf:
				if 'A' <= r && r <= 'Z' {
					r += 'a' - 'A'
				}
				b.WriteRune(r)
			default:
				r = unicode.ToLower(r)
				if f := folded(r); f != "" {
					b.WriteString(f)
				} else {
					b.WriteRune(r)
				}
			}
			last = r
			continue
		}
		if unicode.Is(unicode.Mn, r) && accent(r) {
			continue
		}
		if unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r) || unicode.Is(unicode.Me, r) {
			if units != nil {
				units[len(units)-1] += string(r)
				last = r
			} else if b.Len() > 0 {
				b.WriteRune(r)
				last = r
			}
			continue
		}
		if (r == zwj || r == zwnj) && (b.Len() > 0 || units != nil) && last >= utf8.RuneSelf && !accent(last) {
			continue
		}
		if unicode.Is(unicode.Cf, r) && r != zwsp && r != zwnj && r != zwj && !unicode.Is(prepended, r) {
			continue
		}
		flush()
	}
	flush()
	return dst
}

func TestEachMatchesReference(t *testing.T) {
	for _, s := range []string{"", "a", "Reset your password, then sign-in!", "Sesión ÇA Não", "se\u0301sion", "\u212a\u00c5 KELVIN",
		"\xff\xfeab\xc3", "Straße æ œ ǅ", "пароль 密码 ١٢٣ ²³", "x\u0301\u0301y z", "abc\x00def\tGHI\n"} {
		assert.Equal(t, referenceTokens(s), Tokens(s), "%q", s)
	}
}

func FuzzEach(f *testing.F) {
	f.Add("Olá, ¿cómo estás? \u212a \xff")
	f.Add("ｶﾞｲﾄﾞ \ufb01nd Ａ１ \ufefb \xef\xac ĳ")
	f.Add("如何重置密码？v2版本ok 书 비밀번호를\u302e क्\u200dष")
	f.Fuzz(func(t *testing.T, s string) {
		want := referenceTokens(s)
		var got []string
		buf := []byte("stale")
		buf = Each(s, buf, func(b []byte) { got = append(got, string(b)) })
		if !slices.Equal(want, got) {
			t.Fatalf("Each(%q) = %q, want %q", s, got, want)
		}
		_ = buf
	})
}
