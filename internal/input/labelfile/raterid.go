package labelfile

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// A rater id is compared byte for byte: " ana" and "ana\u200b" would count as
// raters other than "ana", who looks the same in every report (a panel of
// three read as four). An id is therefore refused unless it is in its normal
// form (NormalRaterID): without white space at either end, without format
// characters (Unicode Cf: zero-width spaces and joiners, the byte order mark,
// bidirectional controls) or control characters, and in Unicode NFC (an
// accent precomposed, é not e + U+0301). Refused, not normalised: the labels
// are the user's data, and the message names the normal form to write, so
// two spellings of one rater are never merged behind the user's back (nor two
// raters whose ids differ only so).

// NormalRaterID is id trimmed of white space, without format and control
// characters, in NFC.
func NormalRaterID(id string) string {
	id = strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Cf, r) || unicode.IsControl(r) {
			return -1
		}
		return r
	}, id)
	return strings.TrimSpace(norm.NFC.String(id))
}

// raterIDNormal reports whether id is in its normal form; a printable ASCII id
// without spaces at its ends is, without a look at the tables.
func raterIDNormal(id string) bool {
	ascii := true
	for i := 0; i < len(id); i++ {
		if c := id[i]; c >= utf8.RuneSelf || c < 0x20 || c == 0x7f {
			ascii = false
			break
		}
	}
	if ascii {
		return id == strings.TrimSpace(id)
	}
	return NormalRaterID(id) == id
}
