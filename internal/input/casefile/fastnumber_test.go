package casefile

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// sameNumber checks number24 (a token with 24 bytes of line from its start)
// against number's byte loop (the same token at the end of a short line), for
// token followed by tail.
func sameNumber(t *testing.T, token, tail string) {
	t.Helper()
	short := []byte(token + tail)
	if len(short) >= 24 {
		short = short[:23]
	}
	long := []byte(token + tail + strings.Repeat(" ", 24))
	f1, f2 := fastScan{b: long}, fastScan{b: short}
	e1, v1, ok1 := f1.number(0)
	e2, v2, ok2 := f2.number(0)
	if len(token)+len(tail) >= 23 {
		return // the short line is cut: no reference
	}
	require.Equal(t, ok2, ok1, "%q: ok", token+tail)
	if ok1 {
		require.Equal(t, e2, e1, "%q: end", token+tail)
		require.Equal(t, math.Float64bits(v2), math.Float64bits(v1), "%q: %v, %v", token+tail, v1, v2)
	}
	// noScores: the same validation and end, no value.
	for _, f := range []fastScan{{b: long, noScores: true}, {b: short, noScores: true}} {
		e, v, ok := f.number(0)
		require.Equal(t, ok1, ok, "%q: ok without conversion", token+tail)
		if ok {
			require.Equal(t, e1, e, "%q: end without conversion", token+tail)
			require.Zero(t, math.Float64bits(v), "%q: a value without conversion", token+tail)
		}
	}
}

// number24 (no bounds checks, for a number with 24 bytes of line to spare)
// decodes what number's byte loop decodes, to the bit and to the byte, and
// refuses what it refuses: every digit count on either side of the point,
// leading zeros, signs, exponents, what follows.
func TestNumber24AsLoop(t *testing.T) {
	for _, s := range []string{"0", "-0", "0.5", "-0.921", "1", "12", "1234567", "12345678", "123456789", "0.1234567",
		"0.12345678", "1234567.1234567", "1234567.12345678", "12345678.1234567", "00", "01", "-01", "1.", "-", "", ".5",
		"1e5", "1.5e5", "1.5E5", "9999999.9999999", "999999999999999", "9999999999999999", "0.000000000000001", "1.0", "10.01"} {
		for _, tail := range []string{"}", "", ",", "e", "E", ".", "x", "5", " ", "\xff", "\x00", "/", ":"} {
			sameNumber(t, s, tail)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	const alphabet = "0123456789012345678901234567890123456789.-eE}x/:\xfa\xff"
	for range 50000 {
		var b strings.Builder
		for range r.IntN(20) {
			b.WriteByte(alphabet[r.IntN(len(alphabet))])
		}
		sameNumber(t, b.String(), "")
	}
}

// FuzzNumber24: any bytes decode as number's byte loop decodes them.
func FuzzNumber24(f *testing.F) {
	for _, s := range []string{"0.921}", "-12.5,", "1234567.1234567}", "01", "1e5", "\xff9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sameNumber(t, s, "")
	})
}

// sameShortScore checks shortScore of the word at the start of s (at least 8
// bytes) against number's byte loop on s: where shortScore decides (not 0),
// the loop takes the number and ends it at the same byte.
func sameShortScore(t *testing.T, s string) {
	t.Helper()
	n := shortScore(binary.LittleEndian.Uint64([]byte(s)))
	if n == 0 {
		return
	}
	f := fastScan{b: []byte(s[:min(len(s), 23)]), noScores: true} // under 24 bytes: the byte loop
	end, _, ok := f.number(0)
	require.True(t, ok, "%q: shortScore %d, the loop refuses it", s, n)
	require.Equal(t, end, n, "%q: the end", s)
}

// TestShortScoreAsLoop: shortScore takes the scores retrievers write, and
// where it decides it decides as number's byte loop: every byte value at
// each position of common scores and their neighbours, and random words.
func TestShortScoreAsLoop(t *testing.T) {
	for s, want := range map[string]int{"0.921}, {": 5, "0.5}]}xxx": 3, "9.12345}x": 7, "1.0, \"x\"": 3,
		"0.123456}": 0, "0.1e5}xxx": 0, "0.1E5}xxx": 0, "0.}xxxxxx": 0, "12.5}xxxx": 0, "-0.5}xxxx": 0, "0,5}xxxxx": 0} {
		require.Equal(t, want, shortScore(binary.LittleEndian.Uint64([]byte(s))), "%q", s)
		sameShortScore(t, s+strings.Repeat(" ", 8))
	}
	for _, base := range []string{"0.921}, {", "0.5}]}xxx", "9.12345}x", "1.0, \"x\"", "0.12}xxxx", "0.1e5}xxx"} {
		for i := range 8 {
			for c := range 256 {
				b := []byte(base)
				b[i] = byte(c)
				sameShortScore(t, string(b))
			}
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	const alphabet = "0123456789012345678901234567890123456789....-eE}x/:\xfa\xff"
	for range 200000 {
		b := make([]byte, 8+r.IntN(8))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		if r.IntN(2) == 0 {
			b[1] = '.'
		}
		sameShortScore(t, string(b))
	}
}

// FuzzShortScore: where shortScore decides, it decides as number's byte loop.
func FuzzShortScore(f *testing.F) {
	for _, s := range []string{"0.921}, {", "9.12345}x", "0.1e5}xxx", "0.123456}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) >= 8 {
			sameShortScore(t, s)
		}
	})
}
