package metrics

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// MethodPPIStratified names the interval of the stratified PPI++ estimate
// (PPIStratified): per-stratum PPI++ combined with the strata's weights.
const MethodPPIStratified = "ppi++-stratified"

// PPIStratum is one stratum of a stratified human sample (a locale): the
// human values Y and the judge's values F of its labelled units, the judge's
// values U of its other units, and its share of the population Weight (its
// units over all the units; the weights sum to 1).
type PPIStratum struct {
	Y, F, U []float64
	Weight  float64
	// YC and UC are the clusters of the units of Y and U (PPIClustered; nil
	// when the units are independent).
	YC, UC []int
}

// StratifiedPPI is the stratified PPI++ estimate of a mean and its parts.
type StratifiedPPI struct {
	PPI
	// Strata are the per-stratum estimates (PPITuned of each, λ̂ tuned within
	// the stratum), in the order given; a stratum's interval is unreliable
	// below PPIMinN labelled units, as every PPI++ interval.
	Strata []PPI
	// DF is the Welch–Satterthwaite degrees of freedom of the combined
	// interval.
	DF float64
}

// PPIStratified is the stratified PPI++ estimate (issue 34): each stratum h
// gets its own power-tuned estimate θ̂_h and standard error SE_h (PPITuned:
// λ̂_h tuned on the stratum alone, so a judge that is fine in one locale and
// biased in another is corrected by each its own weight), and the mean is
// θ̂ = Σ W_h θ̂_h with SE² = Σ W_h² SE_h² (the strata are sampled
// independently), its interval θ̂ ± t_ν·SE with ν the Welch–Satterthwaite
// degrees of freedom (Σ W_h² SE_h²)² / Σ (W_h² SE_h²)²/(n_h − 1). Every
// stratum needs 2 labelled units (the estimate is NaN otherwise: merge such a
// stratum with another). The pooled estimate (PPITuned over every unit) stays
// valid under proportional allocation, which makes the sample
// self-weighting; the stratified one is as valid and no wider when the
// judge's error differs by stratum (docs/statistics.md's simulation).
func PPIStratified(strata []PPIStratum) StratifiedPPI {
	out := StratifiedPPI{PPI: PPI{Estimate: math.NaN(), SE: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), Lambda: math.NaN(), Method: MethodPPIStratified}}
	var est, v2, den float64
	ok := len(strata) > 0
	for _, s := range strata {
		p := PPITuned(s.Y, s.F, s.U)
		out.Strata = append(out.Strata, p)
		out.N += p.N
		out.Others += p.Others
		if p.N < 2 || math.IsNaN(p.SE) {
			ok = false
			continue
		}
		est += s.Weight * p.Estimate
		w := s.Weight * s.Weight * p.SE * p.SE
		v2 += w
		den += w * w / float64(p.N-1)
	}
	if !ok {
		return out
	}
	out.Estimate, out.SE = est, math.Sqrt(v2)
	switch {
	case v2 == 0:
		out.DF = math.Inf(1)
		out.Lo, out.Hi = est, est
	default:
		out.DF = v2 * v2 / den
		t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: out.DF}.Quantile(0.975)
		out.Lo, out.Hi = est-t*out.SE, est+t*out.SE
	}
	return out
}

// PValue is the two-sided p-value of the stratified estimate against 0, with
// the Welch–Satterthwaite degrees of freedom; 1 when the estimate is 0, NaN
// when SE is undefined or 0.
func (s StratifiedPPI) PValue() float64 {
	switch {
	case math.IsNaN(s.SE):
		return math.NaN()
	case s.Estimate == 0:
		return 1
	case s.SE == 0:
		return math.NaN()
	}
	return 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: s.DF}.Survival(math.Abs(s.Estimate)/s.SE)
}
