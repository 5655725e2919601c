package gate

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/input/casefile"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

// TestGroupOfEveryCellNotBootstrappedAgain: a type or a locale that holds
// every case of the run has the overall group's summaries, copied, not
// computed again (on 9,000 continuous precomputed scores of one type and one
// locale, the three groups' BCa intervals were the same work three times);
// a group of some of the cells still gets its own.
func TestGroupOfEveryCellNotBootstrappedAgain(t *testing.T) {
	var calls atomic.Int64
	t.Cleanup(func() { summarize = metrics.SummarizeContext })
	summarize = func(ctx context.Context, h *metrics.Histogram, resamples int, seed uint64, lo, hi float64) (metrics.Summary, error) {
		calls.Add(1)
		return metrics.SummarizeContext(ctx, h, resamples, seed, lo, hi)
	}
	s := &Scorer{KB: kb, K: 5}
	run := func(locales ...string) *Result {
		a := NewAccumulator()
		for i := range 40 {
			ret := []string{"b", "a"}
			if i%3 == 0 {
				ret = []string{"c"}
			}
			add(t, a, s, casefile.Case{ID: fmt.Sprintf("c%d", i), Locale: locales[i%len(locales)], Line: i + 1,
				Gold: []string{"a"}, Retrieved: rs(ret...), HasRetrieved: true})
		}
		calls.Store(0)
		return a.Result(Config{K: 5, ReferenceLocale: "en", Resamples: 200})
	}

	one := run("en")
	require.Len(t, one.ByType, 1)
	require.Len(t, one.ByLocale, 1)
	assert.Equal(t, int64(metrics.NumCase), calls.Load(), "one interval per measure: the overall group's")
	assert.Equal(t, one.Overall.Metrics, one.ByType[0].Metrics)
	assert.Equal(t, one.Overall.Metrics, one.ByLocale[0].Metrics)
	assert.Equal(t, "golden", one.ByType[0].Name)
	assert.Equal(t, "en", one.ByLocale[0].Name)
	assert.Equal(t, one.Overall.N, one.ByLocale[0].N)

	two := run("en", "de")
	require.Len(t, two.ByLocale, 2)
	assert.Equal(t, int64(3*metrics.NumCase), calls.Load(), "overall, and each locale (the one type is every cell)")
	assert.Equal(t, two.Overall.Metrics, two.ByType[0].Metrics)
	assert.NotEqual(t, two.Overall.Metrics, two.ByLocale[0].Metrics)

}
