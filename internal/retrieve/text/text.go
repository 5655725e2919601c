// Package text turns text into the terms that the lexical scorers (BM25 and the
// hash embedder) count: lower-cased runs of Unicode letters and digits, so
// that a word is one term however it is typed (docs/retrieve.md, "Terms"). The
// text is put in NFC, with ligatures, fullwidth and presentation forms read as
// the letters they stand for; every script's decimal digits are ASCII digits
// (٤٢ -> 42); the accents of Latin and Greek letters are folded (é -> e,
// ç -> c, ø -> o, ά -> α, final ς -> σ), and Cyrillic ё is е and Arabic أ is
// ا. Nonspacing marks that are accents or optional points (a decomposed
// accent, Arabic and Hebrew vowel marks) are dropped; every other mark belongs
// to the word it follows (the vowel signs, virama and nukta of Devanagari and
// the other Indic scripts), so that "किताब" is one term and not the three
// consonants "क", "त", "ब", and "मेरा" (my) is not "मरा" (died). Invisible
// format characters (a soft hyphen) and the Arabic tatweel do not end a word.
// A run of Chinese, Japanese or Korean characters, or of Thai, Lao, Khmer or
// Burmese ones (each with its marks), gives its overlapping pairs. The
// apostrophes (', ’, ʼ, ʻ) all end a word.
// No stemming and no stop words: IDF weighting takes care of frequent words,
// and the KB may be in any language.
package text

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Version numbers the terms Each gives: it changes whenever some text's terms
// change, so that a vector made from older terms (a kept collection's, through
// the hash embedder's fingerprint) is not reused. 2: spacing marks stay in
// their word; 3: the accented letters of Latin Extended-B and Latin Extended
// Additional are folded; 4: Greek accents and breathings are folded and final
// sigma is sigma; 5: the Latin letters with a stroke or a bar (ƀ, ɨ, ƚ) are
// folded; 6: text is put in NFC first, and the nonspacing marks of the Indic
// and other scripts whose marks spell the word (virama, nukta, vowel signs)
// stay in it; 7: Cyrillic ё is е; 8: invisible format characters (a soft
// hyphen) no longer end a word; 9: every script's decimal digits are the
// ASCII digits; 10: ligatures, fullwidth and halfwidth forms and Arabic
// presentation forms are the letters they stand for; 11: Arabic alef with
// hamza or madda is alef; 12: the Arabic tatweel is dropped; 13: a run of
// Chinese, Japanese or Korean characters gives its overlapping pairs; 14: so
// does a run of Thai, Lao, Khmer or Burmese characters, and the modifier
// letter apostrophes ʼ and ʻ end a word as ' does.
const Version = 14

// Tokens returns the terms of s in order (repeats kept).
func Tokens(s string) []string {
	return AppendTokens(nil, s)
}

// AppendTokens appends the terms of s to dst.
func AppendTokens(dst []string, s string) []string {
	Each(s, nil, func(t []byte) { dst = append(dst, string(t)) })
	return dst
}

// Each calls fn with each term of s in order (repeats kept), the terms Tokens
// returns, without allocating a string per term: fn's argument is valid only
// during the call. buf is scratch space (may be nil); Each returns it, grown,
// for reuse.
func Each(s string, buf []byte, fn func(term []byte)) []byte {
	if hasPresentationForms(s) {
		// A ligature, a fullwidth or halfwidth form or an Arabic presentation
		// form is written as the letters it stands for (ﬁ is fi, Ａ is A, ｶﾞ
		// is ガ, ﻻ is لا), then composed as below.
		s = norm.NFC.String(presentationFolded(s))
	} else if !belowCombining(s) && !norm.NFC.IsNormalString(s) {
		// One spelling of every word: a decomposed letter (e + U+0301, Hangul
		// jamo, か + U+3099) is composed as it is written precomposed, and a
		// Devanagari letter with a nukta (U+0958 क़) is decomposed, as NFC
		// has it, into the consonant and its nukta.
		s = norm.NFC.String(s)
	}
	b := buf[:0]
	var last rune // the rune b ends with
	// cjk: b holds the end of a run of Chinese, Japanese or Korean characters,
	// its last character (with its marks) from b[pair] on, and the one before
	// it in b[:pair] when pair > 0.
	cjk, pair := false, 0
	for len(s) > 0 {
		// A run of lower-case ASCII letters and digits, most of most text,
		// is appended at once.
		i := 0
		for i < len(s) && asciiWord[s[i]] {
			i++
		}
		if i > 0 {
			if cjk {
				b, cjk, pair = flush(b, fn), false, 0
			}
			b = append(b, s[:i]...)
			last = rune(s[i-1])
			s = s[i:]
			continue
		}
		r, n := rune(s[0]), 1
		if r >= utf8.RuneSelf {
			r, n = utf8.DecodeRuneInString(s)
		}
		s = s[n:]
		if r < utf8.RuneSelf {
			switch {
			case 'a' <= r && r <= 'z', '0' <= r && r <= '9':
				if cjk {
					b, cjk, pair = flush(b, fn), false, 0
				}
				b = append(b, byte(r)) //nolint:gosec // r < utf8.RuneSelf: one byte
				last = r
				continue
			case 'A' <= r && r <= 'Z':
				if cjk {
					b, cjk, pair = flush(b, fn), false, 0
				}
				b = append(b, byte(r+'a'-'A'))
				last = r
				continue
			}
		} else if r == tatweel {
			// The Arabic tatweel (kashida) stretches a word to justify a
			// line: كتـــاب is كتاب.
			continue
		} else if unicode.IsDigit(r) {
			// Every script's decimal digits are the ASCII digits: ٢٠٢٤, ۲۰۲۴,
			// २०२४ and ２０２４ are 2024.
			if cjk {
				b, cjk, pair = flush(b, fn), false, 0
			}
			b = append(b, '0'+digit(r))
			last = r
			continue
		} else if unicode.IsLetter(r) {
			if r == 'ʼ' || r == 'ʻ' {
				// The modifier letter apostrophe and turned comma stand for
				// the apostrophe in much typed text (мʼясо, Hawaiʻi beside
				// м'ясо, Hawai'i): one word, one way to cut it.
				b, cjk, pair = flush(b, fn), false, 0
				continue
			}
			r = unicode.ToLower(r)
			if r >= 0x0e00 && pairLetter(r) {
				// Chinese, Japanese, Thai, Lao, Khmer and Burmese write no
				// spaces between words, and a Korean word carries its
				// particles: a run of their characters (each with its marks,
				// the mark branch below) gives its overlapping pairs (密码重置
				// is 密码, 码重, 重置), so that a word inside it is found
				// without a dictionary of the language; a run of one character
				// is that character.
				if !cjk {
					b, cjk, pair = flush(b, fn), true, 0
				} else {
					if pair > 0 { // the pair before r is whole: give it
						fn(b)
						b = append(b[:0], b[pair:]...)
					}
					pair = len(b)
				}
				b = utf8.AppendRune(b, r)
				last = r
				continue
			}
			if cjk {
				b, cjk, pair = flush(b, fn), false, 0
			}
			if f := folded(r); f != "" {
				b = append(b, f...)
			} else {
				b = utf8.AppendRune(b, r)
			}
			last = r
			continue
		} else if unicode.Is(unicode.Mn, r) && accent(r) { // fold it away
			continue
		} else if unicode.In(r, unicode.Mn, unicode.Mc, unicode.Me) {
			// A mark that spells its word (a Devanagari, Bengali or Tamil vowel
			// sign, virama or nukta, a Thai tone mark) is part of its letter's
			// word, as in Unicode's word boundaries (UAX #29, WB4); one with no
			// letter before it is dropped.
			if len(b) > 0 {
				b = utf8.AppendRune(b, r)
				last = r
			}
			continue
		} else if (r == zwnj || r == zwj) && len(b) > 0 && last >= utf8.RuneSelf && !unicode.In(last, accentScripts...) {
			// A joiner inside a word of those scripts (the half form of क्‍ष,
			// Sinhala ශ්‍රී) only chooses how the word is drawn: it neither
			// ends the word nor is part of its term. After an Arabic letter a
			// zero-width non-joiner still separates, as Persian writes it
			// between a prefix and its verb.
			continue
		} else if unicode.Is(unicode.Cf, r) && r != zwsp && r != zwnj && r != zwj && !unicode.Is(prepended, r) {
			// An invisible format character (a soft hyphen from HTML's
			// &shy;, a word joiner, a byte order mark, a direction mark) is
			// no word boundary (UAX #29, WB4) and no part of the term:
			// "Pass\u00adwort" is "passwort". A zero-width space separates.
			continue
		}
		b, cjk, pair = flush(b, fn), false, 0
	}
	return flush(b, fn)
}

// asciiWord flags the bytes of lower-case ASCII letters and digits.
var asciiWord = func() (t [256]bool) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	return t
}()

// flush gives fn the term b holds, if any, and returns b emptied. (A
// closure over Each's b would keep b in memory rather than in registers:
// a quarter of the time of ASCII text.)
func flush(b []byte, fn func(term []byte)) []byte {
	if len(b) > 0 {
		fn(b)
	}
	return b[:0]
}

// pairLetter reports whether the letter r is of a script whose runs give
// pairs: Han (with 々), Hiragana, Katakana (with the prolonged sound mark ー,
// of no script of its own), Hangul, Thai, Lao, Khmer or Myanmar.
func pairLetter(r rune) bool {
	return r == 'ー' || unicode.In(r, pairScripts...)
}

var pairScripts = []*unicode.RangeTable{
	unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul,
	unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar,
}

// digit is the value of the decimal digit r (category Nd): Unicode encodes
// each set of decimal digits as a run of ten from zero, and the ranges of
// unicode.Nd are such runs, one or several end to end.
func digit(r rune) byte {
	for _, g := range unicode.Nd.R16 {
		if lo, hi := rune(g.Lo), rune(g.Hi); lo <= r && r <= hi {
			return byte((r - lo) % 10) //nolint:gosec // below 10
		}
	}
	for _, g := range unicode.Nd.R32 {
		if u := uint32(r); g.Lo <= u && u <= g.Hi { //nolint:gosec // r is a digit: not negative
			return byte((u - g.Lo) % 10)
		}
	}
	return 0
}

// presentationForm reports whether r is a presentation form that stands for
// other letters: the Alphabetic Presentation Forms (U+FB00–U+FB4F: the Latin
// ligatures ﬁ, ﬂ, ﬀ, the Armenian ones, the wide Hebrew letters), the Arabic
// Presentation Forms (U+FB50–U+FDFF, U+FE70–U+FEFE: the contextual shapes and
// ligatures a PDF's text layer is made of) and the Halfwidth and Fullwidth
// Forms (U+FF00–U+FFEF: Ａ, ｶ).
func presentationForm(r rune) bool {
	return 0xfb00 <= r && r < 0xfe00 || 0xfe70 <= r && r < 0xfeff || 0xff00 <= r && r < 0xfff0
}

// hasPresentationForms reports whether s has a presentation form: a UTF-8
// byte 0xEF followed by 0xAC to 0xBF starts a rune from U+FB00 to U+FFFF.
func hasPresentationForms(s string) bool {
	for {
		i := strings.IndexByte(s, 0xef)
		if i < 0 || i+1 >= len(s) {
			return false
		}
		if s[i+1] >= 0xac && s[i+1] <= 0xbf {
			if r, _ := utf8.DecodeRuneInString(s[i:]); presentationForm(r) {
				return true
			}
		}
		s = s[i+1:]
	}
}

// presentationFolded is s with each presentation form replaced by its
// compatibility decomposition (NFKC) and every other byte as it is.
func presentationFolded(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 8)
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		if presentationForm(r) {
			b.WriteString(norm.NFKC.String(s[:n]))
		} else {
			b.WriteString(s[:n])
		}
		s = s[n:]
	}
	return b.String()
}

// belowCombining reports whether every rune of s is below U+0300, where the
// combining marks start: such a text is in NFC, and saying so costs a byte
// loop instead of the normalization tables (a UTF-8 byte from 0xCC up starts
// a rune from U+0300 up, or is not UTF-8).
func belowCombining(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0xcc {
			return false
		}
	}
	return true
}

const (
	tatweel = '\u0640' // Arabic tatweel, a letter (Lm) that only lengthens a joining stroke
	zwsp    = '\u200b' // zero-width space
	zwnj    = '\u200c' // zero-width non-joiner
	zwj     = '\u200d' // zero-width joiner
)

// prepended are the format characters written before a number (Arabic
// number sign U+0600, end of ayah U+06DD, Kaithi number sign U+110BD), which
// UAX #29 does not count among the characters a word ignores: they separate,
// as other symbols do.
var prepended = &unicode.RangeTable{
	R16: []unicode.Range16{
		{Lo: 0x0600, Hi: 0x0605, Stride: 1}, {Lo: 0x06dd, Hi: 0x06dd, Stride: 1},
		{Lo: 0x070f, Hi: 0x070f, Stride: 1}, {Lo: 0x0890, Hi: 0x0891, Stride: 1},
		{Lo: 0x08e2, Hi: 0x08e2, Stride: 1},
	},
	R32: []unicode.Range32{
		{Lo: 0x110bd, Hi: 0x110bd, Stride: 1}, {Lo: 0x110cd, Hi: 0x110cd, Stride: 1},
	},
}

// accentScripts are the scripts whose nonspacing marks are accents or points
// that writers may leave out and that a search ignores: the combining
// diacritics (script Inherited: é written decomposed, Arabic harakat), the
// marks of Latin, Greek and Cyrillic, and the vowel points of Hebrew, Arabic
// and Syriac. The nonspacing marks of every other script spell their word:
// the vowel signs, virama and nukta of the Indic scripts (मेरा is not मरा,
// प्रकार is not परकार, ज़रा is not जरा), Thai tone marks (ข้าว is not ขาว).
var accentScripts = []*unicode.RangeTable{
	unicode.Inherited, unicode.Common, unicode.Latin, unicode.Greek, unicode.Cyrillic,
	unicode.Hebrew, unicode.Arabic, unicode.Syriac,
}

// accent reports whether the nonspacing mark r is folded away: a mark of
// accentScripts, or a variation selector (Mongolian's free variation
// selectors are of its script), which chooses a glyph and spells nothing.
func accent(r rune) bool {
	return unicode.In(r, accentScripts...) || unicode.Is(unicode.Variation_Selector, r)
}

// fold maps lower-case accented Latin letters (Latin-1 Supplement to IPA
// Extensions) to their base letters; "" means no folding. foldAdditional does
// the same for Latin Extended Additional (U+1E00–U+1EFF: Vietnamese ế, ộ, ữ),
// foldGreek for Greek and Coptic (U+0370–U+03FF: ά, ϊ, ΐ, final ς),
// foldGreekExtended for Greek Extended (U+1F00–U+1FFF: polytonic ἀ, ᾳ, ῥ) and
// foldStroke for the stroke letters of the other Latin blocks (ᵽ, ⱥ, ꞹ).
var (
	fold              [0x2b0]string
	foldAdditional    [0x100]string
	foldGreek         [0x90]string
	foldGreekExtended [0x100]string
	foldStroke        = map[rune]string{}
)

// folded is r's base letters, "" when r is not folded.
func folded(r rune) string {
	switch {
	case r < 0x2b0:
		return fold[r]
	case 0x370 <= r && r < 0x400:
		return foldGreek[r-0x370]
	case r == 'ё' || r == 'ѐ':
		// Russian writes ё as е in most text, and ѐ, ѝ are the optional
		// accents of Bulgarian and Macedonian; й, ї, ў and the other letters
		// with a mark are letters of their own (мой is not мои), and stay.
		return "е"
	case r == 'ѝ':
		return "и"
	case r == 'أ' || r == 'إ' || r == 'آ' || r == 'ٱ':
		// Arabic alef with hamza above or below, with madda, and alef wasla:
		// the hamza and madda are marks (U+0654, U+0655, U+0653) that most
		// text and most queries leave out, as the vowel marks; ؤ and ئ, whose
		// seat is another letter (رؤية is not روية), stay.
		return "ا"
	case 0x1e00 <= r && r < 0x1f00:
		return foldAdditional[r-0x1e00]
	case 0x1f00 <= r && r < 0x2000:
		return foldGreekExtended[r-0x1f00]
	case 0x1d00 <= r && r < 0x1d80, 0x2c60 <= r && r < 0x2c80, 0xa720 <= r && r < 0xa800, 0xab30 <= r && r < 0xab70:
		return foldStroke[r]
	}
	return ""
}

// strokeLetters are the lower-case Latin letters with a stroke or a bar and
// no decomposition beyond Latin Extended-A, each with its base letter: the
// letters Unicode names LATIN SMALL LETTER X WITH STROKE (or BAR, DOUBLE BAR,
// DIAGONAL, OBLIQUE or SHORT STROKE OVERLAY) and BARRED X, X an ASCII letter,
// as ø, đ, ħ, ł and ŧ fold in Latin-1 and Extended-A. Left out: the medieval
// abbreviation letters of Latin Extended-D (ꝁ for kalendae, ꝑ for per, ꝗ for
// quod), which stand for a syllable or a word rather than for their letter,
// the topbar letters (ƃ, ƌ) and the phonetic small capitals.
var strokeLetters = []struct{ from, to string }{
	{"ⱥ", "a"}, {"ƀ", "b"}, {"ȼꞓ", "c"}, {"ꟈ", "d"}, {"ɇꬳ", "e"}, {"ꞙ", "f"},
	{"ǥꞡ", "g"}, {"ɨ", "i"}, {"ɉ", "j"}, {"ꞣ", "k"}, {"ƚⱡ", "l"}, {"ꞥ", "n"},
	{"ɵ", "o"}, {"ᵽ", "p"}, {"ɍꞧ", "r"}, {"ꞩꟊ", "s"}, {"ⱦ", "t"}, {"ꞹ", "u"},
	{"ɏ", "y"}, {"ƶ", "z"},
}

func init() {
	// Latin-1 Supplement and Latin Extended-A, written out: the letters with
	// a canonical decomposition, and those with a stroke, a ligature or ß.
	pairs := []struct{ from, to string }{
		{"àáâãäåāăą", "a"}, {"çćĉċč", "c"}, {"ďđ", "d"}, {"èéêëēĕėęě", "e"},
		{"ĝğġģ", "g"}, {"ĥħ", "h"}, {"ìíîïĩīĭįı", "i"}, {"ĵ", "j"}, {"ķ", "k"},
		{"ĺļľŀł", "l"}, {"ñńņňŉ", "n"}, {"òóôõöøōŏő", "o"}, {"ŕŗř", "r"},
		{"śŝşš", "s"}, {"ţťŧ", "t"}, {"ùúûüũūŭůűų", "u"}, {"ŵ", "w"},
		{"ýÿŷ", "y"}, {"źżž", "z"}, {"ß", "ss"}, {"æ", "ae"}, {"œ", "oe"},
		// The ligature and digraph letters and long s, which Unicode
		// decomposes only for compatibility: Dutch ĳ, Croatian ǆ, ǉ, ǌ.
		{"ĳ", "ij"}, {"ǆ", "dz"}, {"ǉ", "lj"}, {"ǌ", "nj"}, {"ǳ", "dz"}, {"ſ", "s"},
	}
	for _, p := range pairs {
		for _, r := range p.from {
			fold[r] = p.to
		}
	}
	for _, p := range strokeLetters {
		for _, r := range p.from {
			if r < 0x2b0 {
				fold[r] = p.to
			} else {
				foldStroke[r] = p.to
			}
		}
	}
	// Latin Extended-B and Latin Extended Additional: every lower-case letter
	// whose canonical decomposition is a Latin letter and nonspacing marks
	// (Romanian ș and ț, Pinyin ǎ, Vietnamese ơ, ư, ế, and ǿ, ǣ on ø and æ)
	// folds as its base letter does, as a decomposed text is folded by
	// dropping its marks.
	for _, block := range [][2]rune{{0x180, 0x250}, {0x1e00, 0x1f00}} {
		for r := block[0]; r < block[1]; r++ {
			if !unicode.IsLetter(r) || unicode.ToLower(r) != r {
				continue
			}
			d := norm.NFD.String(string(r))
			base, ok := letterBase(d, unicode.Latin)
			if !ok || d == string(r) {
				continue
			}
			if b, _ := utf8.DecodeRuneInString(base); folded(b) != "" {
				base = folded(b)
			}
			if r < 0x250 {
				fold[r] = base
			} else {
				foldAdditional[r-0x1e00] = base
			}
		}
	}
	// Greek: every lower-case letter whose canonical decomposition is a Greek
	// letter and nonspacing marks (tonos, dialytika, the breathings and
	// accents of polytonic Greek, iota subscript) folds to that letter, as a
	// decomposed text does by dropping its marks; so "λόγος", "λογος" and
	// "ΛΟΓΟΣ", whose capitals carry no accent, are one term. Final sigma is
	// sigma: "ΛΟΓΟΣ" lower-cases to "λογοσ".
	for _, block := range []struct {
		lo, hi rune
		table  []string
	}{{0x370, 0x400, foldGreek[:]}, {0x1f00, 0x2000, foldGreekExtended[:]}} {
		for r := block.lo; r < block.hi; r++ {
			if !unicode.IsLetter(r) || unicode.ToLower(r) != r {
				continue
			}
			d := norm.NFD.String(string(r))
			if base, ok := letterBase(d, unicode.Greek); ok && d != string(r) {
				block.table[r-block.lo] = base
			}
		}
	}
	foldGreek['ς'-0x370] = "σ"
}

// letterBase is the letter of script d starts with, lower-cased, when it is
// followed by nothing but nonspacing marks, or when it is all of d and a
// letter of its own (a singleton decomposition: U+1FBE is ι).
func letterBase(d string, script *unicode.RangeTable) (string, bool) {
	r, n := utf8.DecodeRuneInString(d)
	if !unicode.Is(script, r) || !unicode.IsLetter(r) {
		return "", false
	}
	for _, m := range d[n:] {
		if !unicode.Is(unicode.Mn, m) {
			return "", false
		}
	}
	return string(unicode.ToLower(r)), true
}
