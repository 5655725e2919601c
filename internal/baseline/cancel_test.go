package baseline

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/gate"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

// The paired sign-flip tests of check --baseline ran after the cases were
// read with no look at the context: thousands of distinct nDCG differences
// cost seconds a group (10,000 resamples of 5,000 distinct |d| took 2.5 s
// by binomials; by the coins used since, 9,000 take under a second), and a
// signal went unheeded through them. ResultContext ends with the
// context's error; given a live one it is Result.
func TestResultContextStopsOnCancel(t *testing.T) {
	const n = 3000
	var base strings.Builder
	for i := range n {
		fmt.Fprintf(&base, `{"id":"c%d","type":"golden","locale":"en","gold":["g"],"scores":{"retrieval_hit_at_k":1,"retrieval_recall_at_k":1,"retrieval_ndcg_at_k":%g},"rank":1,"top":["g"]}`+"\n", i, math.Sqrt(float64(i)/n))
	}
	b := load(t, base.String())
	comparer := func(resamples int) *Comparer {
		c := NewComparer(b, Options{K: 5, Resamples: resamples})
		for i := range n {
			id := fmt.Sprintf("c%d", i)
			r := gate.CaseResult{File: "run.jsonl", Line: i + 1, ID: id, Type: "golden", Locale: "en", Scored: true}
			for m := range r.Scores {
				r.Scores[m], r.Has[m] = 1, true
			}
			r.Scores[metrics.NumCase-1] = float64(i) / n // nDCG: a distinct difference a case, on no lattice
			cu := Current{IDHash: IDHash(id), GoldHash: GoldHash([]string{"g"}), Ranked: true, Rank: 1, Top: []string{"g"}}
			c.Add(&r, &CaseLine{ID: id, Gold: []string{"g"}, Query: "q"}, &cu)
		}
		return c
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := comparer(10_000).ResultContext(ctx)
	require.ErrorIs(t, err, context.Canceled)
	assert.Nil(t, res)

	got, err := comparer(200).ResultContext(context.Background())
	require.NoError(t, err)
	want, err := comparer(200).Result()
	require.NoError(t, err)
	assert.Equal(t, fmt.Sprint(want.Overall), fmt.Sprint(got.Overall)) // printed: a NaN MDD is not equal to itself
	assert.Equal(t, TestSignFlipMC, got.Overall.Stats[metrics.NumCase-1].Test, "the randomization test, the one that resamples")
}
