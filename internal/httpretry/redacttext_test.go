package httpretry

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// RedactText removes what Redact and RedactURLsIn remove and, besides, every
// credential of a known shape, whose value it is not given: the text a
// provider's batch results file or a server wrote, echoing a key of its own.
func TestRedactText(t *testing.T) {
	const known = "local-vllm-secret-0042" // no shape: found as given only
	for _, tc := range []struct{ name, in, want string }{
		{"OpenAI key", "Incorrect API key provided: sk-proj-Rg7eTq2Lm9Xv4Bn8Kd1Wz6Hy3Pc5Jf0Ua. You can find your API key at https://platform.openai.com/account/api-keys.",
			"Incorrect API key provided: ***. You can find your API key at https://platform.openai.com/account/api-keys."},
		{"OpenAI's masked echo", "Incorrect API key provided: sk-proj-****************************************Jf0U.", "Incorrect API key provided: ***."},
		{"Anthropic key", "invalid x-api-key sk-ant-api03-Rg7eTq2Lm9Xv4Bn8Kd1Wz6Hy3Pc5Jf0Ua-AAAA", "invalid x-api-key ***"},
		{"Google key", `API key not valid (key "AIzaSyRg7eTq2Lm9Xv4Bn8Kd1Wz6Hy3Pc5Jf0U")`, `API key not valid (key "***")`},
		{"GitHub token", "Bad credentials: ghp_Rg7eTq2Lm9Xv4Bn8Kd1Wz6Hy3Pc5Jf0UaBcD", "Bad credentials: ***"},
		{"GitHub fine-grained token", "token github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz refused", "token *** refused"},
		{"GitLab token", "401 glpat-Rg7eTq2Lm9Xv4Bn8Kd1W", "401 ***"},
		{"bearer token", "upstream refused Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.cmd0ZXN0.c2lnbmF0dXJl", "upstream refused Authorization: Bearer ***"},
		{"basic credentials", "sent BASIC dXNlcjpwYXNz to the proxy", "sent BASIC *** to the proxy"},
		{"bearer key", "Bearer sk-proj-Rg7eTq2Lm9Xv4Bn8Kd1Wz6Hy3Pc5Jf0Ua rejected", "Bearer *** rejected"},
		{"URL with a key", "POST https://generativelanguage.googleapis.com/v1beta/models/m:generateContent?key=rgQueryKey0123456789 failed",
			"POST https://generativelanguage.googleapis.com/v1beta/models/m:generateContent?key=*** failed"},
		{"URL without a scheme", "at generativelanguage.googleapis.com/upload/v1beta/files?upload_id=ABCdef0123456789uploadXYZ&upload_protocol=resumable.",
			"at generativelanguage.googleapis.com/upload/v1beta/files?upload_id=***&upload_protocol=resumable."},
		{"parameters", "host/x?page=2&api_key=abc123&sig=s1gn4ture, then", "host/x?page=2&api_key=***&sig=***, then"},
		{"parameter and full stop", "see h/x?token=t0k3n.", "see h/x?token=***."},
		{"known secret", "the engine's key " + known + " was rejected", "the engine's key *** was rejected"},
		{"two keys", "sk-aaaaaaaaaaaaaaaaaaaaaaaa,AIzaBBBBBBBBBBBBBBBBBBBBBBBBB", "***,***"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := RedactText(tc.in, known)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, got, RedactText(got, known), "redacted twice")
		})
	}
}

// RedactText keeps the words of a message that only look like the start of a
// credential.
func TestRedactTextKeepsWords(t *testing.T) {
	for _, s := range []string{
		"task-0123456789abcdefghijklmnop failed", // "sk-" inside a word
		"desk-sk-0123456789abcdefghijklmnop",     // after "-"
		"sk-short",
		"AIza is not a key",
		"Bearer authentication failed; Basic realm required; bearer token missing",
		"custom_id 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 unknown",
		"batch batch_abc123 failed: file-xyz789 expired; batches/fake1 msgbatch_0123",
		"https://h/v1/chat?page=2&model=gpt-4o answered HTTP 500",
		"see h/x?limit=10&offset=20",
		"key=value outside a query, a=b&c=d",
		"the answer ***",
	} {
		assert.Equal(t, s, RedactText(s), s)
	}
}

// FuzzRedactText: no credential of a known shape is left in RedactText's
// output, which RedactText leaves as it is; a text without any of the shapes'
// starts, "://", "?" or "&" is kept.
func FuzzRedactText(f *testing.F) {
	f.Add("Incorrect API key provided: sk-proj-Rg7eTq2Lm9Xv4Bn8Kd1Wz6Hy3Pc5Jf0Ua.")
	f.Add("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.cmd0ZXN0 and Basic dXNlcjpwYXNz")
	f.Add("h/x?key=AIzaSyRg7eTq2Lm9Xv4Bn8Kd1Wz6Hy3Pc5Jf0U&upload_id=x1&sig=y")
	f.Add("ghp_Rg7eTq2Lm9Xv4Bn8Kd1Wz6Hy3Pc5Jf0UaBcD glpat-Rg7eTq2Lm9Xv4Bn8Kd1W github_pat_11ABCDEFG0123456789_abcdef")
	f.Fuzz(func(t *testing.T, msg string) {
		got := redactKeyShapes(msg)
		if m := keyShapes.FindStringSubmatch(got); m != nil {
			t.Fatalf("%q left in %q (from %q)", m[1], got, msg)
		}
		for _, m := range credentialAfter.FindAllStringSubmatch(got, -1) {
			if m[2] != "" && credentialToken(m[2]) || m[3] != "" && credentialParam(m[3]) && strings.TrimRight(m[4], ".") != Redacted && strings.TrimRight(m[4], ".") != "" {
				t.Fatalf("%q left in %q (from %q)", m[0], got, msg)
			}
		}
		if again := redactKeyShapes(got); again != got {
			t.Fatalf("redacted twice: %q, then %q", got, again)
		}
		low := strings.ToLower(msg)
		if !strings.Contains(msg, "sk-") && !strings.Contains(msg, "AIza") && !strings.Contains(msg, "gh") && !strings.Contains(msg, "github_pat_") && !strings.Contains(msg, "glpat-") &&
			!strings.Contains(low, "bearer") && !strings.Contains(low, "basic") && !strings.ContainsAny(msg, "?&") && got != msg {
			t.Fatalf("changed %q into %q", msg, got)
		}
	})
}
