package httpretry

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestUnmarshalAnswerCap: an answer of more values than the cap (brackets and
// commas outside strings) is refused before it is decoded; at the cap, and with
// commas inside strings, it is decoded.
func TestUnmarshalAnswerCap(t *testing.T) {
	page := func(n int) []byte { return []byte("[" + strings.Repeat("{},", n-1) + "{}]") }
	var out []map[string]any
	// "[" + n "{" + (n-1) "," = 2n values counted.
	require.NoError(t, UnmarshalAnswerCap(page(MaxPageValues/2), &out, MaxPageValues))
	assert.Len(t, out, MaxPageValues/2)
	err := UnmarshalAnswerCap(page(MaxPageValues/2+1), &out, MaxPageValues)
	require.EqualError(t, err, "the answer holds more than 65,536 values (the cap on what an answer may take in memory)")
	var s []string
	require.NoError(t, UnmarshalAnswerCap([]byte(`["`+strings.Repeat(",[{", 100)+`"]`), &s, 2))
	require.NoError(t, UnmarshalAnswerCap(page(MaxPageValues), &out, 0), "0: no cap")
	require.ErrorContains(t, UnmarshalAnswer(page(MaxAnswerValues/2+1), &out), "more than 4,194,304 values")
}
