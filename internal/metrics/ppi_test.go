package metrics

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPPIMean(t *testing.T) {
	y := []float64{1, 0, 1, 1, 0}
	f := []float64{0.8, 0.2, 0.9, 0.6, 0.4}
	u := []float64{0.5, 0.7, 0.1, 0.9}
	mY, mF, mU := 0.6, 0.58, 0.55
	varU := ((0.5-mU)*(0.5-mU) + (0.7-mU)*(0.7-mU) + (0.1-mU)*(0.1-mU) + (0.9-mU)*(0.9-mU)) / 3
	t.Run("plain PPI at lambda 1", func(t *testing.T) {
		p := PPIMean(y, f, u, 1)
		assert.InDelta(t, mU+mY-mF, p.Estimate, 1e-12)
		var vr float64
		for i := range y {
			d := (y[i] - f[i]) - (mY - mF)
			vr += d * d
		}
		se := math.Sqrt(vr/4/5 + varU/4)
		assert.InDelta(t, se, p.SE, 1e-12)
		assert.InDelta(t, 2.7764451051977987, StudentT975(4), 1e-9) // t_{4, 0.975}
		assert.InDelta(t, p.Estimate-StudentT975(4)*se, p.Lo, 1e-12)
		assert.InDelta(t, p.Estimate+StudentT975(4)*se, p.Hi, 1e-12)
		assert.Equal(t, 5, p.N)
		assert.Equal(t, 4, p.Others)
	})
	t.Run("lambda 0 is the human-only mean", func(t *testing.T) {
		p := PPIMean(y, f, u, 0)
		h := HumanOnly(y)
		assert.InDelta(t, mY, p.Estimate, 1e-12)
		assert.InDelta(t, h.SE, p.SE, 1e-12)
		assert.InDelta(t, math.Sqrt(0.3/5), h.SE, 1e-12) // sample variance of y is 0.3
	})
	t.Run("tuned lambda", func(t *testing.T) {
		var cov float64
		for i := range y {
			cov += (y[i] - mY) * (f[i] - mF)
		}
		cov /= 4
		all := append(append([]float64{}, f...), u...)
		ma := mean(all)
		var v float64
		for _, x := range all {
			v += (x - ma) * (x - ma)
		}
		v /= float64(len(all) - 1)
		want := math.Min(1, cov/((1+5.0/4)*v))
		p := PPITuned(y, f, u)
		assert.InDelta(t, want, p.Lambda, 1e-12)
		assert.InDelta(t, p.Lambda*mU+mY-p.Lambda*mF, p.Estimate, 1e-12)
	})
	t.Run("lambda clipped", func(t *testing.T) {
		// A prediction anti-correlated with the label gets λ = 0.
		p := PPITuned([]float64{1, 0, 1, 0}, []float64{0, 1, 0, 1}, []float64{0.5, 0.5, 1})
		assert.Equal(t, 0.0, p.Lambda)
		// A tiny unlabelled set with a perfect, low-variance prediction is clipped at 1.
		p = PPITuned([]float64{0, 10, 0, 10}, []float64{0, 1, 0, 1}, []float64{0, 1})
		assert.Equal(t, 1.0, p.Lambda)
	})
	t.Run("degenerate", func(t *testing.T) {
		p := PPITuned(nil, nil, u)
		assert.True(t, math.IsNaN(p.Estimate))
		p = PPITuned([]float64{1}, []float64{1}, u)
		assert.Equal(t, 1.0, p.Estimate)
		assert.True(t, math.IsNaN(p.Lo))
		assert.True(t, math.IsNaN(p.PValue()))
		p = PPITuned(y, f, nil) // every unit labelled: the human mean
		assert.Equal(t, 0.0, p.Lambda)
		assert.InDelta(t, mY, p.Estimate, 1e-12)
		p = PPITuned(y, []float64{1, 1, 1, 1, 1}, []float64{1, 1}) // constant judge
		assert.Equal(t, 0.0, p.Lambda)
	})
	t.Run("p-value", func(t *testing.T) {
		assert.InDelta(t, 0.05, PPI{Estimate: StudentT975(49), SE: 1, N: 50}.PValue(), 1e-9)
		assert.Equal(t, 1.0, PPI{Estimate: 0, SE: 1}.PValue())
		assert.True(t, math.IsNaN(PPI{Estimate: 1, SE: 0}.PValue()))
	})
	assert.True(t, PPIMean(y, f, u, 1).Interval().Unreliable)
	assert.Equal(t, MethodPPI, PPIMean(y, f, u, 1).Interval().Method)
}

// PPISimulation is one configuration of the simulation of docs/statistics.md
// ("Human-corrected estimates"): Queries queries of 10 pooled documents, each
// graded 0–3 by a human; the judge gives the human's grade, except on a third of
// the pairs (drawn at random) where it gives one grade more with probability
// 1/2 (capped at 3): +0.5 grade on those pairs before the cap. Human labels
// come for Sample random queries. The measure is DCG@10 (exponential gain) of
// the documents in their pooled order.
type ppiSim struct {
	Queries, Sample, Reps int
	Seed                  uint64
}

type ppiSimResult struct {
	Truth                                  float64
	CoverPPI, CoverJudge, CoverHuman       float64
	WidthPPI, WidthJudge, WidthHuman       float64
	MeanLambda, MeanBiasJudge, MeanBiasPPI float64
	// The plug-in interval PPITuned used before issue 34 (PPIMean at λ̂):
	// its coverage and width; the misses of both on each side (low: the truth
	// is below the interval).
	CoverPlugIn, WidthPlugIn    float64
	LowPPI, HighPPI             int
	LowPlugIn, HighPlugIn       int
	OutsideRange, OutsidePlugIn int // intervals reaching outside the measure's range before clipping
}

// simQuery draws one query's human grades and the judge's.
func simQuery(r *rand.Rand, human, judge []int) {
	q := r.Float64() // the query's difficulty: how relevant its documents are
	for i := range human {
		p := q * (1 - float64(i)/15)
		g := 0
		for range 3 {
			if r.Float64() < p {
				g++
			}
		}
		human[i] = g
		judge[i] = g
		if r.IntN(3) == 0 && r.IntN(2) == 0 {
			judge[i] = min(3, g+1)
		}
	}
}

func simDCG(rels []int) float64 { return GradedDCG(rels, len(rels), GainExp) }

// simMaxDCG is the largest DCG@10 of the simulation: ten documents of grade 3.
func simMaxDCG() float64 {
	top := make([]int, 10)
	for i := range top {
		top[i] = 3
	}
	return simDCG(top)
}

func (s ppiSim) run() ppiSimResult {
	r := NewRand(s.Seed)
	human, judge := make([]int, 10), make([]int, 10)
	// The true mean: the human measure's expectation, over 200,000 queries.
	var truth float64
	const truthDraws = 200000
	for range truthDraws {
		simQuery(r, human, judge)
		truth += simDCG(human)
	}
	truth /= truthDraws
	hi := simMaxDCG()
	out := ppiSimResult{Truth: truth}
	y, f := make([]float64, s.Queries), make([]float64, s.Queries)
	for range s.Reps {
		for i := range s.Queries {
			simQuery(r, human, judge)
			y[i], f[i] = simDCG(human), simDCG(judge)
		}
		// The sample: the first Sample of a random permutation.
		perm := r.Perm(s.Queries)
		ys, fs := make([]float64, 0, s.Sample), make([]float64, 0, s.Sample)
		us := make([]float64, 0, s.Queries-s.Sample)
		for k, i := range perm {
			if k < s.Sample {
				ys, fs = append(ys, y[i]), append(fs, f[i])
			} else {
				us = append(us, f[i])
			}
		}
		raw := PPITuned(ys, fs, us)
		plug := PPIMean(ys, fs, us, math.NaN())
		if raw.Lo < 0 || raw.Hi > hi {
			out.OutsideRange++
		}
		if plug.Lo < 0 || plug.Hi > hi {
			out.OutsidePlugIn++
		}
		p, plug := raw.Clip(0, hi), plug.Clip(0, hi)
		h := HumanOnly(ys)
		j := HumanOnly(f) // the judge-only interval: the judge's values taken as the truth
		cover := func(lo, hi float64) float64 {
			if lo <= truth && truth <= hi {
				return 1
			}
			return 0
		}
		side := func(iv PPI, low, high *int) {
			switch {
			case truth < iv.Lo:
				*low++
			case truth > iv.Hi:
				*high++
			}
		}
		out.CoverPPI += cover(p.Lo, p.Hi)
		out.CoverPlugIn += cover(plug.Lo, plug.Hi)
		side(p, &out.LowPPI, &out.HighPPI)
		side(plug, &out.LowPlugIn, &out.HighPlugIn)
		out.CoverHuman += cover(h.Lo, h.Hi)
		out.CoverJudge += cover(j.Lo, j.Hi)
		out.WidthPPI += p.Hi - p.Lo
		out.WidthPlugIn += plug.Hi - plug.Lo
		out.WidthHuman += h.Hi - h.Lo
		out.WidthJudge += j.Hi - j.Lo
		out.MeanLambda += p.Lambda
		out.MeanBiasJudge += j.Estimate - truth
		out.MeanBiasPPI += p.Estimate - truth
	}
	R := float64(s.Reps)
	out.CoverPPI /= R
	out.CoverPlugIn /= R
	out.CoverHuman /= R
	out.CoverJudge /= R
	out.WidthPPI /= R
	out.WidthPlugIn /= R
	out.WidthHuman /= R
	out.WidthJudge /= R
	out.MeanLambda /= R
	out.MeanBiasJudge /= R
	out.MeanBiasPPI /= R
	return out
}

// TestPPISimulation is the validation of docs/statistics.md: with the judge
// biased by +0.5 grade on a third of the pairs and human labels on 50 of 500
// queries, the PPI++ interval covers the true mean at 0.95 or more and the
// judge-only one does not; PPI++ is narrower than the human-only interval.
// The reduced run (600 repetitions at 50 labelled queries, CoverageFloor's
// test: at least 0.9354) is
// what CI runs; RETRIEVAL_GATE_FULL_SIMULATION=1 runs 10,000 repetitions at
// 2, 10, 30, 50 and 100 labelled queries and prints docs/statistics.md's
// table, the plug-in interval used before issue 34 beside the jackknife one.
func TestPPISimulation(t *testing.T) {
	skipSimulationUnderRace(t)
	samples, reps := []int{50}, 600
	if fullSimulation() {
		samples, reps = []int{2, 10, 30, 50, 100}, 10000
		fmt.Println("| human-labelled queries | jackknife (used): coverage | missed low / high | mean width | plug-in SE (before): coverage | missed low / high | mean width | outside the range before clipping: jackknife / plug-in |")
		fmt.Println("|---:|---:|---:|---:|---:|---:|---:|---:|")
	}
	for _, n := range samples {
		s := ppiSim{Queries: 500, Sample: n, Reps: reps, Seed: 22}
		res := s.run()
		t.Logf("n %d: truth %.4f; coverage PPI++ %.4f (plug-in %.4f), human-only %.4f, judge-only %.4f; mean width PPI++ %.4f (plug-in %.4f), human-only %.4f (PPI++ %.1f%% narrower), judge-only %.4f; mean λ̂ %.3f; mean error judge-only %+.4f, PPI++ %+.4f",
			n, res.Truth, res.CoverPPI, res.CoverPlugIn, res.CoverHuman, res.CoverJudge, res.WidthPPI, res.WidthPlugIn, res.WidthHuman, 100*(1-res.WidthPPI/res.WidthHuman), res.WidthJudge,
			res.MeanLambda, res.MeanBiasJudge, res.MeanBiasPPI)
		if fullSimulation() {
			fmt.Printf("| %d | %.4f | %d / %d | %.3f | %.4f | %d / %d | %.3f | %d / %d |\n", n, res.CoverPPI, res.LowPPI, res.HighPPI, res.WidthPPI,
				res.CoverPlugIn, res.LowPlugIn, res.HighPlugIn, res.WidthPlugIn, res.OutsideRange, res.OutsidePlugIn)
		}
		if n < PPIMinN {
			continue // flagged unreliable: no coverage is claimed
		}
		require.True(t, assertCoverage(t, int(math.Round(res.CoverPPI*float64(reps))), reps, "n %d", n))
		require.Less(t, res.CoverJudge, 0.5, "the judge-only interval must miss the true mean")
		require.Less(t, res.WidthPPI, res.WidthHuman)
		assert.Less(t, math.Abs(res.MeanBiasPPI), 0.1*math.Abs(res.MeanBiasJudge), "PPI++ removes the judge's bias")
	}
}

func BenchmarkPPITuned(b *testing.B) {
	r := NewRand(1)
	const N, n = 100000, 1000
	y, f, u := make([]float64, n), make([]float64, n), make([]float64, N-n)
	for i := range y {
		y[i] = r.Float64()
		f[i] = y[i] + 0.1*r.NormFloat64()
	}
	for i := range u {
		u[i] = r.Float64()
	}
	b.ReportAllocs()
	for b.Loop() {
		PPITuned(y, f, u)
	}
}

// The jackknife of PPITuned against the leave-one-out estimates computed one
// by one (PPIMean with λ̂ tuned on the n − 1 units), to 1e-9.
func TestPPIJackknifeByHand(t *testing.T) {
	r := NewRand(34)
	for _, c := range []struct{ n, N int }{{3, 10}, {5, 0}, {12, 40}, {50, 450}, {30, 1}} {
		y, f, u := make([]float64, c.n), make([]float64, c.n), make([]float64, c.N)
		for i := range y {
			y[i] = 10 * r.Float64()
			f[i] = y[i] + 2*r.NormFloat64() + 1
		}
		for i := range u {
			u[i] = 10*r.Float64() + 1
		}
		thetas := make([]float64, c.n)
		for i := range y {
			var yy, ff []float64
			for j := range y {
				if j != i {
					yy, ff = append(yy, y[j]), append(ff, f[j])
				}
			}
			thetas[i] = PPIMean(yy, ff, u, math.NaN()).Estimate
		}
		m := mean(thetas)
		var v float64
		for _, th := range thetas {
			v += (th - m) * (th - m)
		}
		v *= float64(c.n-1) / float64(c.n)
		assert.InDelta(t, v, ppiJackknifeVar(y, f, u), 1e-9*max(1, v), "n %d N %d", c.n, c.N)
		p := PPITuned(y, f, u)
		assert.Equal(t, MethodPPIJackknife, p.Method)
		want := v
		if c.N > 1 && p.Lambda != 0 {
			want += p.Lambda * p.Lambda * sampleVar(u) / float64(c.N)
		}
		assert.InDelta(t, math.Sqrt(want), p.SE, 1e-9)
		assert.InDelta(t, p.Estimate-StudentT975(c.n-1)*p.SE, p.Lo, 1e-9)
	}
	// Clip keeps the estimate and bounds the interval.
	p := PPI{Estimate: 1, SE: 3, Lo: -6.3, Hi: 27.4}.Clip(0, 23.6)
	assert.Equal(t, [3]float64{1, 0, 23.6}, [3]float64{p.Estimate, p.Lo, p.Hi})
}

// Labelled units without variation: the rule of three, not a point.
func TestPPIClipNoVariation(t *testing.T) {
	p := PPITuned([]float64{0, 0, 0, 0}, []float64{0, 0, 0, 0}, []float64{0, 0, 0})
	require.Equal(t, 0.0, p.SE)
	c := p.Clip(-1, 1)
	assert.Equal(t, MethodRuleOfThree, c.Method)
	assert.Equal(t, MethodRuleOfThree, c.Interval().Method)
	assert.False(t, c.Interval().Unreliable)
	u := 1 - math.Pow(0.05, 1.0/3)
	assert.InDelta(t, -u, c.Lo, 1e-15)
	assert.InDelta(t, u, c.Hi, 1e-15)
}

// 21 equal values whose floating-point mean is not exactly theirs: the
// standard error is rounding noise (about 1e-33), and Clip reads it as 0 (the
// rule of three), not as a t statistic of 10³² with p < 1e-300 and a point
// interval.
func TestPPIClipRoundingNoise(t *testing.T) {
	y, f := make([]float64, 21), make([]float64, 21)
	for i := range y {
		y[i], f[i] = 0.7, float64(i%2)
	}
	p := PPITuned(y, f, []float64{0, 1, 1})
	require.Greater(t, p.SE, 0.0, "the noise this test is about")
	require.Less(t, p.SE, 1e-15)
	c := p.Clip(-1, 1)
	assert.Equal(t, 0.0, c.SE)
	assert.Equal(t, MethodRuleOfThree, c.Method)
	assert.Less(t, c.Lo, c.Hi)
	assert.True(t, math.IsNaN(c.PValue()), "nothing for the t test to divide by")
	// A real, small standard error stays.
	q := PPI{Estimate: 0.5, SE: 1e-6, Lo: 0.4999, Hi: 0.5001, N: 50, Method: MethodPPIJackknife}.Clip(0, 1)
	assert.Equal(t, 1e-6, q.SE)
}
