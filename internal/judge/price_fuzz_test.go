package judge_test

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/judge"
)

// FuzzParsePrice: --price-per-1k, "P" or "P,C". An accepted value is "" (no
// price) or one or two comma-separated numbers (split by hand, each read by
// strconv after trimming), both finite and at least 0 (a price that makes
// every estimated cost infinite or NaN is no price); a refused one is an error
// that quotes it.
func FuzzParsePrice(f *testing.F) {
	for _, s := range []string{"", "0.5", "0.5,2", " 1 , 3 ", "-1", "1,-0.5", "NaN", "inf", "1,+Inf", "1e400", "1,2,3", "free", ","} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		p, err := judge.ParsePrice(v)
		if err != nil {
			require.Contains(t, err.Error(), strconv.Quote(v))
			return
		}
		if v == "" {
			require.Nil(t, p)
			return
		}
		i := strings.IndexByte(v, ',')
		a, b := v, v
		if i >= 0 {
			a, b = v[:i], v[i+1:]
		}
		want := [2]float64{}
		for j, s := range []string{a, b} {
			x, perr := strconv.ParseFloat(strings.TrimSpace(s), 64)
			require.NoError(t, perr, "%q accepted", v)
			require.False(t, math.IsNaN(x) || math.IsInf(x, 0) || x < 0, "%q accepted: %v", v, x)
			want[j] = x
		}
		require.Equal(t, want, [2]float64{p.Prompt, p.Completion})
	})
}

// A price of infinity (or one beyond float64) made every estimated cost
// infinite; it is refused as a negative one is.
func TestParsePriceRefusesInfinity(t *testing.T) {
	for _, v := range []string{"inf", "+Inf", "1,inf", "1e400"} {
		_, err := judge.ParsePrice(v)
		require.ErrorContains(t, err, "want PRICE or PROMPT_PRICE,COMPLETION_PRICE", v)
	}
}
