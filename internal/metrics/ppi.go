package metrics

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// MethodPPI names the prediction-powered interval of a mean at a fixed λ
// (PPIMean: the estimate ± t·SE with the plug-in SE).
const MethodPPI = "ppi++"

// MethodPPIJackknife names the interval of the power-tuned PPI++ estimate
// (PPITuned): the estimate ± t·SE with the labelled part of the SE from the
// jackknife over the labelled units, λ̂ tuned again without each (issue 34:
// the plug-in SE ignores λ̂'s own variability, and the interval covered
// 0.938–0.945 at 30 to 100 labelled queries).
const MethodPPIJackknife = "ppi++-jackknife"

// PPIMinN is the smallest human n whose PPI++ interval is not marked unreliable:
// the normal interval of a mean over fewer labelled units rests on a variance
// estimate from too few of them (the same floor as ReliableMinN).
const PPIMinN = ReliableMinN

// PPI is a prediction-powered estimate of a mean (Angelopoulos et al. 2023,
// "Prediction-powered inference"; PPI++, Angelopoulos, Duchi and Zrnic 2023,
// "Efficient prediction-powered inference"). Y is the gold label of the n
// labelled units, F the prediction (here: the LLM judge's value) of the same
// units, U the prediction of the other N units:
//
//	θ̂(λ) = λ·mean(U) + mean(Y − λ·F)
//	SE²(λ) = λ²·var(U)/N + var(Y − λ·F)/n
//	λ̂ = cov(Y, F) / ((1 + n/N)·var(F ∪ U)), clipped to [0, 1]
//
// with sample variances (divisor count − 1). λ = 1 is plain PPI, λ = 0 the mean of
// the gold labels alone (the human-only estimate). The interval is θ̂ ± t·SE with
// t the 0.975 quantile of Student's t with n − 1 degrees of freedom instead of the
// papers' z: the variance is mostly that of the n labelled units, and at n = 50
// the z interval covered 0.933 in the simulation of docs/statistics.md.
type PPI struct {
	Estimate float64
	SE       float64
	Lo, Hi   float64 // 95% interval; NaN when SE is undefined (n < 2)
	Lambda   float64
	N        int    // labelled units (human n)
	Others   int    // unlabelled units (the judge alone)
	Method   string // MethodPPI, or MethodPPIJackknife for the tuned estimate
	// Clusters is the number of clusters holding a labelled unit when the
	// units come in clusters (PPIClustered: the interval's t has Clusters − 1
	// degrees of freedom); 0 when they are independent.
	Clusters int
}

// Interval returns the estimate's interval as an Interval (N: the human n).
// It is unreliable below PPIMinN labelled units, and, over clusters, below
// PPIMinClusters labelled clusters.
func (p PPI) Interval() Interval {
	unreliable := p.N < PPIMinN || (p.Clusters > 0 && p.Clusters < PPIMinClusters)
	if p.Method == MethodRuleOfThree {
		unreliable = UnreliableFor(p.Method, int64(p.units()))
	}
	return Interval{Lo: p.Lo, Hi: p.Hi, N: int64(p.N), Method: p.Method, Unreliable: unreliable}
}

// Clip returns p with its interval inside the measure's range [lo, hi] (the
// estimate and its test are unchanged): clipped to it (with 2 labelled
// queries the interval of a DCG ran to [−6.3, 27.4] on a range [0, 31.8],
// issue 34), or, when the labelled units show no variation (SE = 0, the
// interval a point), the rule of three around the estimate over the range
// (RuleOfThreeCI95: the labelled units are a random sample, and none of n
// differed; over clusters, n is the labelled clusters). A standard error
// below NegligibleSE of the range is rounding noise and taken as 0: the mean
// of equal values need not equal them in floating point, and 20 equal nDCG
// differences gave a t test with p < 1e-300 and a point interval.
func (p PPI) Clip(lo, hi float64) PPI {
	if p.SE > 0 && lo < hi && p.SE <= NegligibleSE*(hi-lo) {
		p.SE, p.Lo, p.Hi = 0, p.Estimate, p.Estimate
	}
	switch {
	case math.IsNaN(p.Lo):
	case p.SE == 0 && p.N > 0 && lo < hi:
		iv := RuleOfThreeCI95(p.Estimate, int64(p.units()), lo, hi)
		p.Lo, p.Hi, p.Method = iv.Lo, iv.Hi, iv.Method
	default:
		p.Lo, p.Hi = max(lo, p.Lo), min(hi, p.Hi)
	}
	return p
}

// NegligibleSE is the share of a measure's range below which Clip reads a
// standard error as rounding noise (0): far below any standard error that a
// difference among at most millions of labelled units can make, far above
// the error of their floating-point mean.
const NegligibleSE = 1e-10

// units is the number of independent labelled units: the labelled clusters
// over clusters, else the labelled units.
func (p PPI) units() int {
	if p.Clusters > 0 {
		return p.Clusters
	}
	return p.N
}

// PValue is the two-sided p-value of the estimate against 0 (a paired
// difference's test), with the interval's t distribution (n − 1 degrees of
// freedom; over clusters, labelled clusters − 1): 2·(1 − T(|θ̂|/SE)); 1 when θ̂ = 0; NaN when SE is undefined or 0 (no
// variation among the labelled units: nothing to test against).
func (p PPI) PValue() float64 {
	switch {
	case math.IsNaN(p.SE):
		return math.NaN()
	case p.Estimate == 0:
		return 1
	case p.SE == 0:
		return math.NaN()
	}
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(max(p.units()-1, 1))}
	return 2 * t.Survival(math.Abs(p.Estimate)/p.SE)
}

// PPITuned is PPIMean with the power-tuned λ̂ and the jackknife standard
// error (MethodPPIJackknife): SE² = v_J + λ̂²·var(U)/N, v_J =
// (n − 1)/n·Σ_i (θ̂_(i) − θ̄)² over the estimates θ̂_(i) without labelled unit
// i, each with its own λ̂_(i) (ppiJackknife, O(n + N)). The plug-in SE of
// PPIMean treats λ̂ as known; its interval covered 0.938 at 50 labelled
// queries and 0.945 at 100 in docs/statistics.md's simulation, the
// jackknife's 0.958 and 0.951. With fewer than 3 labelled units (the
// jackknife needs two left) the plug-in SE stays.
func PPITuned(y, f, u []float64) PPI {
	p := PPIMean(y, f, u, math.NaN())
	if len(y) < 3 || math.IsNaN(p.SE) {
		return p
	}
	se2 := ppiJackknifeVar(y, f, u)
	if len(u) > 1 && p.Lambda != 0 {
		se2 += p.Lambda * p.Lambda * sampleVar(u) / float64(len(u))
	}
	p.SE, p.Method = math.Sqrt(se2), MethodPPIJackknife
	t := StudentT975(len(y) - 1)
	p.Lo, p.Hi = p.Estimate-t*p.SE, p.Estimate+t*p.SE
	return p
}

// sampleVar is the sample variance (divisor count − 1) of xs, len(xs) ≥ 2.
func sampleVar(xs []float64) float64 {
	m := mean(xs)
	var v float64
	for _, x := range xs {
		v += (x - m) * (x - m)
	}
	return v / float64(len(xs)-1)
}

// ppiJackknifeVar is the jackknife variance (n − 1)/n·Σ_i (θ̂_(i) − θ̄)² of the
// power-tuned estimate over the n ≥ 3 labelled units, θ̂_(i) = λ̂_(i)·mean(U) +
// mean(Y − λ̂_(i)F) without unit i and λ̂_(i) tuned without it (tunedLambda's
// formula from running sums: O(n + N) in all). The sums are taken around the
// full sample's means, so that removing a unit does not cancel digits.
func ppiJackknifeVar(y, f, u []float64) float64 {
	n, N := len(y), len(u)
	my, mf, mu := mean(y), mean(f), mean(u)
	all := (float64(n)*mf + float64(N)*mu) / float64(n+N)
	if N == 0 {
		all = mf
	}
	// Centred sums: labelled (y − my, f − all), unlabelled (u − all).
	var sy, sf, syf, sff, su, suu float64
	for i := range y {
		a, b := y[i]-my, f[i]-all
		sy, sf, syf, sff = sy+a, sf+b, syf+a*b, sff+b*b
	}
	for _, x := range u {
		c := x - all
		su, suu = su+c, suu+c*c
	}
	m := float64(n - 1) // labelled units left
	// Welford's running mean and sum of squares of the θ̂_(i), no slice.
	var tm, ss float64
	for i := range y {
		a, b := y[i]-my, f[i]-all
		ly, lf, lyf, lff := sy-a, sf-b, syf-a*b, sff-b*b
		lambda := 0.0
		if N > 0 && n-1 >= 2 {
			cov := (lyf - ly*lf/m) / (m - 1)
			tot := m + float64(N)
			s1, s2 := lf+su, lff+suu
			v := (s2 - s1*s1/tot) / (tot - 1)
			if v > 0 {
				lambda = min(1, max(0, cov/((1+m/float64(N))*v)))
			}
		}
		// θ̂_(i) = mean(Y) − λ·mean(F) + λ·mean(U), the means without unit i.
		yBar, fBar := my+ly/m, all+lf/m
		theta := yBar - lambda*fBar
		if N > 0 {
			theta += lambda * mu
		}
		d := theta - tm
		tm += d / float64(i+1)
		ss += d * (theta - tm)
	}
	return ss * m / float64(n)
}

// HumanOnly is the mean of the gold labels alone with its normal interval
// (PPIMean at λ = 0): what the labelled units say without the judge.
func HumanOnly(y []float64) PPI { return PPIMean(y, y, nil, 0) }

// PPIMean is the PPI estimate of the mean of Y at λ (NaN: the power-tuned λ̂).
// y and f are the n labelled units (same order), u the N others. With n = 0 the
// estimate is NaN; with N = 0 λ̂ is 0 (nothing to borrow from). It has no I/O
// and does not keep its arguments.
func PPIMean(y, f, u []float64, lambda float64) PPI {
	n, N := len(y), len(u)
	out := PPI{N: n, Others: N, Estimate: math.NaN(), SE: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), Lambda: lambda, Method: MethodPPI}
	if n == 0 || len(f) != n {
		return out
	}
	my, mf, mu := mean(y), mean(f), mean(u)
	if math.IsNaN(lambda) {
		out.Lambda = tunedLambda(y, f, u, my, mf, mu)
	}
	l := out.Lambda
	// mean(Y − λF) and its variance, in one pass around the means.
	var vr float64
	for i := range y {
		d := (y[i] - my) - l*(f[i]-mf)
		vr += d * d
	}
	est := my - l*mf
	var se2 float64
	if n > 1 {
		se2 = vr / float64(n-1) / float64(n)
	} else {
		se2 = math.NaN()
	}
	if N > 0 && l != 0 {
		est += l * mu
		var vu float64
		if N > 1 {
			for _, x := range u {
				vu += (x - mu) * (x - mu)
			}
			vu /= float64(N - 1)
		}
		se2 += l * l * vu / float64(N)
	}
	out.Estimate = est
	if !math.IsNaN(se2) {
		out.SE = math.Sqrt(se2)
		t := StudentT975(n - 1)
		out.Lo, out.Hi = est-t*out.SE, est+t*out.SE
	}
	return out
}

// StudentT975 is the 0.975 quantile of Student's t with df degrees of freedom
// (df ≥ 1).
func StudentT975(df int) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(df)}.Quantile(0.975)
}

// tunedLambda is λ̂ = cov(Y, F) / ((1 + n/N)·var(F ∪ U)) clipped to [0, 1]; 0
// when it is undefined (N = 0, n < 2, or the predictions are constant).
func tunedLambda(y, f, u []float64, my, mf, mu float64) float64 {
	n, N := len(y), len(u)
	if N == 0 || n < 2 {
		return 0
	}
	var cov float64
	for i := range y {
		cov += (y[i] - my) * (f[i] - mf)
	}
	cov /= float64(n - 1)
	// The variance of every prediction, labelled and not, around their pooled mean.
	all := (float64(n)*mf + float64(N)*mu) / float64(n+N)
	var v float64
	for _, x := range f {
		v += (x - all) * (x - all)
	}
	for _, x := range u {
		v += (x - all) * (x - all)
	}
	v /= float64(n + N - 1)
	if !(v > 0) {
		return 0
	}
	l := cov / ((1 + float64(n)/float64(N)) * v)
	return math.Min(1, math.Max(0, l))
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
