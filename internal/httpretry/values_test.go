package httpretry

import (
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// chunked reads s a few bytes at a time.
type chunked struct {
	s   string
	rng *rand.Rand
}

func (c *chunked) Read(p []byte) (int, error) {
	if c.s == "" {
		return 0, io.EOF
	}
	n := min(len(p), len(c.s), 1+c.rng.IntN(7))
	copy(p, c.s[:n])
	c.s = c.s[n:]
	return n, nil
}

// TestValuesBodyCountsAsUnmarshalAnswer: the stream's count, read in chunks that
// split strings and escapes anywhere, refuses an answer exactly when
// UnmarshalAnswerCap's count of the whole answer does.
func TestValuesBodyCountsAsUnmarshalAnswer(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	strs := []string{`"a"`, `"\""`, `"\\"`, `"x,[{"`, `"\\\""`, `"]}"`}
	var gen func(b *strings.Builder, depth int)
	gen = func(b *strings.Builder, depth int) {
		switch k := rng.IntN(4); {
		case depth > 3 || k == 0:
			b.WriteString(strs[rng.IntN(len(strs))])
		case k == 1:
			b.WriteString("0")
		case k == 2:
			b.WriteString("[")
			for i := range rng.IntN(4) {
				if i > 0 {
					b.WriteString(",")
				}
				gen(b, depth+1)
			}
			b.WriteString("]")
		default:
			b.WriteString("{")
			for i := range rng.IntN(4) {
				if i > 0 {
					b.WriteString(", ")
				}
				b.WriteString(`"k` + string(rune('a'+i)) + `":`)
				gen(b, depth+1)
			}
			b.WriteString("}")
		}
	}
	for range 3000 {
		var b strings.Builder
		gen(&b, 0)
		text := b.String()
		limit := 1 + rng.IntN(12)
		whole := checkAnswer([]byte(text), limit)
		wantRefused := whole != nil && strings.Contains(whole.Error(), "values")
		_, err := io.ReadAll(countValues(io.NopCloser(&chunked{s: text, rng: rng}), limit, "u"))
		var tm *TooManyValuesError
		require.Equal(t, wantRefused, errors.As(err, &tm), "%q limit %d: %v / %v", text, limit, whole, err)
	}
}
