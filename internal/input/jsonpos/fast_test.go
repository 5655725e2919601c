package jsonpos

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// TestStringFastPath checks String (the word-at-a-time path and the span
// check) against stringSlow, the byte-by-byte path, on random strings built to
// put quotes, backslashes, control characters and (in)valid UTF-8 at every
// position of an 8-byte word and near the end of the input: the same end and
// error, and a string String says needs no unquoting is unchanged by unquoting.
func TestStringFastPath(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	pieces := []string{"a", "Z", " ", "~", "\"", "\\", "\\\"", "\\u00e9", "\\n", "\x00", "\x1f", "\x7f",
		"é", "€", "😀", "\xff", "\xc3", "\xe2\x82", "\xed\xa0\x80", "abcdefgh"}
	for range 200000 {
		var b []byte
		for range rng.IntN(3) {
			b = append(b, ' ')
		}
		i := len(b)
		b = append(b, '"')
		for range rng.IntN(24) {
			b = append(b, pieces[rng.IntN(len(pieces))]...)
		}
		if rng.IntN(4) > 0 {
			b = append(b, '"')
		}
		for range rng.IntN(10) {
			b = append(b, "}],: x"[rng.IntN(6)])
		}
		s := &Scanner{B: b}
		end, esc, err := s.String(i)
		wantEnd, wantEsc, wantErr := s.stringSlow(i)
		require.Equal(t, fmt.Sprint(wantErr), fmt.Sprint(err), "%q", b)
		if err != nil {
			continue
		}
		require.Equal(t, wantEnd, end, "%q", b)
		content := b[i+1 : end-1]
		if !esc {
			require.True(t, utf8.Valid(content), "%q", b)
			require.Equal(t, string(content), string(AppendUnquoted(nil, content)), "%q", b)
		} else {
			require.True(t, wantEsc, "%q", b)
		}
	}
}

// TestNumberValue checks the one-pass number of NumberValue against Number
// followed by ParseNumber: same end, value (bit for bit), range and error.
func TestNumberValue(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 200000 {
		var b []byte
		for range 1 + rng.IntN(22) {
			b = append(b, "-0123456789.eE+0123456789"[rng.IntN(25)])
		}
		if rng.IntN(2) == 0 {
			b = append(b, "}, x"[rng.IntN(4)])
		}
		s := &Scanner{B: b}
		end, f, ok, err := s.NumberValue(0)
		wantEnd, wantErr := s.Number(0)
		require.Equal(t, fmt.Sprint(wantErr), fmt.Sprint(err), "%q", b)
		if err != nil {
			continue
		}
		require.Equal(t, wantEnd, end, "%q", b)
		wantF, wantOK := ParseNumber(b[:end])
		require.Equal(t, wantOK, ok, "%q", b)
		require.Equal(t, math.Float64bits(wantF), math.Float64bits(f), "%q: %v vs %v", b, f, wantF)
	}
	for _, n := range []string{"0", "-0", "0.5", "123456789012345", "1234567890123456", "0.000000000000001", "1.5e3", "00", "-", "1.", "9007199254740993"} {
		s := &Scanner{B: []byte(n)}
		end, f, ok, err := s.NumberValue(0)
		wantEnd, wantErr := s.Number(0)
		require.Equal(t, fmt.Sprint(wantErr), fmt.Sprint(err), n)
		if err == nil {
			wantF, wantOK := ParseNumber([]byte(n)[:wantEnd])
			require.Equal(t, []any{wantEnd, math.Float64bits(wantF), wantOK}, []any{end, math.Float64bits(f), ok}, n)
		}
	}
}
