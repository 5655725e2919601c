package generate_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/generate"
	"github.com/retrieval-gate/retrieval-gate/internal/input/kbfile"
	"github.com/retrieval-gate/retrieval-gate/internal/judge"
	"github.com/retrieval-gate/retrieval-gate/internal/llm"
)

// budgetServer answers every card with queries made of its first word and
// keeps a request budget as llm.Client does (ErrBudget once it is spent,
// counted in the order the calls come). A request about the card of the word
// first waits (at most late) for one about another card to come first: the
// worst order of two workers asking at once.
type budgetServer struct {
	mu     sync.Mutex
	left   int
	first  string
	late   time.Duration
	other  chan struct{}
	closed sync.Once
}

func (s *budgetServer) Complete(_ context.Context, r llm.Request) (*llm.Response, error) {
	user := r.Messages[len(r.Messages)-1].Content
	if strings.Contains(user, s.first) {
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
	word := "beta"
	if strings.Contains(user, "alpha") {
		word = "alpha"
	}
	return &llm.Response{Content: `{"questions": ["what is ` + word + `?"], "keywords": ["` + word + ` facts"]}`}, nil
}

// With a request budget (--max-requests) the cards it reaches are those of
// one worker asking card after card: the first card's queries, the second
// skipped over the budget, however the workers' requests come. The budget
// went to whichever worker asked first, so the same KB, seed and server
// wrote different cases from run to run (CONTRIBUTING.md, Determinism: the
// same inputs give byte-identical outputs; docs/judge.md, generate's
// --max-requests).
func TestGenerateBudgetGoesToCardsInOrder(t *testing.T) {
	cards := []kbfile.Card{
		{ID: "a", Locale: "en", Title: "Alpha", Text: "alpha is the first letter"},
		{ID: "b", Locale: "en", Title: "Beta", Text: "beta is the second letter"},
	}
	srv := &budgetServer{left: 1, first: "alpha", late: 300 * time.Millisecond, other: make(chan struct{})}
	res, err := generate.Generate(context.Background(), cards, generate.Options{Client: srv, Prompt: generate.DefaultPrompt(), Format: judge.FormatJSON,
		Questions: 1, Keywords: 1, Workers: 2, Jaccard: 0.8, MaxRequests: 1})
	require.NoError(t, err)
	var got []string
	for _, c := range res.Cases {
		got = append(got, c.ID+" "+c.Query)
	}
	assert.Equal(t, []string{"gen-a-1 what is alpha?", "gen-a-2 alpha facts"}, got)
	assert.Equal(t, 1, res.BudgetSkipped)
	assert.Equal(t, int64(1), res.Requests)

	// A budget that covers every card at its most: they are asked at once
	// (the second card's request comes first, the first's does not wait out
	// its delay), and every card is answered.
	srv = &budgetServer{left: 6, first: "alpha", late: time.Minute, other: make(chan struct{})}
	start := time.Now()
	res, err = generate.Generate(context.Background(), cards, generate.Options{Client: srv, Prompt: generate.DefaultPrompt(), Format: judge.FormatJSON,
		Questions: 1, Keywords: 1, Workers: 2, Jaccard: 0.8, MaxRequests: 6})
	require.NoError(t, err)
	assert.Len(t, res.Cases, 4)
	assert.Zero(t, res.BudgetSkipped)
	assert.Less(t, time.Since(start), 30*time.Second, "both cards asked at once")

	// generate's --max-requests reaches it: the first card of the sample gets
	// the budget.
	kb := &kbfile.KB{Path: "kb.jsonl", Cards: cards}
	first := generate.Sample(kb, 20, 1)[0]
	word := strings.Fields(first.Text)[0]
	srv = &budgetServer{left: 1, first: word, late: 300 * time.Millisecond, other: make(chan struct{})}
	o := generate.NewRunOptions()
	o.KB, o.Out, o.Questions, o.Keywords = "kb.jsonl", "cases.jsonl", 1, 1
	o.LLM = llm.Server{URL: "http://127.0.0.1:1", Concurrency: 2, MaxRequests: 1}
	require.NoError(t, o.Validate())
	var out strings.Builder
	run, err := generate.Run(context.Background(), generate.In{KB: kb, Out: &out, OutName: o.Out, Client: srv}, *o)
	require.NoError(t, err)
	assert.Equal(t, 2, run.Written)
	assert.Equal(t, 1, run.BudgetSkipped)
	assert.Contains(t, out.String(), `"id":"gen-`+first.ID+`-1"`)
}
