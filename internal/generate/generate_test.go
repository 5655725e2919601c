package generate_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/generate"
	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos"
	"github.com/retrieval-gate/retrieval-gate/internal/input/kbfile"
)

func TestParseQueries(t *testing.T) {
	qs, ks, err := generate.ParseQueries(`{"questions": ["How do I  reset it?", "Why?"], "keywords": ["reset password"]}`, 2, 1)
	require.NoError(t, err)
	assert.Equal(t, []string{"How do I reset it?", "Why?"}, qs)
	assert.Equal(t, []string{"reset password"}, ks)
	qs, ks, err = generate.ParseQueries("question: How do I reset it?\n\nkeyword: reset password\n", 1, 1)
	require.NoError(t, err)
	assert.Equal(t, []string{"How do I reset it?"}, qs)
	assert.Equal(t, []string{"reset password"}, ks)
	// The keys in any case, as the lines' "Question:".
	qs, ks, err = generate.ParseQueries(`{"Questions": ["How do I reset it?"], "KEYWORDS": ["reset password"]}`, 1, 1)
	require.NoError(t, err)
	assert.Equal(t, []string{"How do I reset it?"}, qs)
	assert.Equal(t, []string{"reset password"}, ks)
	for _, bad := range []string{
		`{"questions": ["a"], "keywords": []}`,                     // wrong count
		`{"questions": ["a", ""], "keywords": ["k"]}`,              // empty query
		`{"questions": ["a", "b"], "keywords": ["k"], "extra": 1}`, // unknown key
		"question: a\nquestion: b\nSure! keyword: k",               // stray line
		"Here are your queries.",
		// Issue 20 item 13: a repeated key is refused, not read as its last value.
		`{"questions": ["x", "y"], "keywords": ["k"], "questions": ["a", "b"]}`,
		`{"questions": ["a", "b"], "keywords": ["k"], "keyword\u0073": ["k2"]}`,
		// A key in two spellings is refused (encoding/json's field match read
		// the second as the first's replacement).
		`{"questions": ["a", "b"], "keywords": ["k"], "Keywords": ["k2"]}`,
		`{"QUESTIONS": ["x", "y"], "keywords": ["k"], "questions": ["a", "b"]}`,
	} {
		_, _, err := generate.ParseQueries(bad, 2, 1)
		assert.Error(t, err, bad)
	}
}

func TestJaccard(t *testing.T) {
	set := func(ws ...string) map[string]bool {
		m := map[string]bool{}
		for _, w := range ws {
			m[w] = true
		}
		return m
	}
	assert.Equal(t, 1.0, generate.Jaccard(set("a", "b"), set("b", "a")))
	assert.Equal(t, 0.8, generate.Jaccard(set("a", "b", "c", "d"), set("a", "b", "c", "d", "e")))
	assert.Equal(t, 0.0, generate.Jaccard(set(), set()))
}

func TestSampleIsSeededAndStratified(t *testing.T) {
	kb := &kbfile.KB{}
	for i, loc := range []string{"en", "en", "en", "en", "es", "es", "pt-BR"} {
		kb.Cards = append(kb.Cards, kbfile.Card{ID: loc + string(rune('a'+i)), Locale: loc, Text: "t"})
	}
	kb.Cards = append(kb.Cards, kbfile.Card{ID: "empty", Locale: "en"})
	a := generate.Sample(kb, 2, 7)
	b := generate.Sample(kb, 2, 7)
	assert.Equal(t, a, b)
	locs := map[string]int{}
	for _, c := range a {
		locs[c.Locale]++
		assert.NotEqual(t, "empty", c.ID, "a card without text is never sampled")
	}
	assert.Equal(t, map[string]int{"en": 2, "es": 2, "pt-BR": 1}, locs)
	var differs bool
	for seed := uint64(1); seed < 20 && !differs; seed++ {
		differs = generate.Sample(kb, 2, seed)[0].ID != a[0].ID
	}
	assert.True(t, differs, "the seed changes the sample")
}

// FuzzParseQueries: what an LLM answers is read as refQueries, a reader of
// the two forms written apart, reads it: the JSON object's "questions" and
// "keywords" (in any case, each once, no other key), or the "question:"/"keyword:"
// lines, each query with its white space collapsed, none empty, exactly nq
// and nk of them; anything else is refused.
func FuzzParseQueries(f *testing.F) {
	f.Add(`{"questions": ["a"], "keywords": ["b"]}`, uint8(1), uint8(1))
	f.Add("question: a\nkeyword: b", uint8(1), uint8(1))
	f.Add(" QUESTION :  a \t b \r\n\n keyword: b: c\nquestion:x", uint8(2), uint8(1))
	f.Add(`{"questions": ["a", " b  c"], "keywords": ["k"]}`, uint8(2), uint8(1))
	f.Add(`{"questions": ["a", null], "keywords": null}`, uint8(2), uint8(0))
	f.Fuzz(func(t *testing.T, s string, nq, nk uint8) {
		wq, wk := int(nq%4), int(nk%4)
		qs, ks, err := generate.ParseQueries(s, wq, wk)
		rq, rk, ok := refQueries(s)
		ok = ok && len(rq) == wq && len(rk) == wk
		if err != nil {
			require.False(t, ok, "refused %q (%v); the reference reads %q %q", s, err, rq, rk)
			return
		}
		require.True(t, ok, "accepted %q as %q %q; the reference refuses", s, qs, ks)
		assert.Equal(t, rq, nilIfEmpty(qs))
		assert.Equal(t, rk, nilIfEmpty(ks))
	})
}

func nilIfEmpty(l []string) []string {
	if len(l) == 0 {
		return nil
	}
	return l
}

// refQueries is FuzzParseQueries' reference: false when the text is neither
// form or a query is empty.
func refQueries(s string) (qs, ks []string, ok bool) {
	norm := func(q string) (string, bool) {
		q = strings.Join(strings.Fields(q), " ")
		return q, q != ""
	}
	c := strings.TrimSpace(s)
	if strings.HasPrefix(c, "{") {
		var sc jsonpos.Scanner
		var obj map[string]json.RawMessage
		if sc.Check([]byte(c)) != nil || json.Unmarshal([]byte(c), &obj) != nil {
			return nil, nil, false
		}
		seen := map[string]bool{}
		for k, raw := range obj {
			var l []*string
			k = strings.ToLower(k)
			if (k != "questions" && k != "keywords") || seen[k] || json.Unmarshal(raw, &l) != nil {
				return nil, nil, false
			}
			seen[k] = true
			for _, q := range l {
				if q == nil {
					return nil, nil, false
				}
				n, good := norm(*q)
				if !good {
					return nil, nil, false
				}
				if k == "questions" {
					qs = append(qs, n)
				} else {
					ks = append(ks, n)
				}
			}
		}
		return qs, ks, true
	}
	for _, ln := range strings.Split(c, "\n") {
		if strings.TrimSpace(ln) == "" {
			continue
		}
		i := strings.IndexByte(ln, ':')
		if i < 0 {
			return nil, nil, false
		}
		q, good := norm(ln[i+1:])
		if !good {
			return nil, nil, false
		}
		switch strings.ToLower(strings.TrimSpace(ln[:i])) {
		case "question":
			qs = append(qs, q)
		case "keyword":
			ks = append(ks, q)
		default:
			return nil, nil, false
		}
	}
	return qs, ks, true
}
