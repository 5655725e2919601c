package summary

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/retrieval-gate/retrieval-gate/internal/generate"
	"github.com/retrieval-gate/retrieval-gate/internal/judge"
)

// Issue 33 item 13: a batch has one turn, so its summary no longer says the
// unjudged answers came "after one retry each"; and issue 37 item 5: requests
// sent, answers reused and cache hits are three figures.
func TestJudgeSummaryWords(t *testing.T) {
	res := &judge.Result{Prompt: judge.DefaultPrompt(), Format: judge.FormatJSON, Requests: 4, Reused: 9, Cached: 2, BadAnswerRetries: 1}
	s := &judge.Summary{UnjudgedByCause: map[string]int{judge.CauseUnparseable: 1, judge.CauseBatchFailed: 2, judge.CauseBatchMissing: 3}}
	var online bytes.Buffer
	Judge(&online, res, s)
	assert.Contains(t, online.String(), "judge: unjudged answers: 1 unparseable, 0 out of range (each after one correction retry), 0 over the request budget (never counted as 0)\n")
	assert.Contains(t, online.String(), "judge: 4 request(s) sent (1 retries after a bad answer), 9 answer(s) reused (pairs with an identical prompt, asked once), 2 cache hit(s)\n")

	res.Batch = &judge.BatchStats{Mode: "file", Provider: "anthropic", Submitted: 4, Answered: 4, New: 4, Reused: 9, Cached: 2}
	var batch bytes.Buffer
	Judge(&batch, res, s)
	assert.NotContains(t, batch.String(), "retry each")
	assert.Contains(t, batch.String(), "judge: unjudged answers: 1 unparseable, 0 out of range (a batch has no correction turn: each was asked once), 0 over the request budget, 2 failed in the batch, 3 without an answer (never counted as 0)\n")
	assert.Contains(t, batch.String(), "; 4 new judgment(s), 9 reused, 2 from the cache\n")
	assert.Contains(t, batch.String(), "judge: batch (file, anthropic): 4 request(s) submitted")
}

// Issue 33 item 13 in generate: a batch (file or API) asks each document once,
// so its summary does not say "after one retry".
func TestGenerateBatchSummaryWords(t *testing.T) {
	var online, batch bytes.Buffer
	Generate(&online, &generate.RunResult{Result: &generate.Result{Documents: 5, Failed: 2}}, 0.8, 0, "out.jsonl", "", "")
	assert.Contains(t, online.String(), "generate: 2 document(s) without a readable answer after one retry, 0 skipped over the request budget\n")
	Generate(&batch, &generate.RunResult{Result: &generate.Result{Documents: 5, Failed: 2, BatchMode: "file"}}, 0.8, 0, "out.jsonl", "", "in.jsonl")
	assert.NotContains(t, batch.String(), "retry")
	assert.Contains(t, batch.String(), "generate: 2 document(s) without a readable answer (a batch has no correction turn: each was asked once), 0 skipped over the request budget\n")
}
