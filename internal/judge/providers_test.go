package judge_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos/jsontest"
	"github.com/retrieval-gate/retrieval-gate/internal/judge"
	"github.com/retrieval-gate/retrieval-gate/internal/llm"
	"github.com/retrieval-gate/retrieval-gate/internal/llm/llmtest"
)

// Each provider's statuses, expiry and partial results, through judge --batch
// against its stand-in: a batch that ends with one errored request, one that
// expires and one that is cancelled part way (their answers are used, the
// rest unjudged batch_missing and sent again by the next run), and one the
// provider refuses (an error, the state file removed, nothing cached).
func TestProviderBatchScenarios(t *testing.T) {
	pairs, grades := table(4) // 16 pairs
	pairs[5].Query += " [[batch-error]]"
	grades[pairs[5].Query] = grades["query 1"]
	type want struct {
		status                    string
		answered, failed, missing int64
		err                       string
	}
	for _, tc := range []struct {
		provider string
		inline   bool
		opt      llmtest.BatchOptions
		want     want
	}{
		{llm.ProviderAnthropic, true, llmtest.BatchOptions{PollsPerStatus: 2}, want{"ended", 15, 1, 0, ""}},
		// The 24-hour expiry: the requests processed by then are in the
		// results, the rest are "expired".
		{llm.ProviderAnthropic, true, llmtest.BatchOptions{End: "expired", Answer: 10}, want{"ended", 9, 1, 6, ""}},
		// Cancelled part way: canceling, then ended with "canceled" results.
		{llm.ProviderAnthropic, true, llmtest.BatchOptions{End: "cancelled", Answer: 4}, want{"ended", 4, 0, 12, ""}},
		// A request body Anthropic refuses: a 400 at creation.
		{llm.ProviderAnthropic, true, llmtest.BatchOptions{End: "failed"}, want{err: "batch (anthropic): "}},
		{llm.ProviderGemini, true, llmtest.BatchOptions{PollsPerStatus: 2}, want{"BATCH_STATE_SUCCEEDED", 15, 1, 0, ""}},
		{llm.ProviderGemini, false, llmtest.BatchOptions{PollsPerStatus: 2}, want{"BATCH_STATE_SUCCEEDED", 15, 1, 0, ""}},
		// The 48-hour expiry: EXPIRED, no response at all.
		{llm.ProviderGemini, true, llmtest.BatchOptions{End: "expired"}, want{"BATCH_STATE_EXPIRED", 0, 0, 16, ""}},
		{llm.ProviderGemini, false, llmtest.BatchOptions{End: "cancelled", Answer: 4}, want{"BATCH_STATE_CANCELLED", 4, 0, 12, ""}},
		{llm.ProviderGemini, true, llmtest.BatchOptions{End: "failed"}, want{err: "BATCH_STATE_FAILED"}},
	} {
		name := tc.provider + " " + tc.opt.End
		if !tc.inline {
			name += " file"
		}
		t.Run(name, func(t *testing.T) {
			srv := llmtest.New(llmtest.Options{Grades: grades, Batch: tc.opt})
			defer srv.Close()
			cachePath := filepath.Join(t.TempDir(), "cache.jsonl")
			bo := &judge.BatchOptions{API: providerService(t, srv, tc.provider, tc.inline), Poll: llm.PollPolicy{Initial: time.Millisecond, Max: 5 * time.Millisecond}}
			res, err := runBatch(context.Background(), pairs, batchOpts(t, cachePath), cachePath, bo, nil)
			_, serr := os.Stat(cachePath + judge.BatchStateSuffix)
			assert.True(t, os.IsNotExist(serr), "the state file is removed")
			if tc.want.err != "" {
				require.ErrorContains(t, err, tc.want.err)
				var reqs bytes.Buffer
				_, err = runBatch(context.Background(), pairs, batchOpts(t, cachePath), cachePath, &judge.BatchOptions{RequestsOut: &reqs, Provider: tc.provider}, nil)
				require.NoError(t, err)
				assert.Equal(t, 16, bytes.Count(reqs.Bytes(), []byte("\n")), "nothing was cached")
				return
			}
			require.NoError(t, err)
			switch tc.provider { // one batch created; a file uploaded only in file mode
			case llm.ProviderAnthropic:
				assert.Equal(t, 1, srv.AnthropicBatches())
			case llm.ProviderGemini:
				assert.Equal(t, 1, srv.GeminiBatches())
				assert.Equal(t, btoi(!tc.inline), srv.GeminiUploads())
			}
			b := res.Batch
			assert.Equal(t, tc.provider, b.Provider)
			assert.Equal(t, tc.want.status, b.Status)
			assert.Equal(t, int64(16), b.Submitted)
			assert.Equal(t, tc.want.answered, b.Answered, "answered")
			assert.Equal(t, tc.want.failed, b.Failed, "failed")
			assert.Equal(t, tc.want.missing, b.Missing, "missing")
			assert.Equal(t, tc.want.answered, b.New)
			require.NotNil(t, b.Calls)
			assert.Positive(t, b.Calls.Submit)
			assert.Positive(t, b.Calls.Poll)
			for i, p := range pairs {
				if j := res.Grades[i][0]; j.Valid {
					assert.Equal(t, grades[p.Query][p.Document], j.Grade)
				}
			}
			if tc.want.failed > 0 {
				assert.Equal(t, judge.CauseBatchFailed, res.Grades[5][0].Cause)
			}
			sum := judge.Summarize(res, nil)
			assert.Equal(t, int(tc.want.missing), sum.UnjudgedByCause[judge.CauseBatchMissing])
			// The cache has the answers: the next run sends only the rest.
			var reqs bytes.Buffer
			_, err = runBatch(context.Background(), pairs, batchOpts(t, cachePath), cachePath, &judge.BatchOptions{RequestsOut: &reqs, Provider: tc.provider}, nil)
			require.NoError(t, err)
			assert.Equal(t, int(16-tc.want.answered), bytes.Count(reqs.Bytes(), []byte("\n")))
		})
	}
}

// The result lines of Anthropic's and Gemini's batches: never a panic; an
// accepted line has its id and either a completion, an error or a "missing".
func FuzzParseProviderResult(f *testing.F) {
	f.Add(true, []byte(`{"custom_id":"c","result":{"type":"succeeded","message":{"id":"m","type":"message","role":"assistant","model":"x","content":[{"type":"text","text":"{\"reason\":\"r\",\"score\":2}"}],"usage":{"input_tokens":3,"output_tokens":4}}}}`))
	f.Add(true, []byte(`{"custom_id":"c","result":{"type":"errored","error":{"type":"error","error":{"type":"api_error","message":"x"}}}}`))
	f.Add(true, []byte(`{"custom_id":"c","result":{"type":"expired"}}`))
	f.Add(true, []byte(`{"custom_id":"c","custom_id":"d","result":{"type":"canceled"}}`))
	f.Add(false, []byte(`{"key":"k","response":{"candidates":[{"content":{"parts":[{"text":"{\"reason\":\"r\",\"score\":1}"}],"role":"model"}}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":4}}}`))
	f.Add(false, []byte(`{"key":"k","error":{"code":13,"message":"Internal","status":"INTERNAL"}}`))
	f.Add(false, []byte(`{"key":"k","response":{"promptFeedback":{"blockReason":"SAFETY"}}}`))
	f.Fuzz(func(t *testing.T, anthropic bool, line []byte) {
		parse := judge.ParseGeminiResult
		if anthropic {
			parse = judge.ParseAnthropicResult
		}
		r, err := parse(line)
		if err != nil {
			return
		}
		if r.CustomID == "" {
			t.Fatal("accepted a line without its id")
		}
		idKey := "key"
		if anthropic {
			idKey = "custom_id"
		}
		checkResultID(t, line, idKey, r)
		if n := btoi(r.Completion != nil) + btoi(r.Err != "" && !r.Missing) + btoi(r.Missing); n != 1 {
			t.Fatalf("a result is exactly one of a completion, an error and missing: %+v", r)
		}
	})
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// A pool beyond a Message Batch's 100,000 requests is refused before anything
// is sent, with the way to send it in parts.
func TestAnthropicBatchLimit(t *testing.T) {
	srv := llmtest.New(llmtest.Options{})
	defer srv.Close()
	svc := providerService(t, srv, llm.ProviderAnthropic, true)
	path := filepath.Join(t.TempDir(), "requests.jsonl")
	require.NoError(t, os.WriteFile(path, []byte("{}\n"), 0o644))
	_, err := svc.Submit(context.Background(), path, llm.AnthropicMaxRequests+1)
	require.ErrorContains(t, err, "at most 100000 requests and this one has 100001: send it in parts with --max-requests 100000")
	assert.Equal(t, 0, srv.AnthropicBatches())
}

// checkResultID checks an accepted result line against encoding/json's reading
// of it into a map (keys exactly as written): the line is one JSON object, no
// key is repeated at any depth, and the result's id is the string under idKey
// (and, with a status, response.status_code for OpenAI's lines).
func checkResultID(t *testing.T, line []byte, idKey string, r judge.BatchResult) {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(line, &m); err != nil || m == nil {
		t.Fatalf("accepted %q, which is not a JSON object: %v", line, err)
	}
	if k, dup := jsontest.RepeatedKey(line); dup {
		t.Fatalf("accepted %q, whose key %q is repeated", line, k)
	}
	if id, _ := foldGet(m, idKey).(string); id != r.CustomID {
		t.Fatalf("%s of %q is %q, the result's id %q", idKey, line, id, r.CustomID)
	}
}

// foldGet is the value of the one key of m equal to key but for case (a line
// whose object has two such keys is refused): a lone "CUSTOM_ID" is read as
// custom_id, encoding/json's rule for the field, and not ambiguous.
func foldGet(m map[string]any, key string) any {
	var v any
	n := 0
	for k, x := range m {
		if strings.EqualFold(k, key) {
			v, n = x, n+1
		}
	}
	if n > 1 {
		return nil
	}
	return v
}

// A result line whose object has two keys that differ only in case is refused:
// encoding/json reads "CUSTOM_ID" (or "cuſtom_id") as custom_id and keeps the
// last, so the result went to the request of the second id where a strict
// reader takes the first.
func TestResultKeysDifferingInCase(t *testing.T) {
	for _, tt := range []struct {
		parse func([]byte) (judge.BatchResult, error)
		line  string
	}{
		{judge.ParseBatchResult, `{"custom_id":"a","CUSTOM_ID":"b","error":{"message":"x"}}`},
		{judge.ParseBatchResult, `{"custom_id":"a","response":{"status_code":500,"Status_Code":200,"body":{}},"error":null}`},
		{judge.ParseAnthropicResult, `{"custom_id":"a","cuſtom_id":"b","result":{"type":"expired"}}`},
		{judge.ParseAnthropicResult, `{"custom_id":"a","result":{"type":"expired","TYPE":"canceled"}}`},
		{judge.ParseGeminiResult, `{"key":"a","Key":"b","error":{"message":"x"}}`},
	} {
		_, err := tt.parse([]byte(tt.line))
		require.ErrorContains(t, err, "keys that differ only in case are one field", tt.line)
	}
	// Different keys, and the same key in two objects, are fine.
	r, err := judge.ParseAnthropicResult([]byte(`{"custom_id":"a","result":{"type":"expired","custom_id":"x"},"Custom":1}`))
	require.NoError(t, err)
	assert.Equal(t, "a", r.CustomID)
}

// A request's error text in a batch's results that echoes the API key is
// shown redacted: judge prints a failed request's detail, and the report and
// the judgments keep it (the key reached them as the server wrote it).
func TestBatchResultErrorRedacted(t *testing.T) {
	pairs, grades := table(2)
	pairs[1].Query += " [[batch-error-echo]]"
	grades[pairs[1].Query] = grades["query 1"]
	srv := llmtest.New(llmtest.Options{Grades: grades, Batch: llmtest.BatchOptions{PollsPerStatus: 1}})
	defer srv.Close()
	cachePath := filepath.Join(t.TempDir(), "cache.jsonl")
	bo := &judge.BatchOptions{API: providerService(t, srv, llm.ProviderAnthropic, true), Poll: llm.PollPolicy{Initial: time.Millisecond, Max: 5 * time.Millisecond}}
	res, err := runBatch(context.Background(), pairs, batchOpts(t, cachePath), cachePath, bo, nil)
	require.NoError(t, err)
	j := res.Grades[1][0]
	require.Equal(t, judge.CauseBatchFailed, j.Cause)
	assert.Contains(t, j.Detail, "may not be used here")
	const key = "sk-ant-test-0123456789abcdef" // providerService's
	assert.NotContains(t, j.Detail, key[8:16], j.Detail)
	assert.Contains(t, j.Detail, "***", j.Detail)
}
