package gate

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/input/casefile"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

func TestCaseLineReadsBack(t *testing.T) {
	kb := cardSet{"a": true}
	s := &Scorer{KB: kb, K: 5}
	cases := []casefile.Case{
		{ID: "q\"1\n", Locale: "en", Type: "golden", Query: "tab\there \u2028 \x01", Gold: []string{"a", "b"}, Retrieved: []casefile.Retrieved{{ID: "x"}, {ID: "a"}}},
		{ID: "q2", Type: "adversarial"},
		{ID: "q3", Type: "golden", Gold: []string{"a"}, Scores: map[string]float64{metrics.KeyHit: 1, "zeta": 0.123456789012345}},
	}
	var p casefile.CaseParser
	for i := range cases {
		c := &cases[i]
		c.File, c.Line = "in.jsonl", i+1
		r := &CaseResult{}
		require.NoError(t, s.ScoreInto(c, r))
		line := AppendCaseLine(nil, c, r)
		require.True(t, bytes.HasSuffix(line, []byte("\n")))
		require.True(t, json.Valid(line), "%s", line)

		var back casefile.Case
		require.NoError(t, p.Parse(bytes.TrimSuffix(line, []byte("\n")), "out.jsonl", 1, &back))
		assert.Equal(t, c.ID, back.ID)
		assert.Equal(t, c.Locale, back.Locale)
		assert.Equal(t, c.Query, back.Query)
		assert.Equal(t, r.Type, back.Type)
		assert.Len(t, back.Gold, len(c.Gold))
		r2 := &CaseResult{}
		require.NoError(t, s.ScoreInto(&back, r2))
		assert.Equal(t, r.Scored, r2.Scored, "case %d", i)
		assert.Equal(t, r.Has, r2.Has)
		assert.Equal(t, r.Scores, r2.Scores, "exact floats")
		assert.Equal(t, r.Extra, r2.Extra)
	}
}

// FuzzAppendCaseLine: every --cases-out line is valid JSON that the cases
// parser reads back to the same fields and scores.
func FuzzAppendCaseLine(f *testing.F) {
	f.Add("id-1", "en", "golden", "How do I reset?", "a", 0.5)
	f.Add("\"\\\n\x00", "", "", "\u2028\xff", "", 1.0)
	f.Fuzz(func(t *testing.T, id, locale, typ, query, gold string, v float64) {
		if id == "" || v < 0 || v > 1 {
			t.Skip()
		}
		c := &casefile.Case{File: "f", Line: 1, ID: id, Locale: locale, Type: typ, Query: query}
		if gold != "" {
			c.Gold = []string{gold}
		}
		r := &CaseResult{Type: typ, Scored: true}
		want := map[string]float64{}
		for i, key := range metrics.CaseKeys {
			r.Has[i], r.Scores[i] = true, v/float64(i+1)
			want[key] = r.Scores[i]
		}
		line := AppendCaseLine(nil, c, r)
		require.True(t, json.Valid(line), "%q", line)
		var back casefile.Case
		var p casefile.CaseParser
		require.NoError(t, p.Parse(bytes.TrimSuffix(line, []byte("\n")), "f", 1, &back))
		valid := func(s string) string { // each invalid byte becomes one U+FFFD
			var b strings.Builder
			for _, r := range s {
				b.WriteRune(r)
			}
			return b.String()
		}
		assert.Equal(t, valid(id), back.ID)
		assert.Equal(t, valid(locale), back.Locale)
		assert.Equal(t, valid(query), back.Query)
		assert.Equal(t, want, back.Scores)
	})
}
