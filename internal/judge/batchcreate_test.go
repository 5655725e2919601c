package judge_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/judge"
	"github.com/retrieval-gate/retrieval-gate/internal/llm"
	"github.com/retrieval-gate/retrieval-gate/internal/llm/llmtest"
)

// creatingPOST reports whether r is the request that creates a batch at
// provider: POST /v1/batches (OpenAI's API reference, "Create batch"), POST
// /v1/messages/batches (Anthropic's "Create a Message Batch"), POST
// /v1beta/models/M:batchGenerateContent (the Gemini API's "Batch Mode").
func creatingPOST(r *http.Request, provider string) bool {
	if r.Method != http.MethodPost {
		return false
	}
	switch provider {
	case llm.ProviderAnthropic:
		return r.URL.Path == "/v1/messages/batches"
	case llm.ProviderGemini:
		return strings.HasSuffix(r.URL.Path, ":batchGenerateContent")
	}
	return r.URL.Path == "/v1/batches"
}

// batchesCreated is how many batches the stand-in of provider created.
func batchesCreated(srv *llmtest.Server, provider string) int {
	switch provider {
	case llm.ProviderAnthropic:
		return srv.AnthropicBatches()
	case llm.ProviderGemini:
		return srv.GeminiBatches()
	}
	return srv.Batches()
}

// A provider that creates the batch and then answers 500 (or whose answer is
// lost): the creating POST is not retried, since a retry would be a second
// paid batch (a POST the server may have acted on is not idempotent; only a
// 429, which the providers document as not processed, is retried), and the
// error tells the user to list their batches.
func TestBatchCreate5xxNotRetried(t *testing.T) {
	pairs, grades := table(2)
	for _, tc := range []struct {
		provider string
		inline   bool
	}{
		{llm.ProviderOpenAI, false},
		{llm.ProviderAnthropic, true},
		{llm.ProviderGemini, true},
		{llm.ProviderGemini, false},
	} {
		t.Run(tc.provider, func(t *testing.T) {
			srv := llmtest.New(llmtest.Options{Grades: grades})
			defer srv.Close()
			front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if creatingPOST(r, tc.provider) {
					srv.Config.Handler.ServeHTTP(httptest.NewRecorder(), r) // created, the answer lost
					http.Error(w, `{"error":{"message":"internal error","type":"server_error"}}`, http.StatusInternalServerError)
					return
				}
				srv.Config.Handler.ServeHTTP(w, r)
			}))
			defer front.Close()
			cachePath := filepath.Join(t.TempDir(), "cache.jsonl")
			bo := &judge.BatchOptions{API: providerServiceAt(t, front.URL, tc.provider, tc.inline), Poll: llm.PollPolicy{Initial: time.Millisecond, Max: time.Millisecond}}
			_, err := runBatch(context.Background(), pairs, batchOpts(t, cachePath), cachePath, bo, nil)
			require.Error(t, err)
			assert.Equal(t, 1, batchesCreated(srv, tc.provider), "exactly one batch created")
			var me *llm.BatchMayExistError
			require.ErrorAs(t, err, &me)
			assert.Contains(t, err.Error(), "list your batches")
		})
	}
}
