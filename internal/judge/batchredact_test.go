package judge_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/judge"
	"github.com/retrieval-gate/retrieval-gate/internal/llm"
)

// A results file read back (--batch-in) whose error texts echo credentials,
// in each provider's format: the environment's key (BatchOptions.Secrets, of
// no particular shape) and keys the process never had (another machine's,
// found by their shape), a bearer token, a URL's key parameter. Every failed
// request is unjudged batch_failed with a detail that holds none of them; the
// rest of the text is kept. Without Secrets (a library caller) the shapes are
// still found.
func TestBatchInResultErrorsRedacted(t *testing.T) {
	const known = "local-vllm-secret-0042"
	shaped := []string{"sk-proj-Rg7eTq2Lm9Xv4Bn8Kd1Wz6Hy3Pc5Jf0Ua", "AIzaSyRg7eTq2Lm9Xv4Bn8Kd1Wz6Hy3Pc5Jf0U", "eyJhbGciOiJIUzI1NiJ9.cmd0ZXN0.c2lnbmF0dXJl", "rgQueryKey0123456789"}
	texts := []string{
		"Incorrect API key provided: " + shaped[0] + ".",
		"API key not valid: https://generativelanguage.googleapis.com/v1beta/models/m:generateContent?key=" + shaped[3] + " (" + shaped[1] + ")",
		"upstream refused Authorization: Bearer " + shaped[2],
		"the engine's key " + known + " was rejected",
	}
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	lines := map[string]func(id, msg string) string{
		llm.ProviderOpenAI: func(id, msg string) string {
			return `{"id":"r","custom_id":` + q(id) + `,"response":{"status_code":401,"request_id":"x","body":{"error":{"message":` + q(msg) + `}}},"error":null}`
		},
		llm.ProviderAnthropic: func(id, msg string) string {
			return `{"custom_id":` + q(id) + `,"result":{"type":"errored","error":{"type":"error","error":{"type":"authentication_error","message":` + q(msg) + `}}}}`
		},
		llm.ProviderGemini: func(id, msg string) string {
			return `{"key":` + q(id) + `,"error":{"code":400,"message":` + q(msg) + `,"status":"INVALID_ARGUMENT"}}`
		},
	}
	for _, tc := range []struct {
		provider string
		secrets  []string
	}{
		{llm.ProviderOpenAI, []string{known}},
		{llm.ProviderAnthropic, []string{known}},
		{llm.ProviderGemini, []string{known}},
		{llm.ProviderOpenAI, nil},
	} {
		t.Run(tc.provider+map[bool]string{true: " without secrets"}[tc.secrets == nil], func(t *testing.T) {
			pairs, _ := table(1) // 4 pairs: one request for each text
			dir := t.TempDir()
			cachePath := filepath.Join(dir, "cache.jsonl")
			var reqs bytes.Buffer
			_, err := runBatch(context.Background(), pairs, batchOpts(t, cachePath), cachePath, &judge.BatchOptions{RequestsOut: &reqs, Provider: tc.provider}, nil)
			require.NoError(t, err)
			var results strings.Builder
			sc := bufio.NewScanner(&reqs)
			sc.Buffer(nil, 1<<20)
			for i := 0; sc.Scan(); i++ {
				var l struct {
					CustomID string `json:"custom_id"`
					Key      string `json:"key"`
				}
				require.NoError(t, json.Unmarshal(sc.Bytes(), &l))
				results.WriteString(lines[tc.provider](l.CustomID+l.Key, texts[i%len(texts)]) + "\n")
			}
			path := filepath.Join(dir, "results.jsonl")
			require.NoError(t, os.WriteFile(path, []byte(results.String()), 0o644))
			res, err := runBatch(context.Background(), pairs, batchOpts(t, cachePath), cachePath,
				&judge.BatchOptions{ResultsIn: openResults(t, path), Provider: tc.provider, Secrets: tc.secrets}, nil)
			require.NoError(t, err)
			sum := judge.Summarize(res, nil)
			require.Len(t, sum.UnjudgedList, len(pairs))
			var details []string
			for _, u := range sum.UnjudgedList {
				assert.Equal(t, judge.CauseBatchFailed, u.Cause)
				if tc.secrets != nil || !strings.Contains(u.Detail, known) {
					assert.Contains(t, u.Detail, "***", u.Detail)
				}
				for _, s := range shaped {
					assert.NotContains(t, u.Detail, s)
				}
				if tc.secrets != nil {
					assert.NotContains(t, u.Detail, known)
				}
				details = append(details, u.Detail)
			}
			all := strings.Join(details, "\n")
			assert.Contains(t, all, "Incorrect API key provided: ***.")
			assert.Contains(t, all, "generateContent?key=*** (***)")
			assert.Contains(t, all, "Authorization: Bearer ***")
			if tc.secrets == nil {
				assert.Contains(t, all, "the engine's key "+known+" was rejected", "a key of no shape, not given, is not found")
			} else {
				assert.Contains(t, all, "the engine's key *** was rejected")
			}
		})
	}
}
