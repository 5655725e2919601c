package baseline

import (
	"context"

	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

// Result is ResultContext with a context that does not end.
func (c *Comparer) Result() (*Comparison, error) {
	return c.ResultContext(context.Background())
}

// PairedStat is pairedStat with a context that does not end.
func PairedStat(info metrics.Info, h *metrics.Histogram, baseSum, curSum float64, resamples int, seed uint64) Stat {
	s, _ := pairedStat(context.Background(), info, h, baseSum, curSum, resamples, seed)
	return s
}
