package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/httpretry"
	"github.com/retrieval-gate/retrieval-gate/internal/llm"
	"github.com/retrieval-gate/retrieval-gate/internal/llm/llmtest"
)

func TestEndpointURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"http://127.0.0.1:8000", "http://127.0.0.1:8000/v1/chat/completions"},      // vLLM
		{"http://localhost:8080/", "http://localhost:8080/v1/chat/completions"},     // llama-server
		{"http://localhost:11434/v1", "http://localhost:11434/v1/chat/completions"}, // Ollama
		{"https://api.openai.com/v1", "https://api.openai.com/v1/chat/completions"}, // OpenAI
		{"https://gw.example/openai/v1/chat/completions", "https://gw.example/openai/v1/chat/completions"},
	} {
		got, err := llm.EndpointURL(tc.in)
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}
	_, err := llm.EndpointURL("localhost:8000")
	assert.ErrorContains(t, err, "http://")
}

var judgePrompt = "grade\n<query>\nreset password\n</query>\n<document>\nHow to reset your password\n</document>\n"

func TestCompleteStructuredAndUsage(t *testing.T) {
	srv := llmtest.New(llmtest.Options{APIKey: "sk-test-0123456789abcdef", Grades: map[string]map[string]int{
		"reset password": {"How to reset your password": 3}}})
	defer srv.Close()
	c, err := llm.New(llm.Config{URL: srv.URL, Model: "m1", APIKey: "sk-test-0123456789abcdef"})
	require.NoError(t, err)
	resp, err := c.Complete(context.Background(), llm.Request{
		Messages: []llm.Message{{Role: "user", Content: judgePrompt}},
		Schema:   &llm.Schema{Name: "x", Schema: json.RawMessage(`{"type":"object"}`)},
	})
	require.NoError(t, err)
	assert.JSONEq(t, `{"reason": "intent match M=3, trustworthiness T=3", "score": 3}`, resp.Content)
	assert.Equal(t, "stop", resp.FinishReason)
	assert.Equal(t, "m1", resp.Model)
	require.True(t, resp.HasUsage)
	assert.Equal(t, llm.Usage{PromptTokens: 12, CompletionTokens: 5}, resp.Usage)
	assert.Equal(t, int64(1), c.Calls())

	// Plain text without response_format.
	resp, err = c.Complete(context.Background(), llm.Request{Messages: []llm.Message{{Role: "user", Content: judgePrompt}}})
	require.NoError(t, err)
	assert.Equal(t, "intent match M=3, trustworthiness T=3\nFinal score: 3", resp.Content)
}

func TestCompleteErrors(t *testing.T) {
	key := "sk-secret-ABCDEFGHIJKLMNOP"
	srv := llmtest.New(llmtest.Options{APIKey: key})
	defer srv.Close()
	ctx := context.Background()
	req := llm.Request{Messages: []llm.Message{{Role: "user", Content: judgePrompt}}}

	// A wrong key: 401, the OpenAI error body decoded, no key in the message.
	c, err := llm.New(llm.Config{URL: srv.URL, APIKey: "sk-wrong-ZYXWVUTSRQPONMLK"})
	require.NoError(t, err)
	_, err = c.Complete(ctx, req)
	var ae *llm.APIError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, http.StatusUnauthorized, ae.Status)
	assert.Equal(t, "invalid_api_key", ae.Code)
	assert.Equal(t, 1, ae.Attempts, "a 401 is not retried")
	assert.NotContains(t, err.Error(), "sk-wrong-ZYXWVUTSRQPONMLK")

	// No structured output: a 400 naming response_format.
	ns := llmtest.New(llmtest.Options{NoSchema: true})
	defer ns.Close()
	c, _ = llm.New(llm.Config{URL: ns.URL})
	_, err = c.Complete(ctx, llm.Request{Messages: req.Messages, Schema: &llm.Schema{Name: "x", Schema: json.RawMessage(`{}`)}})
	require.ErrorAs(t, err, &ae)
	assert.True(t, ae.RejectsResponseFormat(), err.Error())
	assert.Equal(t, "response_format", ae.Param)

	// A server that echoes the whole key back: redacted.
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error": {"message": "bad key ` + r.Header.Get("Authorization") + `", "type": "invalid_request_error", "code": 400}}`))
	}))
	defer echo.Close()
	c, _ = llm.New(llm.Config{URL: echo.URL, APIKey: key})
	_, err = c.Complete(ctx, req)
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "400", ae.Code, "vLLM sends a numeric code")
	assert.NotContains(t, err.Error(), key)
	assert.NotContains(t, err.Error(), key[:8])
	assert.Contains(t, err.Error(), httpretry.Redacted)
}

func TestCompleteRetriesWithRetryAfter(t *testing.T) {
	srv := llmtest.New(llmtest.Options{FailFirst: []int{429, 503}, RetryAfter: 3})
	defer srv.Close()
	var mu sync.Mutex
	var waits []time.Duration
	c, _ := llm.New(llm.Config{URL: srv.URL, Policy: httpretry.Policy{Attempts: 4, BaseDelay: 10 * time.Millisecond, MaxDelay: 4 * time.Second, Timeout: 5 * time.Second},
		Sleep: func(_ context.Context, d time.Duration) error {
			mu.Lock()
			waits = append(waits, d)
			mu.Unlock()
			return nil
		}})
	resp, err := c.Complete(context.Background(), llm.Request{Messages: []llm.Message{{Role: "user", Content: judgePrompt}}})
	require.NoError(t, err)
	assert.Contains(t, resp.Content, "Final score: 3", "no table: the word-overlap grade")
	require.Len(t, waits, 2)
	assert.Equal(t, 3*time.Second, waits[0], "429: Retry-After honoured")
	assert.Less(t, waits[1], 20*time.Millisecond, "503 without Retry-After: the second backoff, 10-20 ms")
	assert.Equal(t, int64(3), srv.Requests())
	assert.Equal(t, int64(1), c.Calls(), "one call, three HTTP attempts")

	// 5xx until the attempts are spent: an APIError naming the attempts.
	bad := llmtest.New(llmtest.Options{FailFirst: []int{500, 500, 500, 500}})
	defer bad.Close()
	c, _ = llm.New(llm.Config{URL: bad.URL, Policy: httpretry.Policy{Attempts: 4, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond, Timeout: time.Second}})
	_, err = c.Complete(context.Background(), llm.Request{Messages: []llm.Message{{Role: "user", Content: judgePrompt}}})
	var ae *llm.APIError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, 4, ae.Attempts)
	assert.Equal(t, "server_error", ae.Type)
}

func TestBudgetAndConcurrency(t *testing.T) {
	srv := llmtest.New(llmtest.Options{Delay: 30 * time.Millisecond})
	defer srv.Close()
	c, _ := llm.New(llm.Config{URL: srv.URL, Concurrency: 2, MaxRequests: 5})
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = c.Complete(context.Background(), llm.Request{Messages: []llm.Message{{Role: "user", Content: judgePrompt}}})
		}()
	}
	wg.Wait()
	budget := 0
	for _, err := range errs {
		if errors.Is(err, llm.ErrBudget) {
			budget++
		} else {
			require.NoError(t, err)
		}
	}
	assert.Equal(t, 3, budget)
	assert.Equal(t, int64(5), srv.Requests(), "the budget is never exceeded")
	assert.Equal(t, int64(2), srv.MaxInFlight(), "at most --concurrency requests in flight")
}

// endlessServer answers 200 with a body that never ends, counting what it sent.
func endlessServer(t *testing.T, head string) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var sent atomic.Int64
	chunk := []byte(strings.Repeat("a", 32<<10))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(head))
		for r.Context().Err() == nil {
			n, err := w.Write(chunk)
			sent.Add(int64(n))
			if err != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &sent
}

// Issue 20 item 5: an answer is read to at most 4 MiB (it was 256 MiB, then
// unmarshalled), at every concurrency.
func TestCompleteEndlessAnswer(t *testing.T) {
	srv, sent := endlessServer(t, `{"choices":[{"message":{"content":"`)
	c, err := llm.New(llm.Config{URL: srv.URL, Concurrency: 8})
	require.NoError(t, err)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			_, errs[i] = c.Complete(context.Background(), llm.Request{Messages: []llm.Message{{Role: "user", Content: judgePrompt}}})
		})
	}
	wg.Wait()
	for _, err := range errs {
		var tl *httpretry.TooLargeError
		require.ErrorAs(t, err, &tl)
		assert.Contains(t, err.Error(), "longer than 4 MiB")
	}
	assert.Less(t, sent.Load(), int64(192<<20), "each answer stopped near its cap (socket buffers aside), not at 256 MiB")
}

// Issue 20 item 14: a client configured without a policy has the documented
// 3-minute budget: a Retry-After of 200 s is not waited.
func TestCompleteDefaultBudget(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "200")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()
	var waits []time.Duration
	c, err := llm.New(llm.Config{URL: srv.URL, Sleep: func(_ context.Context, d time.Duration) error {
		waits = append(waits, d)
		return nil
	}})
	require.NoError(t, err)
	_, err = c.Complete(context.Background(), llm.Request{Messages: []llm.Message{{Role: "user", Content: judgePrompt}}})
	require.ErrorContains(t, err, "3m0s retry budget")
	assert.Empty(t, waits)
}
