package summary

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/generate"
	"github.com/retrieval-gate/retrieval-gate/internal/judge"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store"
)

func TestANNCheckWords(t *testing.T) {
	iv := metrics.Interval{Lo: 0.975, Hi: 0.988, Method: metrics.MethodHallT}
	sample := &retrieve.ANNCheck{Depth: 50, Sample: 1000, Queries: 100000, N: 998, NoNeighbour: 2, Perfect: 974, Recall: 0.982, CI95: iv,
		Export: store.ExportCost{Records: 100000, Requests: 100, Bytes: 1234567890}}
	assert.Equal(t, "exact check of a sample of 1000 of the 100000 queries by case id: the store's recall@50 against exact search 0.982 [0.975, 0.988] (hall-t, n = 998), 974 of them with recall 1; 2 without an exact neighbour (no record of their locale) not counted; its 100000 vectors read back in 100 request(s), 1234567890 bytes",
		ANNCheck(sample))
	// Over the clusters of queries in families: the interval says so.
	clustered := &retrieve.ANNCheck{Depth: 10, Sample: retrieve.ExactAll, Queries: 156, N: 156, Perfect: 156, Recall: 1, Clusters: 62,
		CI95: metrics.Interval{Lo: 0.927, Hi: 1, Method: metrics.MethodBoundedWilson}, Export: store.ExportCost{Records: 38}}
	assert.Equal(t, "exact check of every one of the 156 queries: the store's recall@10 against exact search 1.000 [0.927, 1.000] (bounded-wilson-cc over 62 clusters of queries in families, n = 156), 156 of them with recall 1; its 38 vectors read back in process",
		ANNCheck(clustered))
	// The demo's store: 38 chunks, 12 to 14 a locale, under hybrid's depth 50:
	// the recall is at the depth of the exact lists, the one asked beside it.
	small := &retrieve.ANNCheck{Depth: 50, Measured: [2]int{12, 14}, Sample: retrieve.ExactAll, Queries: 156, N: 156, Perfect: 156, Recall: 1,
		CI95: metrics.Interval{Lo: 0.981, Hi: 1, Method: metrics.MethodRuleOfThree}, Export: store.ExportCost{Records: 38}}
	assert.Equal(t, "exact check of every one of the 156 queries: the store's recall@12–14 (50 asked; the store holds fewer records a query can match) against exact search 1.000 [0.981, 1.000] (rule-of-three, n = 156), 156 of them with recall 1; its 38 vectors read back in process",
		ANNCheck(small))
	all := &retrieve.ANNCheck{Depth: 10, Sample: retrieve.ExactAll, Queries: 156, N: 0, NoNeighbour: 156, Recall: math.NaN(), Export: store.ExportCost{Records: 38}}
	assert.Equal(t, "exact check of every one of the 156 queries: no query had an exact neighbour; 156 without an exact neighbour (no record of their locale) not counted; its 38 vectors read back in process",
		ANNCheck(all))
	g := outcome.New(retrieve.GateMinANNRecall, outcome.Fail)
	g.Threshold = 0.99
	g.Why = []outcome.Clause{{Code: outcome.ANNRecallBelow, Value: 0.982, Threshold: 0.99, N: 998, M: 50}}
	assert.Equal(t, "min_ann_recall 0.990: fail (the index's recall@50 against exact search, 0.982 over 998 queries, is below the floor 0.990)", ANNGate(g))

	res := &retrieve.RunResult{Cases: 100000, Chunks: 100000, Cards: 100000, Strategy: "hybrid", Store: "chroma", Embedder: "hash", K: 10, ANN: sample}
	sample.Gate = g
	assert.Equal(t, "**retrieval-gate retrieve**: 100000 cases retrieved from 100000 chunks of 100000 cards (strategy hybrid, store chroma, embedder hash, k = 10), written to run.jsonl.\n\n"+
		"Exact check of a sample of 1000 of the 100000 queries by case id: the store's recall@50 against exact search 0.982 [0.975, 0.988] (hall-t, n = 998), 974 of them with recall 1; 2 without an exact neighbour (no record of their locale) not counted; its 100000 vectors read back in 100 request(s), 1234567890 bytes.\n\n"+
		"❌ min_ann_recall 0.990: fail (the index's recall@50 against exact search, 0.982 over 998 queries, is below the floor 0.990).\n",
		Retrieve(res, "run.jsonl"))
}

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

// TestJudgeSummaryCost: the summary line rounds the estimated cost to
// format.CostDigits significant digits (tokens times a price leave float
// noise: 0.0007670999999999999); the JSON report keeps it in full.
func TestJudgeSummaryCost(t *testing.T) {
	for _, tc := range []struct {
		name                     string
		prompt, completion       int64
		pricePrompt, priceAnswer float64
		full, want               string
	}{
		{"float noise", 1234, 567, 0.0003, 0.0007, "0.0007670999999999999", "0.0007671"},
		{"one price", 3, 0, 0.1, 0.1, "0.00030000000000000003", "0.0003"},
		{"dollars", 123456, 789, 0.15, 0.6, "18.9918", "18.99"},
		{"whole part kept", 90_123_456, 0, 0.15, 0.6, "13518.5184", "13519"},
		{"nothing used", 0, 0, 0.15, 0.6, "0", "0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := &judge.Result{Prompt: judge.DefaultPrompt(), Format: judge.FormatJSON, PromptTokens: tc.prompt, CompletionTokens: tc.completion}
			s := summarize(res, &judge.Price{Prompt: tc.pricePrompt, Completion: tc.priceAnswer})
			require.NotNil(t, s.EstimatedCost)
			require.Equal(t, tc.full, format.Full(*s.EstimatedCost), "the figure the JSON writes")
			var b bytes.Buffer
			Judge(&b, res, s)
			assert.Contains(t, b.String(), fmt.Sprintf("judge: tokens: %d prompt, %d completion; estimated cost %s\n", tc.prompt, tc.completion, tc.want))
		})
	}
	// Without a price there is no cost.
	var b bytes.Buffer
	res := &judge.Result{Prompt: judge.DefaultPrompt(), Format: judge.FormatJSON, PromptTokens: 5}
	Judge(&b, res, summarize(res, nil))
	assert.Contains(t, b.String(), "judge: tokens: 5 prompt, 0 completion\n")
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

// The queries generate dropped because they held a secret are counted in its
// summary too, not only in the warning on standard error; no line when none was.
func TestGenerateSummarySecretDropped(t *testing.T) {
	var none, some bytes.Buffer
	Generate(&none, &generate.RunResult{Result: &generate.Result{Documents: 5}}, 0.8, 0, "out.jsonl", "", "")
	assert.NotContains(t, none.String(), "secret")
	Generate(&some, &generate.RunResult{Result: &generate.Result{Documents: 5, SecretDropped: 3}}, 0.8, 0, "out.jsonl", "", "")
	assert.Contains(t, some.String(), "generate: 3 query(ies) dropped: they held a secret (the same warning is on standard error)\n")
}

// summarize is judge.SummarizeContext with a context that does not end.
func summarize(res *judge.Result, price *judge.Price) *judge.Summary {
	s, err := judge.SummarizeContext(context.Background(), res, price)
	if err != nil {
		panic(err) // a context that does not end ends nothing
	}
	return s
}
