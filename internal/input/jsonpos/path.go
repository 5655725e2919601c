package jsonpos

import (
	"fmt"
	"regexp"
	"strconv"
	"unicode/utf8"
)

// plainKey is a key shown in a path as it is.
var plainKey = regexp.MustCompile(`^[A-Za-z0-9_@:.+-]{1,64}$`)

// Path is a value's place in a document as an error message names it: keys
// joined with dots, a key that is not a plain word quoted (QuoteKey: group and
// strategy names are data).
func Path(parent, key string) string {
	if !plainKey.MatchString(key) {
		key = QuoteKey([]byte(key))
	}
	if parent == "" {
		return key
	}
	return parent + "." + key
}

// Index is the path of an array's element.
func Index(parent string, i int) string { return fmt.Sprintf("%s[%d]", parent, i) }

// Shown is a value of kind k as a message that refuses its type shows it
// ("PATH is SHOWN, not a number"): a number's text (number, shortened to 40
// bytes), "a string", or the type's name (TypeName: null, true, false, array,
// object); b is a Bool's value.
func Shown(k Kind, b bool, number []byte) string {
	switch k {
	case Number:
		return ShownNumber(number)
	case String:
		return "a string"
	}
	v := Value{Kind: k, Bool: b}
	return v.TypeName()
}

// ShownNumber is a JSON number's text as a message shows it: as written,
// shortened to 40 bytes.
func ShownNumber(number []byte) string {
	s := string(number)
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return s
}

// ShownString is a string's (unescaped) text as a message shows it: quoted,
// shortened to its first 40 characters.
func ShownString(s []byte) string {
	if utf8.RuneCount(s) > 40 {
		r := []rune(string(s))
		return strconv.Quote(string(r[:40])) + "…"
	}
	return strconv.Quote(string(s))
}
