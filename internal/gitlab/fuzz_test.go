package gitlab

import (
	"strings"
	"testing"
)

// Whatever GitLab answers with an error status, the message is one line of
// at most 301 characters without the token.
func FuzzStatusError(f *testing.F) {
	f.Add(403, []byte(`{"message":"403 Forbidden"}`))
	f.Add(400, []byte(`{"message":{"note":["is too long"]}}`))
	f.Add(401, []byte(`{"error":"invalid_token","error_description":"glpat-SECRETtoken000"}`))
	f.Add(500, []byte("<html>\n\x00</html>"))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		e := statusError("list", "MR notes", status, body, []string{"glpat-SECRETtoken000"})
		if strings.ContainsAny(e.Message, "\n\r") {
			t.Fatalf("message on several lines: %q", e.Message)
		}
		if strings.Contains(e.Error(), "glpat-SECRETtoken000") {
			t.Fatalf("token in %q", e.Error())
		}
		if n := len([]rune(e.Message)); n > 301 {
			t.Fatalf("message of %d characters", n)
		}
	})
}
