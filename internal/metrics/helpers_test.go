package metrics

import (
	"context"
	"math"
)

// Test-only helpers: percentile bootstrap intervals the reference tests check the
// resamplers through (the commands use the BCa and Wilson intervals instead).

// CI95 is the percentile bootstrap 95% CI of the mean. Each resample draws the
// counts of the distinct values from Multinomial(n, count/n) by conditional
// binomials or by item draws (resampleHistogramMeans), which is exactly the
// distribution of resampling n items with replacement.
func (h *Histogram) CI95(resamples int, seed uint64) [2]float64 {
	if h.n == 0 || resamples <= 0 {
		return [2]float64{math.NaN(), math.NaN()}
	}
	vals, cnt := h.sorted()
	stats, _ := resampleHistogramMeans(context.Background(), vals, cnt, h.n, resamples, seed)
	return percentileCI95(stats)
}

// Distinct is the number of distinct values recorded.
func (h *Histogram) Distinct() int { return len(h.counts) }

// BootstrapMeansCI95 is the percentile bootstrap 95% CI of the mean of each of the
// cols series in x (row-major, n rows): each resample draws n row indices with
// replacement, shared by all series (so differences of series are paired).
func BootstrapMeansCI95(x []float64, n, cols, resamples int, seed uint64) [][2]float64 {
	stats := BootstrapMeans(x, n, cols, resamples, seed)
	out := make([][2]float64, cols)
	for c := range out {
		out[c] = PercentileCI95(stats[c])
	}
	return out
}

// PercentileCI95 is the percentile bootstrap 95% interval of resampled statistics:
// their 2.5% and 97.5% type-7 quantiles (stats is sorted in place). NaN when empty.
func PercentileCI95(stats []float64) [2]float64 {
	if len(stats) == 0 {
		return [2]float64{math.NaN(), math.NaN()}
	}
	return percentileCI95(stats)
}
