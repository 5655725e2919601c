package metrics

import "math"

// Kappa weighting schemes (the lock's kappa_weighting).
const (
	KappaUnweighted = "none"
	KappaLinear     = "linear"
	KappaQuadratic  = "quadratic"
)

// ConfusionMatrix counts pairs over k categories: m[h][j] is the number of items
// with first rating h and second rating j. Ratings outside [0,k) panic.
func ConfusionMatrix(first, second []int, k int) [][]int {
	m := make([][]int, k)
	for i := range m {
		m[i] = make([]int, k)
	}
	for i := range first {
		m[first[i]][second[i]]++
	}
	return m
}

// KappaWeights returns the k×k disagreement weights of a scheme (0 on the diagonal).
// none: w_ij = 1 for i ≠ j (Cohen 1960); linear: w_ij = |i−j|/(k−1);
// quadratic: w_ij = ((i−j)/(k−1))² (Cohen 1968, Fleiss & Cohen 1973).
// An unknown scheme returns nil.
func KappaWeights(k int, scheme string) [][]float64 {
	w := make([][]float64, k)
	for i := range w {
		w[i] = make([]float64, k)
		for j := range w[i] {
			if i == j {
				continue
			}
			d := math.Abs(float64(i-j)) / float64(k-1)
			switch scheme {
			case KappaUnweighted:
				w[i][j] = 1
			case KappaLinear:
				w[i][j] = d
			case KappaQuadratic:
				w[i][j] = d * d
			default:
				return nil
			}
		}
	}
	return w
}

// margins returns the row sums, column sums and total of a square matrix.
func margins(m [][]int) (rows, cols []int64, n int64) {
	k := len(m)
	rows, cols = make([]int64, k), make([]int64, k)
	for i := range m {
		for j, c := range m[i] {
			rows[i] += int64(c)
			cols[j] += int64(c)
			n += int64(c)
		}
	}
	return rows, cols, n
}

// chanceAgreementIsOne reports whether the expected agreement p_e = Σ r_i c_i / n²
// is exactly 1 (both raters used one and the same category) or n = 0, the cases
// where every kappa is undefined. Computed in integers, so it is exact.
func chanceAgreementIsOne(rows, cols []int64, n int64) bool {
	var rc int64
	for i := range rows {
		rc += rows[i] * cols[i]
	}
	return n == 0 || rc == n*n
}

// Agreement is the observed proportion of exact agreement p_o = Σ m_ii / n. NaN when n = 0.
func Agreement(m [][]int) float64 {
	_, _, n := margins(m)
	if n == 0 {
		return math.NaN()
	}
	var d int64
	for i := range m {
		d += int64(m[i][i])
	}
	return float64(d) / float64(n)
}

// CohenKappa is Cohen's (1960) kappa κ = (p_o − p_e) / (1 − p_e), with p_o the
// observed and p_e = Σ r_i c_i / n² the chance agreement, evaluated as the exact
// integer ratio (n Σ m_ii − Σ r_i c_i) / (n² − Σ r_i c_i). NaN (undefined) when p_e = 1.
func CohenKappa(m [][]int) float64 {
	rows, cols, n := margins(m)
	if chanceAgreementIsOne(rows, cols, n) {
		return math.NaN()
	}
	var diag, rc int64
	for i := range m {
		diag += int64(m[i][i])
		rc += rows[i] * cols[i]
	}
	return float64(n*diag-rc) / float64(n*n-rc)
}

// WeightedKappa is Cohen's (1968) weighted kappa κ_w = 1 − Σ w_ij o_ij / Σ w_ij e_ij
// with disagreement weights w (0 on the diagonal), observed counts o_ij = m_ij and
// chance counts e_ij = r_i c_j / n. NaN (undefined) when p_e = 1, or w is nil.
func WeightedKappa(m [][]int, w [][]float64) float64 {
	rows, cols, n := margins(m)
	if w == nil || chanceAgreementIsOne(rows, cols, n) {
		return math.NaN()
	}
	var obs, exp float64
	for i := range m {
		for j := range m[i] {
			obs += w[i][j] * float64(m[i][j]) * float64(n)
			exp += w[i][j] * float64(rows[i]) * float64(cols[j])
		}
	}
	if exp == 0 {
		return math.NaN()
	}
	return 1 - obs/exp
}
