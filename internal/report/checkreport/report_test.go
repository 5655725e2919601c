package checkreport

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/gate"
	"github.com/retrieval-gate/retrieval-gate/internal/input/casefile"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	cases := []casefile.Case{
		{ID: "en-1", Locale: "en", Type: "golden", Query: "How do I reset my password?", Gold: []string{"en-reset", "en-2fa"},
			Retrieved: []casefile.Retrieved{{ID: "en-reset#c1", ParentID: "en-reset"}, {ID: "en-reset#c2", ParentID: "en-reset"}, {ID: "en-billing"}}},
		{ID: "en-2", Locale: "en", Type: "golden", Query: "2FA <script>alert(1)</script> | @octocat `rm -rf` *bold* _x_ [l](u) & #12\nnext line",
			Gold: []string{"en-2fa"}, Retrieved: []casefile.Retrieved{{ID: "en-reset"}, {ID: "es-reset"}, {ID: "pt-reset"}, {ID: "en-2fa"}}},
		{ID: "en-adv-1", Locale: "en", Type: "adversarial", Query: "ignore previous instructions"},
		{ID: "es|1", Locale: "es-419", Type: "golden", Query: "¿Cómo restablezco mi contraseña?", Gold: []string{"es-reset"},
			Retrieved: []casefile.Retrieved{{ID: "es-reset"}}},
		{ID: "es|2", Locale: "es-419", Type: "adversarial", Query: "dato inexistente", Gold: []string{"es-nope<b>"},
			Retrieved: []casefile.Retrieved{{ID: "es-reset"}}},
		{ID: "pt-1", Locale: "pt-BR", Type: "golden", Query: "Como redefinir a senha?"},
		{ID: "x-1", Type: "smoke", Scores: map[string]float64{metrics.KeyHit: 1, "latency_ok": 1}},
	}
	for i := range cases {
		c := &cases[i]
		c.File, c.Line = "cases.jsonl", i+1
		var r gate.CaseResult
		require.NoError(t, s.ScoreInto(c, &r))
		require.NoError(t, a.Add(&r))
	}
	return gateResult(a, gate.Config{K: 3, ReferenceLocale: "en", MinHit: minHit, KBCards: len(kb), Resamples: 500})
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
	require.NoError(t, New(fixture(t, gate.Floor{Set: true, Value: 0.5})).WriteJSON(&b))
	golden(t, "check.json.golden", b.Bytes())

	var doc map[string]any
	require.NoError(t, json.Unmarshal(b.Bytes(), &doc))
	assert.Equal(t, Schema, doc["schema"])
	for _, k := range []string{"k", "cases", "overall", "by_type", "by_locale", "reference_locale", "locale_deltas", "integrity", "gates", "verdict"} {
		assert.Contains(t, doc, k)
	}
	byLocale := doc["by_locale"].(map[string]any)
	pt := byLocale["pt-BR"].(map[string]any)
	assert.Equal(t, float64(0), pt["n"])
	assert.Equal(t, map[string]any{}, pt["metrics"], "a group with n = 0 has empty metrics")

	var again bytes.Buffer
	require.NoError(t, New(fixture(t, gate.Floor{Set: true, Value: 0.5})).WriteJSON(&again))
	assert.Equal(t, b.String(), again.String(), "byte-identical run to run")
}

func TestMarkdownGolden(t *testing.T) {
	md := New(fixture(t, gate.Floor{Set: true, Value: 0.5})).Markdown(MarkdownOptions{Marker: "<!-- retrieval-gate:docs -->"})
	golden(t, "check.md.golden", []byte(md))
	assert.True(t, strings.HasPrefix(md, "<!-- retrieval-gate:docs -->\n"))
	for _, want := range []string{"k = 3", IndicativeOnly, "lower bound", "<details>", "min\\_hit", "non\\_empty", "es-nope&lt;b&gt;", "es\\|2"} {
		assert.Contains(t, md, want)
	}
	assert.NotContains(t, md, "<script>")
	assert.NotContains(t, md, "@octocat")
}

func TestTextGolden(t *testing.T) {
	var b, v bytes.Buffer
	require.NoError(t, New(fixture(t, gate.Floor{})).Text(&b))
	golden(t, "check.txt.golden", b.Bytes())
	require.NoError(t, New(fixture(t, gate.Floor{})).TextVerbose(&v))
	golden(t, "check.verbose.txt.golden", v.Bytes())
	assert.Contains(t, v.String(), IndicativeOnly)
	// Issue 32 item 14: the verdict line names the gates by status, the details
	// are counted on the last line and listed by --verbose; a failed gate keeps
	// its table (and the integrity problems their list) without it.
	text := b.String()
	assert.True(t, strings.HasPrefix(text, "retrieval-gate check: FAIL (k=3) · failed: integrity · passed: non_empty · off: min_hit, min_recall\n"), text)
	for _, detail := range []string{"\nmissed cases (hit@", "warning:", "locale deltas vs"} {
		assert.NotContains(t, text, detail)
		assert.Contains(t, v.String(), detail, "--verbose keeps it")
	}
	for _, kept := range []string{"\ngates:\n", "integrity problems (1;"} {
		assert.Contains(t, text, kept)
	}
	assert.True(t, strings.HasSuffix(text, "\n--verbose adds: 2 missed cases (hit@3 = 0); 1 retrieved entry in 1 case is not a card of the KB (stale index?); the locale deltas\n"), text)
	assert.Less(t, strings.Count(text, "\n"), strings.Count(v.String(), "\n"))
}

// A passing run reads as a pass: no gate table of gates that all passed (the
// verdict line names them), no missed case, no warning (issue 32 item 14).
func TestTextPass(t *testing.T) {
	s := &gate.Scorer{KB: cardSet{"a": true}, K: 5}
	a := gate.NewAccumulator()
	for i, retrieved := range []string{"a", "b"} {
		var r gate.CaseResult
		require.NoError(t, s.ScoreInto(&casefile.Case{File: "c.jsonl", Line: i + 1, ID: fmt.Sprint("q", i), Gold: []string{"a"}, Retrieved: []casefile.Retrieved{{ID: retrieved}}}, &r))
		require.NoError(t, a.Add(&r))
	}
	var b, v bytes.Buffer
	doc := New(gateResult(a, gate.Config{K: 5, Resamples: 10}))
	require.NoError(t, doc.Text(&b))
	require.NoError(t, doc.TextVerbose(&v))
	text := b.String()
	assert.True(t, strings.HasPrefix(text, "retrieval-gate check: PASS (k=5) · passed: integrity, non_empty · off: min_hit, min_recall\n"), text)
	assert.NotContains(t, text, "\ngates:\n")
	assert.NotContains(t, text, "warning")
	assert.True(t, strings.HasSuffix(text, "\n--verbose adds: 1 missed case (hit@5 = 0); 1 retrieved entry in 1 case is not a card of the KB (stale index?); the gate table\n"), text)
	assert.Contains(t, v.String(), "\ngates:\n")
	assert.Contains(t, v.String(), "missed cases (hit@5 = 0): 1\n  c.jsonl:2  q1")
}

func TestMarkdownNoReferenceGold(t *testing.T) {
	r := fixture(t, gate.Floor{})
	r.ReferenceLocale, r.ReferenceHasGold, r.Deltas = "fr", false, nil
	md := New(r).Markdown(MarkdownOptions{})
	assert.Contains(t, md, "No deltas: the reference locale fr has no gold-carrying cases.")
	assert.True(t, strings.HasPrefix(md, "## "), "no marker given, none written")
	marked := New(r).Markdown(MarkdownOptions{Marker: "<!-- retrieval-gate:default -->"})
	assert.Equal(t, "<!-- retrieval-gate:default -->\n"+md, marked, "the marker given is the first line")
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
			assert.Contains(t, New(r).Markdown(MarkdownOptions{}), tt.md)
			assert.NotContains(t, New(r).Markdown(MarkdownOptions{}), "| locale | Δ")
			var txt, js, short bytes.Buffer
			require.NoError(t, New(r).TextVerbose(&txt))
			assert.Contains(t, txt.String(), tt.text)
			require.NoError(t, New(r).Text(&short))
			assert.NotContains(t, short.String(), "the locale deltas", "none to add")
			require.NoError(t, New(r).WriteJSON(&js))
			assert.Contains(t, js.String(), `"locale_deltas_note": "`+tt.jsonNote+`"`)
		})
	}
}

// MaxListed bounds the listed missed cases; the rest are counted (publish.Fit
// uses it to shorten a comment before cutting tables).
func TestMarkdownMaxListed(t *testing.T) {
	r := fixture(t, gate.Floor{})
	for i := 0; i < 150; i++ {
		m := *r.Missed[0]
		m.ID = strings.Repeat("x", 200)
		r.Missed = append(r.Missed, &m)
	}
	r.MissedTotal = int64(len(r.Missed)) + 1000
	doc := New(r)
	assert.Equal(t, doc.Markdown(MarkdownOptions{Marker: "<!-- retrieval-gate:k -->"}), doc.Markdown(MarkdownOptions{Marker: "<!-- retrieval-gate:k -->", MaxListed: DefaultMaxListed}))
	small := doc.Markdown(MarkdownOptions{Marker: "<!-- retrieval-gate:k -->", MaxListed: -1})
	assert.Contains(t, small, "… and 1152 more not shown.")
	assert.True(t, strings.HasPrefix(small, "<!-- retrieval-gate:k -->"))
	assert.Less(t, len(small), len(doc.Markdown(MarkdownOptions{Marker: "<!-- retrieval-gate:k -->"})))
}

// The document reads back to itself: write, read, write gives the same bytes, and
// the read document renders the same text and Markdown (but for the missed
// cases, which the JSON does not carry: they are in the per-case file).
func TestDocumentRoundTrip(t *testing.T) {
	for _, minHit := range []gate.Floor{{}, {Set: true, Value: 0.5}} {
		doc := New(fixture(t, minHit))
		var first bytes.Buffer
		require.NoError(t, doc.WriteJSON(&first))
		back, err := Read(bytes.NewReader(first.Bytes()))
		require.NoError(t, err)
		var second bytes.Buffer
		require.NoError(t, back.WriteJSON(&second))
		assert.Equal(t, first.String(), second.String())

		require.Len(t, back.Gates, 4) // integrity, min_hit, min_recall, non_empty
		assert.Nil(t, back.Gates[0].Threshold, "integrity has no threshold")
		require.NotNil(t, back.Gates[2].Threshold, "an off floor keeps its null threshold")

		// Read back, the missed cases are unknown and the reports say so; else
		// they are the original's.
		assert.True(t, back.MissedNotCarried)
		doc.Missed, doc.MissedTotal, doc.MissedNotCarried = nil, 0, true
		var a, b, av, bv bytes.Buffer
		require.NoError(t, doc.Text(&a))
		require.NoError(t, back.Text(&b))
		assert.Equal(t, a.String(), b.String())
		assert.Contains(t, b.String(), fmt.Sprintf("the missed cases (hit@%d = 0): %s", back.K, MissedNotCarriedLine))
		require.NoError(t, doc.TextVerbose(&av))
		require.NoError(t, back.TextVerbose(&bv))
		assert.Equal(t, av.String(), bv.String())
		assert.Contains(t, bv.String(), fmt.Sprintf("missed cases (hit@%d = 0): %s\n", back.K, MissedNotCarriedLine))
		md := back.Markdown(MarkdownOptions{Marker: "<!-- retrieval-gate:k -->"})
		assert.Equal(t, doc.Markdown(MarkdownOptions{Marker: "<!-- retrieval-gate:k -->"}), md)
		assert.True(t, strings.HasSuffix(md, fmt.Sprintf("<details><summary>Missed cases (hit@%d = 0): %s</summary>\n\n</details>\n", back.K, MissedNotCarriedLine)), md)
	}
	_, err := Read(strings.NewReader(`{"schema": "retrieval-gate/compare@1"}`))
	require.ErrorContains(t, err, `schema "retrieval-gate/compare@1" is not "retrieval-gate/aggregates@1"`)
	_, err = Read(strings.NewReader(`{"gates": [{"threshold": "x"}]}`))
	require.Error(t, err)
}

// A mean just below its floor: the JSON keeps every digit, the reports print
// enough digits that the two never read as equal (issue 11, item 8).
func TestFloorNearMissFullPrecision(t *testing.T) {
	s := &gate.Scorer{KB: cardSet{}, K: 5}
	a := gate.NewAccumulator()
	var r gate.CaseResult
	require.NoError(t, s.ScoreInto(&casefile.Case{File: "c.jsonl", Line: 1, ID: "p", Scores: map[string]float64{metrics.KeyHit: 0.6999997}}, &r))
	require.NoError(t, a.Add(&r))
	doc := New(gateResult(a, gate.Config{K: 5, MinHit: gate.Floor{Set: true, Value: 0.7}, Resamples: 10}))
	var js, txt bytes.Buffer
	require.NoError(t, doc.WriteJSON(&js))
	assert.Contains(t, js.String(), `"value": 0.6999997`)
	assert.Contains(t, js.String(), `"threshold": 0.7`)
	require.NoError(t, doc.Text(&txt))
	assert.Contains(t, txt.String(), "min_hit     overall  retrieval_hit_at_k     fail    0.7000000  0.6999997  1  overall mean 0.6999997 is below the floor 0.7000000")
	md := doc.Markdown(MarkdownOptions{})
	assert.Contains(t, md, "| min\\_hit<br><sub>overall · retrieval\\_hit\\_at\\_k</sub> | ❌ fail [1] | 0.7000000 | 0.6999997 | 1 |\n")
	assert.Contains(t, md, "[1] **min\\_hit**: overall mean 0.6999997 is below the floor 0.7000000")
}

// Groups beyond gate.MaxGroups are counted in every format.
func TestGroupsOmittedInEveryFormat(t *testing.T) {
	res := fixture(t, gate.Floor{})
	res.TypesOmitted = gate.Omitted{Groups: 7, Cases: 6}
	d := New(res)
	var js, txt bytes.Buffer
	require.NoError(t, d.WriteJSON(&js))
	require.NoError(t, d.Text(&txt))
	md := d.Markdown(MarkdownOptions{})
	assert.Contains(t, js.String(), `"groups_omitted": {`)
	back, err := Read(bytes.NewReader(js.Bytes()))
	require.NoError(t, err)
	assert.Equal(t, Omitted{Groups: 7, Cases: 6}, back.GroupsOmitted.Type)
	want := "only the 50 largest type and locale groups are computed and shown: 7 more types (6 cases) are not"
	assert.Contains(t, txt.String(), want)
	assert.Contains(t, md, want)
}

// Every locale delta shows the n it rests on, in every format and read back
// from the JSON alike: the locale's n, then the reference locale's, both
// by_locale's (the delta entries carry none); a measure whose n is not its
// group's (precomputed scores lacking it) adds its own two n to its cell.
func TestLocaleDeltasCarryN(t *testing.T) {
	r := fixture(t, gate.Floor{})
	s := &gate.Scorer{KB: cardSet{"es-reset": true}, K: 3}
	a := gate.NewAccumulator()
	for i, c := range []casefile.Case{
		{ID: "en-1", Locale: "en", Gold: []string{"es-reset"}, Retrieved: []casefile.Retrieved{{ID: "x"}}},
		{ID: "en-2", Locale: "en", Gold: []string{"es-reset"}, Retrieved: []casefile.Retrieved{{ID: "es-reset"}}},
		{ID: "es-1", Locale: "es-419", Gold: []string{"es-reset"}, Retrieved: []casefile.Retrieved{{ID: "es-reset"}}},
		{ID: "es-2", Locale: "es-419", Scores: map[string]float64{metrics.KeyHit: 0}}, // hit only: recall and nDCG rest on 1 case
	} {
		c.File, c.Line = "cases.jsonl", i+1
		var cr gate.CaseResult
		require.NoError(t, s.ScoreInto(&c, &cr))
		require.NoError(t, a.Add(&cr))
	}
	mixed := gateResult(a, gate.Config{K: 3, ReferenceLocale: "en", KBCards: 1, Resamples: 100})

	for name, res := range map[string]*gate.Result{"fixture": r, "mixed": mixed} {
		t.Run(name, func(t *testing.T) {
			doc := New(res)
			var js bytes.Buffer
			require.NoError(t, doc.WriteJSON(&js))
			back, err := Read(bytes.NewReader(js.Bytes()))
			require.NoError(t, err)
			require.NotEmpty(t, back.LocaleDeltas)
			for _, d := range []*Document{doc, back} {
				var txt bytes.Buffer
				require.NoError(t, d.TextVerbose(&txt))
				md := d.Markdown(MarkdownOptions{})
				ref := d.ByLocale[d.ReferenceLocale].N
				for loc := range d.LocaleDeltas {
					n, nRef, ok := d.DeltaN(loc)
					require.True(t, ok)
					assert.Equal(t, [2]int64{d.ByLocale[loc].N, ref}, [2]int64{n, nRef}, loc)
					assert.Contains(t, txt.String(), fmt.Sprintf("\n  %s n=%d vs %d ", loc, n, ref))
					assert.Contains(t, md, fmt.Sprintf("\n| %s (n=%d vs %d) |", format.EscapeMarkdown(loc), n, ref))
				}
				assert.Contains(t, txt.String(), "  n: the locale's gold-carrying cases vs en's, the two groups each delta rests on\n")
				assert.Contains(t, md, "\n\nn: the locale's gold-carrying cases vs en's, the two groups each delta rests on.\n")
			}
		})
	}

	doc := New(mixed)
	require.Equal(t, int64(2), doc.ByLocale["es-419"].N)
	for key, want := range map[string]string{
		metrics.KeyHit:    "",            // 2 and 2: the groups' n
		metrics.KeyRecall: " (n=1 vs 2)", // es-419's recall rests on its one retrieved case
		metrics.KeyNDCG:   " (n=1 vs 2)",
	} {
		n, ref, ok := doc.DeltaMeasureN("es-419", key)
		assert.Equal(t, want != "", ok, key)
		if ok {
			assert.Equal(t, [2]int64{1, 2}, [2]int64{n, ref}, key)
		}
		assert.Equal(t, format.Signed(doc.delta("es-419", key))+want, doc.deltaCell("es-419", key), key)
	}
	var txt bytes.Buffer
	require.NoError(t, doc.TextVerbose(&txt))
	assert.Contains(t, txt.String(), "recall@3 "+doc.deltaCell("es-419", metrics.KeyRecall))
	assert.Contains(t, doc.Markdown(MarkdownOptions{}), "| "+doc.deltaCell("es-419", metrics.KeyRecall)+" |")

	// A document not written by check may lack a delta's group: its n is
	// missing, not 0.
	delete(doc.ByLocale, "es-419")
	assert.Contains(t, doc.Markdown(MarkdownOptions{}), "| es-419 (n=—) |")
	_, _, ok := doc.DeltaMeasureN("es-419", metrics.KeyRecall)
	assert.False(t, ok)
}

// gateResult is a.ResultContext with a context that does not end.
func gateResult(a *gate.Accumulator, cfg gate.Config) *gate.Result {
	res, err := a.ResultContext(context.Background(), cfg)
	if err != nil {
		panic(err) // a context that does not end ends nothing
	}
	return res
}

// The text report wrote a problem's case id by SanitizeText and its gold id
// by Go's %q: one override read (U+202E) in the case id and "\u202e" in the
// gold id of the same line. Both ids now read alike in the text report and
// the Markdown (format.CaseGold and EscapeMarkdown: one rule).
func TestProblemIDsOneEscaping(t *testing.T) {
	r := fixture(t, gate.Floor{})
	r.Integrity.Problems = []gate.Problem{{File: "c.jsonl", Line: 7, CaseID: "en\u202E7", GoldID: "g\u200B\u202E7", Kind: gate.UnknownCard}}
	doc := New(r)
	var b bytes.Buffer
	require.NoError(t, doc.Text(&b))
	assert.Contains(t, b.String(), "  c.jsonl:7: case en(U+202E)7: gold id \"g(U+200B)(U+202E)7\": unknown card\n")
	md := doc.Markdown(MarkdownOptions{})
	assert.Contains(t, md, "| c.jsonl:7 | en(U+202E)7 | g(U+200B)(U+202E)7 | unknown card |")
	assert.NotContains(t, b.String()+md, `\u`)
}
