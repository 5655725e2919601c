package gate

import (
	"fmt"
	"strings"
)

// ParseLocale reads a locale a user names (check's --reference-locale, the
// library's Options.ReferenceLocale): a BCP 47 language tag, well-formed by
// the syntax of RFC 5646 section 2.1 (not checked against the subtag
// registry, so a private or new subtag passes), written as the cases' locales
// may be (surrounding space, "_" separators, any case). It returns the tag as
// CanonicalLocale puts the cases' locales ("pt_br" is "pt-BR"), so it names
// the locale group the cases of that tag are in. A tag that is empty or not
// well-formed is an error quoting it and saying what is wrong.
func ParseLocale(tag string) (string, error) {
	t := strings.ReplaceAll(strings.TrimSpace(tag), "_", "-")
	if why := malformedTag(t); why != "" {
		return "", fmt.Errorf("%q is not a BCP 47 language tag (such as en, pt-BR, es-419 or zh-Hant-TW): %s", tag, why)
	}
	return CanonicalLocale(t), nil
}

// irregularTags are RFC 5646's grandfathered tags that its langtag syntax
// does not produce (the regular ones, art-lojban and the like, it does).
var irregularTags = map[string]bool{
	"en-gb-oed": true, "i-ami": true, "i-bnn": true, "i-default": true, "i-enochian": true, "i-hak": true, "i-klingon": true,
	"i-lux": true, "i-mingo": true, "i-navajo": true, "i-pwn": true, "i-tao": true, "i-tay": true, "i-tsu": true,
	"sgn-be-fr": true, "sgn-be-nl": true, "sgn-ch-de": true,
}

// malformedTag says why t (separated by "-") is not a well-formed language
// tag: RFC 5646's
//
//	langtag = language ["-" script] ["-" region] *("-" variant) *("-" extension) ["-" privateuse]
//	language = 2*3ALPHA ["-" extlang] / 4ALPHA / 5*8ALPHA;  extlang = 3ALPHA *2("-" 3ALPHA)
//	script = 4ALPHA;  region = 2ALPHA / 3DIGIT;  variant = 5*8alphanum / (DIGIT 3alphanum)
//	extension = singleton 1*("-" (2*8alphanum));  privateuse = "x" 1*("-" (1*8alphanum))
//
// or a private-use tag alone, or a grandfathered irregular one. "" when it is
// well-formed.
func malformedTag(t string) string {
	if t == "" {
		return "it is empty"
	}
	raw := strings.Split(t, "-") // as given, for the messages
	subs := strings.Split(strings.ToLower(t), "-")
	for j, s := range subs {
		switch {
		case s == "":
			return "it has an empty subtag (two separators in a row, or one at an end)"
		case !isAlnum(s):
			return fmt.Sprintf("subtag %q holds a character other than an ASCII letter or digit", raw[j])
		case len(s) > 8:
			return fmt.Sprintf("subtag %q is longer than 8 characters", raw[j])
		}
	}
	if irregularTags[strings.Join(subs, "-")] {
		return ""
	}
	i := 0
	if subs[0] != "x" { // else a private-use tag alone
		if len(subs[0]) < 2 || !isAlpha(subs[0]) {
			return fmt.Sprintf("the language %q is not 2 to 8 letters", raw[0])
		}
		i = 1
		if len(subs[0]) <= 3 { // up to three extended language subtags
			for n := 0; n < 3 && i < len(subs) && len(subs[i]) == 3 && isAlpha(subs[i]); n++ {
				i++
			}
		}
		if i < len(subs) && len(subs[i]) == 4 && isAlpha(subs[i]) { // script
			i++
		}
		if i < len(subs) && (len(subs[i]) == 2 && isAlpha(subs[i]) || len(subs[i]) == 3 && isDigits(subs[i])) { // region
			i++
		}
		for i < len(subs) && (len(subs[i]) >= 5 || len(subs[i]) == 4 && subs[i][0] >= '0' && subs[i][0] <= '9') { // variants
			i++
		}
	}
	for i < len(subs) && len(subs[i]) == 1 { // extensions, then private use
		single := subs[i]
		i++
		start := i
		if single == "x" {
			i = len(subs) // private use: every subtag after it (1 to 8 characters)
		} else {
			for i < len(subs) && len(subs[i]) >= 2 {
				i++
			}
		}
		if i == start {
			return fmt.Sprintf("the singleton %q needs a subtag after it", raw[start-1])
		}
	}
	if i < len(subs) {
		return fmt.Sprintf("subtag %q cannot stand after %q", raw[i], strings.Join(raw[:i], "-"))
	}
	return ""
}

func isAlnum(s string) bool {
	for i := range len(s) {
		if c := s[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

func isAlpha(s string) bool {
	for i := range len(s) {
		if c := s[i]; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

func isDigits(s string) bool {
	for i := range len(s) {
		if c := s[i]; c < '0' || c > '9' {
			return false
		}
	}
	return true
}
