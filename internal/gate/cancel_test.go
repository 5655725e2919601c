package gate

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/input/casefile"
)

// precomputed adds n precomputed cases whose faithfulness score differs from
// case to case: below 10,000 cases their intervals are the histogram BCa,
// O(distinct values) a resample.
func precomputed(t *testing.T, n int) *Accumulator {
	t.Helper()
	a := NewAccumulator()
	t.Cleanup(a.Close)
	s := &Scorer{KB: kb, K: 5}
	for i := range n {
		add(t, a, s, casefile.Case{ID: fmt.Sprintf("c%d", i), Locale: "en", Line: i + 1,
			Scores: map[string]float64{"faithfulness": float64(i) / float64(n), "hit_at_k": float64(i % 2)}})
	}
	return a
}

// check's intervals were computed after the cases were read with no look at
// the context: 10,000 resamples of a group of 3,000 cases with distinct
// scores took seconds (14 s at 10,000 distinct values by binomials; about
// 0.4 s at 9,000 by the item draws used since), during which a signal went
// unheeded. ResultContext ends with the context's error; given
// a live one it is Result.
func TestResultContextStopsOnCancel(t *testing.T) {
	a := precomputed(t, 3000)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := a.ResultContext(ctx, Config{K: 5, Resamples: 10_000})
	require.ErrorIs(t, err, context.Canceled)
	assert.Nil(t, res)

	b := precomputed(t, 300)
	got, err := b.ResultContext(context.Background(), Config{K: 5, Resamples: 300})
	require.NoError(t, err)
	assert.Equal(t, b.Result(Config{K: 5, Resamples: 300}).Overall, got.Overall)
}
