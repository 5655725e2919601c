package httpretry

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// redactorSecrets are the secrets of the Redactor tests: a key of no shape,
// a short password (all of it, under 8 bytes, is a piece), an OpenAI key.
var redactorSecrets = []string{"local-vllm-secret-0042", "pw42", "sk-proj-Rg7eTq2Lm9Xv4Bn8Kd1Wz6Hy3Pc5Jf0Ua"}

// A Redactor's Text is RedactText with the same secrets, on texts that hold
// them in each form Redact reads, credentials of each shape and in URLs, and
// texts that hold none (which Text returns after one pass, each step
// skipped: the same text, not only an equal one).
func TestRedactorIsRedactText(t *testing.T) {
	k := redactorSecrets[0]
	var escaped strings.Builder
	for i := range len(k) {
		fmt.Fprintf(&escaped, `\u%04x`, k[i])
	}
	texts := []struct {
		in    string
		quick bool // nothing to remove, and Text knows it at once
	}{
		{"The document explains how to configure feature 12 of the product; it answers the query.", true},
		{"Das Dokument beantwortet die Frage vollständig, mit Beispielen.", true},
		{"", true},
		{"a question? yes, and a=b too", false},
		{"Q&A, 50% of C++ docs, in 3 steps: sign in, open settings, save.", true},
		{"the key " + k + " is echoed", false},
		{"THE KEY " + strings.ToUpper(k) + " IS ECHOED", false},
		{"a piece: " + k[3:12] + "…", false},
		{"json: " + escaped.String(), false},
		{"percent: " + strings.ReplaceAll(k, "-", "%2D"), false},
		{"html: " + strings.ReplaceAll(k, "-", "&#45;"), false},
		{"base64: " + base64.StdEncoding.EncodeToString([]byte("user:"+k)), false},
		{"the password pw42 and PW42", false},
		{"Incorrect API key provided: sk-proj-ZZ7eTq2Lm9Xv4Bn8Kd1Wz6Hy3Pc5Jf0Zz.", false},
		{"Google's AIzaSyRg7eTq2Lm9Xv4Bn8Kd1Wz6Hy3Pc5Jf0U", false},
		{"Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.cmd0ZXN0", false},
		{"sent bAsIc dXNlcjpwYXNz to the proxy", false},
		{"sent baſic dXNlcjpwYXNz to the proxy", false},
		{"at https://user:hunter22@host/x?token=abc123", false},
		{"at host/x?page=2&api_key=abc123", false},
		{"ghp_Rg7eTq2Lm9Xv4Bn8Kd1Wz6Hy3Pc5Jf0UaBcD and glpat-Rg7eTq2Lm9Xv4Bn8Kd1W", false},
		{"Bearer authentication failed; basic realm", false},
	}
	r := NewRedactor(redactorSecrets...)
	for _, tc := range texts {
		want := RedactText(tc.in, redactorSecrets...)
		assert.Equal(t, want, r.Text(tc.in), tc.in)
		assert.Equal(t, tc.quick, r.plainForSecrets(tc.in) && plainForShapes(tc.in) && !strings.Contains(tc.in, "://"), tc.in)
		if tc.quick {
			assert.Equal(t, want, tc.in, "a text with nothing to remove")
		}
	}
	none := NewRedactor("", " x ")
	for _, tc := range texts {
		assert.Equal(t, RedactText(tc.in), none.Text(tc.in), tc.in)
	}
}

// quickText's reading of credentialAfter's "(?i)bearer|basic" holds only
// while "ſ" (U+017F, which folds with "s") is the one letter outside ASCII
// that folds with a letter of the two words.
func TestRedactorFoldsOfBearerBasic(t *testing.T) {
	var outside []string
	for _, c := range "bearerbasic" {
		for f := unicode.SimpleFold(c); f != c; f = unicode.SimpleFold(f) {
			if f > unicode.MaxASCII {
				outside = append(outside, fmt.Sprintf("%c:%c", c, f))
			}
		}
	}
	require.Equal(t, []string{"s:ſ"}, outside)
}

// FuzzRedactor: a Redactor's Text is RedactText with its secrets, whatever
// the text (the fuzzer's, around a secret in one of Redact's forms or not).
func FuzzRedactor(f *testing.F) {
	f.Add("the key local-vllm-secret-0042 is echoed", "pw42", uint8(0))
	f.Add("a reason with nothing to remove.", "hunter22", uint8(1))
	f.Add(`{"reason":"baſic dXNlcjpwYXNz","score":2}`, "sk-proj-Rg7eTq2Lm9Xv4Bn8", uint8(2))
	f.Add("see h/x?token=t0k3n.", "AIzaSyK4q-Tn8Wm2Rc6Xv0Lb3Hd7", uint8(3))
	f.Fuzz(func(t *testing.T, msg, secret string, form uint8) {
		if len(msg) > 512 || len(secret) > 64 {
			return
		}
		switch form % 4 {
		case 1:
			msg += strings.ToUpper(secret)
		case 2:
			msg = secret[:len(secret)/2] + msg + secret[len(secret)/2:]
		case 3:
			msg += base64.StdEncoding.EncodeToString([]byte("u:" + secret))
		}
		secrets := []string{secret, "local-vllm-secret-0042"}
		if got, want := NewRedactor(secrets...).Text(msg), RedactText(msg, secrets...); got != want {
			t.Fatalf("Text(%q) = %q, RedactText: %q", msg, got, want)
		}
	})
}

// BenchmarkRedactorReason: a judge's reason of 150 bytes with nothing to
// remove, redacted of three secrets by RedactText and by a Redactor.
func BenchmarkRedactorReason(b *testing.B) {
	const reason = "The document explains how to configure feature 12 of the product in the settings page; it answers the query directly."
	b.Run("RedactText", func(b *testing.B) {
		for b.Loop() {
			_ = RedactText(reason, redactorSecrets...)
		}
	})
	b.Run("Redactor", func(b *testing.B) {
		r := NewRedactor(redactorSecrets...)
		for b.Loop() {
			_ = r.Text(reason)
		}
	})
}

// A secret wrapped across lines, or printed in part, left a piece of it: the
// 7 characters a line break left on one side of a wrap ("sk-proj" then the
// rest on the next line, or the rest then "3456789"), and any part of its
// base64 encoding but the whole core (a Basic credential cut at a snippet's
// cap gave 17 of the key's bytes away). The rule now: every run of at least
// 8 of a secret's characters (minFragment), a line wrap (a line end or
// JSON's \n escape, then at most 64 blanks) inside the run not ending it,
// and every run of at least 11 characters of its base64 core, the fewest
// that can carry 8 of its bytes (minBase64Fragment); a lone piece of 7
// characters is kept. Redact and a Redactor's Text agree on each.
func TestRedactFragments(t *testing.T) {
	s := "sk-proj-ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b64 := base64.StdEncoding.EncodeToString([]byte("user:" + s))
	short := "abcdefghijkl" // a 12-byte secret, wrapped 6 and 6: no piece of 8 on a line
	tests := []struct{ name, in, want string }{
		{"wrapped, 7 left after", "key " + s[:37] + "\n" + s[37:] + " end", "key *** end"},
		{"wrapped, 7 left before", "key " + s[:7] + "\r\n" + s[7:] + " end", "key *** end"},
		{"wrapped and indented", "key " + s[:25] + "\n    " + s[25:] + "\nnext", "key ***\nnext"},
		{"wrapped in JSON", `{"e":"key ` + s[:38] + `\n` + s[38:] + `"}`, `{"e":"key ***"}`},
		{"wrapped 6 and 6", "pw " + short[:6] + "\n" + short[6:] + ".", "pw ***."},
		{"a piece at a line end keeps the line end", "key " + s[:16] + "\n  next line", "key ***\n  next line"},
		{"a blank line is no wrap", "key " + s[:16] + "\n\n" + s[16:20] + " end", "key ***\n\n" + s[16:20] + " end"},
		{"a lone piece of 7", "x" + s[10:17] + "y", "x" + s[10:17] + "y"},
		{"a piece of 8", "x" + s[10:18] + "y", "x***y"},
		{"base64 cut at a cap", "auth " + b64[:30] + "…", "auth " + b64[:8] + "***…"},
		{"base64 inside", `{"a":"` + b64[4:40] + `"}`, `{"a":"` + b64[4:8] + `***"}`},
		{"10 base64 characters", "x " + b64[12:22] + " y", "x " + b64[12:22] + " y"},
	}
	r := NewRedactor(s, short)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Redact(tt.in, s, short))
			assert.Equal(t, tt.want, r.Text(tt.in))
		})
	}
}

// wrapKey and wrapPieces: 7-character pieces of the key, each on its own line
// after 100 blanks (a wrap is one line end and at most 64 blanks, so none of
// them continues the key).
const wrapKey = "sk-proj-ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

func wrapPieces(n int) string { return strings.Repeat(wrapKey[:7]+"\n"+strings.Repeat(" ", 100), n) }

// A piece under 8 characters that no wrap continues is left as it is.
func TestRedactWrapsPieces(t *testing.T) {
	msg := wrapPieces(64)
	assert.Equal(t, msg, Redact(msg, wrapKey))
}

// BenchmarkRedactWraps: matching through wraps stays linear in the text
// (each walk stops at the first character after a wrap that does not
// continue the key): a megabyte of wrapPieces takes tens of milliseconds
// (35 ms on the 2-core development machine).
func BenchmarkRedactWraps(b *testing.B) {
	msg := wrapPieces(1 << 20 / 108)
	b.SetBytes(int64(len(msg)))
	for b.Loop() {
		Redact(msg, wrapKey)
	}
}
