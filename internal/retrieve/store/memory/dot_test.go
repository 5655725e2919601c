package memory

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store"
)

// reference is the dot product in float64, the yardstick for both paths.
func reference(v, a []float32) float64 {
	var s float64
	for i := range v {
		s += float64(v[i]) * float64(a[i])
	}
	return s
}

// dot4 (the AVX2 kernel where the CPU has it, plus its tail) is bit-identical to
// dot4Portable for every length around the kernel's 16-float step, on inputs of
// mixed magnitudes (so that a different rounding order would show), and both are
// close to the float64 reference.
func TestDot4BitIdenticalToPortable(t *testing.T) {
	if !useAVX2 {
		t.Log("this CPU has no AVX2: dot4 is dot4Portable, the kernel is not exercised here")
	}
	r := rand.New(rand.NewPCG(9, 9))
	lengths := []int{1, 2, 3, 7, 15, 16, 17, 31, 32, 33, 47, 48, 63, 64, 65, 100, 383, 384, 385, 1023, 1024, 1031}
	for _, n := range lengths {
		for trial := range 20 {
			vs := make([][]float32, 5)
			for i := range vs {
				vs[i] = make([]float32, n)
				for j := range vs[i] {
					vs[i][j] = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(7)-3)))
				}
			}
			got := [4]float32{}
			got[0], got[1], got[2], got[3] = dot4(vs[0], vs[1], vs[2], vs[3], vs[4])
			want := [4]float32{}
			want[0], want[1], want[2], want[3] = dot4Portable(vs[0], vs[1], vs[2], vs[3], vs[4])
			for q := range 4 {
				require.Equal(t, math.Float32bits(want[q]), math.Float32bits(got[q]), "n=%d trial %d query %d: %v vs %v", n, trial, q, got[q], want[q])
				ref := reference(vs[0], vs[q+1])
				var scale float64
				for j := range vs[0] {
					scale += math.Abs(float64(vs[0][j]) * float64(vs[q+1][j]))
				}
				assert.InDelta(t, ref, float64(got[q]), 1e-5*scale+1e-30, "n=%d query %d", n, q)
			}
		}
	}
}

// The kernel works on unaligned slices (any float offset into a backing array).
func TestDot4Unaligned(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	back := make([]float32, 5*(64+8))
	for i := range back {
		back[i] = float32(r.NormFloat64())
	}
	for off := range 8 {
		sl := func(i int) []float32 { s := back[i*72+off:]; return s[:64+off%3] }
		a, b, c, d := dot4(sl(0), sl(1), sl(2), sl(3), sl(4))
		pa, pb, pc, pd := dot4Portable(sl(0), sl(1), sl(2), sl(3), sl(4))
		assert.Equal(t, [4]float32{pa, pb, pc, pd}, [4]float32{a, b, c, d}, "offset %d", off)
	}
}

// A whole search gives bit-identical hits with the kernel and with the portable
// path: odd query counts (so blocks end with padding slots), dimensions that are
// not a multiple of 16, locale filters, several workers.
func TestSearchSameWithAndWithoutAVX2(t *testing.T) {
	if !useAVX2 {
		t.Skip("this CPU has no AVX2: there is only the portable path")
	}
	r := rand.New(rand.NewPCG(7, 8))
	locales := []string{"en", "es-419", "pt-BR"}
	for _, tc := range []struct{ n, dim, nq, k int }{
		{200, 17, 1, 5}, {500, 100, 3, 10}, {1000, 384, 37, 10}, {333, 1031, 65, 7},
	} {
		t.Run(fmt.Sprintf("n=%d dim=%d q=%d", tc.n, tc.dim, tc.nq), func(t *testing.T) {
			s := New(2)
			require.NoError(t, s.Add(context.Background(), records(r, tc.n, tc.dim, locales)))
			qs := make([]store.Query, tc.nq)
			for i := range qs {
				qs[i] = store.Query{Vector: randVec(r, tc.dim)}
				if i%3 == 1 {
					qs[i].Locale = locales[i%len(locales)]
				}
			}
			fast, err := s.Search(context.Background(), qs, tc.k)
			require.NoError(t, err)
			useAVX2 = false
			portable, err := s.Search(context.Background(), qs, tc.k)
			useAVX2 = true
			require.NoError(t, err)
			require.Equal(t, portable, fast)
		})
	}
}
