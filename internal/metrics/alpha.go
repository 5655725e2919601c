package metrics

import (
	"context"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// Krippendorff's alpha (Krippendorff 2011, "Computing Krippendorff's
// Alpha-Reliability") for any number of raters per unit, missing ratings allowed,
// over k ordered categories 0..k−1 and any disagreement function δ (a k×k matrix,
// 0 on the diagonal): α = 1 − D_o/D_e with the coincidence matrix
// o_ck = Σ_u n_uc (n_uk − [c = k]) / (m_u − 1) over the units u with m_u ≥ 2 values
// (the pairable ones), n_c = Σ_k o_ck, n = Σ_c n_c, D_o = Σ o_ck δ_ck / n and
// D_e = Σ n_c n_k δ_ck / (n (n − 1)).
//
// A unit is held as its category counts; units with the same counts are one
// pattern with a multiplicity, so the bootstrap over units costs O(patterns × k²)
// per resample whatever the number of units.

// AlphaUnits holds the pairable units of a reliability data matrix as distinct
// count patterns with their multiplicities.
type AlphaUnits struct {
	K        int
	Patterns [][]int // per pattern, the number of values in each category
	Mult     []int64 // units with that pattern
	index    map[string]int
}

// NewAlphaUnits returns an empty set of units over k categories.
func NewAlphaUnits(k int) *AlphaUnits { return &AlphaUnits{K: k, index: map[string]int{}} }

// Add records one unit's values (category indices in [0,K); others panic). A
// unit with fewer than two values is not pairable and is not recorded; Add
// reports whether it was.
func (a *AlphaUnits) Add(values []int) bool {
	if len(values) < 2 {
		return false
	}
	counts := make([]int, a.K)
	for _, v := range values {
		counts[v]++
	}
	key := make([]byte, 0, 2*a.K)
	for _, c := range counts {
		key = binary.AppendUvarint(key, uint64(c)) //nolint:gosec // a count, never negative
	}
	if i, ok := a.index[string(key)]; ok {
		a.Mult[i]++
		return true
	}
	a.index[string(key)] = len(a.Patterns)
	a.Patterns = append(a.Patterns, counts)
	a.Mult = append(a.Mult, 1)
	return true
}

// Units is the number of pairable units recorded.
func (a *AlphaUnits) Units() int64 {
	var n int64
	for _, m := range a.Mult {
		n += m
	}
	return n
}

// Values is the number of pairable values (n of the coincidence matrix).
func (a *AlphaUnits) Values() int64 {
	var n int64
	for p, counts := range a.Patterns {
		for _, c := range counts {
			n += int64(c) * a.Mult[p]
		}
	}
	return n
}

// coincidence adds mult × pattern p's coincidences to o.
func (a *AlphaUnits) coincidence(o [][]float64, p int, mult float64) {
	counts := a.Patterns[p]
	m := 0
	for _, c := range counts {
		m += c
	}
	f := mult / float64(m-1)
	for c, nc := range counts {
		if nc == 0 {
			continue
		}
		for k, nk := range counts {
			if c == k {
				nk--
			}
			if nk > 0 {
				o[c][k] += f * float64(nc) * float64(nk)
			}
		}
	}
}

// Coincidences is the k×k coincidence matrix of the units.
func (a *AlphaUnits) Coincidences() [][]float64 {
	o := newSquare(a.K)
	for p := range a.Patterns {
		a.coincidence(o, p, float64(a.Mult[p]))
	}
	return o
}

func newSquare(k int) [][]float64 {
	o := make([][]float64, k)
	for i := range o {
		o[i] = make([]float64, k)
	}
	return o
}

// AlphaFromCoincidences is α = 1 − D_o/D_e of a coincidence matrix under the
// disagreement δ. NaN when undefined: fewer than two pairable values, or no
// expected disagreement (every value in one category).
func AlphaFromCoincidences(o, delta [][]float64) float64 {
	k := len(o)
	nc := make([]float64, k)
	var n float64
	for c := range o {
		for _, v := range o[c] {
			nc[c] += v
		}
		n += nc[c]
	}
	if n < 2 {
		return math.NaN()
	}
	var do, de float64
	for c := range o {
		for j := range o[c] {
			do += o[c][j] * delta[c][j]
			de += nc[c] * nc[j] * delta[c][j]
		}
	}
	if de <= 0 {
		return math.NaN()
	}
	return 1 - (n-1)*do/de
}

// Alpha is Krippendorff's alpha of the units under δ (NaN when undefined).
func (a *AlphaUnits) Alpha(delta [][]float64) float64 {
	return AlphaFromCoincidences(a.Coincidences(), delta)
}

// KrippendorffAlpha is Krippendorff's alpha of units (each unit's values,
// category indices in [0,k)) under the disagreement δ; units with fewer than two
// values are not pairable and count for nothing.
func KrippendorffAlpha(units [][]int, k int, delta [][]float64) float64 {
	a := NewAlphaUnits(k)
	for _, u := range units {
		a.Add(u)
	}
	return a.Alpha(delta)
}

// NominalDelta is δ_ck = [c ≠ k].
func NominalDelta(k int) [][]float64 { return KappaWeights(k, KappaUnweighted) }

// IntervalDelta is δ_ck = (c − k)², the interval metric on the category indices.
func IntervalDelta(k int) [][]float64 {
	d := newSquare(k)
	for c := range d {
		for j := range d[c] {
			d[c][j] = float64((c - j) * (c - j))
		}
	}
	return d
}

// OrdinalDelta is Krippendorff's ordinal metric from the category totals n_g of
// the coincidence matrix: δ_ck = (Σ_{g=c}^{k} n_g − (n_c + n_k)/2)².
func OrdinalDelta(totals []float64) [][]float64 {
	k := len(totals)
	d := newSquare(k)
	for c := range d {
		for j := range d[c] {
			lo, hi := min(c, j), max(c, j)
			var s float64
			for g := lo; g <= hi; g++ {
				s += totals[g]
			}
			s -= (totals[c] + totals[j]) / 2
			d[c][j] = s * s
		}
	}
	return d
}

// MethodAlphaBCa is the method of AlphaCI95Context: the BCa bootstrap over units.
const MethodAlphaBCa = "bca-units"

// AlphaCI95Context is the 95% BCa bootstrap interval of Krippendorff's alpha,
// resampling units (cases) with replacement: the pattern multiplicities drawn
// from Multinomial(units, mult/units), the acceleration from the jackknife that
// leaves out one unit of each pattern (multiplicity mult), at the small-sample
// expanded level as every BCa interval here. A unit, not a value, is what is
// resampled, because a unit's values are not independent of one another. NaN
// (and Method "") when alpha is undefined, resamples ≤ 0, or the bootstrap
// collapses to a point (no disagreement in any unit: every resample gives the
// same alpha, which says nothing about its uncertainty). ctx.Err() soon after
// ctx ends.
func AlphaCI95Context(ctx context.Context, a *AlphaUnits, delta [][]float64, resamples int, seed uint64) (Interval, error) {
	units := a.Units()
	iv := Interval{Lo: math.NaN(), Hi: math.NaN(), N: units}
	theta := a.Alpha(delta)
	if math.IsNaN(theta) || resamples <= 0 {
		return iv, nil
	}
	rest := make([]int64, len(a.Mult)+1)
	for x := len(a.Mult) - 1; x >= 0; x-- {
		rest[x] = rest[x+1] + a.Mult[x]
	}
	src := rand.NewPCG(seed, 0x9e3779b97f4a7c15)
	o := newSquare(a.K)
	stats := make([]float64, 0, resamples)
	for r := range resamples {
		if r&63 == 0 {
			if err := ctx.Err(); err != nil {
				return iv, err
			}
		}
		for i := range o {
			clear(o[i])
		}
		left := units
		for p, c := range a.Mult {
			var draw int64
			switch {
			case left == 0:
			case p == len(a.Mult)-1 || rest[p] == c:
				draw = left
			default:
				draw = int64(distuv.Binomial{N: float64(left), P: float64(c) / float64(rest[p]), Src: src}.Rand())
			}
			if draw > 0 {
				a.coincidence(o, p, float64(draw))
			}
			left -= draw
		}
		if s := AlphaFromCoincidences(o, delta); !math.IsNaN(s) {
			stats = append(stats, s)
		}
	}
	if len(stats) == 0 || slices.Min(stats) == slices.Max(stats) {
		return iv, nil
	}
	full := a.Coincidences()
	var jack []float64
	var mult []int64
	for p := range a.Patterns {
		if err := ctx.Err(); err != nil {
			return iv, err
		}
		for i := range o {
			copy(o[i], full[i])
		}
		a.coincidence(o, p, -1)
		if v := AlphaFromCoincidences(o, delta); !math.IsNaN(v) {
			jack, mult = append(jack, v), append(mult, a.Mult[p])
		}
	}
	ci := BCaExpandedFromReplicates(stats, theta, JackknifeAcceleration(jack, mult), units)
	if !(ci[1] > ci[0]) {
		return iv, nil
	}
	iv.Lo, iv.Hi, iv.Method, iv.Unreliable = ci[0], ci[1], MethodAlphaBCa, UnreliableFor(MethodBCa, units)
	return iv, nil
}
