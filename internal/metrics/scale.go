package metrics

import "math"

// The scale of compare's figures: the largest DCG@k there can be, the seed's
// three relevance buckets, and the number of queries a power calculation asks
// for. Pure functions of counts; the reports print them.

// MaxDCG is the largest DCG@k possible when every one of the k results has
// relevance level: Σ_{r ≤ k} gain(level) / log2(r + 1) (ten results of
// relevance 3 give 31.80 with the exp gain, 13.63 with the linear one).
func MaxDCG(k, level int, g Gain) float64 {
	if k < 1 || level < 1 {
		return 0
	}
	levels := make([]int, level+1)
	levels[level] = k
	return IdealDCG(levels, k, g)
}

// The seed's relevance buckets: highly relevant is relevance 3 (and any level
// above it), relevant+ is relevance ≥ 2, not relevant is relevance ≤ 1.
const (
	HighlyRelevantLevel = 3
	RelevantPlusLevel   = 2
)

// Buckets are the shares of N documents in the seed's three buckets
// (HighlyRelevant ⊂ RelevantPlus; NotRelevant = 1 − RelevantPlus). NaN when N = 0.
type Buckets struct {
	N                                         int
	HighlyRelevant, RelevantPlus, NotRelevant float64
}

// RelevanceBuckets counts documents by level (byLevel[l] documents of relevance
// l, level 0 including the negatively judged) into the buckets. compare passes
// the judged documents only, so the shares are of judged query–result pairs,
// as the seed's mean relevance is.
func RelevanceBuckets(byLevel []int) Buckets {
	var b Buckets
	high, plus := 0, 0
	for l, c := range byLevel {
		b.N += c
		if l >= HighlyRelevantLevel {
			high += c
		}
		if l >= RelevantPlusLevel {
			plus += c
		}
	}
	if b.N == 0 {
		nan := math.NaN()
		b.HighlyRelevant, b.RelevantPlus, b.NotRelevant = nan, nan, nan
		return b
	}
	n := float64(b.N)
	b.HighlyRelevant, b.RelevantPlus = float64(high)/n, float64(plus)/n
	b.NotRelevant = float64(b.N-plus) / n
	return b
}

// QueriesToDetect is the number of paired queries at which a two-sided level-α
// test detects a true mean difference delta with probability power, from the
// sd of the paired differences: ⌈((z_{1−α/2} + z_{power})·sd/|delta|)²⌉, the
// inverse of MDDMean. 0 when delta is 0 or the inputs are not finite.
func QueriesToDetect(sd, delta, alpha, power float64) int {
	if delta == 0 || math.IsNaN(sd) || math.IsNaN(delta) || math.IsInf(sd, 0) || math.IsInf(delta, 0) {
		return 0
	}
	z := NormalQuantile(1-alpha/2) + NormalQuantile(power)
	n := math.Ceil(math.Pow(z*sd/math.Abs(delta), 2))
	if n > math.MaxInt32 {
		return math.MaxInt32
	}
	return max(int(n), 2)
}

// QueriesForHalfWidth is the number of queries at which an interval of relative
// half-width w over n queries narrows to target, the width falling as 1/√n:
// ⌈n·(w/target)²⌉ (n when it is already narrow enough).
func QueriesForHalfWidth(n int, w, target float64) int {
	if n < 1 || w <= target || target <= 0 || math.IsNaN(w) {
		return n
	}
	x := math.Ceil(float64(n) * (w / target) * (w / target))
	if x > math.MaxInt32 {
		return math.MaxInt32
	}
	return int(x)
}

// SampleSDOf is the sample standard deviation of xs (NaN below 2 values).
func SampleSDOf(xs []float64) float64 {
	if len(xs) < 2 {
		return math.NaN()
	}
	m := 0.0
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	ss := 0.0
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return math.Sqrt(ss / float64(len(xs)-1))
}
