package metrics

import (
	"context"
	"math"
	"slices"
)

// percentileCI95 is the percentile bootstrap 95% interval: the 2.5% and 97.5%
// type-7 quantiles of the resampled statistics (sorted in place).
func percentileCI95(stats []float64) [2]float64 {
	slices.Sort(stats)
	return [2]float64{Quantile(stats, 0.025), Quantile(stats, 0.975)}
}

// StatisticCI95Context is the percentile bootstrap 95% CI of any statistic of
// n paired items (test-only since judge's self-agreement moved to
// KappaCI95Context): each resample draws n indices with replacement and calls
// stat; resamples where stat returns NaN (undefined, e.g. kappa of a single
// class) are skipped. It ends with ctx.Err() soon after ctx ends (checked
// before each resample, a draw of n indices and a call of stat).
func StatisticCI95Context(ctx context.Context, n, resamples int, seed uint64, stat func(idx []int) float64) ([2]float64, error) {
	if n == 0 || resamples <= 0 {
		return [2]float64{math.NaN(), math.NaN()}, nil
	}
	r := NewRand(seed)
	idx := make([]int, n)
	stats := make([]float64, 0, resamples)
	for range resamples {
		if err := ctx.Err(); err != nil {
			return [2]float64{math.NaN(), math.NaN()}, err
		}
		for i := range idx {
			idx[i] = r.IntN(n)
		}
		if s := stat(idx); !math.IsNaN(s) {
			stats = append(stats, s)
		}
	}
	if len(stats) == 0 {
		return [2]float64{math.NaN(), math.NaN()}, nil
	}
	return percentileCI95(stats), nil
}

// WeightedKappaCI95Context is the percentile bootstrap 95% CI of WeightedKappa
// over paired ratings, resampling pairs (StatisticCI95Context); undefined
// resamples are skipped. It ends with ctx.Err() soon after ctx ends. The
// reference the counts' bootstrap (KappaCI95Context) is tested against; judge's
// self-agreement used it until its interval of repeats that all agree was
// [1, 1].
func WeightedKappaCI95Context(ctx context.Context, first, second []int, k int, w [][]float64, resamples int, seed uint64) ([2]float64, error) {
	m := make([][]int, k)
	for i := range m {
		m[i] = make([]int, k)
	}
	return StatisticCI95Context(ctx, len(first), resamples, seed, func(idx []int) float64 {
		for i := range m {
			clear(m[i])
		}
		for _, x := range idx {
			m[first[x]][second[x]]++
		}
		return WeightedKappa(m, w)
	})
}

// WeightedKappaCI95 is WeightedKappaCI95Context with a context that does not end.
func WeightedKappaCI95(first, second []int, k int, w [][]float64, resamples int, seed uint64) [2]float64 {
	ci, _ := WeightedKappaCI95Context(context.Background(), first, second, k, w, resamples, seed)
	return ci
}

// Summarize is SummarizeContext with a context that does not end.
func Summarize(h *Histogram, resamples int, seed uint64, lo, hi float64) Summary {
	s, _ := SummarizeContext(context.Background(), h, resamples, seed, lo, hi)
	return s
}
