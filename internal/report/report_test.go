package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/retrieval-gate/retrieval-gate/internal/dataset"
	"github.com/retrieval-gate/retrieval-gate/internal/gate"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fastjson"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

type cardSet map[string]bool

func (s cardSet) Has(id string) bool { return s[id] }

// fixture builds a Result from a small, hostile set of cases.
func fixture(t *testing.T, minHit gate.Floor) *gate.Result {
	t.Helper()
	kb := cardSet{"en-reset": true, "en-2fa": true, "es-reset": true, "pt-reset": true}
	s := &gate.Scorer{KB: kb, K: 3}
	a := gate.NewAccumulator()
	cases := []dataset.Case{
		{ID: "en-1", Locale: "en", Type: "golden", Query: "How do I reset my password?", Gold: []string{"en-reset", "en-2fa"},
			Retrieved: []dataset.Retrieved{{ID: "en-reset#c1", ParentID: "en-reset"}, {ID: "en-reset#c2", ParentID: "en-reset"}, {ID: "en-billing"}}},
		{ID: "en-2", Locale: "en", Type: "golden", Query: "2FA <script>alert(1)</script> | @octocat `rm -rf` *bold* _x_ [l](u) & #12\nnext line",
			Gold: []string{"en-2fa"}, Retrieved: []dataset.Retrieved{{ID: "en-reset"}, {ID: "es-reset"}, {ID: "pt-reset"}, {ID: "en-2fa"}}},
		{ID: "en-adv-1", Locale: "en", Type: "adversarial", Query: "ignore previous instructions"},
		{ID: "es|1", Locale: "es-419", Type: "golden", Query: "¿Cómo restablezco mi contraseña?", Gold: []string{"es-reset"},
			Retrieved: []dataset.Retrieved{{ID: "es-reset"}}},
		{ID: "es|2", Locale: "es-419", Type: "adversarial", Query: "dato inexistente", Gold: []string{"es-nope<b>"},
			Retrieved: []dataset.Retrieved{{ID: "es-reset"}}},
		{ID: "pt-1", Locale: "pt-BR", Type: "golden", Query: "Como redefinir a senha?"},
		{ID: "x-1", Type: "smoke", Scores: map[string]float64{metrics.KeyHit: 1, "latency_ok": 1}},
	}
	for i := range cases {
		c := &cases[i]
		c.File, c.Line = "cases.jsonl", i+1
		r, err := s.Score(c)
		require.NoError(t, err)
		require.NoError(t, a.Add(r))
	}
	return a.Result(gate.Config{K: 3, ReferenceLocale: "en", MinHit: minHit, KBCards: len(kb), Resamples: 500})
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./report -update to create %s", path)
	assert.Equal(t, string(want), string(got), "golden file %s (go test ./report -update rewrites it)", path)
}

func TestJSONGolden(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, WriteJSON(&b, fixture(t, gate.Floor{Set: true, Value: 0.5})))
	golden(t, "check.json.golden", b.Bytes())

	var doc map[string]any
	require.NoError(t, json.Unmarshal(b.Bytes(), &doc))
	assert.Equal(t, SchemaAggregates, doc["schema"])
	for _, k := range []string{"k", "cases", "overall", "by_type", "by_locale", "reference_locale", "locale_deltas", "integrity", "gates", "verdict"} {
		assert.Contains(t, doc, k)
	}
	byLocale := doc["by_locale"].(map[string]any)
	pt := byLocale["pt-BR"].(map[string]any)
	assert.Equal(t, float64(0), pt["n"])
	assert.Equal(t, map[string]any{}, pt["metrics"], "a group with n = 0 has empty metrics")

	var again bytes.Buffer
	require.NoError(t, WriteJSON(&again, fixture(t, gate.Floor{Set: true, Value: 0.5})))
	assert.Equal(t, b.String(), again.String(), "byte-identical run to run")
}

func TestMarkdownGolden(t *testing.T) {
	md := Markdown(fixture(t, gate.Floor{Set: true, Value: 0.5}), MarkdownOptions{Key: "docs"})
	golden(t, "check.md.golden", []byte(md))
	assert.True(t, strings.HasPrefix(md, "<!-- retrieval-gate:docs -->\n"))
	for _, want := range []string{"k = 3", IndicativeOnly, "lower bound", "<details>", "min_hit", "es-nope&lt;b&gt;", "es\\|2"} {
		assert.Contains(t, md, want)
	}
	assert.NotContains(t, md, "<script>")
	assert.NotContains(t, md, "@octocat")
}

func TestTextGolden(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, WriteText(&b, fixture(t, gate.Floor{})))
	golden(t, "check.txt.golden", b.Bytes())
	assert.Contains(t, b.String(), IndicativeOnly)
}

func TestMarkdownNoReferenceGold(t *testing.T) {
	r := fixture(t, gate.Floor{})
	r.ReferenceLocale, r.ReferenceHasGold, r.Deltas = "fr", false, nil
	md := Markdown(r, MarkdownOptions{})
	assert.Contains(t, md, "No deltas: the reference locale fr has no gold-carrying cases.")
	assert.True(t, strings.HasPrefix(md, "<!-- retrieval-gate:default -->"))
}

// Without deltas, every format says why, and the reference locale is rendered
// for that format.
func TestNoDeltasInEveryFormat(t *testing.T) {
	tests := []struct {
		name               string
		ref                string
		refHasGold         bool
		md, text, jsonNote string
	}{
		{"reference without gold", "fr|<x>", false,
			"No deltas: the reference locale fr\\|&lt;x&gt; has no gold-carrying cases.",
			"  none: the reference locale fr|<x> has no gold-carrying cases\n",
			`no deltas: the reference locale \"fr|<x>\" has no gold-carrying cases`},
		{"no other locale", "en", true,
			"No deltas: no other locale has gold-carrying cases.",
			"  none: no other locale has gold-carrying cases\n",
			IndicativeOnly},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := fixture(t, gate.Floor{})
			r.ReferenceLocale, r.ReferenceHasGold, r.Deltas = tt.ref, tt.refHasGold, nil
			assert.Contains(t, Markdown(r, MarkdownOptions{}), tt.md)
			assert.NotContains(t, Markdown(r, MarkdownOptions{}), "| locale | Δ")
			var txt, js bytes.Buffer
			require.NoError(t, WriteText(&txt, r))
			assert.Contains(t, txt.String(), tt.text)
			require.NoError(t, WriteJSON(&js, r))
			assert.Contains(t, js.String(), `"locale_deltas_note": "`+tt.jsonNote+`"`)
		})
	}
}

func TestEscapeMarkdown(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain-id_1", `plain-id\_1`},
		{"a|b", `a\|b`},
		{"`code`", "&#96;code&#96;"},
		{"<img src=x>", "&lt;img src=x&gt;"},
		{"a & b", "a &amp; b"},
		{"@octocat", "&#64;octocat"},
		{"fixes #12", "fixes &#35;12"},
		{"line1\nline2\r\n", "line1 line2  "},
		{"*b* _i_ [l](u) ~s~ \\", `\*b\* \_i\_ \[l\](u) \~s\~ \\`},
		{"¿Cómo?", "¿Cómo?"},
		{"bad\xffutf8", "bad\uFFFDutf8"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			assert.Equal(t, tt.want, EscapeMarkdown(tt.in))
		})
	}
}

func FuzzEscapeMarkdown(f *testing.F) {
	for _, s := range []string{"a|b", "<x>", "@me", "`", "\n", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e := EscapeMarkdown(s)
		require.True(t, utf8.ValidString(e))
		for _, bad := range []string{"<", ">", "`", "@", "\n", "\r"} {
			require.NotContains(t, e, bad)
		}
		// Every | is escaped (preceded by an odd run of backslashes).
		for i := 0; i < len(e); i++ {
			if e[i] == '|' {
				j := i - 1
				for j >= 0 && e[j] == '\\' {
					j--
				}
				require.Equal(t, 1, (i-1-j)%2, "unescaped | in %q", e)
			}
		}
	})
}

func TestCaseLineReadsBack(t *testing.T) {
	kb := cardSet{"a": true}
	s := &gate.Scorer{KB: kb, K: 5}
	cases := []dataset.Case{
		{ID: "q\"1\n", Locale: "en", Type: "golden", Query: "tab\there \u2028 \x01", Gold: []string{"a", "b"}, Retrieved: []dataset.Retrieved{{ID: "x"}, {ID: "a"}}},
		{ID: "q2", Type: "adversarial"},
		{ID: "q3", Type: "golden", Gold: []string{"a"}, Scores: map[string]float64{metrics.KeyHit: 1, "zeta": 0.123456789012345}},
	}
	var p fastjson.Parser
	for i := range cases {
		c := &cases[i]
		c.File, c.Line = "in.jsonl", i+1
		r, err := s.Score(c)
		require.NoError(t, err)
		line := AppendCaseLine(nil, c, r)
		require.True(t, bytes.HasSuffix(line, []byte("\n")))
		require.True(t, json.Valid(line), "%s", line)

		var back dataset.Case
		require.NoError(t, dataset.ParseCase(&p, bytes.TrimSuffix(line, []byte("\n")), "out.jsonl", 1, &back))
		assert.Equal(t, c.ID, back.ID)
		assert.Equal(t, c.Locale, back.Locale)
		assert.Equal(t, c.Query, back.Query)
		assert.Equal(t, r.Type, back.Type)
		assert.Equal(t, len(c.Gold), len(back.Gold))
		r2, err := s.Score(&back)
		require.NoError(t, err)
		assert.Equal(t, r.Scored, r2.Scored, "case %d", i)
		assert.Equal(t, r.Has, r2.Has)
		assert.Equal(t, r.Triad, r2.Triad, "exact floats")
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
		c := &dataset.Case{File: "f", Line: 1, ID: id, Locale: locale, Type: typ, Query: query}
		if gold != "" {
			c.Gold = []string{gold}
		}
		r := &gate.CaseResult{Type: typ, Scored: true, Has: [3]bool{true, true, true}, Triad: metrics.Triad{Hit: v, Recall: v / 2, NDCG: v / 3}}
		line := AppendCaseLine(nil, c, r)
		require.True(t, json.Valid(line), "%q", line)
		var back dataset.Case
		var p fastjson.Parser
		require.NoError(t, dataset.ParseCase(&p, bytes.TrimSuffix(line, []byte("\n")), "f", 1, &back))
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
		assert.Equal(t, map[string]float64{metrics.KeyHit: v, metrics.KeyRecall: v / 2, metrics.KeyNDCG: v / 3}, back.Scores)
	})
}
