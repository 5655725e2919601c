package baseline

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/floor"
	"github.com/retrieval-gate/retrieval-gate/internal/gate"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
)

// cline is a baseline line of a case of a type and locale, with gold or not,
// and a top k ("" leaves it out: an older baseline's case without gold).
func cline(id, typ, locale, gold, top string) string {
	s := `{"id":"` + id + `","type":"` + typ + `","locale":"` + locale + `"`
	if gold != "" {
		s += `,"gold":["` + gold + `"],"scores":{"retrieval_hit_at_k":1,"retrieval_recall_at_k":1,"retrieval_ndcg_at_k":1},"rank":1`
	} else {
		s += `,"scores":{}`
	}
	if top != "" {
		s += `,"top":["` + strings.Join(strings.Split(top, ""), `","`) + `"]`
	}
	return s + "}\n"
}

type ccase struct {
	id, typ, locale, gold, top string
}

// churnRun joins the cases as check does (Prepare on a worker, then Add in
// file order) or with Add alone (prepare false).
func churnRun(t *testing.T, b *Baseline, opt Options, cases []ccase, prepare bool) *Comparison {
	t.Helper()
	c := NewComparer(b, opt)
	for i, x := range cases {
		r := gate.CaseResult{File: "run.jsonl", Line: i + 1, ID: x.id, Type: x.typ, Locale: x.locale, Scored: x.gold != ""}
		var gold []string
		cu := Current{IDHash: IDHash(x.id), Line: i + 1}
		if x.top != "" {
			cu.Top = strings.Split(x.top, "")
		}
		if x.gold != "" {
			gold = []string{x.gold}
			for m := range r.Scores {
				r.Scores[m], r.Has[m] = 1, true
			}
			cu.Ranked, cu.Rank = true, 1
		} else {
			cu.HasTop = true
		}
		cu.GoldHash = GoldHash(gold)
		line := CaseLine{ID: x.id, Gold: gold, Query: "q " + x.id}
		if prepare && !c.Prepare(&r, &cu) {
			line, cu.Top = CaseLine{}, nil // what check keeps of a case that is not listed
		}
		c.Add(&r, &line, &cu)
	}
	res, err := c.Result()
	require.NoError(t, err)
	return res
}

// churnFixture: ten cases both runs hold, of two types and two locales, one
// only in this run and one baseline case without a top k.
func churnFixture(t *testing.T) (*Baseline, []ccase) {
	t.Helper()
	base := cline("s1", "golden", "en", "a", "abcde") + // same
		cline("s2", "golden", "en", "a", "abcde") + // order only: changed, not as a set
		cline("s3", "golden", "es", "a", "abcde") + // one entry left
		cline("s4", "golden", "es", "a", "abcde") + // ended after 2: three left
		cline("g1", "golden", "en", "a", "abcde") + // gold changed: still held, its retrieval counts
		cline("n1", "adversarial", "en", "", "abcde") + // without gold, same
		cline("n2", "adversarial", "es", "", "abcde") + // without gold, all left
		cline("n3", "adversarial", "es", "", "abcde") + // without gold, two left
		cline("n4", "adversarial", "en", "", "abcde") + // without gold, same
		cline("old", "adversarial", "en", "", "") + // an older baseline: no top k
		cline("gone", "golden", "en", "a", "abcde") // only in the baseline
	cases := []ccase{
		{"s1", "golden", "en", "a", "abcde"},
		{"s2", "golden", "en", "a", "bacde"},
		{"s3", "golden", "es", "a", "abcdx"},
		{"s4", "golden", "es", "a", "ab"},
		{"g1", "golden", "en", "z", "abcdy"},
		{"n1", "adversarial", "en", "", "abcde"},
		{"n2", "adversarial", "es", "", "vwxyz"},
		{"n3", "adversarial", "es", "", "abxyc"},
		{"n4", "adversarial", "en", "", "abcde"},
		{"old", "adversarial", "en", "", "abcde"},
		{"new", "golden", "en", "a", "abcde"}, // only in this run
	}
	return load(t, base), cases
}

func TestChurnFigures(t *testing.T) {
	b, cases := churnFixture(t)
	rbo := func(a, c string) float64 { return metrics.RBOExtEnded(strings.Split(a, ""), strings.Split(c, ""), 0.9) }
	for _, prepare := range []bool{true, false} {
		t.Run(fmt.Sprint("prepare=", prepare), func(t *testing.T) {
			res := churnRun(t, b, Options{K: 5}, cases, prepare)
			ch := res.Churn
			assert.Equal(t, 5, ch.Depth)
			o := ch.Overall
			assert.Equal(t, outcome.GroupOverall, o.Name)
			assert.Equal(t, int64(10), o.Held, "every case both runs hold, with or without gold, gold changed too")
			assert.Equal(t, int64(9), o.N)
			assert.Equal(t, int64(1), o.Unknown)
			// Changed as a set: s3, s4, g1, n2, n3 (s2 only reordered).
			assert.Equal(t, int64(5), o.Changed)
			assert.InDelta(t, 5.0/9, o.Share.Mean, 1e-15)
			assert.Equal(t, metrics.WilsonCI95(5, 9), o.Share.CI95)
			// Left: s3 1, s4 3, g1 1, n2 5, n3 2.
			assert.InDelta(t, 12.0/9, o.Left.Mean, 1e-15)
			want := (1 + rbo("abcde", "bacde") + rbo("abcde", "abcdx") + rbo("abcde", "ab") + rbo("abcde", "abcdy") +
				1 + rbo("abcde", "vwxyz") + rbo("abcde", "abxyc") + 1) / 9
			assert.InDelta(t, want, o.RBO.Mean, 1e-15)
			for _, e := range []Estimate{o.RBO, o.Share, o.Left} {
				assert.LessOrEqual(t, e.CI95.Lo, e.Mean)
				assert.GreaterOrEqual(t, e.CI95.Hi, e.Mean)
				assert.Equal(t, int64(9), e.CI95.N)
				assert.NotEmpty(t, e.CI95.Method)
			}
			// The mean RBO's interval is 1 minus that of 1 − RBO.
			dist := metrics.NewHistogram()
			for _, v := range []float64{1, rbo("abcde", "bacde"), rbo("abcde", "abcdx"), rbo("abcde", "ab"), rbo("abcde", "abcdy"),
				1, rbo("abcde", "vwxyz"), rbo("abcde", "abxyc"), 1} {
				dist.Add(1 - v)
			}
			iv := dist.DifferenceCI95(0, 1)
			assert.InDelta(t, 1-iv.Hi, o.RBO.CI95.Lo, 1e-15)
			assert.InDelta(t, 1-iv.Lo, o.RBO.CI95.Hi, 1e-15)
			assert.Equal(t, iv.Method, o.RBO.CI95.Method)

			require.Len(t, ch.ByType, 2)
			assert.Equal(t, "adversarial", ch.ByType[0].Name)
			assert.Equal(t, int64(5), ch.ByType[0].Held)
			assert.Equal(t, int64(4), ch.ByType[0].N)
			assert.Equal(t, int64(2), ch.ByType[0].Changed)
			assert.Equal(t, "golden", ch.ByType[1].Name)
			assert.Equal(t, int64(5), ch.ByType[1].N)
			assert.Equal(t, int64(3), ch.ByType[1].Changed)
			require.Len(t, ch.ByLocale, 2)
			assert.Equal(t, "en", ch.ByLocale[0].Name)
			assert.Equal(t, int64(5), ch.ByLocale[0].N) // s1 s2 g1 n1 n4
			assert.Equal(t, int64(1), ch.ByLocale[0].Changed)
			assert.Equal(t, "es", ch.ByLocale[1].Name)
			assert.Equal(t, int64(4), ch.ByLocale[1].Changed)

			// The most changed cases: every case both runs hold whose top k
			// changed (order too), lowest RBO first.
			var ids []string
			for _, m := range ch.MostChanged {
				ids = append(ids, m.ID)
			}
			assert.Equal(t, []string{"n2", "s4", "n3", "s3", "g1", "s2"}, ids) // s3 and g1 tie: file order
			m := ch.MostChanged[0]
			assert.Equal(t, []string{"a", "b", "c", "d", "e"}, m.Before)
			assert.Equal(t, []string{"v", "w", "x", "y", "z"}, m.After)
			assert.Equal(t, "q n2", m.Query)
			assert.Equal(t, 7, m.Line)
			assert.Equal(t, "es", m.Locale)
			// No gate set: off, with their values.
			assert.Equal(t, outcome.Off, res.ChurnStatus)
			g, ok := res.Gates.Find(GateMinRBO)
			require.True(t, ok)
			assert.Equal(t, outcome.Off, g.Status)
			assert.InDelta(t, o.RBO.Mean, g.Value, 0)
			assert.Equal(t, int64(9), g.N)
			assert.True(t, math.IsNaN(g.Threshold))
			g, ok = res.Gates.Find(GateMaxChurn)
			require.True(t, ok)
			assert.InDelta(t, o.Share.Mean, g.Value, 0)
		})
	}
}

func TestChurnGates(t *testing.T) {
	b, cases := churnFixture(t)
	spec := func(key, group string, v float64) floor.Spec { return floor.Spec{Measure: key, Group: group, Value: v} }
	tests := []struct {
		name     string
		minRBO   floor.List
		maxChurn floor.List
		status   outcome.Status
		gates    map[string]outcome.Status
		codes    map[string][]outcome.Code
	}{
		{"overall pass", floor.List{spec(KeyRBO, "overall", 0.5)}, floor.List{spec(KeyChurn, "overall", 0.6)}, outcome.Pass,
			map[string]outcome.Status{"min_rbo": outcome.Pass, "max_churn": outcome.Pass},
			map[string][]outcome.Code{"min_rbo": {outcome.Interval95}, "max_churn": {outcome.Interval95}}},
		{"overall fail", floor.List{spec(KeyRBO, "overall", 0.9)}, floor.List{spec(KeyChurn, "overall", 0.1)}, outcome.Fail,
			map[string]outcome.Status{"min_rbo": outcome.Fail, "max_churn": outcome.Fail},
			map[string][]outcome.Code{"min_rbo": {outcome.RBOBelow, outcome.Interval95}, "max_churn": {outcome.ChurnAbove, outcome.Interval95}}},
		// A per-locale churn gate decides, as a per-locale floor does, and
		// says last that it is indicative only; a type's does not.
		{"a group fails, overall off", nil, floor.List{spec(KeyChurn, "locale:es", 0.5), spec(KeyChurn, "type:adversarial", 0.5)}, outcome.Fail,
			map[string]outcome.Status{"min_rbo": outcome.Off, "max_churn": outcome.Off, "max_churn@locale:es": outcome.Fail, "max_churn@type:adversarial": outcome.Pass},
			map[string][]outcome.Code{"max_churn@locale:es": {outcome.ChurnAbove, outcome.Interval95, outcome.IndicativeChurn},
				"max_churn@type:adversarial": {outcome.Interval95}}},
		{"a locale passes, indicative only", floor.List{spec(KeyRBO, "locale:en", 0.1)}, nil, outcome.Pass,
			map[string]outcome.Status{"min_rbo@locale:en": outcome.Pass},
			map[string][]outcome.Code{"min_rbo@locale:en": {outcome.Interval95, outcome.IndicativeChurn}}},
		{"a group the data lacks fails", floor.List{spec(KeyRBO, "type:smoke", 0.5)}, nil, outcome.Fail,
			map[string]outcome.Status{"min_rbo@type:smoke": outcome.Fail},
			map[string][]outcome.Code{"min_rbo@type:smoke": {outcome.NoSuchGroup}}},
		{"a locale the data lacks fails, indicative only", nil, floor.List{spec(KeyChurn, "locale:fr", 0.5)}, outcome.Fail,
			map[string]outcome.Status{"max_churn@locale:fr": outcome.Fail},
			map[string][]outcome.Code{"max_churn@locale:fr": {outcome.NoSuchGroup, outcome.IndicativeChurn}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := churnRun(t, b, Options{K: 5, MinRBO: tt.minRBO, MaxChurn: tt.maxChurn}, cases, true)
			assert.Equal(t, tt.status, res.ChurnStatus)
			for name, st := range tt.gates {
				g, ok := res.Gates.Find(name)
				require.True(t, ok, name)
				assert.Equal(t, st, g.Status, name)
			}
			for name, codes := range tt.codes {
				g, _ := res.Gates.Find(name)
				var got []outcome.Code
				for _, c := range g.Why {
					got = append(got, c.Code)
				}
				assert.Equal(t, codes, got, name)
			}
		})
	}
	// The reason's interval, and whether the threshold lies inside it.
	res := churnRun(t, b, Options{K: 5, MaxChurn: floor.List{spec(KeyChurn, "overall", 0.5)}}, cases, true)
	g, _ := res.Gates.Find(GateMaxChurn)
	assert.Equal(t, outcome.Fail, g.Status, "5 of 9 changed: above 0.5")
	iv := res.Churn.Overall.Share.CI95
	assert.Equal(t, outcome.Clause{Code: outcome.ChurnAbove, Value: 5.0 / 9, Threshold: 0.5, N: 9, M: 5}, g.Why[0])
	assert.Equal(t, outcome.Clause{Code: outcome.Interval95, Measure: KeyChurn, N: 9, Lo: iv.Lo, Hi: iv.Hi,
		Test: metrics.MethodWilson, Threshold: 0.5, Only: true}, g.Why[1])
	// Gate order: the overall ones, then the groups' in command-line order.
	res = churnRun(t, b, Options{K: 5, MinRBO: floor.List{spec(KeyRBO, "type:golden", 0.1), spec(KeyRBO, "overall", 0.1)},
		MaxChurn: floor.List{spec(KeyChurn, "locale:en", 0.9)}}, cases, true)
	var names []string
	for _, g := range res.Gates {
		names = append(names, g.Name)
	}
	assert.Equal(t, []string{"max_drop_hit", "max_drop_recall", "max_drop_ndcg", "min_rbo", "max_churn", "min_rbo@type:golden", "max_churn@locale:en"}, names)
	assert.Equal(t, outcome.Pass, res.ChurnStatus)
}

// A group whose cases carry no top k in one run: the gate set on it fails,
// saying why; its figures are NaN.
func TestChurnNoTopK(t *testing.T) {
	b := load(t, cline("old", "adversarial", "en", "", "")+cline("s1", "golden", "en", "a", "abc"))
	res := churnRun(t, b, Options{K: 3, MinRBO: floor.List{{Measure: KeyRBO, Group: "type:adversarial", Value: 0.9}}},
		[]ccase{{"old", "adversarial", "en", "", "abc"}, {"s1", "golden", "en", "a", "abc"}}, true)
	g, ok := res.Gates.Find("min_rbo@type:adversarial")
	require.True(t, ok)
	assert.Equal(t, outcome.Fail, g.Status)
	assert.Equal(t, []outcome.Clause{{Code: outcome.NoTopK, Name: "type:adversarial", N: 1, M: 1}}, g.Why)
	assert.True(t, math.IsNaN(res.Churn.ByType[0].RBO.Mean))
	assert.Equal(t, 1.0, res.Churn.Overall.RBO.Mean)
}

// Nothing moved: share 0, RBO 1, and an interval that is not a point.
func TestChurnNothingMoved(t *testing.T) {
	var base strings.Builder
	var cases []ccase
	for i := range 60 {
		id := fmt.Sprintf("c%02d", i)
		base.WriteString(cline(id, "golden", "en", "", "abcde"))
		cases = append(cases, ccase{id, "golden", "en", "", "abcde"})
	}
	res := churnRun(t, load(t, base.String()), Options{K: 5, MinRBO: floor.List{{Measure: KeyRBO, Group: "overall", Value: 0.99}},
		MaxChurn: floor.List{{Measure: KeyChurn, Group: "overall", Value: 0}}}, cases, true)
	o := res.Churn.Overall
	assert.Equal(t, 1.0, o.RBO.Mean)
	assert.Equal(t, 0.0, o.Share.Mean)
	assert.Equal(t, 0.0, o.Left.Mean)
	assert.Less(t, o.RBO.CI95.Lo, 1.0)
	assert.Equal(t, 1.0, o.RBO.CI95.Hi)
	assert.Greater(t, o.Share.CI95.Hi, 0.0)
	assert.Equal(t, outcome.Pass, res.ChurnStatus)
	assert.Empty(t, res.Churn.MostChanged)
}

// The most changed list keeps the DefaultMaxChanged lowest, the same with
// Prepare's filter as with every case joined in full.
func TestMostChangedAllBounded(t *testing.T) {
	var base strings.Builder
	var cases []ccase
	tops := []string{"abcdx", "xbcde", "axcde", "abxde", "abcxe", "xyzde", "xyzwe", "vwxyz"}
	for i := range 200 {
		id := fmt.Sprintf("c%03d", i)
		gold := ""
		if i%2 == 0 {
			gold = "a"
		}
		base.WriteString(cline(id, "golden", "en", gold, "abcde"))
		cases = append(cases, ccase{id, "golden", "en", gold, tops[(i*7)%len(tops)]})
	}
	b := load(t, base.String())
	full := churnRun(t, b, Options{K: 5}, cases, false)
	got := churnRun(t, b, Options{K: 5}, cases, true)
	require.Len(t, got.Churn.MostChanged, DefaultMaxChanged)
	assert.Equal(t, full.Churn.MostChanged, got.Churn.MostChanged)
	assert.Equal(t, "vwxyz", strings.Join(got.Churn.MostChanged[0].After, ""))
}

func TestChurnUnavailable(t *testing.T) {
	c := Unavailable(Unavailability{Code: "no_artifact", Detail: "none"}, Options{
		MinRBO:   floor.List{{Measure: KeyRBO, Group: "overall", Value: 0.9}},
		MaxChurn: floor.List{{Measure: KeyChurn, Group: "type:golden", Value: 0.1}},
	})
	assert.Equal(t, outcome.Off, c.ChurnStatus)
	var names []string
	for _, g := range c.Gates[len(c.Gates)-3:] {
		names = append(names, g.Name)
		assert.Equal(t, outcome.Off, g.Status)
	}
	assert.Equal(t, []string{"min_rbo", "max_churn", "max_churn@type:golden"}, names)
	g, _ := c.Gates.Find("min_rbo")
	assert.Equal(t, 0.9, g.Threshold)
	assert.Equal(t, outcome.NoBaseline, g.Why[0].Code)
	g, _ = c.Gates.Find("max_churn")
	assert.Empty(t, g.Why, "not set: no reason")
}

func TestAddChurnLines(t *testing.T) {
	tests := []struct {
		in      string
		want    floor.List
		wantErr string
	}{
		{"0.9", floor.List{{Measure: KeyRBO, Group: "overall", Value: 0.9}}, ""},
		{"type:golden=0.5\n# a comment\n\n locale:pt-br = 0.7 ", floor.List{{Measure: KeyRBO, Group: "type:golden", Value: 0.5}, {Measure: KeyRBO, Group: "locale:pt-BR", Value: 0.7}}, ""},
		{`type:"a=b"=0.25`, floor.List{{Measure: KeyRBO, Group: "type:a=b", Value: 0.25}}, ""},
		{"overall=1", floor.List{{Measure: KeyRBO, Group: "overall", Value: 1}}, ""},
		{"1.5", nil, `"1.5": 1.5 is outside [0,1] (the range of the figure)`},
		{"high", nil, `"high": "high" is not a number`},
		{"kind:x=0.2", nil, `"kind:x=0.2": unknown group "kind:x" (groups: overall, type:NAME, locale:TAG)`},
		{"0.5\noverall=0.6", nil, "two gates on overall: give one"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			var l floor.List
			err := AddChurnLines(&l, KeyRBO, tt.in)
			if tt.wantErr != "" {
				require.EqualError(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, l)
		})
	}
	assert.Equal(t, "max_churn@locale:pt-BR", ChurnGateName(floor.Spec{Measure: KeyChurn, Group: "locale:pt-BR"}))
	assert.Equal(t, "min_rbo", ChurnGateName(floor.Spec{Measure: KeyRBO, Group: "overall"}))
}
