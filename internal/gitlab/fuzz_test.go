package gitlab

import (
	"strconv"
	"strings"
	"testing"
)

// Whatever GitLab answers with an error status, the message is one line of
// at most 301 characters without the token, neither as written nor with its
// JSON escapes decoded (a field error GitLab echoes may write it "\u0074").
func FuzzStatusError(f *testing.F) {
	f.Add(403, []byte(`{"message":"403 Forbidden"}`))
	f.Add(400, []byte(`{"message":{"note":["is too long"]}}`))
	f.Add(401, []byte(`{"error":"invalid_token","error_description":"glpat-SECRETtoken000"}`))
	f.Add(500, []byte("<html>\n\x00</html>"))
	f.Add(400, []byte(`{"message":{"note":["glpat-SECRET\u0074oken000"],"n":12345678901234567890}}`))
	f.Add(400, []byte(`{"message":"glpat-SECRET\u0074oken000"}`))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		e := statusError("list", "MR notes", status, body, []string{"glpat-SECRETtoken000"})
		if strings.ContainsAny(e.Message, "\n\r") {
			t.Fatalf("message on several lines: %q", e.Message)
		}
		if strings.Contains(e.Error(), "glpat-SECRETtoken000") || strings.Contains(unescape(e.Message), "glpat-SECRETtoken000") {
			t.Fatalf("token in %q", e.Error())
		}
		if n := len([]rune(e.Message)); n > 301 {
			t.Fatalf("message of %d characters", n)
		}
	})
}

// unescape decodes the JSON escapes anywhere in s (\uXXXX and \X).
func unescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		if s[i+1] == 'u' && i+6 <= len(s) {
			if r, err := strconv.ParseUint(s[i+2:i+6], 16, 32); err == nil {
				b.WriteRune(rune(r))
				i += 5
				continue
			}
		}
		i++
		b.WriteByte(s[i])
	}
	return b.String()
}

// A secret GitLab echoes inside an object of field errors, written with a JSON
// escape, is redacted: the object is written back with its strings decoded
// (it was shown as received, "glpat-SECRET\u0074oken000", which Redact
// did not match).
func TestStatusErrorEscapedSecret(t *testing.T) {
	e := statusError("list", "MR notes", 400, []byte(`{"message":{"note":["glpat-SECRET\u0074oken000 <b>"],"n":12345678901234567890}}`), []string{"glpat-SECRETtoken000"})
	if strings.Contains(unescape(e.Message), "glpat-SECRETtoken000") {
		t.Fatalf("token in %q", e.Message)
	}
	if want := `{"n":12345678901234567890,"note":["`; !strings.HasPrefix(e.Message, want) || !strings.HasSuffix(e.Message, ` <b>"]}`) {
		t.Fatalf("message %q", e.Message)
	}
}
