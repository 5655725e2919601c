package memory

// The dot products of the memory store are defined by dot4Portable, and the
// assembly kernel (dot_amd64.s) reproduces its arithmetic exactly, operation for
// operation, so that scores and rankings are bit-identical on every CPU and
// architecture (with or without AVX2), not merely close. Every product is
// rounded to float32 before it is added (an explicit float32 conversion, which Go
// never fuses into an FMA), and the additions happen in a fixed order.

// dot4Portable returns the dot products of v with a, b, c and d (all of len(v)).
// The first n&^15 elements are summed in 16 lanes per query (lane l takes the
// elements i with i mod 16 = l), the lanes are reduced as reduce16 does, and the
// remaining elements are then added one by one (dot4Tail).
func dot4Portable(v, a, b, c, d []float32) (float32, float32, float32, float32) {
	n := len(v)
	a, b, c, d = a[:n], b[:n], c[:n], d[:n]
	m := n &^ 15
	sa, sb, sc, sd := dotLanes(v[:m], a[:m]), dotLanes(v[:m], b[:m]), dotLanes(v[:m], c[:m]), dotLanes(v[:m], d[:m])
	if m < n {
		ta, tb, tc, td := dot4Tail(v[m:], a[m:], b[m:], c[m:], d[m:])
		sa, sb, sc, sd = sa+ta, sb+tb, sc+tc, sd+td
	}
	return sa, sb, sc, sd
}

// dotLanes sums v·a (len(v) a multiple of 16) in 16 lanes, reduced by reduce16.
// Lanes are independent, so lanes 0-7 and lanes 8-15 are summed in two passes of
// eight locals each, which stay in registers.
func dotLanes(v, a []float32) float32 {
	a = a[:len(v)]
	var l [16]float32
	for half := 0; half < 16; half += 8 {
		var l0, l1, l2, l3, l4, l5, l6, l7 float32
		for i := half; i+8 <= len(v); i += 16 {
			x := (*[8]float32)(v[i : i+8])
			y := (*[8]float32)(a[i : i+8])
			l0 += float32(x[0] * y[0])
			l1 += float32(x[1] * y[1])
			l2 += float32(x[2] * y[2])
			l3 += float32(x[3] * y[3])
			l4 += float32(x[4] * y[4])
			l5 += float32(x[5] * y[5])
			l6 += float32(x[6] * y[6])
			l7 += float32(x[7] * y[7])
		}
		*(*[8]float32)(l[half : half+8]) = [8]float32{l0, l1, l2, l3, l4, l5, l6, l7}
	}
	return reduce16(&l)
}

// reduce16 sums 16 lanes in the kernel's order: lane l + lane l+8 (l < 8), then
// + lane l+4 (l < 4), then (l0 + l1) + (l2 + l3).
func reduce16(l *[16]float32) float32 {
	var s [8]float32
	for i := range 8 {
		s[i] = l[i] + l[i+8]
	}
	var t [4]float32
	for i := range 4 {
		t[i] = s[i] + s[i+4]
	}
	return (t[0] + t[1]) + (t[2] + t[3])
}

// dot4Tail sums the products of v with a, b, c and d element by element, in order.
func dot4Tail(v, a, b, c, d []float32) (float32, float32, float32, float32) {
	n := len(v)
	a, b, c, d = a[:n], b[:n], c[:n], d[:n]
	var sa, sb, sc, sd float32
	for i, x := range v {
		sa += float32(x * a[i])
		sb += float32(x * b[i])
		sc += float32(x * c[i])
		sd += float32(x * d[i])
	}
	return sa, sb, sc, sd
}
