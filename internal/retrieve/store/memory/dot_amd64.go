package memory

import "golang.org/x/sys/cpu"

// useAVX2 selects the AVX2 kernel (dot_amd64.s) when the CPU and OS support AVX2
// (x/sys/cpu reports HasAVX2 only when the OS saves the YMM registers).
var useAVX2 = cpu.X86.HasAVX2

// dot4AVX2 returns the dot products of v[:n] with a, b, c and d, computed exactly
// as dot4Portable computes them; n is a positive multiple of 16.
//
//go:noescape
func dot4AVX2(v, a, b, c, d *float32, n int) (sa, sb, sc, sd float32)

// dot4 returns the dot products of v with a, b, c and d (all of len(v)),
// bit-identical to dot4Portable on every CPU.
func dot4(v, a, b, c, d []float32) (float32, float32, float32, float32) {
	n := len(v)
	a, b, c, d = a[:n], b[:n], c[:n], d[:n]
	m := n &^ 15
	if !useAVX2 || m == 0 {
		return dot4Portable(v, a, b, c, d)
	}
	sa, sb, sc, sd := dot4AVX2(&v[0], &a[0], &b[0], &c[0], &d[0], m)
	if m < n {
		ta, tb, tc, td := dot4Tail(v[m:], a[m:], b[m:], c[m:], d[m:])
		sa, sb, sc, sd = sa+ta, sb+tb, sc+tc, sd+td
	}
	return sa, sb, sc, sd
}
