package metrics

import "context"

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
