package generate_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/generate"
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
	for _, bad := range []string{
		`{"questions": ["a"], "keywords": []}`,                     // wrong count
		`{"questions": ["a", ""], "keywords": ["k"]}`,              // empty query
		`{"questions": ["a", "b"], "keywords": ["k"], "extra": 1}`, // unknown key
		"question: a\nquestion: b\nSure! keyword: k",               // stray line
		"Here are your queries.",
		// Issue 20 item 13: a repeated key is refused, not read as its last value.
		`{"questions": ["x", "y"], "keywords": ["k"], "questions": ["a", "b"]}`,
		`{"questions": ["a", "b"], "keywords": ["k"], "keyword\u0073": ["k2"]}`,
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

func FuzzParseQueries(f *testing.F) {
	f.Add(`{"questions": ["a"], "keywords": ["b"]}`)
	f.Add("question: a\nkeyword: b")
	f.Fuzz(func(t *testing.T, s string) {
		qs, ks, err := generate.ParseQueries(s, 1, 1)
		if err != nil {
			return
		}
		if len(qs) != 1 || len(ks) != 1 || qs[0] == "" || ks[0] == "" {
			t.Fatalf("accepted %q as %q %q", s, qs, ks)
		}
	})
}
