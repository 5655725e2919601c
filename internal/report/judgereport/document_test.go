package judgereport_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/judge"
	"github.com/retrieval-gate/retrieval-gate/internal/llm"
	"github.com/retrieval-gate/retrieval-gate/internal/report/judgereport"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// fixture is a judged pool of 12 queries × 3 documents, two repeats that
// disagree on a few pairs (self-agreement with its interval), one answer
// unparseable and one over the budget, from a batch run, with a price.
func fixture() (*judge.Result, *judge.Summary, judgereport.Meta) {
	res := &judge.Result{Repeat: 2, Model: "m<1>", Prompt: &judge.Prompt{Version: "relevance-v2", Hash: "sha256:ab"}, Format: judge.FormatText, FellBack: true,
		Requests: 70, Cached: 2, BadAnswerRetries: 3, PromptTokens: 123456, CompletionTokens: 789, ResponsesWithoutUsage: 1,
		Batch: &judge.BatchStats{Mode: "api", Provider: llm.ProviderOpenAI, BatchID: "batch_1", InputFileID: "file-1", Status: llm.BatchCompleted, Submitted: 70, Answered: 68,
			Failed: 1, Missing: 1, New: 66, Cached: 2, WaitSeconds: 12.5, RequestCounts: &llm.RequestCounts{Total: 70, Completed: 68, Failed: 1},
			Calls: &llm.CallCounts{Submit: 2, Poll: 9, Download: 2}},
		Known: []judge.KnownLabel{{QueryID: "q00", DocID: "k", Relevance: 2}}}
	pps := 66 / 12.5
	res.Batch.PairsPerSecond = &pps
	for q := range 12 {
		for d := range 3 {
			res.Pairs = append(res.Pairs, judge.Pair{QueryID: fmt.Sprintf("q%02d", q), DocID: fmt.Sprintf("d%d", d)})
			g := (q + d) % 4
			g2 := g
			if q%4 == 0 && d == 1 {
				g2 = (g + 1) % 4
			}
			res.Grades = append(res.Grades, []judge.Judgment{{Grade: g, Valid: true}, {Grade: g2, Valid: true}})
		}
	}
	res.Grades[5][1] = judge.Judgment{Cause: judge.CauseUnparseable, Detail: `"no grade" <here>`}
	res.Grades[7][0] = judge.Judgment{Cause: judge.CauseBudget, Detail: "the request budget (--max-requests) was spent"}
	price := &judge.Price{Prompt: 0.15, Completion: 0.6}
	return res, summarize(res, price), judgereport.Meta{Runs: []string{"dense", "hybrid"}, K: 10, Price: price}
}

// TestReportGolden pins judge's --json report (retrieval-gate/judge@1): every
// key in its place, every number a format.Float.
func TestReportGolden(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, judgereport.New(fixture()).WriteJSON(&b))
	golden := filepath.Join("testdata", "judge.json")
	if *update {
		require.NoError(t, os.WriteFile(golden, b.Bytes(), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), b.String())
}

// TestReportNumbersAreFormatFloats: the numbers encoding/json would write in
// another form are written as every other report writes them (format.Float:
// the shortest 'g' form), and undefined values are null.
func TestReportNumbersAreFormatFloats(t *testing.T) {
	res, s, meta := fixture()
	meta.Price = &judge.Price{Prompt: 0.00005, Completion: 2e6}
	c := 0.00000123
	s.EstimatedCost = &c
	s.SelfAgreement[0].Kappa = nil
	var b bytes.Buffer
	require.NoError(t, judgereport.New(res, s, meta).WriteJSON(&b))
	var doc map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(b.Bytes(), &doc))
	assert.JSONEq(t, `{"completion": 2e+06, "prompt": 5e-05}`, string(doc["price_per_1k"]))
	assert.Contains(t, b.String(), `"price_per_1k": {
    "completion": 2e+06,
    "prompt": 5e-05
  },
  "estimated_cost": 1.23e-06,`)
	assert.Contains(t, b.String(), `"kappa": null,`)
}

// TestReportCostInFull: the JSON keeps the estimated cost to the last bit,
// float noise included (only judge's summary line rounds it for people).
func TestReportCostInFull(t *testing.T) {
	res, s, meta := fixture()
	c := 0.0007670999999999999
	s.EstimatedCost = &c
	var b bytes.Buffer
	require.NoError(t, judgereport.New(res, s, meta).WriteJSON(&b))
	assert.Contains(t, b.String(), `"estimated_cost": 0.0007670999999999999,`)
}

// summarize is judge.SummarizeContext with a context that does not end.
func summarize(res *judge.Result, price *judge.Price) *judge.Summary {
	s, err := judge.SummarizeContext(context.Background(), res, price)
	if err != nil {
		panic(err) // a context that does not end ends nothing
	}
	return s
}
