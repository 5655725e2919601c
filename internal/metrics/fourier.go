package metrics

import "math"

// The exact sign-flip distribution on a lattice, by inverting its
// characteristic function. The signed sum T = Σ_i s_i q_i of integers q_i with
// fair independent signs has the characteristic function
// ψ(θ) = E[e^{iθT}] = Π_v cos(θ·v)^{m_v} (v the distinct |q_i|, m_v their
// counts): real and even. T lies in [−S, S], S = Σ|q_i|, so with N > 2S
// points θ_j = 2πj/N the discrete inversion is exact:
// P(T = t) = (1/N)·Σ_j ψ(θ_j)·cos(θ_j·t), and the upper tail
// P(T ≥ t₀) = (1/N)·Σ_j ψ(θ_j)·C_j(t₀) with C_j(t₀) = Σ_{t=t₀}^{S} cos(θ_j t)
// = [sin((S + ½)θ_j) − sin((t₀ − ½)θ_j)] / (2 sin(θ_j/2)) (S − t₀ + 1 at
// θ = 0). It costs N·(distinct values) cosines and logarithms, and no memory
// beyond the distinct values: where the convolution's work grows with
// S × (non-zero differences), this grows with S × (distinct values). Its
// rounding error is absolute (Σ_j |ψ_j C_j|/N is of order log N): at most
// about 1e-12 in the tests (fourier_test.go), so the result is used only where
// it is at least FourierMinP; a smaller p is left to the saddlepoint, whose
// error is relative.

// FourierMinP is the smallest sign-flip p-value the Fourier inversion reports:
// its absolute rounding error (at most about 1e-12) is then below 1e-3 of p.
const FourierMinP = 1e-9

// SignFlipFourierBudget bounds the work of the Fourier inversion: N × distinct
// values, N = 2S + 1 (cosines and logarithms; about 0.3 s on a busy 2-core
// machine at the bound). Precision@10 at 50,000 queries needs about 1.5·10⁶.
const SignFlipFourierBudget = 20_000_000

// signFlipFourierP is the two-sided sign-flip p-value P(|T| ≥ tObs), tObs ≥ 0,
// of T = Σ v·(2K_v − m_v), K_v ~ Binomial(m_v, ½), for the distinct positive
// lattice integers q (counts m, S = Σ q·m), by the inversion above; ok =
// false beyond SignFlipFourierBudget.
func signFlipFourierP(q, m []int64, tObs int64) (p float64, ok bool) {
	var s int64
	for i := range q {
		s += q[i] * m[i]
	}
	if tObs <= 0 {
		return 1, true
	}
	if tObs > s {
		return 0, true
	}
	n := 2*s + 1
	if float64(n)*float64(len(q)) > SignFlipFourierBudget {
		return math.NaN(), false
	}
	nf := float64(n)
	// Angles are reduced exactly in integers: θ_j·v = 2π·((j·v) mod N)/N, and
	// (t₀ − ½)θ_j = π·((2t₀ − 1)·j mod 2N)/N; (S + ½)θ_j = πj, whose sine is 0.
	angle := func(num, den int64) float64 { return math.Pi * float64(num) / float64(den) }
	// ψ is even: θ_j and θ_{N−j} give the same term, so sum j = 1 … (N−1)/2
	// twice and add j = 0 (N is odd).
	tail := float64(s - tObs + 1) // j = 0: ψ = 1, C = S − t₀ + 1
	for j := int64(1); j <= (n-1)/2; j++ {
		logAbs, neg := 0.0, false
		for i, v := range q {
			c := math.Cos(angle(2*((j*v)%n), n))
			if c == 0 {
				logAbs = math.Inf(-1)
			} else {
				logAbs += float64(m[i]) * math.Log(math.Abs(c))
				neg = neg != (c < 0 && m[i]%2 == 1)
			}
			if logAbs < -745 { // ψ underflows: the term is 0
				break
			}
		}
		if logAbs < -745 {
			continue
		}
		psi := math.Exp(logAbs)
		if neg {
			psi = -psi
		}
		cj := -math.Sin(angle(((2*tObs-1)*j)%(2*n), n)) / (2 * math.Sin(angle(j, n)))
		tail += 2 * psi * cj
	}
	return min(1, max(0, 2*tail/nf)), true
}
