package llm_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/llm"
)

// assertNoPiece fails when text holds 8 consecutive characters of secret.
func assertNoPiece(t *testing.T, text, secret string) {
	t.Helper()
	for j := 0; j+8 <= len(secret); j++ {
		if i := strings.Index(text, secret[j:j+8]); i >= 0 {
			t.Errorf("%q of the secret in …%q…", secret[j:j+8], text[max(0, i-60):min(len(text), i+60)])
			return
		}
	}
}

// The batch clients of every provider (stand-ins of the OpenAI Batch and Files
// APIs, Anthropic's Message Batches API, Gemini's batchGenerateContent, each
// answering an error) keep the key out of the error whatever field of the
// error body echoes it, when the body is cut inside the key, and the
// credentials of a base URL out of the URL the error names. Where each key
// travels: OpenAI's as "Authorization: Bearer" (platform.openai.com/docs/api-reference/authentication),
// Anthropic's in the x-api-key header (docs.anthropic.com/en/api/overview),
// Gemini's in the x-goog-api-key header (ai.google.dev/gemini-api/docs/api-key;
// the API also takes it as the "key" query parameter, which httpretry.URLSecrets covers).
func TestBatchErrorsRedactTheKey(t *testing.T) {
	const key = "sk-ant-api03-Hq2Vx8Lm4Tz6Rb1Nc9Wd"
	const pw = "pw-Ek5Yg3Ju7Is0Ao2"
	bodies := map[string]string{
		// OpenAI's {"error": {"message", "type", "param", "code"}}, Anthropic's
		// {"type": "error", "error": {"type", "message"}}, Google's
		// {"error": {"code", "message", "status"}}: the key in a field
		// other than the message.
		"type":   `{"type":"error","error":{"type":"` + key + `","message":"invalid x-api-key"}}`,
		"param":  `{"error":{"message":"bad","type":"invalid_request_error","param":"` + key + `","code":null}}`,
		"status": `{"error":{"code":401,"message":"API key not valid","status":"` + key + `"}}`,
		// A body longer than the 64 KiB read of an error, cut inside the key.
		"cut": strings.Repeat("x", 64<<10-20) + key,
	}
	clients := map[string]func(u string) (llm.BatchService, error){
		"openai": func(u string) (llm.BatchService, error) { return llm.NewBatchClient(llm.Config{URL: u, APIKey: key}) },
		"anthropic": func(u string) (llm.BatchService, error) {
			return llm.NewAnthropicBatchClient(u, key, nil)
		},
		"gemini": func(u string) (llm.BatchService, error) {
			return llm.NewGeminiBatchClient(u, "gemini-2.0-flash", key, nil)
		},
	}
	for bname, body := range bodies {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(body))
		}))
		for cname, newClient := range clients {
			t.Run(cname+"/"+bname, func(t *testing.T) {
				u := strings.Replace(srv.URL, "http://", "http://user:"+pw+"@", 1)
				c, err := newClient(u)
				require.NoError(t, err)
				_, err = c.Get(context.Background(), "batches/b1")
				require.Error(t, err)
				assert.Contains(t, err.Error(), "HTTP 401")
				assertNoPiece(t, err.Error(), key)
				assertNoPiece(t, err.Error(), pw)
			})
		}
		srv.Close()
	}
}

// The chat client names its server in an error without the credentials of
// its URL.
func TestCompleteErrorHidesURLCredentials(t *testing.T) {
	const pw = "pw-Rf4Dc8Xs2Wq6Ez0"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = fmt.Fprint(w, `{"error":{"message":"bad request","type":"invalid_request_error"}}`)
	}))
	defer srv.Close()
	c, err := llm.New(llm.Config{URL: strings.Replace(srv.URL, "http://", "http://user:"+pw+"@", 1)})
	require.NoError(t, err)
	_, err = c.Complete(context.Background(), llm.Request{Messages: []llm.Message{{Role: "user", Content: "hi"}}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "bad request")
	assertNoPiece(t, err.Error(), pw)
}

// A batch that failed with an error whose text echoes the key (the OpenAI
// batch's errors.data, Gemini's operation error): the job's error text holds
// none of it, which judge prints when the batch fails.
func TestBatchJobErrorTextRedacted(t *testing.T) {
	const key = "AIzaSyK4q-Tn8Wm2Rc6Xv0Lb3Hd7"
	escaped := strings.ReplaceAll(key, "q", `\u0071`)
	for name, tc := range map[string]struct {
		body string
		new  func(u string) (llm.BatchService, error)
	}{
		"openai": {`{"id":"b1","object":"batch","status":"failed","errors":{"data":[{"code":"invalid","message":"key ` + escaped + ` refused"}]}}`,
			func(u string) (llm.BatchService, error) { return llm.NewBatchClient(llm.Config{URL: u, APIKey: key}) }},
		"gemini": {`{"name":"batches/b1","done":true,"error":{"code":3,"message":"key ` + escaped + ` refused"}}`,
			func(u string) (llm.BatchService, error) {
				return llm.NewGeminiBatchClient(u, "gemini-2.0-flash", key, nil)
			}},
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			c, err := tc.new(srv.URL)
			require.NoError(t, err)
			j, err := c.Get(context.Background(), "batches/b1")
			require.NoError(t, err)
			require.True(t, j.Failed)
			assert.Contains(t, j.ErrorText, "refused")
			assertNoPiece(t, j.ErrorText, key)
		})
	}
}
