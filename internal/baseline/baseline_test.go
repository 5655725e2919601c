package baseline

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fastjson"

	"github.com/retrieval-gate/retrieval-gate/internal/gate"
	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/kbfile"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
	"github.com/retrieval-gate/retrieval-gate/internal/report/gatetable"
)

// cur is one case of "this run" for the tests: hit, recall = nDCG = hit, and rank.
type cur struct {
	id, typ, locale string
	gold            []string
	hit             float64
	rank            int
}

func load(t *testing.T, text string) *Baseline {
	t.Helper()
	b, err := Load(context.Background(), strings.NewReader(text), "base.jsonl", t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { b.Close() })
	return b
}

func run(t *testing.T, b *Baseline, opt Options, cases []cur) *Comparison {
	t.Helper()
	c := NewComparer(b, opt)
	for i, x := range cases {
		r := gate.CaseResult{File: "run.jsonl", Line: i + 1, ID: x.id, Type: x.typ, Locale: x.locale, Scored: len(x.gold) > 0}
		if r.Scored {
			for m := range r.Scores {
				r.Scores[m], r.Has[m] = x.hit, true
			}
		}
		top := []string{"other"}
		if x.hit == 1 {
			top = append([]string{x.gold[0]}, top...)
		}
		cu := Current{IDHash: IDHash(x.id), GoldHash: GoldHash(x.gold), Ranked: true, Rank: x.rank, Top: top}
		line := CaseLine{ID: x.id, Gold: x.gold, Query: "q " + x.id}
		c.Add(&r, &line, &cu)
	}
	res, err := c.Result()
	require.NoError(t, err)
	return res
}

func bline(id string, gold string, hit float64, rank int) string {
	s := `{"id":"` + id + `","type":"golden","locale":"en"`
	if gold != "" {
		s += `,"gold":["` + gold + `"]`
	}
	if gold != "" {
		h := "0"
		if hit == 1 {
			h = "1"
		}
		s += `,"scores":{"retrieval_hit_at_k":` + h + `,"retrieval_recall_at_k":` + h + `,"retrieval_ndcg_at_k":` + h + `}`
	} else {
		s += `,"scores":{}`
	}
	s += `,"rank":` + string(rune('0'+rank)) + `,"top":["x"]}` + "\n"
	return s
}

func TestPairing(t *testing.T) {
	base := bline("a", "g1", 1, 1) + bline("b", "g1", 0, 0) + bline("c", "g1", 1, 1) +
		bline("d", "g1", 1, 1) + bline("only-base", "g1", 1, 1) + bline("nogold", "", 0, 0) + bline("e", "g1", 1, 1)
	b := load(t, base)
	res := run(t, b, Options{K: 5}, []cur{
		{id: "a", typ: "golden", locale: "en", gold: []string{"g1"}, hit: 0},          // newly missed
		{id: "b", typ: "golden", locale: "en", gold: []string{"g1"}, hit: 1, rank: 1}, // newly found
		{id: "c", typ: "golden", locale: "en", gold: []string{"g2"}, hit: 1, rank: 1}, // gold changed: not paired
		{id: "d", typ: "golden", locale: "en", gold: []string{"g1"}, hit: 1, rank: 4}, // rank drop 1 -> 4
		{id: "e", typ: "golden", locale: "en", gold: []string{"g1"}, hit: 1, rank: 3}, // drop of 2 < 3: none
		{id: "only-cur", typ: "golden", locale: "en", gold: []string{"g1"}, hit: 1},
		{id: "nogold", typ: "golden", locale: "en"},
	})
	assert.Equal(t, int64(7), res.BaselineCases)
	assert.Equal(t, int64(4), res.Paired)
	assert.Equal(t, int64(1), res.GoldChanged)
	assert.Equal(t, int64(1), res.OnlyBaseline)
	assert.Equal(t, int64(1), res.OnlyCurrent)
	assert.Equal(t, int64(1), res.NoGold)
	require.Len(t, res.NewlyMissed, 1)
	assert.Equal(t, "a", res.NewlyMissed[0].ID)
	assert.Equal(t, []string{"x"}, res.NewlyMissed[0].Before)
	require.Len(t, res.NewlyFound, 1)
	assert.Equal(t, "b", res.NewlyFound[0].ID)
	require.Len(t, res.RankDrops, 1)
	assert.Equal(t, [2]int{1, 4}, [2]int{res.RankDrops[0].RankBefore, res.RankDrops[0].RankAfter})
	require.Len(t, res.GoldChangedList, 1)
	assert.Equal(t, []string{"g1"}, res.GoldChangedList[0].Before)
	assert.Equal(t, []string{"g2"}, res.GoldChangedList[0].After)
	assert.Equal(t, "only-base", res.OnlyBaselineList[0].ID)
	assert.Equal(t, 5, res.OnlyBaselineList[0].Line)
	assert.Equal(t, "only-cur", res.OnlyCurrentList[0].ID)
	// The gold-changed case never enters the statistics: hit 1,0,1,1 -> 0,1,1,1.
	hit := res.Overall.Stats[0]
	assert.Equal(t, metrics.KeyHit, hit.Key)
	assert.Equal(t, int64(4), hit.N)
	assert.InDelta(t, 0.75, hit.Base, 1e-15)
	assert.InDelta(t, 0.75, hit.Cur, 1e-15)
	assert.Equal(t, [2]int64{1, 1}, hit.Discordant)
	assert.Equal(t, TestMcNemar, hit.Test)
	assert.Equal(t, 1.0, hit.P)
	// No header: a --cases-out-like file, what it lacks is said.
	assert.Equal(t, FormatCasesOut, res.Format)
	assert.Contains(t, res.Lacks, "kb_fingerprint")
}

func TestLoadErrors(t *testing.T) {
	for name, tc := range map[string]struct{ in, want string }{
		"duplicate id": {bline("a", "g", 1, 1) + bline("b", "g", 1, 1) + bline("a", "g", 0, 0), `base.jsonl:3: duplicate case id "a" (first at line 1)`},
		"empty":        {"", "base.jsonl: empty"},
		"report":       {`{"schema":"retrieval-gate/aggregates@1"}` + "\n", `base.jsonl:1: schema "retrieval-gate/aggregates@1" is not a baseline`},
		"not json":     {"nope\n", "base.jsonl:1: not a JSON object"},
		"no id":        {`{"scores":{}}` + "\n", "base.jsonl:1: neither a baseline file"},
		// Issue 20 item 8: the wrong kind of file is named, never read as one.
		"a cases file":         {`{"id":"a","must_cite_one_of":["g"],"retrieved":["g"]}` + "\n", "it looks like a cases file (the input of check"},
		"cases without scores": {`{"id":"a","must_cite_one_of":["g"]}` + "\n", "it looks like a cases file without results"},
		"a KB":                 {`{"id":"a","text":"alpha","scores":{}}` + "\n", "it looks like a knowledge-base file"},
		"qrels JSONL":          {`{"query_id":"q","doc_id":"d","relevance":1}` + "\n", "it looks like qrels or a run"},
		"human labels":         {`{"case_id":"c","dimension":"relevance","label":1}` + "\n", "it looks like human labels"},
		"a TREC run":           {"q1 Q0 d1 1 0.5 tag\n", "not a JSON object (a baseline file starts with its header line): it looks like a TREC run"},
		"bad score":            {`{"id":"a","scores":{"retrieval_hit_at_k":2}}` + "\n", "base.jsonl:1: scores.retrieval_hit_at_k must be a number in the measure's range"},
		"bad line 2":           {bline("a", "g", 1, 1) + "{\n", "base.jsonl:2: invalid JSON"},
		"bad rank":             {`{"id":"a","rank":-1}` + "\n", "base.jsonl:1: rank must be a non-negative integer"},
		"rank too big":         {`{"id":"a","rank":2147483648}` + "\n", "base.jsonl:1: rank 2147483648 is above 2147483647"},
		"gold not list":        {`{"id":"a","gold":"g"}` + "\n", "base.jsonl:1: gold must be an array of strings"},
		// One rule for duplicate keys in every JSON input (fastjson let the last one win).
		"dup in header":     {`{"schema":"retrieval-gate/baseline@1","schema":"x"}` + "\n", `base.jsonl:1: duplicate key "schema" at column 39`},
		"dup in first case": {`{"id":"a","id":"b"}` + "\n", `base.jsonl:1: duplicate key "id" at column 11`},
		"dup in a score":    {bline("a", "g", 1, 1) + `{"id":"b","scores":{"retrieval_hit_at_k":1,"retrieval_hit_at_k":0}}` + "\n", `base.jsonl:2: duplicate key "retrieval_hit_at_k" at column 44`},
		// The header's values: what the report reads from them is never
		// dropped or taken as it is when it is not what the writer writes.
		"created_at a date":   {hdr(`"created_at":"2020-01-01"`), `base.jsonl:1: created_at "2020-01-01" is not an RFC 3339 time (such as 2025-11-01T00:00:00Z)`},
		"created_at a word":   {hdr(`"created_at":"yesterday"`), `base.jsonl:1: created_at "yesterday" is not an RFC 3339 time`},
		"created_at empty":    {hdr(`"created_at":""`), `base.jsonl:1: created_at "" is not an RFC 3339 time`},
		"created_at a number": {hdr(`"created_at":20200101`), `base.jsonl:1: created_at must be a string, an RFC 3339 time (such as 2025-11-01T00:00:00Z), got 20200101`},
		"k negative":          {hdr(`"k":-1`), `base.jsonl:1: k must be an integer of at least 1 (as check --k takes), got -1`},
		"k zero":              {hdr(`"k":0`), `base.jsonl:1: k must be an integer of at least 1 (as check --k takes), got 0`},
		"k a fraction":        {hdr(`"k":2.5`), `base.jsonl:1: k must be an integer of at least 1 (as check --k takes), got 2.5`},
		"k a string":          {hdr(`"k":"5"`), `base.jsonl:1: k must be an integer of at least 1 (as check --k takes), got "5"`},
		"k beyond an int":     {hdr(`"k":100000000000000000000`), `base.jsonl:1: k must be an integer of at least 1 (as check --k takes), got 100000000000000000000`},
		"cases negative":      {hdr(`"cases":-1`), `base.jsonl:1: cases must be a non-negative integer (the number of case lines), got -1`},
		"aggregates a number": {hdr(`"aggregates":5`), `base.jsonl:1: aggregates must be an object (the run's check --json document), got 5`},
		"aggregates an array": {hdr(`"aggregates":[]`), `base.jsonl:1: aggregates must be an object (the run's check --json document), got an array`},
		"aggregates a string": {hdr(`"aggregates":"{}"`), `base.jsonl:1: aggregates must be an object (the run's check --json document), got "{}"`},
		"more cases stated":   {hdr(`"cases":999`), `base.jsonl:1: the header states 999 cases, the file has 2 case lines (up to line 3): a baseline cut short or edited; write it again with check --write-baseline`},
		"fewer cases stated":  {hdr(`"cases":1`), `base.jsonl:1: the header states 1 cases, the file has 2 case lines (up to line 3)`},
		"cases and no lines":  {`{"schema":"retrieval-gate/baseline@1","cases":2}` + "\n\n", `base.jsonl:1: the header states 2 cases, the file has 0 case lines (up to line 1)`},
		"a bad line wins":     {`{"schema":"retrieval-gate/baseline@1","cases":9}` + "\n" + bline("a", "g", 1, 1) + "{\n", "base.jsonl:3: invalid JSON"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Load(context.Background(), strings.NewReader(tc.in), "base.jsonl", t.TempDir())
			require.Error(t, err)
			var de *input.Error
			require.ErrorAs(t, err, &de)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// hdr is a baseline of two cases whose header has the members given besides
// its schema.
func hdr(members string) string {
	return `{"schema":"retrieval-gate/baseline@1",` + members + "}\n" + bline("a", "g", 1, 1) + bline("b", "g", 0, 0)
}

// TestHeaderOptionalFields: every header key but schema may be absent or
// null (an older or hand-made header); what is present and valid is read.
func TestHeaderOptionalFields(t *testing.T) {
	for name, tc := range map[string]struct {
		members string
		k       int64 // int64: the large k is past a 32-bit int
		created time.Time
	}{
		"schema only": {members: `"commit":"c"`},
		"nulls":       {members: `"k":null,"cases":null,"created_at":null,"aggregates":null`},
		"all valid": {members: `"k":10,"cases":2,"created_at":"2025-11-01T02:03:04+02:00","aggregates":{"schema":"x"}`,
			k: 10, created: time.Date(2025, 11, 1, 0, 3, 4, 0, time.UTC)},
		"k large": {members: `"k":100000000000`, k: 100000000000}, // as check --k 100000000000 is
	} {
		t.Run(name, func(t *testing.T) {
			b := load(t, hdr(tc.members))
			assert.Equal(t, 2, b.recs.n)
			assert.Equal(t, tc.k, int64(b.Source.Header.K))
			assert.True(t, tc.created.Equal(b.CreatedAt()), "created_at %v", b.CreatedAt())
		})
	}
	// A header stating no cases over no case lines is consistent.
	b := load(t, `{"schema":"retrieval-gate/baseline@1","cases":0}`+"\n")
	assert.Equal(t, 0, b.recs.n)
}

// TestFileRoundTrip writes a baseline file (header member + body member) and reads it back.
func TestFileRoundTrip(t *testing.T) {
	var body bytes.Buffer
	zw := gzip.NewWriter(&body)
	c := CaseLine{ID: "a\"b", Line: 7, Locale: "es-419", Type: "golden", Query: "¿qué?", Gold: []string{"g1", "g2"},
		Ranked: true, Rank: 2, HasTop: true, Top: []string{"x", "g2"}}
	for i := range c.Has {
		c.Scores[i], c.Has[i] = 0.5, true
	}
	c.Scores[0] = 1
	_, err := zw.Write(AppendCaseLine(nil, &c))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	var file bytes.Buffer
	h := &Header{K: 5, KBFingerprint: "sha256:x", Commit: "abc", CreatedAt: "2026-01-02T03:04:05Z", Cases: 1}
	require.NoError(t, WriteFile(&file, h, &body))
	b, err := Load(context.Background(), &file, "b.jsonl.gz", t.TempDir())
	require.NoError(t, err)
	defer b.Close()
	assert.Equal(t, FormatBaseline, b.Source.Format)
	assert.Equal(t, Schema, b.Source.Header.Schema)
	assert.Equal(t, 5, b.Source.Header.K)
	assert.Equal(t, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), b.CreatedAt())
	require.Equal(t, 1, b.recs.n)
	got, err := b.detail(0)
	require.NoError(t, err)
	want := c // detail keeps what the reports list
	want.Line, want.Locale, want.Type, want.Query = 0, "", "", ""
	assert.Equal(t, want, got)
}

func TestGoldHashIsASet(t *testing.T) {
	assert.Equal(t, GoldHash([]string{"a", "b"}), GoldHash([]string{"b", "a", "a", ""}))
	assert.NotEqual(t, GoldHash([]string{"a", "b"}), GoldHash([]string{"ab"}))
	assert.Equal(t, uint64(0), GoldHash(nil))
	assert.NotEqual(t, uint64(0), GoldHash([]string{"a"}))
}

func TestKBFingerprint(t *testing.T) {
	a := []kbfile.Card{{ID: "x", Title: "T", Text: "one"}, {ID: "y", Text: "two"}}
	b := []kbfile.Card{{ID: "y", Text: "two", File: "other.md"}, {ID: "x", Title: "T", Text: "one", Locale: "en"}}
	assert.Equal(t, KBFingerprint(a), KBFingerprint(b))
	c := []kbfile.Card{{ID: "x", Title: "T", Text: "one!"}, {ID: "y", Text: "two"}}
	assert.NotEqual(t, KBFingerprint(a), KBFingerprint(c))
	assert.True(t, strings.HasPrefix(KBFingerprint(a), "sha256:"))
}

// TestPairedStatByHand checks one measure's paired statistics against hand-computed values.
func TestPairedStatByHand(t *testing.T) {
	// 0/1: 10 pairs, 6 worse (1 -> 0), 1 better, 3 unchanged at 1.
	h := metrics.NewHistogram()
	var bs, cs float64
	for i := range 10 {
		switch {
		case i < 6:
			h.Add(-1)
			bs++
		case i < 7:
			h.Add(1)
			cs++
		default:
			h.Add(0)
			bs++
			cs++
		}
	}
	hit := metrics.CaseMeasures[metrics.CaseIndex(metrics.KeyHit)].Info
	s := PairedStat(hit, h, bs, cs, 2000, 1)
	assert.InDelta(t, 0.9, s.Base, 1e-15)
	assert.InDelta(t, 0.4, s.Cur, 1e-15)
	assert.InDelta(t, -0.5, s.Delta, 1e-15)
	// McNemar: 2·P(X ≤ 1 | n = 7, ½) = 2·(1 + 7)/128 = 0.125.
	assert.Equal(t, TestMcNemar, s.Test)
	assert.InDelta(t, 0.125, s.P, 1e-12)
	assert.False(t, s.Rejects)
	assert.Empty(t, s.Change)
	assert.Equal(t, [2]int64{6, 1}, s.Discordant)
	assert.Equal(t, metrics.MDDMcNemar(0.7, 10, 0.05, 0.8), s.MDD)
	assert.True(t, s.CI95[0] <= s.Delta && s.Delta <= s.CI95[1])
	// The interval is inverted from the McNemar test: it includes 0 as the
	// test does not reject.
	assert.Equal(t, metrics.MethodMcNemarInverted, s.CI95Method)
	assert.Equal(t, metrics.McNemarCI95(6, 1, 10).CI(), s.CI95)
	assert.Less(t, s.CI95[0], 0.0)
	assert.Greater(t, s.CI95[1], 0.0)
	assert.Empty(t, s.Note)

	// Continuous: differences −0.5 ×8 and +0.25 ×1: one lattice (1/4); the exact
	// sign-flip p is P(|T*| ≥ 3.75) over 2^9 vectors: the eight −0.5 agree... computed
	// by SignFlipExactP on the expanded differences.
	g := metrics.NewHistogram()
	d := []float64{}
	for range 8 {
		g.Add(-0.5)
		d = append(d, -0.5)
	}
	g.Add(0.25)
	d = append(d, 0.25)
	rec := metrics.CaseMeasures[metrics.CaseIndex(metrics.KeyRecall)].Info
	s = PairedStat(rec, g, 9, 9-3.75, 2000, 1)
	want, ok := metrics.SignFlipExactP(d)
	require.True(t, ok)
	assert.Equal(t, TestSignFlipExact, s.Test)
	assert.Equal(t, want, s.P)
	// By hand: |T| = 3.75 needs all eight −0.5 with one sign (2 of 2^8 patterns), the
	// 0.25 either way: p = 2/256.
	assert.InDelta(t, 2.0/256, s.P, 1e-12)
	assert.True(t, s.Rejects)
	assert.Equal(t, "worse", s.Change)
	assert.InDelta(t, metrics.MDDMean(g.SampleSD(), 9, 0.05, 0.8), s.MDD, 1e-15)

	// Irrational differences share no lattice: the randomization test.
	r := metrics.NewHistogram()
	for range 20 {
		r.Add(-1 / math.Log2(3))
	}
	r.Add(math.Sqrt2 / 10)
	s = PairedStat(rec, r, 20, 0, 4000, 1)
	assert.Equal(t, TestSignFlipMC, s.Test)
	assert.Less(t, s.P, 0.001)
}

// A paired difference's interval of a measure with a known range is reliable
// at every n (below DifferenceReliableMinN pairs it is hall-t united with the
// betting interval, which covers at every n); of an unbounded measure it is
// unreliable below DifferenceReliableMinN pairs and reliable from it.
func TestPairedStatUnreliableBelowMinN(t *testing.T) {
	rec := metrics.CaseMeasures[metrics.CaseIndex(metrics.KeyRecall)].Info
	unbounded := rec
	unbounded.Scale = metrics.ScaleUnbounded
	for _, n := range []int{2, metrics.DifferenceReliableMinN - 1, metrics.DifferenceReliableMinN, 200} {
		h := metrics.NewHistogram()
		for i := range n {
			h.Add([]float64{-0.5, 0, 0, 0.25}[i%4])
		}
		s := PairedStat(rec, h, float64(n), float64(n), 2000, 1)
		assert.False(t, s.Unreliable, "n = %d", n)
		want := metrics.MethodHallT
		if n < metrics.DifferenceReliableMinN {
			want = metrics.MethodHallTBetting
		}
		assert.Equal(t, want, s.CI95Method, "n = %d", n) // the method is carried, for the JSON's ci95_method
		s = PairedStat(unbounded, h, float64(n), float64(n), 2000, 1)
		assert.Equal(t, n < metrics.DifferenceReliableMinN, s.Unreliable, "unbounded, n = %d", n)
		assert.Equal(t, metrics.MethodHallT, s.CI95Method, "unbounded, n = %d", n)
	}
}

func TestGates(t *testing.T) {
	base := ""
	cases := []cur{}
	for i := range 40 {
		id := string(rune('A'+i/26)) + string(rune('a'+i%26))
		base += bline(id, "g", 1, 1)
		hit := 1.0
		if i < 8 { // 8 of 40 newly missed: drop 0.2, McNemar p = 2/256
			hit = 0
		}
		cases = append(cases, cur{id: id, typ: "golden", locale: "en", gold: []string{"g"}, hit: hit, rank: 1})
	}
	b := load(t, base)
	tol := func(v float64) map[string]Tolerance {
		return map[string]Tolerance{metrics.KeyHit: {Set: true, Value: v}}
	}
	res := run(t, b, Options{K: 5, MaxDrop: tol(0.1)}, cases)
	g, _ := res.Gates.Find("max_drop_hit")
	assert.Equal(t, outcome.Fail, g.Status)
	assert.InDelta(t, 0.2, g.Value, 1e-15)
	assert.Equal(t, 0.1, g.Threshold)
	assert.Equal(t, int64(40), g.N)
	assert.Equal(t, outcome.GroupOverall, g.Group)
	assert.Contains(t, gatetable.Reason(g.Why), "mcnemar_exact p = 0.0078")
	assert.Equal(t, outcome.Fail, res.Regression)
	r, _ := res.Gates.Find("max_drop_recall")
	assert.Equal(t, outcome.Off, r.Status)

	res = run(t, b, Options{K: 5, MaxDrop: tol(0.25)}, cases)
	g, _ = res.Gates.Find("max_drop_hit")
	assert.Equal(t, outcome.Pass, g.Status)
	assert.Equal(t, outcome.Pass, res.Regression)

	// Not significant: 2 of 40 missed (p = 0.5) passes under significant, fails under any.
	for i := range cases {
		cases[i].hit = 1
	}
	cases[0].hit, cases[1].hit = 0, 0
	res = run(t, b, Options{K: 5, MaxDrop: tol(0.01)}, cases)
	g, _ = res.Gates.Find("max_drop_hit")
	assert.Equal(t, outcome.Pass, g.Status)
	assert.Contains(t, gatetable.Reason(g.Why), "does not reject")
	res = run(t, b, Options{K: 5, MaxDrop: tol(0.01), Test: TestAny}, cases)
	g, _ = res.Gates.Find("max_drop_hit")
	assert.Equal(t, outcome.Fail, g.Status)

	u := Unavailable(Unavailability{Code: "no_artifact", Detail: "no artifact"}, Options{MaxDrop: tol(0.01)})
	g, _ = u.Gates.Find("max_drop_hit")
	assert.Equal(t, outcome.Off, g.Status)
	assert.Equal(t, []outcome.Clause{{Code: outcome.NoBaseline, Name: "no_artifact", Text: "no artifact"}}, g.Why, "the reason is data")
	assert.Equal(t, "no baseline: no artifact (no_artifact)", gatetable.Reason(g.Why))
	u = Unavailable(Unavailability{Code: NotInActions}, Options{MaxDrop: tol(0.01)})
	g, _ = u.Gates.Find("max_drop_hit")
	assert.Equal(t, "no baseline: --baseline auto looks the baseline up in GitHub Actions; this is not an Actions run", gatetable.Reason(g.Why))
	assert.Equal(t, outcome.Off, u.Regression)
}

func FuzzLoad(f *testing.F) {
	f.Add([]byte(bline("a", "g", 1, 1) + bline("b", "", 0, 0)))
	f.Add([]byte(`{"schema":"retrieval-gate/baseline@1","k":5}` + "\n" + `{"id":"x","rank":2,"top":["a"]}`))
	f.Add([]byte(`{"schema":"retrieval-gate/baseline@9"}` + "\n"))
	f.Add([]byte(`{"schema":"retrieval-gate/baseline@1","k":5,"cases":1,"created_at":"2025-11-01T00:00:00Z","aggregates":{}}` + "\n" + bline("a", "g", 1, 1)))
	f.Add([]byte(`{"schema":"retrieval-gate/baseline@1","k":0,"cases":-1,"created_at":"2020-01-01","aggregates":5}` + "\n"))
	f.Add([]byte(`{"schema":"retrieval-gate/baseline@1","cases":3}` + "\n" + bline("a", "g", 1, 1)))
	f.Add([]byte("\n \r\n" + `{"schema":"retrieval-gate/baseline@1","k":5}` + "\r\n\n" + bline("a", "g", 1, 1) + "\n\t\n" + bline("b", "g", 0, 0)))
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, err := zw.Write([]byte(bline("a", "g", 1, 1)))
	require.NoError(f, err)
	require.NoError(f, zw.Close())
	f.Add(gz.Bytes())
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := Load(context.Background(), bytes.NewReader(data), "f", dir)
		if err != nil {
			var de *input.Error
			if !assert.ErrorAs(t, err, &de) {
				t.Fatalf("not an input error: %v", err)
			}
			return
		}
		defer b.Close()
		// The reference: the file inflated apart (compress/gzip), split at
		// '\n', blank lines skipped, the header (a first line with "schema")
		// set aside; every other line is one record, in order, at its line,
		// with the id, gold and top k ParseCaseLine reads from it, ids unique.
		text := data
		if len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b {
			zr, err := gzip.NewReader(bytes.NewReader(data))
			require.NoError(t, err, "accepted a file compress/gzip refuses")
			text, err = io.ReadAll(zr)
			require.NoError(t, err, "accepted a file compress/gzip refuses")
		}
		type numbered struct {
			n    int
			line []byte
		}
		var lines []numbered
		for i, l := range bytes.Split(text, []byte("\n")) {
			if l = bytes.TrimSpace(l); len(l) > 0 {
				lines = append(lines, numbered{i + 1, l})
			}
		}
		var p fastjson.Parser
		var stated *int64 // the header's case count, when it states one
		if len(lines) > 0 {
			if v, err := p.ParseBytes(lines[0].line); err == nil && v.Get("schema") != nil {
				lines = lines[1:]
				if x := v.Get("cases"); x != nil && x.Type() != fastjson.TypeNull {
					n, err := x.Int64()
					require.NoError(t, err, "accepted cases %s", x)
					stated = &n
				}
			}
		}
		require.Equal(t, len(lines), b.recs.n, "records")
		if h := b.Source.Header; h != nil {
			if stated != nil {
				assert.Equal(t, *stated, int64(b.recs.n), "the header's count")
			}
			assert.True(t, h.CreatedAt == "" || !b.CreatedAt().IsZero(), "accepted created_at %q", h.CreatedAt)
			assert.GreaterOrEqual(t, h.K, 0)
		}
		seen := map[string]bool{}
		for i := range b.recs.n {
			got, derr := b.detail(i)
			require.NoError(t, derr)
			require.Equal(t, lines[i].n, b.lineOf(i), "record %d's line", i)
			var want CaseLine
			require.NoError(t, ParseCaseLine(&p, lines[i].line, "f", lines[i].n, &want))
			assert.Equal(t, CaseLine{ID: want.ID, Gold: want.Gold, Top: want.Top, HasTop: want.HasTop},
				CaseLine{ID: got.ID, Gold: got.Gold, Top: got.Top, HasTop: got.HasTop}, "record %d", i)
			assert.False(t, seen[got.ID], "id %q twice", got.ID)
			seen[got.ID] = true
		}
	})
}

// Issue 34 item 9: the demo's adversarial type (n = 28, hit@5 0.929 → 0.714:
// six pairs lost, none gained) read "🔻 −0.214 [−0.491, +0.037] · p 0.0313
// McNemar · MDD —": significant, an interval across 0 and nothing detectable.
// Now one decision: the interval inverted from the test excludes 0 as the test
// rejects, and the MDD is the drop the test sees four times in five.
func TestPairedStatAgreesWithItsTest(t *testing.T) {
	hit := metrics.CaseMeasures[metrics.CaseIndex(metrics.KeyHit)].Info
	h := metrics.NewHistogram()
	for i := range 28 {
		if i < 6 {
			h.Add(-1)
		} else {
			h.Add(0)
		}
	}
	s := PairedStat(hit, h, 26, 20, 2000, 1)
	assert.InDelta(t, -0.214, s.Delta, 1e-3)
	assert.InDelta(t, 0.03125, s.P, 1e-15)
	assert.True(t, s.Rejects)
	assert.Equal(t, "worse", s.Change)
	assert.Equal(t, metrics.MethodMcNemarInverted, s.CI95Method)
	assert.Less(t, s.CI95[1], 0.0, "the interval excludes 0 as the test rejects")
	assert.InDelta(t, -0.4095, s.CI95[0], 1e-4)
	assert.InDelta(t, -0.0068, s.CI95[1], 1e-4)
	assert.Empty(t, s.Note)
	assert.InDelta(t, 0.2575, s.MDD, 1e-4)

	// No case changed: nothing to test, the rule of three.
	z := metrics.NewHistogram()
	for range 60 {
		z.Add(0)
	}
	for _, m := range []metrics.Info{hit, metrics.CaseMeasures[metrics.CaseIndex(metrics.KeyNDCG)].Info} {
		s = PairedStat(m, z, 60, 60, 2000, 1)
		assert.Equal(t, TestNone, s.Test, m.Key)
		assert.Equal(t, 1.0, s.P, m.Key)
		assert.False(t, s.Rejects, m.Key)
		assert.Equal(t, metrics.MethodRuleOfThree, s.CI95Method, m.Key)
		assert.InDelta(t, 1-math.Pow(0.05, 1.0/59), s.CI95[1], 1e-15, m.Key)
		assert.Empty(t, s.Note, m.Key)
	}

	// A sign-flip test that rejects beside an interval (valid for every
	// distribution on the range) that does not exclude 0: the row says the
	// test decides.
	g := metrics.NewHistogram()
	for i := range 28 {
		switch {
		case i < 6:
			g.Add(-0.5)
		case i < 7:
			g.Add(0.25)
		default:
			g.Add(0)
		}
	}
	rec := metrics.CaseMeasures[metrics.CaseIndex(metrics.KeyRecall)].Info
	s = PairedStat(rec, g, 28, 28-2.75, 2000, 1)
	assert.True(t, s.Rejects, "p %g", s.P)
	assert.Equal(t, metrics.MethodHallTBetting, s.CI95Method)
	assert.Greater(t, s.CI95[1], 0.0)
	assert.Equal(t, NoteMethods, s.Note)
}
