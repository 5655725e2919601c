package metrics

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// moments is the mean and the unbiased variance of xs.
func moments(xs []float64) (mean, variance float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		variance += (x - mean) * (x - mean)
	}
	return mean, variance / float64(len(xs)-1)
}

// The histogram bootstrap's two samplers, chosen by drawItems from the
// distinct values d and the items n: binomials below itemDrawsMinDistinct
// distinct values (every interval of the repository's tests and demos with
// few distinct values keeps its bytes) and above itemDrawsMaxPerDistinct
// items per distinct value (a binomial per value is then the cheaper) or
// from 2³¹ items, item draws otherwise.
func TestDrawItemsChoice(t *testing.T) {
	tests := []struct {
		name string
		d    int
		n    int64
		want bool
	}{
		{"the demos: 24 values of 132 cases", 24, 132, false},
		{"just below the fewest distinct values", itemDrawsMinDistinct - 1, itemDrawsMinDistinct - 1, false},
		{"the fewest distinct values, once each", itemDrawsMinDistinct, itemDrawsMinDistinct, true},
		{"the most items per distinct value", 1000, 1000 * itemDrawsMaxPerDistinct, true},
		{"one item more", 1000, 1000*itemDrawsMaxPerDistinct + 1, false},
		{"151 values of 10,000 items (TestHallTMatchesBCaAtLargeN)", 151, 10_000, false},
		{"9,000 continuous scores", 9000, 9000, true},
		{"2,000 values twice (the cancellation test)", 2000, 4000, true},
		{"2³¹ − 1 items", 1 << 27, math.MaxInt32, true},
		{"2³¹ items: beyond the int32 value index", 1 << 27, math.MaxInt32 + 1, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, drawItems(tc.d, tc.n))
		})
	}
}

// Item draws are the bootstrap itself, so the resampled means have mean x̄
// and variance σ²/n (σ² the histogram's variance with divisor n). The
// tolerances are 4 standard errors of the B-resample estimates: the mean's
// √(σ²/n/B), the variance's √((μ₄(x̄*) − (σ²/n)²)/B) with μ₄(x̄*) = μ₄/n³ +
// 3(n−1)σ⁴/n³ the fourth central moment of a mean of n draws. A sampler that
// drops one draw shifts the mean by x̄/n, 9 to 13 errors here; one that never
// draws the last item by 18 to 40.
func TestResampleItemMeansMoments(t *testing.T) {
	const resamples = 20_000
	eachOnce := func(d int) ([]float64, []int64) {
		vals, cnt := make([]float64, d), make([]int64, d)
		for i := range d {
			x := float64(i+1) / float64(d)
			vals[i], cnt[i] = x*x, 1
		}
		return vals, cnt
	}
	uneven := func() ([]float64, []int64) {
		vals, cnt := make([]float64, 40), make([]int64, 40)
		for i := range vals {
			vals[i], cnt[i] = float64(i)/10-1, int64(1+(i*7)%5)
		}
		return vals, cnt
	}
	tests := map[string]func() ([]float64, []int64){
		"three values, skewed": func() ([]float64, []int64) { return []float64{0, 1, 10}, []int64{20, 20, 10} },
		"300 values once each": func() ([]float64, []int64) { return eachOnce(300) },
		"40 values, 1-5 each":  uneven,
	}
	for name, hist := range tests {
		t.Run(name, func(t *testing.T) {
			vals, cnt := hist()
			var n int64
			var sum float64
			for i, v := range vals {
				n += cnt[i]
				sum += v * float64(cnt[i])
			}
			mu := sum / float64(n)
			var m2, m4 float64
			for i, v := range vals {
				d := v - mu
				m2 += float64(cnt[i]) * d * d
				m4 += float64(cnt[i]) * d * d * d * d
			}
			m2, m4 = m2/float64(n), m4/float64(n)
			fn := float64(n)
			wantVar := m2 / fn
			mu4 := m4/(fn*fn*fn) + 3*(fn-1)*m2*m2/(fn*fn*fn)

			stats, err := resampleItemMeans(context.Background(), vals, cnt, n, resamples, DefaultSeed)
			require.NoError(t, err)
			require.Len(t, stats, resamples)
			gotMean, gotVar := moments(stats)
			assert.InDelta(t, mu, gotMean, 4*math.Sqrt(wantVar/resamples), "mean of the resampled means")
			assert.InDelta(t, wantVar, gotVar, 4*math.Sqrt((mu4-wantVar*wantVar)/resamples), "variance of the resampled means")
		})
	}
}

// fairHeads is Binomial(m, ½): its frequencies over many draws match the
// binomial probabilities within 5 standard errors √(p(1 − p)/B) and one
// draw's 1/B (a tail cell of p = 10⁻⁶ seen once) each, for m below, at and
// above the 64 bits of one draw. A mask one bit too wide or too narrow, or a
// draw that counts 63 bits, moves whole cells.
func TestFairHeadsIsBinomialHalf(t *testing.T) {
	const draws = 50_000
	for _, m := range []int64{0, 1, 2, 3, 25, 63, 64, 65, 127, 128, 200} {
		t.Run(fmt.Sprint(m), func(t *testing.T) {
			src := rand.NewPCG(DefaultSeed, uint64(m))
			freq := make([]int, m+1)
			for range draws {
				k := fairHeads(src, m)
				require.True(t, k >= 0 && k <= m, "K = %d outside [0, %d]", k, m)
				freq[k]++
			}
			for k := range freq {
				// P(K = k) = C(m, k) / 2^m, through logarithms for m = 200.
				lc, _ := math.Lgamma(float64(m + 1))
				l1, _ := math.Lgamma(float64(k + 1))
				l2, _ := math.Lgamma(float64(m - int64(k) + 1))
				p := math.Exp(lc - l1 - l2 - float64(m)*math.Ln2)
				assert.InDelta(t, p, float64(freq[k])/draws, 5*math.Sqrt(p*(1-p)/draws)+1.0/draws, "P(K = %d)", k)
			}
		})
	}
}

// signFlipHistogram is the sign-flip's distinct |d| = i/100, i = 1..70,
// with multiplicities 1 to 3, and 100 and 130 for every tenth and every
// fifteenth (beyond the 64 bits of one draw).
func signFlipHistogram() ([]float64, []int64) {
	vals, mult := make([]float64, 70), make([]int64, 70)
	for i := range vals {
		vals[i], mult[i] = float64(i+1)/100, int64(1+i%3)
		switch {
		case i%10 == 9:
			mult[i] = 100
		case i%15 == 14:
			mult[i] = 130
		}
	}
	return vals, mult
}

// Under H0 the sign-flip statistic T* = Σ v·(2K − m) has mean 0, variance
// V = Σ v²·m and fourth moment 3V² − 2Σ m·v⁴ (a sum of independent ±v); the
// coins' resamples match within 4 standard errors of B-resample estimates.
func TestSignFlipCoinsMoments(t *testing.T) {
	const resamples = 40_000
	vals, mult := signFlipHistogram()
	var v, v4 float64
	for i, x := range vals {
		v += x * x * float64(mult[i])
		v4 += x * x * x * x * float64(mult[i])
	}
	src := rand.NewPCG(DefaultSeed, 0x9e3779b97f4a7c15)
	stats := make([]float64, resamples)
	for b := range stats {
		stats[b] = signFlipCoins(src, vals, mult)
	}
	gotMean, gotVar := moments(stats)
	assert.InDelta(t, 0, gotMean, 4*math.Sqrt(v/resamples))
	assert.InDelta(t, v, gotVar, 4*math.Sqrt((2*v*v-2*v4)/resamples))
}

// The distribution of the statistic: on differences of a lattice, whose exact
// p-value SignFlipExactP computes, the Monte Carlo p by coins (70 distinct
// |d|, past signFlipCoinsMinDistinct) is within 4 standard errors
// √(p(1 − p)/B) of it, at p-values across the distribution's range.
func TestSignFlipCoinsMatchesExactP(t *testing.T) {
	skipSimulationUnderRace(t) // 0.3 s, 3.5 s under -race (the exact convolution)
	const resamples = 20_000
	vals, mult := signFlipHistogram()
	require.GreaterOrEqual(t, len(vals), signFlipCoinsMinDistinct)
	var sd float64
	for i, x := range vals {
		sd += x * x * float64(mult[i])
	}
	sd = math.Sqrt(sd)
	for _, z := range []float64{0.3, 1, 2, 2.4} {
		t.Run(fmt.Sprint(z), func(t *testing.T) {
			// T = Σ x·(2·pos − m) brought up to about z standard deviations:
			// half of each |d| positive (rounded down), then, largest |d|
			// first, one more positive while T stays at most z·sd.
			pos := make([]int64, len(vals))
			var tot float64
			for i, x := range vals {
				pos[i] = mult[i] / 2
				tot += x * float64(2*pos[i]-mult[i])
			}
			for i := len(vals) - 1; i >= 0; i-- {
				for pos[i] < mult[i] && tot+2*vals[i] <= z*sd {
					pos[i]++
					tot += 2 * vals[i]
				}
			}
			h := NewHistogram()
			for i, x := range vals {
				if pos[i] > 0 {
					h.AddN(x, pos[i])
				}
				if neg := mult[i] - pos[i]; neg > 0 {
					h.AddN(-x, neg)
				}
			}
			exact, ok := h.SignFlipExactP()
			require.True(t, ok)
			require.True(t, exact > 0.01 && exact < 0.99, "p = %v: the case must sit inside the distribution", exact)
			got := h.SignFlipP(resamples, DefaultSeed)
			t.Logf("z %.1f: exact p %.5f, coins %.5f", z, exact, got)
			assert.InDelta(t, exact, got, 4*math.Sqrt(exact*(1-exact)/resamples)+1.0/resamples)
		})
	}
}

// evenHistogram is d distinct values (i/d − 0.25) with per copies each.
func evenHistogram(d, per int) ([]float64, []int64, int64) {
	vals, cnt := make([]float64, d), make([]int64, d)
	for i := range d {
		vals[i], cnt[i] = float64(i)/float64(d)-0.25, int64(per)
	}
	return vals, cnt, int64(d * per)
}

// BenchmarkHistogramResample is the cost of one resample of the histogram
// bootstrap by either sampler (ns/resample), over d distinct values with
// per items each: the figures drawItems's thresholds come from.
//
//	go test ./internal/metrics -run '^$' -bench HistogramResample -benchtime 10x
func BenchmarkHistogramResample(b *testing.B) {
	samplers := []struct {
		name string
		f    func(context.Context, []float64, []int64, int64, int, uint64) ([]float64, error)
	}{{"binomial", resampleBinomialMeans}, {"items", resampleItemMeans}}
	const per = 10 // resamples an op
	for _, d := range []int{64, 256, 1024, 9000} {
		for _, k := range []int{1, 4, 16, 32, 64} {
			vals, cnt, n := evenHistogram(d, k)
			for _, s := range samplers {
				b.Run(fmt.Sprintf("%s/d=%d/per=%d", s.name, d, k), func(b *testing.B) {
					for b.Loop() {
						if _, err := s.f(context.Background(), vals, cnt, n, per, DefaultSeed); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*per), "ns/resample")
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*per*d), "ns/distinct")
				})
			}
		}
	}
}

// BenchmarkSignFlipResample is the cost of one resample of the sign-flip
// statistic by either draw of K ~ Binomial(m, ½) (ns/resample), over d
// distinct |d| with multiplicity m each.
//
//	go test ./internal/metrics -run '^$' -bench SignFlipResample -benchtime 10x
func BenchmarkSignFlipResample(b *testing.B) {
	const per = 100 // resamples an op
	for _, d := range []int{16, 64, 1024, 9000} {
		for _, m := range []int{1, 4, 30, 100} {
			vals, mult, _ := evenHistogram(d, m)
			for i := range vals {
				vals[i] += 0.5 // positive: absolute differences
			}
			b.Run(fmt.Sprintf("binomial/d=%d/m=%d", d, m), func(b *testing.B) {
				src := rand.NewPCG(DefaultSeed, 0)
				for b.Loop() {
					for range per {
						signFlipBinomials(src, vals, mult)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*per), "ns/resample")
			})
			b.Run(fmt.Sprintf("coins/d=%d/m=%d", d, m), func(b *testing.B) {
				src := rand.NewPCG(DefaultSeed, 0)
				for b.Loop() {
					for range per {
						signFlipCoins(src, vals, mult)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*per), "ns/resample")
			})
		}
	}
}

// preHistogram is a score of the input on which the binomials' cost showed
// (BENCHMARKS.md, "The histogram bootstrap and the sign-flip test by cheap
// draws"): 9,000 cases whose score is a uniform draw rounded to 6 decimals
// (8,958 distinct values).
func preHistogram() *Histogram {
	r := NewRand(9000)
	h := NewHistogram()
	for range 9000 {
		h.Add(math.Round(r.Float64()*1e6) / 1e6)
	}
	return h
}

// On 9,000 continuous scores check's interval (MeanCI95: BCa, 10,000
// resamples) now draws items; the binomials it drew before give the same
// distribution of resampled means, so the same interval within Monte Carlo
// error. The old sampler runs 1,000 resamples here (2 to 4 s; check's
// 10,000 took 13 s and more). Checked: the resampled means' spread (4 standard
// errors of a standard deviation from 1,000, √(1/(2B)) relative), their
// distributions (two-sample Kolmogorov–Smirnov at α = 0.001), and each BCa
// endpoint from the old replicates against the reported one within 4
// standard errors of a bootstrap quantile, √(α(1 − α)/B)·sd/φ(z_α) from each
// side.
func TestItemDrawsMatchBinomialsOn9000Distinct(t *testing.T) {
	skipSimulationUnderRace(t)
	const oldResamples = 1000
	h := preHistogram()
	vals, cnt := h.sorted()
	require.True(t, drawItems(len(vals), h.n), "%d distinct values of %d: item draws", len(vals), h.n)
	iv, err := h.MeanCI95Context(context.Background(), DefaultResamples, DefaultSeed, 0, 1)
	require.NoError(t, err)
	require.Equal(t, MethodBCa, iv.Method)

	newStats, err := resampleHistogramMeans(context.Background(), vals, cnt, h.n, DefaultResamples, DefaultSeed)
	require.NoError(t, err)
	oldStats, err := resampleBinomialMeans(context.Background(), vals, cnt, h.n, oldResamples, DefaultSeed)
	require.NoError(t, err)

	_, newVar := moments(newStats)
	_, oldVar := moments(oldStats)
	sd := math.Sqrt(newVar)
	assert.InDelta(t, sd, math.Sqrt(oldVar), 4*sd*math.Sqrt(1.0/(2*oldResamples)+1.0/(2*DefaultResamples)), "spread of the resampled means")

	ks := twoSampleKS(slices.Clone(newStats), slices.Clone(oldStats))
	crit := 1.95 * math.Sqrt(float64(oldResamples+DefaultResamples)/float64(oldResamples*DefaultResamples))
	assert.Less(t, ks, crit, "Kolmogorov–Smirnov distance of the two samplers' means")

	var sum float64
	for i, v := range vals {
		sum += v * float64(cnt[i])
	}
	jack := make([]float64, len(vals))
	for i, v := range vals {
		jack[i] = (sum - v) / float64(h.n-1)
	}
	old := BCaExpandedFromReplicates(oldStats, sum/float64(h.n), JackknifeAcceleration(jack, cnt), h.n)
	alpha := ExpandedAlpha(h.n)
	phi := math.Exp(-NormalQuantile(alpha)*NormalQuantile(alpha)/2) / math.Sqrt(2*math.Pi)
	se := sd / phi * math.Sqrt(alpha*(1-alpha)*(1.0/oldResamples+1.0/DefaultResamples))
	t.Logf("item draws [%.6f, %.6f], binomials [%.6f, %.6f], tolerance %.6f (width %.6f)", iv.Lo, iv.Hi, old[0], old[1], 4*se, iv.Hi-iv.Lo)
	assert.InDelta(t, old[0], iv.Lo, 4*se)
	assert.InDelta(t, old[1], iv.Hi, 4*se)
}

// twoSampleKS is the two-sample Kolmogorov–Smirnov distance sup |F_a − F_b|
// (a and b are sorted in place).
func twoSampleKS(a, b []float64) float64 {
	slices.Sort(a)
	slices.Sort(b)
	var i, j int
	var d float64
	for i < len(a) && j < len(b) {
		x := min(a[i], b[j])
		for i < len(a) && a[i] == x {
			i++
		}
		for j < len(b) && b[j] == x {
			j++
		}
		d = max(d, math.Abs(float64(i)/float64(len(a))-float64(j)/float64(len(b))))
	}
	return d
}
