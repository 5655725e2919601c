package memory

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
)

// dot4 (the AVX2 kernel where available, plus its tail) agrees with the generic
// loop for every length around the kernel's 16-float step.
func TestDot4MatchesGeneric(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	for n := 1; n <= 70; n++ {
		vs := make([][]float32, 5)
		for i := range vs {
			vs[i] = make([]float32, n)
			for j := range vs[i] {
				vs[i][j] = float32(r.NormFloat64())
			}
		}
		a, b, c, d := dot4(vs[0], vs[1], vs[2], vs[3], vs[4])
		ga, gb, gc, gd := dot4Generic(vs[0], vs[1], vs[2], vs[3], vs[4])
		for i, p := range [][2]float32{{a, ga}, {b, gb}, {c, gc}, {d, gd}} {
			assert.InDelta(t, p[1], p[0], 1e-4, "n=%d query %d", n, i)
		}
	}
}
