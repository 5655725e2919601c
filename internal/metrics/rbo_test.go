package metrics

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rboBrute is RBO_EXT from its definition, independently of the closed form:
// the agreement A_d at every depth by set intersection of the prefixes; below
// the shorter list's end its agreement X_s/s is assumed for its unseen items
// (A_d = (X_d + (d−s)·X_s/s)/d), below the longer one's end the last agreement
// holds; the series (1−p) Σ p^(d−1) A_d is summed until p^d is below 1e-18.
func rboBrute(a, b []string, p float64) float64 { return rboBruteV(a, b, p, true) }

// rboBruteV is rboBrute; with uneven false the shorter list has ended: its
// missing ranks match nothing (A_d = X_d/d to the longer list's end).
func rboBruteV(a, b []string, p float64, uneven bool) float64 {
	if len(a) > len(b) {
		a, b = b, a
	}
	s, l := len(a), len(b)
	if l == 0 {
		return 1
	}
	if s == 0 {
		return 0
	}
	overlap := func(d int) float64 {
		in := map[string]bool{}
		for _, x := range a[:min(d, s)] {
			in[x] = true
		}
		n := 0
		for _, y := range b[:min(d, l)] {
			if in[y] {
				n++
			}
		}
		return float64(n)
	}
	xs := overlap(s)
	agreement := func(d int) float64 {
		if d <= s || !uneven {
			return overlap(d) / float64(d)
		}
		return (overlap(d) + float64(d-s)*xs/float64(s)) / float64(d)
	}
	al := agreement(l)
	var sum float64
	for d := 1; math.Pow(p, float64(d-1)) > 1e-18; d++ {
		ad := al
		if d <= l {
			ad = agreement(d)
		}
		sum += (1 - p) * math.Pow(p, float64(d-1)) * ad
	}
	return sum
}

func letters(s string) []string { return strings.Split(s, "") }

func TestRBOExt(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		p    float64
		want float64
	}{
		// Published: the doctests of a Python implementation of the paper
		// (rbo_ext("abcdefg", "abcdefg", .9) = 1.000, ("abcdefg", "bacdefg") = 0.900).
		{"identical", "abcdefg", "abcdefg", 0.9, 1},
		{"first two swapped", "abcdefg", "bacdefg", 0.9, 0.9},
		// By hand: X = 0, 2; (0.1/0.9)(0.81) + (2/2)(0.81) = 0.9.
		{"two swapped", "ab", "ba", 0.9, 0.9},
		// By hand: X = 1, 1, 1; (0.1/0.9)(0.9 + 0.81/2 + 0.729/3) + (1/3)(0.729).
		{"only the first shared", "abc", "axy", 0.9, 0.1/0.9*(0.9+0.81/2+0.729/3) + 0.729/3},
		{"nothing shared", "abc", "xyz", 0.9, 0},
		{"both empty", "", "", 0.9, 1},
		{"one empty", "abc", "", 0.9, 0},
		{"a prefix of the other (extrapolation)", "abc", "abcde", 0.9, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := letters(tt.a), letters(tt.b)
			if tt.a == "" {
				a = nil
			}
			if tt.b == "" {
				b = nil
			}
			got := RBOExt(a, b, tt.p)
			assert.InDelta(t, tt.want, got, 1e-12)
			assert.InDelta(t, got, RBOExt(b, a, tt.p), 1e-15, "symmetric")
			if tt.want == 1 && tt.a == tt.b {
				assert.Equal(t, 1.0, got, "identical lists give exactly 1")
			}
		})
	}
}

// TestRBOExtBrute compares the closed form with the definition on seeded random
// rankings: even and uneven lengths, short lists (the quadratic path) and long
// ones (the map path), several persistences.
func TestRBOExtBrute(t *testing.T) {
	skipSimulationUnderRace(t)
	rng := rand.New(rand.NewPCG(7, 11))
	for trial := range 3000 {
		universe := 3 + rng.IntN(120)
		draw := func() []string {
			n := rng.IntN(min(universe, 90) + 1)
			perm := rng.Perm(universe)[:n]
			out := make([]string, n)
			for i, v := range perm {
				out[i] = "c" + string(rune('A'+v%26)) + string(rune('a'+v/26))
			}
			return out
		}
		a, b := draw(), draw()
		p := []float64{0.5, 0.8, 0.9, 0.95, 0.98}[trial%5]
		want := rboBrute(a, b, p)
		got := RBOExt(a, b, p)
		require.InDelta(t, want, got, 1e-12, "trial %d: %v vs %v at p=%v", trial, a, b, p)
		require.GreaterOrEqual(t, got, 0.0)
		require.LessOrEqual(t, got, 1.0)
		ended := RBOExtEnded(a, b, p)
		require.InDelta(t, rboBruteV(a, b, p, false), ended, 1e-12, "ended, trial %d", trial)
		if len(a) == len(b) {
			require.InDelta(t, got, ended, 1e-15, "one length: the same")
		}
	}
}

func TestRBOExtEnded(t *testing.T) {
	// By hand: [a b] against [a b c d e]: X = 1, 2, 2, 2, 2 and the list ended:
	// (0.1/0.9)(0.9 + 0.81 + 2·0.729/3 + 2·0.6561/4 + 2·0.59049/5) + (2/5)(0.59049).
	want := 0.1/0.9*(0.9+0.81+2*0.729/3+2*0.6561/4+2*0.59049/5) + 0.4*0.59049
	assert.InDelta(t, want, RBOExtEnded(letters("ab"), letters("abcde"), 0.9), 1e-15)
	assert.InDelta(t, 1, RBOExt(letters("ab"), letters("abcde"), 0.9), 1e-15, "eq. 32 extrapolates the prefix")
	assert.Equal(t, 1.0, RBOExtEnded(letters("abc"), letters("abc"), 0.9))
	assert.Equal(t, 1.0, RBOExtEnded([]string{}, nil, 0.9))
	assert.Equal(t, 0.0, RBOExtEnded(letters("abc"), nil, 0.9))
	assert.InDelta(t, 0.9, RBOExtEnded(letters("abcdefg"), letters("bacdefg"), 0.9), 1e-15)
}

func TestRBOExtHashes(t *testing.T) {
	// Any comparable item: the baseline join compares 64-bit id hashes.
	assert.InDelta(t, 0.9, RBOExt([]uint64{1, 2, 3}, []uint64{2, 1, 3}, 0.9), 1e-15)
}

func TestRBOPrefixWeight(t *testing.T) {
	// The paper: at p = 0.9 the first 10 ranks carry 86% of the weight.
	assert.InDelta(t, 0.8556, RBOPrefixWeight(0.9, 10), 5e-5)
	// Independently: rank i weighs Σ_{d≥i} (1−p) p^(d−1) / d (the share of A_d
	// that item i's agreement takes); the first d ranks' weights summed.
	for _, p := range []float64{0.5, 0.9, 0.98} {
		for _, d := range []int{1, 3, 10, 50} {
			var w float64
			for i := 1; i <= d; i++ {
				for e := i; math.Pow(p, float64(e-1)) > 1e-18; e++ {
					w += (1 - p) * math.Pow(p, float64(e-1)) / float64(e)
				}
			}
			assert.InDelta(t, w, RBOPrefixWeight(p, d), 1e-12, "p=%v d=%d", p, d)
		}
	}
	assert.Zero(t, RBOPrefixWeight(0.9, 0))
}

func BenchmarkRBOExt(b *testing.B) {
	x := []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	y := []uint64{2, 1, 3, 11, 5, 6, 12, 8, 9, 13}
	for b.Loop() {
		_ = RBOExt(x, y, RBOPersistence)
	}
}

// RBOExt is the extrapolated rank-biased overlap RBO_EXT of two rankings seen
// to their lengths (Webber et al. 2010, eq. 32, which handles uneven lengths):
// with s = len(short), l = len(long), X_d the overlap of the first d items of
// both (the whole of the shorter one past s),
//
//	RBO_EXT = (1−p)/p · ( Σ_{d=1..l} X_d/d · p^d + Σ_{d=s+1..l} X_s·(d−s)/(s·d) · p^d )
//	          + ( (X_l − X_s)/l + X_s/s ) · p^l
//
// that is, the agreement seen at the deepest rank is assumed to hold below it
// (and the shorter list's agreement to continue to the longer one's length).
// The items of each list must be distinct (a deduplicated top k). Two empty
// lists are the same ranking (1); one empty and one not share nothing (0).
// Identical lists give exactly 1; a list that is a prefix of the other also
// gives 1 (the extrapolation's assumption). 0 < p < 1.
func RBOExt[T comparable](a, b []T, p float64) float64 { return rboExt(a, b, p, true) }

func TestLeftTop(t *testing.T) {
	long := func(n, from int) []int {
		out := make([]int, n)
		for i := range out {
			out[i] = from + i
		}
		return out
	}
	tests := []struct {
		name string
		a, b []int
		want int
	}{
		{"same", []int{1, 2, 3}, []int{1, 2, 3}, 0},
		{"order only", []int{1, 2, 3}, []int{3, 1, 2}, 0},
		{"one replaced", []int{1, 2, 3}, []int{1, 9, 3}, 1},
		{"head ended", []int{1, 2, 3, 4, 5}, []int{1, 2}, 3},
		{"head longer", []int{1, 2}, []int{1, 2, 3}, 0},
		{"nothing in common", []int{1, 2}, []int{3, 4}, 2},
		{"empty base", nil, []int{1}, 0},
		{"empty head", []int{1, 2}, nil, 2},
		{"beyond 64: the map", long(100, 0), long(100, 30), 30},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, LeftTop(tt.a, tt.b))
		})
	}
}
