package metrics

import (
	"context"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// DefaultSeed is the fixed bootstrap seed: the same inputs give byte-identical reports.
const DefaultSeed uint64 = 1

// DefaultResamples is the number of bootstrap (and randomization-test) resamples
// of every interval and p-value, unless a command is told otherwise.
const DefaultResamples = 10000

// NewRand returns the deterministic generator every bootstrap and permutation test uses.
func NewRand(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
}

// Quantile is the R type-7 sample quantile (linear interpolation between order
// statistics) of sorted xs, q in [0,1].
func Quantile(sorted []float64, q float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	h := float64(n-1) * q
	lo := int(math.Floor(h))
	if lo >= n-1 {
		return sorted[n-1]
	}
	return sorted[lo] + (h-float64(lo))*(sorted[lo+1]-sorted[lo])
}

// Histogram holds a sample as distinct values and their counts. Its memory grows
// with the number of distinct values, not with the sample size, and its bootstrap
// draws the resampled counts (a multinomial): the same distribution as
// resampling items, at a cost bounded by the distinct values (a binomial per
// value, or item draws where there are at most 32 items per value:
// resampleHistogramMeans).
type Histogram struct {
	counts map[float64]int64
	n      int64
}

// NewHistogram returns an empty histogram.
func NewHistogram() *Histogram { return &Histogram{counts: map[float64]int64{}} }

// Add records one value.
func (h *Histogram) Add(x float64) {
	h.counts[x]++
	h.n++
}

// AddN records n (> 0) occurrences of one value: n calls of Add.
func (h *Histogram) AddN(x float64, n int64) {
	h.counts[x] += n
	h.n += n
}

// Merge adds every value of o.
func (h *Histogram) Merge(o *Histogram) {
	for v, c := range o.counts {
		h.counts[v] += c
	}
	h.n += o.n
}

// N is the number of values recorded.
func (h *Histogram) N() int64 { return h.n }

// sorted returns the distinct values ascending and their counts.
func (h *Histogram) sorted() ([]float64, []int64) {
	vals := make([]float64, 0, len(h.counts))
	for v := range h.counts {
		vals = append(vals, v)
	}
	slices.Sort(vals)
	cnt := make([]int64, len(vals))
	for i, v := range vals {
		cnt[i] = h.counts[v]
	}
	return vals, cnt
}

// Mean is the arithmetic mean Σ v·count / n, summed in ascending value order so the
// result does not depend on the order values were added. NaN when empty.
func (h *Histogram) Mean() float64 {
	if h.n == 0 {
		return math.NaN()
	}
	vals, cnt := h.sorted()
	s := 0.0
	for i, v := range vals {
		s += v * float64(cnt[i])
	}
	return s / float64(h.n)
}

// resampleHistogramMeans returns the means of `resamples` multinomial resamples of
// the histogram (vals, cnt) of n items. Two exact samplers of that multinomial
// exist, and one is chosen per call from D = len(vals) and n alone
// (drawItems), so the same histogram always gets the same draws:
//   - resampleBinomialMeans, one conditional binomial per distinct value: D
//     gonum binomial draws a resample (a rejection step with Lgamma, tan, exp
//     and log when a count is 25 or more, that many uniform draws below),
//     whatever n is;
//   - resampleItemMeans, n uniform draws of an item of the expanded sample,
//     counted per distinct value: n cheap draws and two passes over D.
//
// Both end with ctx.Err() soon after ctx ends (checked every 16 resamples:
// 10,000 resamples of 9,000 distinct values among 9,000 items take about
// 0.4 s by item draws, where binomials took about 13 s).
func resampleHistogramMeans(ctx context.Context, vals []float64, cnt []int64, n int64, resamples int, seed uint64) ([]float64, error) {
	if drawItems(len(vals), n) {
		return resampleItemMeans(ctx, vals, cnt, n, resamples, seed)
	}
	return resampleBinomialMeans(ctx, vals, cnt, n, resamples, seed)
}

// itemDrawsMinDistinct and itemDrawsMaxPerDistinct choose the histogram
// bootstrap's sampler (drawItems). BenchmarkHistogramResample (BENCHMARKS.md,
// "The histogram bootstrap and the sign-flip test by cheap draws", two runs
// on a loaded 2-core machine) measured a resample at 100 to 1,100 ns per
// distinct value by binomials (more as the counts grow, and past the
// caches) and at 3 to 5 ns per item by item draws up to tens of thousands of
// items (4 to 14 ns at 144,000, 8 to 32 ns at 576,000). Item draws were 18
// to 92 times the cheaper with every value once to four times, 4 to 13 times
// at 16 items per value, 1.6 to 3 times at 32; at 64 they ranged from 1.7
// times the cheaper to twice the dearer (on 9,000 values). Hence:
//   - item draws up to itemDrawsMaxPerDistinct items per distinct value,
//     binomials beyond (where the counts are large and few binomials cover
//     many items);
//   - binomials below itemDrawsMinDistinct distinct values whatever n is: a
//     resample costs at most about 20 µs there, 10,000 of them 0.2 s, so
//     little is saved, and every interval of few distinct values keeps the
//     draws, and so the bytes, it had before item draws existed. The
//     repository's goldens and demos have at most 24 distinct values in a
//     group, and no test computes an interval of 25 to 63; above them, its
//     tests of 85 to 151 values among 10,000 items keep binomials (more than
//     32 items per value), and those that take item draws (268 to 9,000
//     values: cancellation, and two calls of one sampler compared) assert
//     no value the binomials drew.
const (
	itemDrawsMinDistinct    = 64
	itemDrawsMaxPerDistinct = 32
)

// drawItems reports whether the histogram bootstrap of n items with d
// distinct values draws items (resampleItemMeans) rather than binomials
// (and n < 2³¹, so that an item's value index fits the int32 it is kept in).
func drawItems(d int, n int64) bool {
	return d >= itemDrawsMinDistinct && n <= itemDrawsMaxPerDistinct*int64(d) && n <= math.MaxInt32
}

// resampleBinomialMeans draws each resample's counts as sequential conditional
// binomials: the count of value i is Binomial(left, cnt[i]/Σ_{j≥i} cnt[j]) of
// the `left` items not yet given a value, the last value takes the rest.
// O(distinct values) binomial draws per resample.
func resampleBinomialMeans(ctx context.Context, vals []float64, cnt []int64, n int64, resamples int, seed uint64) ([]float64, error) {
	// rest[i] = Σ_{j≥i} cnt[j]
	rest := make([]int64, len(cnt)+1)
	for i := len(cnt) - 1; i >= 0; i-- {
		rest[i] = rest[i+1] + cnt[i]
	}
	src := rand.NewPCG(seed, 0x9e3779b97f4a7c15)
	stats := make([]float64, resamples)
	for b := range stats {
		if b&15 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		left := n
		s := 0.0
		for i, v := range vals {
			if left == 0 {
				break
			}
			var k int64
			if i == len(vals)-1 || rest[i] == cnt[i] {
				k = left
			} else {
				p := float64(cnt[i]) / float64(rest[i])
				k = int64(distuv.Binomial{N: float64(left), P: p, Src: src}.Rand())
			}
			s += v * float64(k)
			left -= k
		}
		stats[b] = s / float64(n)
	}
	return stats, nil
}

// resampleItemMeans draws each resample as the bootstrap defines it: n items
// of the expanded sample (cnt[i] copies of vals[i]) uniformly with
// replacement, counted per distinct value; the mean is then summed in
// ascending value order, Σ vals[i]·k[i] / n, as resampleBinomialMeans sums it.
// O(n) cheap draws per resample; the expanded sample holds n indices
// (drawItems bounds n by a multiple of the distinct values).
func resampleItemMeans(ctx context.Context, vals []float64, cnt []int64, n int64, resamples int, seed uint64) ([]float64, error) {
	items := make([]int32, 0, n)
	for i, c := range cnt {
		for range c {
			items = append(items, int32(i))
		}
	}
	k := make([]int64, len(vals))
	src := rand.NewPCG(seed, 0x9e3779b97f4a7c15)
	stats := make([]float64, resamples)
	for b := range stats {
		if b&15 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		clear(k)
		for range n {
			k[items[uniformBelow(src, uint64(n))]]++
		}
		s := 0.0
		for i, v := range vals {
			s += v * float64(k[i])
		}
		stats[b] = s / float64(n)
	}
	return stats, nil
}

// uniformBelow is a uniform integer in [0, n), n > 0, from src: Lemire's
// multiply-and-reject ("Fast random integer generation in an interval", 2019),
// exact (no modulo bias), as math/rand/v2's Rand.Uint64N, without the
// interface call per draw.
func uniformBelow(src *rand.PCG, n uint64) uint64 {
	hi, lo := bits.Mul64(src.Uint64(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(src.Uint64(), n)
		}
	}
	return hi
}

// Values returns the distinct values ascending and their counts.
func (h *Histogram) Values() ([]float64, []int64) { return h.sorted() }
