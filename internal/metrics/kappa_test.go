package metrics

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ratings expands a confusion matrix into paired rating lists.
func ratings(m [][]int) (first, second []int) {
	for i := range m {
		for j, c := range m[i] {
			for range c {
				first = append(first, i)
				second = append(second, j)
			}
		}
	}
	return first, second
}

// TestCohenKappaWikipediaExample is the worked example of Wikipedia's "Cohen's kappa"
// article: 50 proposals, both readers yes 20, A yes B no 5, A no B yes 10, both no 15.
// p_o = 35/50 = 0.7; p_e = 25/50·30/50 + 25/50·20/50 = 0.5; κ = 0.4.
func TestCohenKappaWikipediaExample(t *testing.T) {
	m := [][]int{{20, 5}, {10, 15}}
	a, b := ratings(m)
	require.Len(t, a, 50)

	// Independently of the implementation: the textbook formula on raw ratings.
	n := float64(len(a))
	po, aYes, bYes := 0.0, 0.0, 0.0
	for i := range a {
		if a[i] == b[i] {
			po++
		}
		if a[i] == 0 {
			aYes++
		}
		if b[i] == 0 {
			bYes++
		}
	}
	po /= n
	pe := aYes/n*bYes/n + (n-aYes)/n*(n-bYes)/n
	want := (po - pe) / (1 - pe)
	assert.InDelta(t, 0.7, po, 1e-12)
	assert.InDelta(t, 0.5, pe, 1e-12)
	assert.InDelta(t, 0.4, want, 1e-12)

	got := ConfusionMatrix(a, b, 2)
	assert.Equal(t, m, got)
	assert.InDelta(t, 0.7, Agreement(got), 1e-12)
	assert.InDelta(t, 0.4, CohenKappa(got), 1e-12)
	// With two categories every weighting is the unweighted kappa.
	for _, s := range []string{KappaUnweighted, KappaLinear, KappaQuadratic} {
		assert.InDelta(t, 0.4, WeightedKappa(got, KappaWeights(2, s)), 1e-12, s)
	}
}

// TestWeightedKappa3x3 checks a 3×3 table against values derived by hand (below) and
// against independent formulations.
//
//	        j0  j1  j2 | r
//	h0      10   2   0 | 12
//	h1       3   8   2 | 13
//	h2       1   2  12 | 15
//	c       14  12  14 | n = 40
//
// Σ m over |i−j| = 1 is 2+3+2+2 = 9, over |i−j| = 2 is 0+1 = 1.
// Σ r_i c_j over |i−j| = 1 is 12·12+13·14+13·14+15·12 = 688, over |i−j| = 2 is 12·14+15·14 = 378.
// linear:    κ = 1 − (½·9 + 1)/((½·688 + 378)/40) = 1 − 5.5/18.05 = 251/361
// quadratic: κ = 1 − (¼·9 + 1)/((¼·688 + 378)/40) = 1 − 3.25/13.75 = 42/55
// none:      p_o = 30/40, p_e = (12·14+13·12+15·14)/1600 = 534/1600, κ = 333/533
func TestWeightedKappa3x3(t *testing.T) {
	m := [][]int{{10, 2, 0}, {3, 8, 2}, {1, 2, 12}}
	a, b := ratings(m)
	tests := []struct {
		scheme string
		want   float64
	}{
		{KappaUnweighted, 333.0 / 533},
		{KappaLinear, 251.0 / 361},
		{KappaQuadratic, 42.0 / 55},
	}
	for _, tt := range tests {
		t.Run(tt.scheme, func(t *testing.T) {
			assert.InDelta(t, tt.want, WeightedKappa(m, KappaWeights(3, tt.scheme)), 1e-12)
		})
	}
	assert.InDelta(t, 333.0/533, CohenKappa(m), 1e-12)
	assert.InDelta(t, 0.75, Agreement(m), 1e-12)

	// Quadratic weighted kappa equals 2·cov(x,y) / (var x + var y + (x̄ − ȳ)²) with
	// population moments (Cohen 1968): an independent route to the same number.
	n := float64(len(a))
	var mx, my float64
	for i := range a {
		mx += float64(a[i])
		my += float64(b[i])
	}
	mx, my = mx/n, my/n
	var cov, vx, vy float64
	for i := range a {
		dx, dy := float64(a[i])-mx, float64(b[i])-my
		cov += dx * dy
		vx += dx * dx
		vy += dy * dy
	}
	cov, vx, vy = cov/n, vx/n, vy/n
	assert.InDelta(t, 2*cov/(vx+vy+(mx-my)*(mx-my)), WeightedKappa(m, KappaWeights(3, KappaQuadratic)), 1e-12)

	// Linear weighted kappa in its agreement-weight form (p_o(w) − p_e(w)) / (1 − p_e(w)),
	// agreement weight 1 − |i−j|/(k−1), from raw ratings and margins.
	rows, cols := make([]float64, 3), make([]float64, 3)
	po := 0.0
	for i := range a {
		po += 1 - math.Abs(float64(a[i]-b[i]))/2
		rows[a[i]]++
		cols[b[i]]++
	}
	po /= n
	pe := 0.0
	for i := range 3 {
		for j := range 3 {
			pe += (1 - math.Abs(float64(i-j))/2) * rows[i] / n * cols[j] / n
		}
	}
	assert.InDelta(t, (po-pe)/(1-pe), WeightedKappa(m, KappaWeights(3, KappaLinear)), 1e-12)
}

func TestKappaEdgeCases(t *testing.T) {
	w := KappaWeights(3, KappaQuadratic)
	tests := []struct {
		name      string
		m         [][]int
		kappa     float64 // NaN: undefined
		weighted  float64
		agreement float64
	}{
		{"empty", [][]int{{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}, math.NaN(), math.NaN(), math.NaN()},
		{"single class on both sides: chance agreement 1", [][]int{{0, 0, 0}, {0, 7, 0}, {0, 0, 0}}, math.NaN(), math.NaN(), 1},
		{"one side constant: kappa 0", [][]int{{0, 0, 0}, {2, 3, 4}, {0, 0, 0}}, 0, 0, 3.0 / 9},
		{"perfect agreement", [][]int{{3, 0, 0}, {0, 4, 0}, {0, 0, 5}}, 1, 1, 1},
		{"perfect disagreement on two classes", [][]int{{0, 0, 5}, {0, 0, 0}, {5, 0, 0}}, -1, -1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			check := func(want, got float64) {
				t.Helper()
				if math.IsNaN(want) {
					assert.True(t, math.IsNaN(got), "want undefined (NaN), got %v", got)
					return
				}
				assert.InDelta(t, want, got, 1e-12)
			}
			check(tt.kappa, CohenKappa(tt.m))
			check(tt.weighted, WeightedKappa(tt.m, w))
			check(tt.agreement, Agreement(tt.m))
		})
	}
	assert.Nil(t, KappaWeights(3, "cubic"))
	assert.True(t, math.IsNaN(WeightedKappa([][]int{{1, 0}, {0, 1}}, nil)))
}

func TestKappaWeights(t *testing.T) {
	assert.Equal(t, [][]float64{{0, 1, 1}, {1, 0, 1}, {1, 1, 0}}, KappaWeights(3, KappaUnweighted))
	assert.Equal(t, [][]float64{{0, 0.5, 1}, {0.5, 0, 0.5}, {1, 0.5, 0}}, KappaWeights(3, KappaLinear))
	assert.Equal(t, [][]float64{{0, 0.25, 1}, {0.25, 0, 0.25}, {1, 0.25, 0}}, KappaWeights(3, KappaQuadratic))
}

// TestKappaPublishedExamples checks kappa against values printed in the literature,
// recomputed independently here from the tables' proportions.
func TestKappaPublishedExamples(t *testing.T) {
	// Wikipedia, "Cohen's kappa", the two tables with the same 60% observed
	// agreement but different kappas: 0.1304 and 0.2593.
	for _, tc := range []struct {
		m    [][]int
		want float64
	}{
		{[][]int{{45, 15}, {25, 15}}, 0.1304},
		{[][]int{{25, 35}, {5, 35}}, 0.2593},
	} {
		assert.InDelta(t, 0.6, Agreement(tc.m), 1e-12)
		assert.InDelta(t, tc.want, CohenKappa(tc.m), 0.00005)
	}

	// Cohen (1968), "Weighted kappa", Table 1: two judges, 200 patients, three
	// diagnoses (personality disorder, neurosis, psychosis), with his ratio-scaled
	// disagreement weights 1 (PD-N), 3 (PD-P), 6 (N-P). He reports κ = .49 and
	// κ_w = .35 (psych::cohen.kappa reproduces .492 and .348).
	prop := [][]float64{{.44, .07, .09}, {.05, .20, .05}, {.01, .03, .06}}
	v := [][]float64{{0, 1, 3}, {1, 0, 6}, {3, 6, 0}}
	m := make([][]int, 3)
	for i := range prop {
		m[i] = make([]int, 3)
		for j := range prop[i] {
			m[i][j] = int(math.Round(prop[i][j] * 200))
		}
	}
	// Independently: p_o, p_e from the margins of the proportions; κ_w = 1 − Σ v p_o / Σ v p_c.
	row, col := make([]float64, 3), make([]float64, 3)
	po := 0.0
	for i := range prop {
		for j := range prop[i] {
			row[i] += prop[i][j]
			col[j] += prop[i][j]
		}
		po += prop[i][i]
	}
	pe, vo, vc := 0.0, 0.0, 0.0
	for i := range prop {
		pe += row[i] * col[i]
		for j := range prop[i] {
			vo += v[i][j] * prop[i][j]
			vc += v[i][j] * row[i] * col[j]
		}
	}
	kappa, kw := (po-pe)/(1-pe), 1-vo/vc
	assert.InDelta(t, 0.49, kappa, 0.005)
	assert.InDelta(t, 0.35, kw, 0.005)
	assert.InDelta(t, 0.492, kappa, 0.0005)
	assert.InDelta(t, 0.348, kw, 0.0005)
	assert.InDelta(t, kappa, CohenKappa(m), 1e-12)
	// WeightedKappa is invariant to scaling the weights: Cohen's 1-3-6 as given.
	assert.InDelta(t, kw, WeightedKappa(m, v), 1e-12)
	scaled := [][]float64{{0, 1.0 / 6, 0.5}, {1.0 / 6, 0, 1}, {0.5, 1, 0}}
	assert.InDelta(t, kw, WeightedKappa(m, scaled), 1e-12)
}
