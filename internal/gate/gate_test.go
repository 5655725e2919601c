package gate

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/casefile"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
	"github.com/retrieval-gate/retrieval-gate/internal/racetest"
	"github.com/retrieval-gate/retrieval-gate/internal/report/gatetable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type cardSet map[string]bool

func (s cardSet) Has(id string) bool { return s[id] }

var kb = cardSet{"a": true, "b": true, "c": true, "g": true}

func rs(ids ...string) []casefile.Retrieved {
	out := make([]casefile.Retrieved, len(ids))
	for i, id := range ids {
		out[i] = casefile.Retrieved{ID: id + "#c1", ParentID: id}
	}
	return out
}

// "-0" is the floor 0: shown "0", not "-0" (fmt.Sprint of the value).
func TestParseFloorNegativeZero(t *testing.T) {
	for _, s := range []string{"-0", "-0.0", " -0e5 "} {
		f, err := ParseFloor(s)
		require.NoError(t, err)
		assert.Equal(t, "0", fmt.Sprint(f.Value), s)
	}
}

func TestParseFloor(t *testing.T) {
	tests := []struct {
		in      string
		want    Floor
		wantErr bool
	}{
		{"", Floor{}, false},
		{"none", Floor{}, false},
		{"NONE", Floor{}, false},
		{"0", Floor{Set: true, Value: 0}, false},
		{"1", Floor{Set: true, Value: 1}, false},
		{"0.7", Floor{Set: true, Value: 0.7}, false},
		{"1.01", Floor{}, true},
		{"-0.1", Floor{}, true},
		{"NaN", Floor{}, true},
		{"abc", Floor{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseFloor(tt.in)
			if tt.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestScore(t *testing.T) {
	s := &Scorer{KB: kb, K: 2}
	tests := []struct {
		name       string
		c          casefile.Case
		scored     bool
		scores     map[string]float64 // the registered measures the test checks
		has        []string           // the measures the case has a score for
		problems   []string
		kinds      []ProblemKind // of the problems, when the test checks them
		relevant   bool
		unknown    int
		missed     bool
		wantErrSub string
	}{
		{
			name:   "relevant_ids: recall and nDCG against relevant ∪ gold, hit against gold",
			c:      casefile.Case{ID: "x", Gold: []string{"g"}, Relevant: []string{"a", "b"}, Retrieved: rs("g", "c"), HasRetrieved: true},
			scored: true, relevant: true, has: metrics.CaseKeys,
			scores: map[string]float64{metrics.KeyHit: 1, metrics.KeyRecall: 1.0 / 3, metrics.KeyNDCG: 1 / (1 + 1/math.Log2(3))},
		},
		{
			name:   "relevant_ids: a relevant non-gold card is no hit but counts in recall",
			c:      casefile.Case{ID: "x", Gold: []string{"g"}, Relevant: []string{"a"}, Retrieved: rs("a", "c"), HasRetrieved: true},
			scored: true, relevant: true, has: metrics.CaseKeys, missed: true,
			scores: map[string]float64{metrics.KeyHit: 0, metrics.KeyRecall: 0.5, metrics.KeyNDCG: 1 / (1 + 1/math.Log2(3))},
		},
		{
			name:   "unknown and empty relevant ids are integrity problems, named as relevant_ids",
			c:      casefile.Case{ID: "x", Gold: []string{"nope", "g"}, Relevant: []string{"nope", "", "a", "nope"}, Retrieved: rs("g"), HasRetrieved: true},
			scored: true, relevant: true, has: metrics.CaseKeys,
			scores:   map[string]float64{metrics.KeyHit: 1, metrics.KeyRecall: 1.0 / 3},
			problems: []string{"nope", "nope", ""},
			kinds:    []ProblemKind{UnknownCard, UnknownRelevant, EmptyRelevant},
		},
		{
			name:   "only empty relevant ids: a problem, recall stays against gold",
			c:      casefile.Case{ID: "x", Gold: []string{"g"}, Relevant: []string{""}, Retrieved: rs("g"), HasRetrieved: true},
			scored: true, has: metrics.CaseKeys, scores: map[string]float64{metrics.KeyRecall: 1},
			problems: []string{""}, kinds: []ProblemKind{EmptyRelevant},
		},
		{
			name:   "precomputed case with relevant_ids is counted and checked",
			c:      casefile.Case{ID: "x", Gold: []string{"g"}, Relevant: []string{"zz"}, Scores: map[string]float64{metrics.KeyRecall: 0.25}},
			scored: true, relevant: true, has: []string{metrics.KeyRecall},
			problems: []string{"zz"}, kinds: []ProblemKind{UnknownRelevant},
		},
		{
			name:   "hit via parent ids, duplicates of one parent",
			c:      casefile.Case{ID: "x", Gold: []string{"g"}, Retrieved: rs("a", "a", "g"), HasRetrieved: true},
			scored: true, scores: map[string]float64{metrics.KeyHit: 1, metrics.KeyRecall: 1, metrics.KeyNDCG: 1 / math.Log2(3)}, has: metrics.CaseKeys,
		},
		{
			name:   "no gold: no scores at all",
			c:      casefile.Case{ID: "x", Retrieved: rs("a"), HasRetrieved: true},
			scored: false,
		},
		{
			name:   "gold without retrieved is a scored miss",
			c:      casefile.Case{ID: "x", Gold: []string{"g"}},
			scored: true, has: metrics.CaseKeys, missed: true,
		},
		{
			name:   "unknown gold id is an integrity problem, still scored",
			c:      casefile.Case{ID: "x", Gold: []string{"nope", "g", "nope"}, Retrieved: rs("g"), HasRetrieved: true},
			scored: true, scores: map[string]float64{metrics.KeyHit: 1, metrics.KeyRecall: 0.5, metrics.KeyNDCG: 1 / (1 + 1/math.Log2(3))}, has: metrics.CaseKeys,
			problems: []string{"nope"},
		},
		{
			name:     "empty gold id is a problem and carries no gold",
			c:        casefile.Case{ID: "x", Gold: []string{""}},
			problems: []string{""},
		},
		{
			name:   "retrieved ids unknown to the KB are counted",
			c:      casefile.Case{ID: "x", Gold: []string{"g"}, Retrieved: []casefile.Retrieved{{ID: "stale"}, {ID: "g"}, {ID: "old#1"}}, HasRetrieved: true},
			scored: true, scores: map[string]float64{metrics.KeyHit: 1, metrics.KeyRecall: 1, metrics.KeyNDCG: 1 / math.Log2(3)}, has: metrics.CaseKeys,
			unknown: 2,
		},
		{
			name:   "precomputed scores as given, absent keys stay absent",
			c:      casefile.Case{ID: "x", Gold: []string{"nope"}, Scores: map[string]float64{metrics.KeyHit: 0, "faithfulness": 0.9}},
			scored: true, has: []string{metrics.KeyHit}, problems: []string{"nope"}, missed: true,
		},
		{
			name:   "precomputed empty scores: not scored",
			c:      casefile.Case{ID: "x", Scores: map[string]float64{}},
			scored: false,
		},
		{
			name:       "precomputed triad value out of range",
			c:          casefile.Case{ID: "x", Scores: map[string]float64{metrics.KeyRecall: 1.5}},
			wantErrSub: "must be in [0,1]",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.c.File, tt.c.Line, tt.c.Type = "cases.jsonl", 7, "golden"
			r, err := score(s, &tt.c)
			if tt.wantErrSub != "" {
				require.ErrorContains(t, err, tt.wantErrSub)
				var de *input.Error
				require.ErrorAs(t, err, &de)
				assert.Equal(t, 7, de.Line)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.scored, r.Scored)
			var has []string
			for i, ok := range r.Has {
				if ok {
					has = append(has, metrics.CaseKeys[i])
				}
			}
			assert.Equal(t, tt.has, has)
			for key, want := range tt.scores {
				assert.InDelta(t, want, r.Scores[metrics.CaseIndex(key)], 1e-12, key)
			}
			assert.Equal(t, tt.relevant, r.WithRelevant, "with relevant_ids")
			var got []string
			var kinds []ProblemKind
			for _, p := range r.Problems {
				got = append(got, p.GoldID)
				kinds = append(kinds, p.Kind)
				assert.Equal(t, "cases.jsonl", p.File)
				assert.Equal(t, 7, p.Line)
				assert.Equal(t, "x", p.CaseID)
			}
			assert.Equal(t, tt.problems, got)
			if tt.kinds != nil {
				assert.Equal(t, tt.kinds, kinds)
			}
			assert.Equal(t, tt.unknown, r.UnknownRetrieved)
			assert.Equal(t, tt.missed, r.Missed())
			assert.Equal(t, "und", r.Locale)
		})
	}
}

// score is ScoreInto a new result.
func score(s *Scorer, c *casefile.Case) (*CaseResult, error) {
	r := &CaseResult{}
	if err := s.ScoreInto(c, r); err != nil {
		return nil, err
	}
	return r, nil
}

func add(t *testing.T, a *Accumulator, s *Scorer, c casefile.Case) {
	t.Helper()
	if c.Type == "" {
		c.Type = "golden"
	}
	if c.File == "" {
		c.File = "cases.jsonl"
	}
	r, err := score(s, &c)
	require.NoError(t, err)
	require.NoError(t, a.Add(r))
}

func TestDuplicateCaseID(t *testing.T) {
	a := NewAccumulator()
	s := &Scorer{KB: kb, K: 5}
	add(t, a, s, casefile.Case{ID: "one", Line: 1})
	add(t, a, s, casefile.Case{ID: "two", Line: 2})
	r, err := score(s, &casefile.Case{ID: "one", Line: 3, File: "cases.jsonl"})
	require.NoError(t, err)
	require.NoError(t, a.Duplicate())
	require.NoError(t, a.Add(r))
	require.EqualError(t, a.Duplicate(), `cases.jsonl:3: duplicate case id "one" (first at line 1)`)
}

func TestResultGroupsDeltasAndGates(t *testing.T) {
	a := NewAccumulator()
	s := &Scorer{KB: kb, K: 5}
	line := 0
	c := func(id, loc, typ string, gold []string, ret ...string) casefile.Case {
		line++
		return casefile.Case{ID: id, Locale: loc, Type: typ, Line: line, Gold: gold, Retrieved: rs(ret...), HasRetrieved: true}
	}
	add(t, a, s, c("e1", "en", "golden", []string{"a"}, "a"))
	add(t, a, s, c("e2", "en", "golden", []string{"a"}, "b"))
	add(t, a, s, c("e3", "en", "adversarial", nil, "b"))
	add(t, a, s, c("s1", "es-419", "golden", []string{"a", "b"}, "a"))
	add(t, a, s, c("s2", "es-419", "adversarial", []string{"nope"}, "c"))
	add(t, a, s, c("p1", "pt-BR", "weird", nil))

	res := a.Result(Config{K: 5, ReferenceLocale: "en", MinHit: Floor{Set: true, Value: 0.5}, KBCards: 4, Resamples: 200})
	assert.Equal(t, int64(6), res.Total)
	assert.Equal(t, int64(4), res.WithGold)
	assert.Equal(t, int64(2), res.WithoutGold)
	assert.Equal(t, int64(4), res.Overall.N)
	hit, _ := res.Overall.Metric(metrics.KeyHit)
	assert.InDelta(t, 0.5, hit.Mean, 1e-12)

	names := func(gs []Group) (out []string) {
		for _, g := range gs {
			out = append(out, g.Name)
		}
		return
	}
	assert.Equal(t, []string{"adversarial", "golden", "weird"}, names(res.ByType))
	assert.Equal(t, []string{"en", "es-419", "pt-BR"}, names(res.ByLocale))
	assert.Equal(t, int64(0), res.ByLocale[2].N, "pt-BR has no gold-carrying case")
	assert.Equal(t, int64(1), res.ByLocale[2].WithoutGold)
	assert.Empty(t, res.ByLocale[2].Metrics)
	assert.Equal(t, int64(1), res.ByType[0].N, "adversarial with gold is scored")

	require.True(t, res.ReferenceHasGold)
	require.Len(t, res.Deltas, 1, "pt-BR has no n, so no delta")
	assert.Equal(t, "es-419", res.Deltas[0].Locale)
	// en hit mean 0.5; es-419: s1 hit, s2 miss -> 0.5; recall en 0.5, es 0.25
	assert.InDelta(t, 0, res.Deltas[0].Deltas[0].Value, 1e-12)
	assert.InDelta(t, -0.25, res.Deltas[0].Deltas[1].Value, 1e-12)

	assert.False(t, res.Integrity.OK)
	require.Len(t, res.Integrity.Problems, 1)
	assert.Equal(t, Problem{File: "cases.jsonl", Line: 5, CaseID: "s2", GoldID: "nope", Kind: UnknownCard}, res.Integrity.Problems[0])
	assert.Equal(t, []string{"integrity"}, res.Failed())
	assert.Equal(t, outcome.Pass, res.Gates[1].Status)
	assert.Equal(t, outcome.Off, res.Gates[2].Status)
	assert.Equal(t, outcome.Fail, res.Verdict())
	assert.Equal(t, int64(2), res.MissedTotal)
	assert.Equal(t, []string{"e2", "s2"}, []string{res.Missed[0].ID, res.Missed[1].ID})

	again := a.Result(Config{K: 5, ReferenceLocale: "en", MinHit: Floor{Set: true, Value: 0.5}, KBCards: 4, Resamples: 200})
	assert.Equal(t, res.Overall, again.Overall, "deterministic CIs")
}

func TestWithRelevantPerGroup(t *testing.T) {
	s := &Scorer{KB: kb, K: 2}
	a := NewAccumulator()
	add(t, a, s, casefile.Case{ID: "1", Locale: "en", Gold: []string{"g"}, Relevant: []string{"a"}})
	add(t, a, s, casefile.Case{ID: "2", Locale: "en", Gold: []string{"g"}})
	add(t, a, s, casefile.Case{ID: "3", Locale: "de", Gold: []string{"g"}, Relevant: []string{"b"}, Type: "adversarial"})
	add(t, a, s, casefile.Case{ID: "4", Locale: "de", Relevant: []string{"b"}}) // no gold: not scored, not counted
	r := a.Result(Config{K: 2, ReferenceLocale: "en", KBCards: len(kb)})
	assert.Equal(t, int64(2), r.Overall.WithRelevant)
	assert.Equal(t, int64(3), r.Overall.N)
	got := map[string]int64{}
	for _, g := range append(r.ByLocale, r.ByType...) {
		got[g.Name] = g.WithRelevant
	}
	assert.Equal(t, map[string]int64{"de": 1, "en": 1, "adversarial": 1, "golden": 1}, got)
}

func TestReferenceLocaleWithoutGold(t *testing.T) {
	a := NewAccumulator()
	s := &Scorer{KB: kb, K: 5}
	add(t, a, s, casefile.Case{ID: "e", Locale: "en", Line: 1})
	add(t, a, s, casefile.Case{ID: "s", Locale: "es-419", Line: 2, Gold: []string{"a"}, Retrieved: rs("a")})
	res := a.Result(Config{K: 5, ReferenceLocale: "en", Resamples: 100})
	assert.False(t, res.ReferenceHasGold)
	assert.Empty(t, res.Deltas)
	assert.Equal(t, outcome.Pass, res.Verdict())
}

func TestFloors(t *testing.T) {
	tests := []struct {
		name       string
		hits       []bool
		minHit     Floor
		minRecall  Floor
		wantHit    outcome.Status
		wantRecall outcome.Status
		reason     string
	}{
		{"off by default", []bool{false}, Floor{}, Floor{}, outcome.Off, outcome.Off, ""},
		{"pass at the floor exactly", []bool{true, true, true, false, false, false, true, true, true, true}, Floor{true, 0.7}, Floor{}, outcome.Pass, outcome.Off, ""},
		{"fail below", []bool{true, false}, Floor{true, 0.7}, Floor{true, 0.4}, outcome.Fail, outcome.Pass, "below the floor"},
		{"set and n=0 fails", nil, Floor{true, 0}, Floor{true, 0}, outcome.Fail, outcome.Fail, "no gold-carrying cases were scored"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := NewAccumulator()
			s := &Scorer{KB: kb, K: 5}
			for i, h := range tt.hits {
				ret := "b"
				if h {
					ret = "a"
				}
				add(t, a, s, casefile.Case{ID: string(rune('A' + i)), Line: i + 1, Gold: []string{"a"}, Retrieved: rs(ret)})
			}
			add(t, a, s, casefile.Case{ID: "nogold", Line: 99})
			res := a.Result(Config{K: 5, ReferenceLocale: "en", MinHit: tt.minHit, MinRecall: tt.minRecall, Resamples: 50})
			assert.Equal(t, tt.wantHit, res.Gates[1].Status)
			assert.Equal(t, tt.wantRecall, res.Gates[2].Status)
			if tt.reason != "" {
				assert.Contains(t, gatetable.Reason(res.Gates[1].Why), tt.reason)
			}
			if tt.wantHit == outcome.Fail || tt.wantRecall == outcome.Fail {
				assert.Equal(t, outcome.Fail, res.Verdict())
			} else {
				assert.Equal(t, outcome.Pass, res.Verdict())
			}
		})
	}
}

// A floor on a metric that no precomputed case carries fails, but the cases do
// carry gold: the reason says which score is missing, not "no gold-carrying cases".
func TestFloorOnAbsentPrecomputedKey(t *testing.T) {
	a := NewAccumulator()
	s := &Scorer{KB: kb, K: 5}
	add(t, a, s, casefile.Case{ID: "1", Line: 1, Gold: []string{"a"}, Scores: map[string]float64{metrics.KeyHit: 1}})
	res := a.Result(Config{K: 5, ReferenceLocale: "en", MinHit: Floor{true, 0.5}, MinRecall: Floor{true, 0.5}, Resamples: 50})
	assert.Equal(t, int64(1), res.Overall.N)
	assert.Equal(t, outcome.Pass, res.Gates[1].Status)
	assert.Equal(t, outcome.Fail, res.Gates[2].Status)
	assert.Equal(t, "no gold-carrying case has a retrieval_recall_at_k score", gatetable.Reason(res.Gates[2].Why))
	assert.True(t, math.IsNaN(res.Gates[2].Value))
}

func TestPrecomputedAbsentKeysAndN(t *testing.T) {
	a := NewAccumulator()
	s := &Scorer{KB: kb, K: 5}
	add(t, a, s, casefile.Case{ID: "1", Line: 1, Gold: []string{"a"}, Scores: map[string]float64{metrics.KeyHit: 1, metrics.KeyRecall: 1}})
	add(t, a, s, casefile.Case{ID: "2", Line: 2, Scores: map[string]float64{metrics.KeyHit: 0}})
	add(t, a, s, casefile.Case{ID: "3", Line: 3, Scores: map[string]float64{}})
	res := a.Result(Config{K: 5, ReferenceLocale: "en", Resamples: 50})
	assert.Equal(t, int64(2), res.Overall.N)
	assert.Equal(t, int64(1), res.Overall.WithoutGold)
	hit, _ := res.Overall.Metric(metrics.KeyHit)
	rec, _ := res.Overall.Metric(metrics.KeyRecall)
	_, hasNDCG := res.Overall.Metric(metrics.KeyNDCG)
	assert.Equal(t, int64(2), hit.N)
	assert.Equal(t, int64(1), rec.N)
	assert.False(t, hasNDCG)
	assert.Equal(t, int64(3), res.Precomputed)
}

func TestBoundedLists(t *testing.T) {
	a := NewAccumulator()
	a.MaxMissed, a.MaxProblems = 2, 3
	s := &Scorer{KB: kb, K: 5}
	for i := range 10 {
		add(t, a, s, casefile.Case{ID: string(rune('a' + i)), Line: i + 1, Gold: []string{"zz"}, Retrieved: rs("b")})
	}
	res := a.Result(Config{K: 5, Resamples: 10})
	assert.Len(t, res.Missed, 2)
	assert.Equal(t, int64(10), res.MissedTotal)
	assert.Len(t, res.Integrity.Problems, 3)
	assert.Equal(t, int64(10), res.Integrity.ProblemsTotal)
}

// A scorer told by the accumulator (Scorer.KeepMissed) copies a missed case's
// query, gold and top k only while the missed list has room: the list and
// the counts are those of a scorer that always copies them.
func TestKeepMissedOnlyWhileWanted(t *testing.T) {
	run := func(keep bool) (*Result, []CaseResult) {
		a := NewAccumulator()
		a.MaxMissed = 2
		s := &Scorer{KB: kb, K: 5}
		if keep {
			s.KeepMissed = a.WantsMissed
		}
		var out []CaseResult
		for i := range 5 {
			var r CaseResult
			c := casefile.Case{ID: string(rune('a' + i)), Line: i + 1, Query: "q", Gold: []string{"a"}, Retrieved: rs("b", "c")}
			require.NoError(t, s.ScoreInto(&c, &r))
			require.NoError(t, a.Add(&r))
			out = append(out, r)
		}
		assert.False(t, a.WantsMissed())
		return a.Result(Config{K: 5, Resamples: 10}), out
	}
	want, _ := run(false)
	got, results := run(true)
	assert.Equal(t, want.Missed, got.Missed)
	assert.Equal(t, int64(5), got.MissedTotal)
	require.Len(t, got.Missed, 2)
	assert.Equal(t, []string{"a"}, got.Missed[1].Gold)
	assert.Equal(t, []string{"b", "c"}, got.Missed[1].TopK)
	for i, r := range results {
		if i < 2 {
			assert.Equal(t, "q", r.Query, "case %d", i)
			continue
		}
		assert.True(t, r.Missed(), "case %d", i)
		assert.Empty(t, r.Query, "case %d", i)
		assert.Nil(t, r.Gold, "case %d", i)
		assert.Nil(t, r.TopK, "case %d", i)
	}
}

// FuzzParseFloor: a floor flag is off ("", "none"), or the number it writes
// (strconv.ParseFloat of the trimmed text) when that is in [0,1], or refused;
// an accepted floor is canonical: shown as the flag shows it (fmt.Sprint) it
// reads back as itself, and 0 is never "-0".
func FuzzParseFloor(f *testing.F) {
	for _, s := range []string{"", "none", "0.7", "1", "0", "-0", "1e-3", "2", "NaN", "Inf", " 0.5 ", "NONE", "0x1p-1", "-0.0", "1e-400", "1.0000000000000001"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fl, err := ParseFloor(s)
		ts := strings.TrimSpace(s)
		if ts == "" || strings.EqualFold(ts, "none") {
			require.NoError(t, err)
			require.False(t, fl.Set)
			return
		}
		v, perr := strconv.ParseFloat(ts, 64)
		if perr != nil || !(v >= 0 && v <= 1) {
			require.Error(t, err)
			require.False(t, fl.Set)
			return
		}
		require.NoError(t, err)
		require.True(t, fl.Set)
		require.Equal(t, v, fl.Value)
		require.False(t, math.Signbit(fl.Value), "%q read as -0", s)
		back, err := ParseFloor(fmt.Sprint(fl.Value))
		require.NoError(t, err)
		require.Equal(t, fl, back)
	})
}

// The id log reports the earliest case (in file order) whose id came before,
// and the first line of that id, whatever the partitions the hashes fall in;
// a third occurrence names the first line, not the second.
func TestIDLogEarliestDuplicate(t *testing.T) {
	racetest.Skip(t, "one goroutine adds 10⁵–10⁶ ids")
	tests := map[string]struct {
		dups       map[int]int // case index -> index of the case whose id it repeats
		want       string
		wantNoDups bool
	}{
		"none":              {wantNoDups: true},
		"one":               {dups: map[int]int{70000: 5000}, want: `f:70002: duplicate case id "case-5000" (first at line 5002)`},
		"earliest wins":     {dups: map[int]int{90000: 10, 70000: 5000, 95000: 10}, want: `f:70002: duplicate case id "case-5000" (first at line 5002)`},
		"third names first": {dups: map[int]int{80000: 3, 60000: 3}, want: `f:60002: duplicate case id "case-3" (first at line 5)`},
		"adjacent":          {dups: map[int]int{1: 0}, want: `f:3: duplicate case id "case-0" (first at line 2)`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			var l idLog
			for i := range 100000 {
				id := fmt.Sprintf("case-%d", i)
				if j, ok := tt.dups[i]; ok {
					id = fmt.Sprintf("case-%d", j)
				}
				// Lines skip one (a blank line): lines are reported, not indexes.
				require.NoError(t, l.add(idHash(id), uint32(i+2), id, "f"))
			}
			err := l.duplicate()
			if tt.wantNoDups {
				require.NoError(t, err)
				return
			}
			require.EqualError(t, err, tt.want)
		})
	}
}

// Past its bounds the log keeps its chunks of entries and its blocks of ids
// in a temporary file, made in the system's temporary directory and removed
// at once; a duplicate is still the earliest and named by its id, whether
// its entries and ids were spilled or not, ids longer than a block included.
func TestIDLogSpill(t *testing.T) {
	racetest.Skip(t, "one goroutine adds 10⁵ ids")
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	id := func(i int) string {
		if i%20000 == 19999 {
			return strings.Repeat("0", idBlock) + strconv.Itoa(i) // a block of its own
		}
		return fmt.Sprintf("case-%020d", i)
	}
	const n = 60000
	tests := map[string]struct{ later, first int }{
		"none":               {-1, -1},
		"in memory":          {1000, 10},
		"spilled":            {50000, 30000},
		"long id, spilled":   {55000, 19999},
		"spilled then later": {59999, 3},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			l := idLog{chunkN: 16, maxMemChunks: 100, maxIDBytes: 1 << 20}
			for i := range n {
				s := id(i)
				if i == tt.later {
					s = id(tt.first)
				}
				require.NoError(t, l.add(idHash(s), uint32(2*i+1), s, "f"))
			}
			require.NotNil(t, l.spill.f, "entries and ids were spilled")
			require.Greater(t, l.spill.off, int64(n*12/2), "most entries were spilled")
			left, err := os.ReadDir(tmp)
			require.NoError(t, err)
			require.Empty(t, left, "the spill file is removed while open")
			err = l.duplicate()
			if tt.later < 0 {
				require.NoError(t, err)
				return
			}
			require.EqualError(t, err, fmt.Sprintf("f:%d: duplicate case id %q (first at line %d)", 2*tt.later+1, id(tt.first), 2*tt.first+1))
		})
	}
}

// Hashes that share one half are distinct (an entry keeps both halves).
func TestIDLogHashHalves(t *testing.T) {
	var l idLog
	for i, h := range []uint64{1 << 32, 1, 1<<32 | 1, 7 << 32, 7} {
		require.NoError(t, l.add(h, uint32(i+1), "x", "f"))
	}
	require.NoError(t, l.duplicate())
	require.NoError(t, l.add(1<<32|1, 9, "y", "f"))
	require.EqualError(t, l.duplicate(), `f:9: duplicate case id "y" (first at line 3)`)
}

func TestCanonicalLocale(t *testing.T) {
	tests := map[string]string{
		"":              "und",
		" en ":          "en",
		"EN":            "en",
		"pt-br":         "pt-BR",
		"pt_BR":         "pt-BR",
		"es-419":        "es-419",
		"zh-hant-tw":    "zh-Hant-TW",
		"SR-LATN":       "sr-Latn",
		"de-CH-1996":    "de-CH-1996",
		"en-US-x-Twain": "en-US-x-twain",
	}
	for in, want := range tests {
		t.Run(in, func(t *testing.T) { assert.Equal(t, want, CanonicalLocale(in)) })
	}
}

func TestLocaleGroupsAreCaseInsensitive(t *testing.T) {
	a := NewAccumulator()
	s := &Scorer{KB: kb, K: 5}
	add(t, a, s, casefile.Case{ID: "1", Locale: "pt-BR", Line: 1, Gold: []string{"a"}, Retrieved: rs("a")})
	add(t, a, s, casefile.Case{ID: "2", Locale: "pt-br", Line: 2, Gold: []string{"a"}, Retrieved: rs("b")})
	add(t, a, s, casefile.Case{ID: "3", Locale: "EN", Line: 3, Gold: []string{"a"}, Retrieved: rs("a")})
	res := a.Result(Config{K: 5, ReferenceLocale: "En", Resamples: 10})
	require.Len(t, res.ByLocale, 2)
	assert.Equal(t, "en", res.ByLocale[0].Name)
	assert.Equal(t, "pt-BR", res.ByLocale[1].Name)
	assert.Equal(t, int64(2), res.ByLocale[1].N)
	assert.Equal(t, "en", res.ReferenceLocale)
	require.Len(t, res.Deltas, 1)
}

// FuzzCanonicalLocale: canonicalization is idempotent, its fast path agrees
// with the slow one, and it only changes case (ASCII letters), trims and
// turns "_" into "-" ("und" for an empty tag): two tags that differ only in
// ASCII case are one group, whatever their case.
func FuzzCanonicalLocale(f *testing.F) {
	for _, s := range []string{"en", "pt-BR", "pt-br", "zh-Hant-TW", "es-419", "x", "-", "a--b", "en-US-x-Twain", " EN", "ZH_hANT_tw", "sr-latn-x-ab-CD", "\u00e9n-\u00c9N"} {
		f.Add(s)
	}
	asciiCase := func(s string, up bool) string {
		b := []byte(s)
		for i, c := range b {
			switch {
			case up && c >= 'a' && c <= 'z':
				b[i] = c - 'a' + 'A'
			case !up && c >= 'A' && c <= 'Z':
				b[i] = c - 'A' + 'a'
			}
		}
		return string(b)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c := CanonicalLocale(s)
		require.Equal(t, c, CanonicalLocale(c), "idempotent")
		if isCanonicalLocale(s) {
			require.Equal(t, s, c, "fast path agrees with the slow path")
		}
		require.Equal(t, c, CanonicalLocale(asciiCase(s, true)), "one group whatever the case")
		require.Equal(t, c, CanonicalLocale(asciiCase(s, false)), "one group whatever the case")
		norm := strings.ReplaceAll(strings.TrimSpace(s), "_", "-")
		if norm == "" {
			norm = UndeterminedLocale
		}
		require.Equal(t, asciiCase(norm, false), asciiCase(c, false), "only the case changes")
	})
}

// A value just below its floor fails, and the reason never shows the two as equal.
func TestFloorReasonTellsCloseValuesApart(t *testing.T) {
	a := NewAccumulator()
	s := &Scorer{KB: kb, K: 5}
	add(t, a, s, casefile.Case{ID: "p", Line: 1, Scores: map[string]float64{metrics.KeyHit: 0.6999997}})
	res := a.Result(Config{K: 5, MinHit: Floor{Set: true, Value: 0.7}, Resamples: 10})
	g := res.Gates[1]
	assert.Equal(t, outcome.Fail, g.Status)
	assert.Equal(t, "overall mean 0.6999997 is below the floor 0.7000000; n = 1 is too small to estimate the difference it can detect", gatetable.Reason(g.Why))
	assert.Equal(t, 0.7, g.Threshold)
	assert.Equal(t, 0.6999997, g.Value)
	assert.Equal(t, int64(1), g.N)
	assert.Equal(t, metrics.KeyHit, g.Measure)
	assert.Equal(t, outcome.GroupOverall, g.Group)
}

// Scoring allocates nothing per case in the steady state, a missed case
// included (its gold and top k are kept for the report: carved from chunks).
func TestScoreIntoAllocs(t *testing.T) {
	kb := cardSet{"card-1": true, "card-2": true, "card-3": true}
	missed := &casefile.Case{ID: "x", Locale: "en", Type: "golden", Gold: []string{"card-3"}, File: "f", Line: 1,
		Retrieved: []casefile.Retrieved{{ID: "card-1#c0", ParentID: "card-1"}, {ID: "card-2#c0", ParentID: "card-2"}}}
	s := &Scorer{KB: kb, K: 5}
	var r CaseResult
	require.NoError(t, s.ScoreInto(missed, &r))
	require.True(t, r.Missed())
	assert.Equal(t, []string{"card-3"}, r.Gold)
	assert.Equal(t, []string{"card-1", "card-2"}, r.TopK)
	if racetest.Enabled {
		t.Skip("under -race sync.Pool drops items on purpose (a quarter of its Puts), so the pooled scratch allocates: counted without -race")
	}
	allocs := testing.AllocsPerRun(2000, func() {
		if err := s.ScoreInto(missed, &r); err != nil {
			t.Fatal(err)
		}
	})
	assert.LessOrEqual(t, allocs, 0.01)
}

// The strings of a result may view a block the reader reuses
// (casefile.MapOptions.StringsInLine): what Add keeps of them are copies.
func TestAddKeepsCopiesOfStrings(t *testing.T) {
	buf := []byte("card-9card-8c1en-x-fooadversarialthe querygold-1")
	view := func(i, j int) string { return unsafe.String(&buf[i], j-i) }
	r := CaseResult{File: "f", Line: 1, ID: view(12, 14), Locale: view(14, 22), Type: view(22, 33), Query: view(33, 42),
		Scored: true, Has: allScored, Gold: []string{view(42, 48)},
		TopK: []string{view(0, 6), view(6, 12)}, UnknownRetrieved: 1, FirstUnknown: view(6, 12),
		Problems: []Problem{{File: "f", Line: 1, CaseID: view(12, 14), GoldID: view(42, 48), Kind: UnknownCard}}}
	a := NewAccumulator()
	require.NoError(t, a.Add(&r))
	for i := range buf { // the block is reused
		buf[i] = 'X'
	}
	res := a.Result(Config{K: 5, Resamples: 10})
	require.Len(t, res.Missed, 1)
	m := res.Missed[0]
	assert.Equal(t, []string{"c1", "en-x-foo", "adversarial", "the query"}, []string{m.ID, m.Locale, m.Type, m.Query})
	assert.Equal(t, []string{"gold-1"}, m.Gold)
	assert.Equal(t, []string{"card-9", "card-8"}, m.TopK)
	assert.Equal(t, "card-8", m.FirstUnknown)
	assert.Equal(t, []string{"card-8"}, res.Integrity.Unknown.Examples)
	require.Len(t, res.Integrity.Problems, 1)
	assert.Equal(t, "c1", res.Integrity.Problems[0].CaseID)
	assert.Equal(t, "gold-1", res.Integrity.Problems[0].GoldID)
	require.Len(t, res.ByLocale, 1)
	assert.Equal(t, "en-x-foo", res.ByLocale[0].Name)
	require.NoError(t, a.Duplicate())
}

// The id log reports what a case-by-case map would: on random files with
// and without duplicates, of sizes around the partition sizes.
func TestIDLogMatchesMap(t *testing.T) {
	racetest.Skip(t, "one goroutine adds 10⁵–10⁶ ids")
	rng := metrics.NewRand(11)
	for trial := range 60 {
		n := 1 + rng.IntN(20000)
		space := n * (1 + rng.IntN(400)) // larger spaces: fewer duplicates
		if trial%3 == 0 {
			space = min(1<<40, math.MaxInt) // none, almost surely
		}
		var l idLog
		first := map[string]int{}
		want := ""
		for i := range n {
			id := fmt.Sprintf("c%d", rng.IntN(space))
			line := i + 1 + i/7 // with gaps
			if f, ok := first[id]; ok && want == "" {
				want = fmt.Sprintf("f:%d: duplicate case id %q (first at line %d)", line, id, f)
			} else if !ok {
				first[id] = line
			}
			require.NoError(t, l.add(idHash(id), uint32(line), id, "f"))
		}
		if want == "" {
			require.NoError(t, l.duplicate(), "trial %d", trial)
		} else {
			require.EqualError(t, l.duplicate(), want, "trial %d", trial)
		}
	}
}

// The scorer remembers the locales it canonicalized by copies: a locale that
// views a block the reader then reuses is not mistaken for the next case's.
func TestScoreLocaleOfReusedBlock(t *testing.T) {
	s := &Scorer{KB: kb, K: 2}
	buf := []byte("pt-br")
	var r CaseResult
	for _, want := range []string{"pt-BR", "en-US", "pt-BR", "es-419", "und"} {
		switch want {
		case "en-US":
			copy(buf, "en-us")
		case "pt-BR":
			copy(buf, "pt-br")
		}
		loc := unsafe.String(&buf[0], len(buf))
		switch want {
		case "es-419":
			loc = "es-419"
		case "und":
			loc = ""
		}
		require.NoError(t, s.ScoreInto(&casefile.Case{File: "f", Line: 1, ID: "x", Locale: loc, Gold: []string{"a"}, Retrieved: []casefile.Retrieved{{ID: "a"}}}, &r))
		assert.Equal(t, want, r.Locale)
	}
}

// The ids kept to name a duplicate stay within their bound whatever their
// lengths: long ids (over a block) among short ones go to the spill file and
// their memory is dropped, and the blocks' memory is reused.
func TestIDStoreBounded(t *testing.T) {
	racetest.Skip(t, "one goroutine adds 10⁵ ids")
	t.Setenv("TMPDIR", t.TempDir())
	l := idLog{maxIDBytes: 1 << 20}
	long := func(i int) string { return strings.Repeat("0", idBlock) + strconv.Itoa(i) }
	line := uint32(0)
	for i := range 40 {
		for j := range 2000 {
			line++
			id := fmt.Sprintf("case-%d-%d", i, j)
			require.NoError(t, l.add(idHash(id), line, id, "f"))
		}
		line++
		require.NoError(t, l.add(idHash(long(i)), line, long(i), "f"))
	}
	line++
	require.NoError(t, l.add(idHash(long(7)), line, long(7), "f"))
	mapped := 0
	for _, r := range l.arena.regions {
		mapped += len(r)
	}
	require.LessOrEqual(t, mapped, 3*idRegion, "the arena does not grow with the long ids")
	require.EqualError(t, l.duplicate(), fmt.Sprintf("f:%d: duplicate case id %q (first at line %d)", line, long(7), 8*2001))
}

// idHash tells apart ids that differ in one byte, whatever its position and
// the id's length (each byte must reach the hash: the overlapping loads), and
// 300,000 ids of the benchmark's shape.
func TestIDHashDistinct(t *testing.T) {
	seen := map[uint64]string{}
	add := func(id string) {
		h := idHash(id)
		if other, ok := seen[h]; ok && other != id {
			t.Fatalf("idHash(%q) = idHash(%q)", id, other)
		}
		seen[h] = id
	}
	for n := 0; n <= 40; n++ {
		base := []byte(strings.Repeat("a", n))
		add(string(base))
		for i := range n {
			for _, c := range []byte{'b', 0, 0xff} {
				b := slices.Clone(base)
				b[i] = c
				add(string(b))
			}
		}
	}
	hs := make([]uint64, 0, 300_000)
	for i := range 300_000 {
		hs = append(hs, idHash("case-"+strconv.Itoa(i)))
	}
	slices.Sort(hs)
	for i := 1; i < len(hs); i++ {
		require.NotEqual(t, hs[i-1], hs[i], "two of the ids collide")
	}
}

// The scorer hashes the case id for Add (in the worker, while the line is in
// its cache): the same hash Add computes for a result built by hand.
func TestScoreHashesID(t *testing.T) {
	c := &casefile.Case{ID: "case-123456789012345678", Gold: []string{"a"}, File: "f", Line: 3,
		Retrieved: []casefile.Retrieved{{ID: "a"}}}
	var r CaseResult
	require.NoError(t, (&Scorer{KB: cardSet{"a": true}, K: 5}).ScoreInto(c, &r))
	require.True(t, r.hashed)
	require.Equal(t, idHash(c.ID), r.idHash)
}

// Close gives the id log's mapped regions and its temporary file back at
// once (check's run closes its accumulator): the collector does not count
// memory outside its heap, so a process running many checks would otherwise
// hold them until its heap grew enough for a collection.
func TestAccumulatorClose(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	a := NewAccumulator()
	a.seen.chunkN, a.seen.maxMemChunks, a.seen.maxIDBytes = 16, 1, 1<<10
	for i := range 2 * idStage { // past a flush of the staged cases
		s := fmt.Sprintf("case-%020d", i)
		require.NoError(t, a.seen.add(idHash(s), uint32(i+1), s, "f"))
	}
	f, arena := a.seen.spill.f, a.seen.arena
	require.NotNil(t, f, "entries and ids were spilled")
	require.NotNil(t, arena)
	mapped := len(arena.regions) > 0 // where the system maps memory (internal/offheap)
	a.Close()
	require.ErrorIs(t, f.Close(), os.ErrClosed, "the temporary file is closed")
	assert.Empty(t, arena.regions, "the mapped regions are freed")
	if runtime.GOOS == "linux" {
		assert.True(t, mapped, "the regions were mapped")
	}
	require.NoError(t, a.Duplicate())
}

// TestScratchOwnsItsLines: a scorer's scratch keeps two cache lines of
// padding on each side, so that two workers' scratches allocated side by side
// share no line.
func TestScratchOwnsItsLines(t *testing.T) {
	var s scratch
	assert.GreaterOrEqual(t, unsafe.Offsetof(s.ranked), uintptr(128), "padding before")
	assert.GreaterOrEqual(t, unsafe.Sizeof(s)-unsafe.Offsetof(s.nextType)-unsafe.Sizeof(s.nextType), uintptr(128), "padding after")
}

// TestScoredTypeOwnsItsBytes: a result's type is the scorer's copy, not a
// view of the case's line (the aggregation reads it on another core),
// whether the scorer remembers the type or not (more types than it keeps).
func TestScoredTypeOwnsItsBytes(t *testing.T) {
	s := &Scorer{KB: cardSet{"a": true}, K: 5}
	types := []string{"golden", "adversarial", "golden", "t1", "t2", "t3", "t4", "t5", "golden", "adversarial", "t1"}
	for i, typ := range types {
		line := []byte(`{"type": "` + typ + `"}`)
		view := unsafe.String(&line[10], len(typ))
		c := &casefile.Case{File: "f", Line: i + 1, ID: fmt.Sprint("c", i), Type: view, Gold: []string{"a"}, Retrieved: []casefile.Retrieved{{ID: "a"}}}
		var r CaseResult
		require.NoError(t, s.ScoreInto(c, &r))
		require.Equal(t, typ, r.Type)
		clear(line) // the reader reuses its block
		require.Equal(t, typ, r.Type, "case %d: the type changed with the line", i)
	}
}
