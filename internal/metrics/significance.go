package metrics

import (
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// Resampling statistics over many series at once. The data of `cols` series over
// the same n items (queries) is one flat row-major slice x[i*cols+c], so that one
// index (or sign) draw per resample serves every series. Resamples are split into
// fixed blocks, each with its own generator NewRand(seed + b·φ64); blocks run in
// parallel and results land at fixed positions, so the output depends on the seed
// only, never on GOMAXPROCS.

// ExactResamplingBudget bounds n × resamples for Monte Carlo resampling. Above it,
// compare's intervals use the Cornish–Fisher approximation (MeanCI95Normal) and its
// p-values that have no exact form the saddlepoint approximation (LargeSampleSignFlipP).
const ExactResamplingBudget = 20_000_000

// ResamplingIsExact reports whether n items with `resamples` resamples are
// resampled by Monte Carlo (true) or approximated (false).
func ResamplingIsExact(n, resamples int) bool {
	return int64(n)*int64(resamples) <= ExactResamplingBudget
}

const resampleBlock = 64

// blockRand is the seed of block b (a block index, never negative).
func blockRand(seed uint64, b int) uint64 {
	return seed + uint64(b)*0x9e3779b97f4a7c15 //nolint:gosec // G115: b is a block index in [0, nblocks)
}

// parallelBlocks calls fn(b) for every block b in [0, nblocks) on GOMAXPROCS goroutines.
func parallelBlocks(nblocks int, fn func(b int)) {
	workers := min(runtime.GOMAXPROCS(0), nblocks)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				b := int(next.Add(1) - 1)
				if b >= nblocks {
					return
				}
				fn(b)
			}
		}()
	}
	wg.Wait()
}

// BootstrapMeans returns, for each of the cols series in x (row-major, n rows),
// the means of `resamples` bootstrap resamples, stats[c][b]; resample b draws n
// row indices with replacement, shared by all series. Nil stats when n = 0.
func BootstrapMeans(x []float64, n, cols, resamples int, seed uint64) [][]float64 {
	stats := make([][]float64, cols)
	if n == 0 || resamples <= 0 {
		return stats
	}
	for c := range stats {
		stats[c] = make([]float64, resamples)
	}
	nblocks := (resamples + resampleBlock - 1) / resampleBlock
	parallelBlocks(nblocks, func(b int) {
		r := NewRand(blockRand(seed, b))
		sums := make([]float64, cols)
		for s := b * resampleBlock; s < min((b+1)*resampleBlock, resamples); s++ {
			clear(sums)
			for range n {
				i := r.IntN(n) * cols
				row := x[i : i+cols]
				for c, v := range row {
					sums[c] += v
				}
			}
			for c := range sums {
				stats[c][s] = sums[c] / float64(n)
			}
		}
	})
	return stats
}

// SignFlipPValues is the two-sided paired randomization (sign-flip) test of each of
// the cols series of differences d (row-major, n rows): under H0 each difference is
// as likely negated, p = (1 + #{|Σ s_i d_i| ≥ |Σ d_i|}) / (resamples + 1) (Phipson &
// Smyth 2010), with one sign vector per resample shared by all series.
func SignFlipPValues(d []float64, n, cols, resamples int, seed uint64) []float64 {
	out := make([]float64, cols)
	if n == 0 || resamples <= 0 {
		for c := range out {
			out[c] = 1
		}
		return out
	}
	obs := make([]float64, cols)
	tol := make([]float64, cols)
	for i := range n {
		for c := range cols {
			v := d[i*cols+c]
			obs[c] += v
			tol[c] += math.Abs(v)
		}
	}
	for c := range cols {
		obs[c] = math.Abs(obs[c])
		tol[c] *= 1e-9 // |T*| within rounding of |T| counts as "as extreme"
	}
	nblocks := (resamples + resampleBlock - 1) / resampleBlock
	counts := make([][]int, nblocks)
	parallelBlocks(nblocks, func(b int) {
		r := NewRand(blockRand(seed, b))
		sums := make([]float64, cols)
		cnt := make([]int, cols)
		for range min((b+1)*resampleBlock, resamples) - b*resampleBlock {
			clear(sums)
			var bits uint64
			for i := range n {
				if i&63 == 0 {
					bits = r.Uint64()
				}
				row := d[i*cols : (i+1)*cols]
				if bits&1 == 1 {
					for c, v := range row {
						sums[c] -= v
					}
				} else {
					for c, v := range row {
						sums[c] += v
					}
				}
				bits >>= 1
			}
			for c := range sums {
				if math.Abs(sums[c]) >= obs[c]-tol[c] {
					cnt[c]++
				}
			}
		}
		counts[b] = cnt
	})
	for c := range out {
		total := 0
		for b := range counts {
			total += counts[b][c]
		}
		out[c] = float64(1+total) / float64(resamples+1)
	}
	return out
}

// z975 is the 97.5% quantile of the standard normal.
const z975 = 1.959963984540054

// MeanCI95Normal approximates the percentile bootstrap 95% CI of the mean of xs
// for large n: the Cornish–Fisher expansion of the bootstrap distribution of the
// mean, x̄ + σ̂/√n · (z + γ̂(z² − 1)/(6√n)), with the plug-in (1/n) σ̂ and skewness γ̂.
func MeanCI95Normal(xs []float64) [2]float64 {
	n := float64(len(xs))
	if len(xs) == 0 {
		return [2]float64{math.NaN(), math.NaN()}
	}
	mean := 0.0
	for _, v := range xs {
		mean += v
	}
	mean /= n
	m2, m3 := 0.0, 0.0
	for _, v := range xs {
		d := v - mean
		m2 += d * d
		m3 += d * d * d
	}
	m2 /= n
	m3 /= n
	if m2 == 0 {
		return [2]float64{mean, mean}
	}
	sd := math.Sqrt(m2)
	skew := m3 / (sd * sd * sd)
	se := sd / math.Sqrt(n)
	q := func(z float64) float64 { return mean + se*(z+skew*(z*z-1)/(6*math.Sqrt(n))) }
	return [2]float64{q(-z975), q(z975)}
}

// Holm is Holm's (1979) step-down adjustment of p-values for multiple comparisons:
// with p sorted ascending, adj_(j) = max_{i ≤ j} min(1, (m − i + 1) p_(i)).
func Holm(p []float64) []float64 {
	m := len(p)
	order := make([]int, m)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case p[a] < p[b]:
			return -1
		case p[a] > p[b]:
			return 1
		}
		return 0
	})
	adj := make([]float64, m)
	run := 0.0
	for j, i := range order {
		v := min(1, float64(m-j)*p[i])
		run = max(run, v)
		adj[i] = run
	}
	return adj
}
