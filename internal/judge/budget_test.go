package judge_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/input/kbfile"
	"github.com/retrieval-gate/retrieval-gate/internal/judge"
	"github.com/retrieval-gate/retrieval-gate/internal/llm"
)

// budgetJudge grades every pair 2 and keeps a request budget as llm.Client
// does (ErrBudget once it is spent, counted in the order the calls come). A
// request about the document holding first waits (at most late) for one
// about another document to come first: the worst order of two workers
// asking at once.
type budgetJudge struct {
	mu     sync.Mutex
	left   int
	first  string
	late   time.Duration
	other  chan struct{}
	closed sync.Once
}

func (s *budgetJudge) Complete(_ context.Context, r llm.Request) (*llm.Response, error) {
	if strings.Contains(r.Messages[len(r.Messages)-1].Content, s.first) {
		select {
		case <-s.other:
		case <-time.After(s.late):
		}
	} else {
		s.closed.Do(func() { close(s.other) })
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.left == 0 {
		return nil, llm.ErrBudget
	}
	s.left--
	return &llm.Response{Content: `{"reason": "it answers", "score": 2}`}, nil
}

// With a request budget (--max-requests) the judgments it reaches are those
// of one worker judging in pool order: the first pair labelled, the second
// unjudged over the budget, however the workers' requests come. The budget
// went to whichever worker asked first, so the same pool, cache and server
// gave different labels from run to run, and evaluate, whose --max-requests
// is the judge's, different reports (CONTRIBUTING.md, Determinism;
// docs/judge.md, --max-requests).
func TestJudgeBudgetGoesToPairsInOrder(t *testing.T) {
	pairs := []judge.Pair{
		{QueryID: "q1", Query: "first letter", DocID: "a", Document: "alpha is the first letter"},
		{QueryID: "q2", Query: "second letter", DocID: "b", Document: "beta is the second letter"},
	}
	srv := &budgetJudge{left: 1, first: "alpha", late: 300 * time.Millisecond, other: make(chan struct{})}
	res, err := judge.Judge(context.Background(), pairs, judge.Options{Client: srv, Prompt: judge.DefaultPrompt(), Workers: 2, MaxRequests: 1})
	require.NoError(t, err)
	assert.True(t, res.Grades[0][0].Valid, "the first pair of the pool has the budget")
	assert.Equal(t, judge.CauseBudget, res.Grades[1][0].Cause)
	assert.Equal(t, int64(1), res.Requests)

	// A budget that covers every judgment at its most: they are asked at once
	// (the second pair's request comes first, the first's does not wait out
	// its delay), and every pair is labelled.
	srv = &budgetJudge{left: 6, first: "alpha", late: time.Minute, other: make(chan struct{})}
	start := time.Now()
	res, err = judge.Judge(context.Background(), pairs, judge.Options{Client: srv, Prompt: judge.DefaultPrompt(), Workers: 2, MaxRequests: 6})
	require.NoError(t, err)
	assert.True(t, res.Grades[0][0].Valid)
	assert.True(t, res.Grades[1][0].Valid)
	assert.Less(t, time.Since(start), 30*time.Second, "both pairs asked at once")

	// judge's --max-requests reaches it.
	dir := t.TempDir()
	kbPath := filepath.Join(dir, "kb.jsonl")
	require.NoError(t, os.WriteFile(kbPath, []byte(`{"id": "a", "title": "Alpha", "text": "alpha is the first letter"}
{"id": "b", "title": "Beta", "text": "beta is the second letter"}
`), 0o600))
	kb, err := kbfile.Load(context.Background(), kbPath)
	require.NoError(t, err)
	run := `{"id": "q1", "query": "first letter", "retrieved": [{"id": "a"}]}` + "\n" + `{"id": "q2", "query": "second letter", "retrieved": [{"id": "b"}]}` + "\n"
	o := judge.NewRunOptions()
	o.K, o.LLM = 1, llm.Server{URL: "http://127.0.0.1:1", Concurrency: 2, MaxRequests: 1}
	o.Runs = []judge.RunFile{{Name: "r", Path: "run.jsonl"}}
	o.KB, o.JudgmentsOut, o.Cache = kbPath, "judgments.jsonl", "none"
	require.NoError(t, o.Validate())
	srv = &budgetJudge{left: 1, first: "alpha", late: 300 * time.Millisecond, other: make(chan struct{})}
	out, err := judge.Run(context.Background(), judge.In{KB: kb, Runs: []judge.RunReader{{Name: "r", File: "run.jsonl", R: strings.NewReader(run)}}, Client: srv}, *o)
	require.NoError(t, err)
	require.Len(t, out.Result.Pairs, 2)
	assert.Equal(t, "q1", out.Result.Pairs[0].QueryID)
	assert.True(t, out.Result.Grades[0][0].Valid, "the first pair of the pool has the budget")
	assert.Equal(t, judge.CauseBudget, out.Result.Grades[1][0].Cause)
}
