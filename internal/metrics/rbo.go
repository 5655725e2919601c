package metrics

import "math"

// Rank-biased overlap (Webber, Moffat and Zobel 2010, "A similarity measure for
// indefinite rankings", ACM TOIS 28(4)): how similar two rankings are, weighting
// the top more. At depth d the agreement is A_d = |S[:d] ∩ L[:d]| / d; RBO is the
// expected agreement of a reader who looks at depth d+1 after depth d with
// probability p (the persistence): RBO = (1−p) Σ_{d≥1} p^(d−1) A_d. 1 is the same
// ranking, 0 two rankings with nothing in common.

// RBOPersistence is the persistence p of check's rank-biased overlap: a reader
// who goes on to the next rank with probability 0.9 looks at 10 ranks on average
// (1/(1−p)), check's default k, and the first 10 ranks carry 85.6% of the weight
// (RBOPrefixWeight).
const RBOPersistence = 0.9

// RBOExtEnded is RBO_EXT of two rankings that end where they end: a list
// shorter than the other has nothing below its last item (a retriever that
// returned fewer than k results), so it is evaluated to the longer one's length
// l with the shorter one's missing ranks matching nothing (Webber et al. 2010,
// eq. 30, at depth l, X_d the overlap of the first d items of each):
//
//	RBO_EXT = (1−p)/p · Σ_{d=1..l} X_d/d · p^d + X_l/l · p^l
//
// For two lists of one length it equals RBOExt. A list that is a proper prefix
// of the other is below 1 (its ranking stopped). Two empty lists give 1, one
// empty list 0. The items of each list must be distinct.
func RBOExtEnded[T comparable](a, b []T, p float64) float64 { return rboExt(a, b, p, false) }

func rboExt[T comparable](a, b []T, p float64, uneven bool) float64 {
	if len(a) > len(b) {
		a, b = b, a
	}
	s, l := len(a), len(b)
	switch {
	case l == 0:
		return 1
	case s == 0:
		return 0
	case s == l && equalLists(a, b):
		return 1
	}
	// hits[d] counts the common items whose deeper position (1-based) is d:
	// X_d = Σ_{e ≤ d} hits[e].
	var buf [65]int32
	var hits []int32
	if l < len(buf) {
		hits = buf[:l+1]
	} else {
		hits = make([]int32, l+1)
	}
	if l <= 64 {
		for i, x := range a {
			for j, y := range b {
				if x == y {
					hits[max(i, j)+1]++
					break
				}
			}
		}
	} else {
		pos := make(map[T]int, l)
		for j, y := range b {
			if _, ok := pos[y]; !ok {
				pos[y] = j
			}
		}
		for i, x := range a {
			if j, ok := pos[x]; ok {
				hits[max(i, j)+1]++
			}
		}
	}
	var x, xs, sum float64
	pd := 1.0
	fs := float64(s)
	for d := 1; d <= l; d++ {
		x += float64(hits[d])
		pd *= p
		fd := float64(d)
		sum += x / fd * pd
		switch {
		case d == s:
			xs = x
		case d > s && uneven:
			sum += xs * (fd - fs) / (fs * fd) * pd
		}
	}
	last := x / float64(l) // the agreement at depth l, assumed below it
	if uneven {
		last = (x-xs)/float64(l) + xs/fs
	}
	r := (1-p)/p*sum + last*pd
	return math.Min(1, math.Max(0, r))
}

func equalLists[T comparable](a, b []T) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// RBOPrefixWeight is the share of RBO's weight that falls on the first d ranks
// at persistence p (Webber et al. 2010, eq. 21):
//
//	W(1:d) = 1 − p^(d−1) + (1−p)/p · d · ( ln(1/(1−p)) − Σ_{i=1..d−1} p^i/i )
//
// 0.856 for p = 0.9 and d = 10.
func RBOPrefixWeight(p float64, d int) float64 {
	if d <= 0 {
		return 0
	}
	var tail float64
	pi := 1.0
	for i := 1; i < d; i++ {
		pi *= p
		tail += pi / float64(i)
	}
	return 1 - math.Pow(p, float64(d-1)) + (1-p)/p*float64(d)*(math.Log(1/(1-p))-tail)
}

// LeftTop is how many entries of the base top k a left the head top k b:
// |a \ b|, the items of a that b does not hold (a list shorter than the other
// has fewer places: what it lacks has left). Both lists hold distinct items.
// Two top k hold the same set exactly when LeftTop is 0 and their lengths are
// equal.
func LeftTop[T comparable](a, b []T) int {
	left := 0
	if len(b) <= 64 {
		for _, x := range a {
			found := false
			for _, y := range b {
				if x == y {
					found = true
					break
				}
			}
			if !found {
				left++
			}
		}
		return left
	}
	in := make(map[T]struct{}, len(b))
	for _, y := range b {
		in[y] = struct{}{}
	}
	for _, x := range a {
		if _, ok := in[x]; !ok {
			left++
		}
	}
	return left
}
