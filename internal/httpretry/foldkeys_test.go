package httpretry

import (
	"strconv"
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

// TestFoldedKeys: the keys of an object added one by one are refused where
// CheckFoldedKeys refuses the object, in its words, pairwise and past
// maxPairwiseKeys.
func TestFoldedKeys(t *testing.T) {
	many := func(extra ...string) []string {
		var ks []string
		for i := 0; i < 2*maxPairwiseKeys; i++ {
			ks = append(ks, "k"+strings.Repeat("x", i))
		}
		return append(ks, extra...)
	}
	tests := []struct {
		name string
		keys []string
	}{
		{"distinct", []string{"a", "b", "c"}},
		{"twice", []string{"a", "b", "a"}},
		{"folded", []string{"status", "STATUS"}},
		{"folded, Unicode", []string{"s", "ſ"}},
		{"many, distinct", many()},
		{"many, twice", many("kxx")},
		{"many, folded", many("KXXX")},
		{"many, folded, Unicode", many("ſ", "s")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := "{"
			var f FoldedKeys
			var err error
			for i, k := range tt.keys {
				if i > 0 {
					obj += ","
				}
				obj += strconv.Quote(k) + ":0"
				if err == nil {
					err = f.Add(k)
				}
			}
			want := CheckFoldedKeys([]byte(obj + "}"))
			if want == nil {
				require.NoError(t, err)
				assert.Equal(t, len(tt.keys), f.Len())
				return
			}
			require.EqualError(t, err, want.Error())
		})
	}
}
