package metrics

import (
	"fmt"
	"math/big"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mathext"
)

// TestBinomialCDFHalfExact holds BinomialCDFHalf to the nearest float64 of
// Σ_{i ≤ k} C(n, i) / 2ⁿ, computed in rationals, for every n ≤ 62 and k < n,
// and to the incomplete beta beyond. An exact p of 1/32 (six pairs, all one
// way) must print as 0.0312 from McNemar as it does from the sign-flip test,
// whose convolution sums integers: the beta's last bits printed it 0.0313.
func TestBinomialCDFHalfExact(t *testing.T) {
	for n := int64(1); n <= 62; n++ {
		sum := new(big.Int)
		for k := int64(0); k < n; k++ {
			sum.Add(sum, new(big.Int).Binomial(n, k))
			want, _ := new(big.Rat).SetFrac(sum, new(big.Int).Lsh(big.NewInt(1), uint(n))).Float64()
			require.Equal(t, want, BinomialCDFHalf(k, n), "n = %d, k = %d", n, k)
		}
	}
	assert.Equal(t, "0.0312", strconv.FormatFloat(McNemarExactP(6, 0), 'f', 4, 64))
	assert.Equal(t, "0.0312", strconv.FormatFloat(McNemarExactP(0, 6), 'f', 4, 64))
	assert.Equal(t, 0.0703125, McNemarExactP(7, 1)) // 2·(1 + 8)/2⁸
	for _, c := range []struct{ k, n int64 }{{0, 63}, {20, 100}, {500, 1000}, {31, 63}} {
		t.Run(fmt.Sprint(c), func(t *testing.T) {
			want := mathext.RegIncBeta(float64(c.n-c.k), float64(c.k+1), 0.5)
			assert.Equal(t, want, BinomialCDFHalf(c.k, c.n))
		})
	}
}
