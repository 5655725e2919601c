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

	"github.com/retrieval-gate/retrieval-gate/internal/judge"
	"github.com/retrieval-gate/retrieval-gate/internal/llm"
	"github.com/retrieval-gate/retrieval-gate/internal/llm/llmtest"
)

// echoPairs are a pool for llmtest's hostile judge ([[echo-key]]): the first
// pair's reason quotes the key, the second's answer is unreadable and quotes
// it too.
func echoPairs() []judge.Pair {
	return []judge.Pair{
		{QueryID: "q1", Query: "alpha [[echo-key]]", DocID: "a", Document: "alpha one"},
		{QueryID: "q2", Query: "beta [[echo-key]] [[malformed]]", DocID: "b", Document: "beta two"},
	}
}

// assertNoKeyPiece fails when text holds 8 characters of key in a row (any
// letter case).
func assertNoKeyPiece(t *testing.T, name, text, key string) {
	t.Helper()
	text = strings.ToLower(text)
	for j := 0; j+8 <= len(key); j++ {
		if strings.Contains(text, strings.ToLower(key[j:j+8])) {
			t.Errorf("%s holds %q of the key: %s", name, key[j:j+8], text)
			return
		}
	}
}

// A library caller that gives its clients the key and judge no Secrets: the
// reasons and the unreadable answers the hostile judge wrote reach the Result
// and the cache with the key replaced by ***, online and through every batch
// provider's API: each client's own redaction (its Redact) is the run's.
func TestReasonsRedactedByTheClient(t *testing.T) {
	const key = "local-judge-key-Hq2Vx8Lm4Tz6" // of no shape: found because the client holds it
	srv := llmtest.New(llmtest.Options{APIKey: key})
	defer srv.Close()
	poll := llm.PollPolicy{Initial: time.Millisecond, Max: 5 * time.Millisecond}
	for _, tc := range []struct {
		name string
		api  func() (llm.BatchService, error) // nil: online
	}{
		{"online", nil},
		{"openai batch", func() (llm.BatchService, error) { return llm.NewBatchClient(llm.Config{URL: srv.URL, APIKey: key}) }},
		{"anthropic batch", func() (llm.BatchService, error) { return llm.NewAnthropicBatchClient(srv.URL, key, nil) }},
		{"gemini batch", func() (llm.BatchService, error) { return llm.NewGeminiBatchClient(srv.URL, "fake", key, nil) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cachePath := filepath.Join(t.TempDir(), "cache.jsonl")
			opt := batchOpts(t, cachePath)
			var res *judge.Result
			var err error
			if tc.api == nil {
				opt.Client, err = llm.New(llm.Config{URL: srv.URL, Model: "fake", APIKey: key})
				require.NoError(t, err)
				res, err = judge.Judge(context.Background(), echoPairs(), opt)
			} else {
				api, aerr := tc.api()
				require.NoError(t, aerr)
				res, err = runBatch(context.Background(), echoPairs(), opt, cachePath, &judge.BatchOptions{API: api, Poll: poll}, nil)
			}
			require.NoError(t, err)
			assert.Equal(t, "intent match M=2, trustworthiness T=2, says the key ***", res.Reason(0))
			require.False(t, res.Grades[1][0].Valid)
			assert.Equal(t, judge.CauseUnparseable, res.Grades[1][0].Cause)
			assert.Equal(t, `no "Final score: N" last line in "This passage looks quite relevant to me, says the key ***."`, res.Grades[1][0].Detail)
			var out bytes.Buffer
			require.NoError(t, judge.WriteJSONL(&out, res))
			assertNoKeyPiece(t, "the judgments", out.String(), key)
			require.NoError(t, opt.Cache.(*judge.Cache).Close())
			cached, err := os.ReadFile(cachePath)
			require.NoError(t, err)
			assert.Contains(t, string(cached), "says the key ***")
			assertNoKeyPiece(t, "the cache", string(cached), key)
		})
	}
}

// A cache written before reasons were redacted (or on a machine with other
// secrets) may hold a key in a reason: a run that reads it, online or in a
// batch's file mode, redacts the reason of its Secrets as it reads it; the
// rest of the reason is kept.
func TestCachedReasonsRedacted(t *testing.T) {
	const key = "local-judge-key-Hq2Vx8Lm4Tz6"
	pairs := echoPairs()[:1]
	for _, batch := range []bool{false, true} {
		t.Run(map[bool]string{false: "online", true: "batch file"}[batch], func(t *testing.T) {
			dir := t.TempDir()
			cachePath := filepath.Join(dir, "cache.jsonl")
			p := judge.DefaultPrompt()
			e := judge.Entry{Key: judge.CacheKey(p.Hash, "fake", pairs[0].Query, pairs[0].Document, 0), Grade: 3, Reason: "the answer, and the key " + key,
				Model: "fake", PromptHash: p.Hash, AnswerFormat: judge.FormatJSON}
			line, err := json.Marshal(e)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(cachePath, append(line, '\n'), 0o644))
			opt := batchOpts(t, cachePath)
			opt.Secrets = []string{key}
			var res *judge.Result
			if batch {
				results := filepath.Join(dir, "results.jsonl")
				require.NoError(t, os.WriteFile(results, nil, 0o644))
				res, err = runBatch(context.Background(), pairs, opt, cachePath, &judge.BatchOptions{ResultsIn: openResults(t, results)}, nil)
			} else {
				srv := llmtest.New(llmtest.Options{})
				defer srv.Close()
				opt.Client, err = llm.New(llm.Config{URL: srv.URL, Model: "fake"})
				require.NoError(t, err)
				res, err = judge.Judge(context.Background(), pairs, opt)
				assert.Zero(t, srv.Requests(), "judged from the cache")
			}
			require.NoError(t, err)
			require.True(t, res.Grades[0][0].Cached)
			assert.Equal(t, "the answer, and the key ***", res.Reason(0))
		})
	}
}

// answer is a chat server standing in for a model that answers content.
type answer string

func (a answer) Complete(context.Context, llm.Request) (*llm.Response, error) {
	return &llm.Response{Content: string(a)}, nil
}

// A reason longer than the 300 runes kept is redacted before it is cut: a
// credential of a known shape (an OpenAI key the process never had) that
// straddles the cut would be left as a piece too short to have the shape.
func TestReasonRedactedBeforeTheCut(t *testing.T) {
	const shaped = "sk-proj-Rg7eTq2Lm9Xv4Bn8Kd1Wz6Hy3Pc5Jf0Ua"
	filler := strings.Repeat("relevant ", 32) // 288 runes
	content, err := json.Marshal(map[string]any{"reason": filler + shaped + " and more words after it", "score": 2})
	require.NoError(t, err)
	pairs := echoPairs()[:1]
	res, err := judge.Judge(context.Background(), pairs, judge.Options{Client: answer(content), Model: "fake", Prompt: judge.DefaultPrompt()})
	require.NoError(t, err)
	got := res.Reason(0)
	assert.Equal(t, filler+"*** and more…", got, "redacted, then cut at 300 runes")
	assert.NotContains(t, got, shaped[:12])
}
