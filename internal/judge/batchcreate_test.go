package judge_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
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
			// The state file records the creation: a rerun does not pay twice.
			_, err = runBatch(context.Background(), pairs, batchOpts(t, cachePath), cachePath, bo, nil)
			require.ErrorContains(t, err, "interrupted while creating a batch")
			assert.Equal(t, 1, batchesCreated(srv, tc.provider), "the rerun created no batch")
		})
	}
}

// A SIGINT/SIGTERM while the batch is being created. The provider's answer
// comes right after it: the run keeps the id in the state file and still
// ends within a second; the rerun resumes that batch. No answer comes: the
// run ends within a second with a state file that says a batch was being
// created, and the rerun refuses to submit another. Either way one batch is
// created (without the state written before the creation, the interrupted
// run left no state file and the rerun paid for a second batch).
func TestBatchCreateInterrupted(t *testing.T) {
	pairs, grades := table(2)
	for _, provider := range []string{llm.ProviderOpenAI, llm.ProviderAnthropic, llm.ProviderGemini} {
		for _, answers := range []bool{true, false} {
			name := provider + " no answer"
			if answers {
				name = provider + " answer after the signal"
			}
			t.Run(name, func(t *testing.T) {
				srv := llmtest.New(llmtest.Options{Grades: grades})
				defer srv.Close()
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				var interrupted time.Time
				front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if !creatingPOST(r, provider) {
						srv.Config.Handler.ServeHTTP(w, r)
						return
					}
					rec := httptest.NewRecorder()
					srv.Config.Handler.ServeHTTP(rec, r)
					interrupted = time.Now()
					cancel() // the signal, as the batch is created
					if !answers {
						select { // no answer until the client gives up
						case <-r.Context().Done():
						case <-time.After(5 * time.Second):
						}
						return
					}
					time.Sleep(100 * time.Millisecond)
					for k, v := range rec.Header() {
						w.Header()[k] = v
					}
					w.WriteHeader(rec.Code)
					_, _ = w.Write(rec.Body.Bytes())
				}))
				defer front.Close()
				cachePath := filepath.Join(t.TempDir(), "cache.jsonl")
				bo := &judge.BatchOptions{API: providerServiceAt(t, front.URL, provider, true), Poll: llm.PollPolicy{Initial: time.Millisecond, Max: time.Millisecond}}
				_, err := runBatch(ctx, pairs, batchOpts(t, cachePath), cachePath, bo, nil)
				require.ErrorIs(t, err, context.Canceled)
				assert.Less(t, time.Since(interrupted), time.Second, "the run ends within a second of the signal")
				st, err := judge.ReadBatchState(cachePath + judge.BatchStateSuffix)
				require.NoError(t, err)
				require.NotNil(t, st, "the state file is kept")
				assert.Equal(t, !answers, st.Creating)
				res, err := runBatch(context.Background(), pairs, batchOpts(t, cachePath), cachePath, bo, nil)
				if answers {
					require.NoError(t, err)
					assert.True(t, res.Batch.Resumed, "the rerun resumes the batch")
				} else {
					require.ErrorContains(t, err, "interrupted while creating a batch")
				}
				assert.Equal(t, 1, batchesCreated(srv, provider), "one batch created")
			})
		}
	}
}

// A state file left while creating a batch is reported as such whatever the
// model, prompt or format of the rerun: the batch may exist either way, and
// the message of another model's batch would name a batch with no id.
func TestBatchCreatingStateOfAnotherModel(t *testing.T) {
	pairs, grades := table(1)
	srv := llmtest.New(llmtest.Options{Grades: grades})
	defer srv.Close()
	cachePath := filepath.Join(t.TempDir(), "cache.jsonl")
	state := `{"schema":"` + judge.BatchStateSchema + `","batch_id":"","requests":7,"model":"other","prompt_hash":"x","answer_format":"json","provider":"openai","creating":true}`
	require.NoError(t, os.WriteFile(cachePath+judge.BatchStateSuffix, []byte(state), 0o644))
	bo := &judge.BatchOptions{API: providerService(t, srv, llm.ProviderOpenAI, false), Poll: llm.PollPolicy{Initial: time.Millisecond, Max: time.Millisecond}}
	_, err := runBatch(context.Background(), pairs, batchOpts(t, cachePath), cachePath, bo, nil)
	require.ErrorContains(t, err, "a run was interrupted while creating a batch of 7 request(s) at openai")
	assert.Equal(t, 0, srv.Batches())
}

// A creation that provably never reached the provider (the connection was
// refused) created nothing: the error is not a BatchMayExistError and the
// state file is removed, so a rerun submits as usual.
func TestBatchCreateConnectionRefused(t *testing.T) {
	pairs, _ := table(1)
	closed := httptest.NewServer(http.NotFoundHandler())
	url := closed.URL
	closed.Close()
	cachePath := filepath.Join(t.TempDir(), "cache.jsonl")
	bo := &judge.BatchOptions{API: providerServiceAt(t, url, llm.ProviderAnthropic, true), Poll: llm.PollPolicy{Initial: time.Millisecond, Max: time.Millisecond}}
	_, err := runBatch(context.Background(), pairs, batchOpts(t, cachePath), cachePath, bo, nil)
	require.ErrorContains(t, err, "connection refused")
	var me *llm.BatchMayExistError
	assert.NotErrorAs(t, err, &me)
	assert.NoFileExists(t, cachePath+judge.BatchStateSuffix)
}
