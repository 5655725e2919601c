package judge_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/judge"
)

// agreeing is a result of n pairs judged twice, the grades differing a little.
func agreeing(n int) *judge.Result {
	res := &judge.Result{Repeat: 2}
	for i := range n {
		res.Pairs = append(res.Pairs, judge.Pair{QueryID: fmt.Sprintf("q%d", i/10), DocID: fmt.Sprintf("d%d", i)})
		res.Grades = append(res.Grades, []judge.Judgment{{Grade: i % 4, Valid: true}, {Grade: (i / 3) % 4, Valid: true}})
	}
	return res
}

// The self-agreement's bootstrap (2,000 resamples of every pair) ran after
// the judgments with no look at the context: 1.3 s at 100,000 pairs for
// each two repeats, and a signal went unheeded through it (judge --cache
// with every judgment cached gets there at once). SummarizeContext ends
// with the context's error; given a live one it is Summarize.
func TestSummarizeContextStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s, err := judge.SummarizeContext(ctx, agreeing(100_000), nil)
	require.ErrorIs(t, err, context.Canceled)
	assert.Nil(t, s)

	res := agreeing(500)
	got, err := judge.SummarizeContext(context.Background(), res, nil)
	require.NoError(t, err)
	assert.Equal(t, judge.Summarize(res, nil), got)
	require.Len(t, got.SelfAgreement, 1)
	assert.NotNil(t, got.SelfAgreement[0].CI95)
}
