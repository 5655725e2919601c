package floor

import (
	"math"
	"strings"
	"testing"

	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
	"github.com/retrieval-gate/retrieval-gate/internal/report/gatetable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func infos[In any](ms []metrics.Measure[In]) []metrics.Info {
	out := make([]metrics.Info, len(ms))
	for i, m := range ms {
		out[i] = m.Info
	}
	return out
}

var (
	check   = Grammar{Measures: infos(metrics.CaseMeasures[:]), Groups: true, CanonicalLocale: strings.ToLower}
	compare = Grammar{Measures: infos(metrics.QueryMeasures[:])}
)

func TestParse(t *testing.T) {
	tests := []struct {
		g    Grammar
		in   string
		want Spec
	}{
		{check, "retrieval_ndcg_at_k=0.5", Spec{metrics.KeyNDCG, outcome.GroupOverall, 0.5}},
		{check, " retrieval_hit_at_k @ overall = 0.7 ", Spec{metrics.KeyHit, outcome.GroupOverall, 0.7}},
		{check, "retrieval_hit_at_k@locale:ES-419=0.6", Spec{metrics.KeyHit, "locale:es-419", 0.6}},
		{check, "retrieval_recall_at_k@type:adversarial=0", Spec{metrics.KeyRecall, "type:adversarial", 0}},
		{check, "retrieval_recall_at_k=-0", Spec{metrics.KeyRecall, outcome.GroupOverall, 0}},
		{check, "retrieval_hit_at_k=1", Spec{metrics.KeyHit, outcome.GroupOverall, 1}},
		{compare, "dcg_at_k=3.5", Spec{metrics.KeyDCG, outcome.GroupOverall, 3.5}},
		{compare, "ndcg_at_k@overall=0.25", Spec{"ndcg_at_k", outcome.GroupOverall, 0.25}},
		// A quoted name or tag: any type name, '=' and surrounding space included.
		{check, `retrieval_hit_at_k@type:"a=b"=0.5`, Spec{metrics.KeyHit, "type:a=b", 0.5}},
		{check, `retrieval_hit_at_k @ type:" lead\ttab\n" = 0.5`, Spec{metrics.KeyHit, "type: lead\ttab\n", 0.5}},
		{check, `retrieval_hit_at_k@type:"say \"hi\" \\ C\x23"=0.5`, Spec{metrics.KeyHit, `type:say "hi" \ C#`, 0.5}},
		{check, `retrieval_hit_at_k@type:"\"quoted\""=0.5`, Spec{metrics.KeyHit, `type:"quoted"`, 0.5}},
		{check, `retrieval_hit_at_k@locale:"PT=BR"=0.5`, Spec{metrics.KeyHit, "locale:pt=br", 0.5}},
		// A bare name keeps what is not '=' or surrounding space.
		{check, `retrieval_hit_at_k@type:say "hi" C#=0.5`, Spec{metrics.KeyHit, `type:say "hi" C#`, 0.5}},
		{check, `retrieval_hit_at_k@type:a"b"=0.5`, Spec{metrics.KeyHit, `type:a"b"`, 0.5}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := tt.g.Parse(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.False(t, math.Signbit(got.Value), "no -0")
			back, err := tt.g.Parse(got.String())
			require.NoError(t, err)
			assert.Equal(t, got, back, "the canonical form reads back")
		})
	}
}

func TestParseErrors(t *testing.T) {
	measures := strings.Join(metrics.CaseKeys, ", ")
	groups := "overall, type:NAME, locale:TAG"
	tests := []struct {
		g        Grammar
		in, want string
	}{
		{check, "", `"": want MEASURE=F or MEASURE@GROUP=F`},
		{check, "retrieval_hit_at_k", `"retrieval_hit_at_k": want MEASURE=F or MEASURE@GROUP=F`},
		{check, "retrieval_hit_at_k=", `"retrieval_hit_at_k=": want MEASURE=F or MEASURE@GROUP=F`},
		{check, "=0.5", `"=0.5": want MEASURE=F or MEASURE@GROUP=F`},
		{check, "hit=0.5", `"hit=0.5": unknown measure "hit" (measures: ` + measures + `)`},
		{check, "ndcg_at_k=0.5", `"ndcg_at_k=0.5": unknown measure "ndcg_at_k" (measures: ` + measures + `)`},
		{check, "retrieval_hit_at_k@es=0.5", `"retrieval_hit_at_k@es=0.5": unknown group "es" (groups: ` + groups + `)`},
		{check, "retrieval_hit_at_k@=0.5", `"retrieval_hit_at_k@=0.5": unknown group "" (groups: ` + groups + `)`},
		{check, "retrieval_hit_at_k@type:=0.5", `"retrieval_hit_at_k@type:=0.5": group "type:" has no type name (groups: ` + groups + `)`},
		{check, "retrieval_hit_at_k@locale: =0.5", `"retrieval_hit_at_k@locale: =0.5": group "locale:" has no locale tag (groups: ` + groups + `)`},
		{check, "retrieval_hit_at_k=high", `"retrieval_hit_at_k=high": "high" is not a number`},
		{check, "retrieval_hit_at_k=NaN", `"retrieval_hit_at_k=NaN": "NaN" is not a number`},
		{check, "retrieval_hit_at_k=Inf", `"retrieval_hit_at_k=Inf": "Inf" is not a number`},
		{check, "retrieval_hit_at_k=1.5", `"retrieval_hit_at_k=1.5": 1.5 is outside [0,1] (the range of retrieval_hit_at_k)`},
		{check, "retrieval_ndcg_at_k=-0.1", `"retrieval_ndcg_at_k=-0.1": -0.1 is outside [0,1] (the range of retrieval_ndcg_at_k)`},
		{compare, "dcg_at_k=-1", `"dcg_at_k=-1": -1 is negative (dcg_at_k is ≥ 0)`},
		{compare, "ndcg_at_k@locale:en=0.5", `"ndcg_at_k@locale:en=0.5": unknown group "locale:en" (groups: overall)`},
		{compare, "retrieval_hit_at_k=0.5", `"retrieval_hit_at_k=0.5": unknown measure "retrieval_hit_at_k" (measures: ` + strings.Join(metrics.GradedKeys, ", ") + `)`},
		{check, strings.Repeat("x", 1001), `floor expression of 1001 bytes is too long (at most 1000)`},
		{check, `retrieval_hit_at_k@type:"a=0.5`, `"retrieval_hit_at_k@type:\"a=0.5": the quoted name after type: has no closing quote (write it as a Go string: \\ for \, \" for ")`},
		{check, `retrieval_hit_at_k@type:"a"b=0.5`, `"retrieval_hit_at_k@type:\"a\"b=0.5": want MEASURE=F or MEASURE@GROUP=F`},
		{check, `retrieval_hit_at_k@type:"a"`, `"retrieval_hit_at_k@type:\"a\"": want MEASURE=F or MEASURE@GROUP=F`},
		{check, `retrieval_hit_at_k@type:""=0.5`, `"retrieval_hit_at_k@type:\"\"=0.5": group "type:" has no type name (groups: ` + groups + `)`},
		{check, `retrieval_hit_at_k@locale:" "=0.5`, `"retrieval_hit_at_k@locale:\" \"=0.5": group "locale: " has no locale tag (groups: ` + groups + `)`},
		{compare, `ndcg_at_k@type:"a"=0.5`, `"ndcg_at_k@type:\"a\"=0.5": unknown group "type:a" (groups: overall)`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, err := tt.g.Parse(tt.in)
			require.Error(t, err)
			assert.Equal(t, tt.want, err.Error())
		})
	}
}

func TestListRefusesTwoFloorsOnOneTarget(t *testing.T) {
	var l List
	require.NoError(t, l.Add(Spec{metrics.KeyHit, outcome.GroupOverall, 0.7}))
	require.NoError(t, l.Add(Spec{metrics.KeyHit, "locale:en", 0.7}))
	err := l.Add(Spec{metrics.KeyHit, outcome.GroupOverall, 0.8})
	require.Error(t, err)
	assert.Equal(t, "two floors on retrieval_hit_at_k@overall (retrieval_hit_at_k@overall=0.7 and retrieval_hit_at_k@overall=0.8): give one", err.Error())
	s, ok := l.Find(metrics.KeyHit, "locale:en")
	assert.True(t, ok)
	assert.Equal(t, 0.7, s.Value)
	_, ok = l.Find(metrics.KeyNDCG, outcome.GroupOverall)
	assert.False(t, ok)
}

func TestEvaluate(t *testing.T) {
	hit := func(group string, v float64) Spec { return Spec{metrics.KeyHit, group, v} }
	ndcg := Spec{metrics.KeyNDCG, outcome.GroupOverall, 0.5}
	tests := []struct {
		name   string
		spec   Spec
		obs    Observation
		status outcome.Status
		reason string
		value  float64
		n      int64
	}{
		{"no such group", hit("locale:fr", 0.5),
			Observation{Groups: []string{"overall", "locale:en"}},
			outcome.Fail, "no such group in the data (groups: overall, locale:en); " + gatetable.IndicativeOnly, math.NaN(), 0},
		{"n = 0", hit("type:smoke", 0.5),
			Observation{Found: true, Empty: outcome.Clause{Code: outcome.NoGoldScored, Name: "type:smoke"}},
			outcome.Fail, "n = 0: no gold-carrying cases were scored in type:smoke", math.NaN(), 0},
		{"measure absent", ndcg,
			Observation{Found: true, GroupN: 3, Absent: outcome.Clause{Code: outcome.NoScore, Measure: "retrieval_ndcg_at_k"}},
			outcome.Fail, "no gold-carrying case has a retrieval_ndcg_at_k score", math.NaN(), 3},
		{"pass at equality", hit(outcome.GroupOverall, 0.8),
			Observation{Found: true, GroupN: 1000, N: 1000, Mean: 0.8, Binary: true, Label: "overall"},
			outcome.Pass, "n = 1000 can only detect differences of ±0.035 at 80% power (α = 0.05); the distance to the floor is 0.000", 0.8, 1000},
		{"pass within the tolerance", hit(outcome.GroupOverall, 0.8),
			Observation{Found: true, GroupN: 10, N: 10, Mean: 0.8 - 1e-12, Binary: true, Label: "overall"},
			outcome.Pass, "n = 10 can only detect differences of ±0.379 at 80% power (α = 0.05); the distance to the floor is 0.000", 0.8 - 1e-12, 10},
		{"fail, undetectable (the ADR's locale n)", hit("locale:es-419", 0.7),
			Observation{Found: true, GroupN: 29, N: 29, Mean: 0.65, Binary: true, Label: "locale:es-419"},
			outcome.Fail, "locale:es-419 mean 0.650 is below the floor 0.700; n = 29 can only detect differences of ±0.245 at 80% power (α = 0.05); the distance to the floor is 0.050; " + gatetable.IndicativeOnly, 0.65, 29},
		{"fail, detectable", hit(outcome.GroupOverall, 0.9),
			Observation{Found: true, GroupN: 2000, N: 2000, Mean: 0.7, Binary: true, Label: "overall"},
			outcome.Fail, "overall mean 0.700 is below the floor 0.900; n = 2000 detects differences of ±0.019 at 80% power (α = 0.05); the distance to the floor is 0.200", 0.7, 2000},
		{"continuous: from the sd", ndcg,
			Observation{Found: true, GroupN: 100, N: 100, Mean: 0.6, SD: 0.3, Label: "overall"},
			outcome.Pass, "n = 100 detects differences of ±0.084 at 80% power (α = 0.05); the distance to the floor is 0.100", 0.6, 100},
		{"continuous: n = 1", ndcg,
			Observation{Found: true, GroupN: 1, N: 1, Mean: 0.6, SD: math.NaN(), Label: "overall"},
			outcome.Pass, "n = 1 is too small to estimate the difference it can detect", 0.6, 1},
		{"continuous: no spread", ndcg,
			Observation{Found: true, GroupN: 4, N: 4, Mean: 0.25, SD: 0, Label: "overall"},
			outcome.Fail, "overall mean 0.250 is below the floor 0.500; n = 4 has no spread (every value is 0.250): the difference it can detect cannot be estimated", 0.25, 4},
		{"binary at a floor of 1: nothing above is detectable", hit(outcome.GroupOverall, 1),
			Observation{Found: true, GroupN: 5, N: 5, Mean: 1, Binary: true, Label: "overall"},
			outcome.Pass, "n = 5 cannot detect any difference above the floor at 80% power (α = 0.05); the distance to the floor is 0.000", 1, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := Evaluate("floor:x", tt.spec, tt.obs)
			assert.Equal(t, "floor:x", g.Name)
			assert.Equal(t, tt.spec.Group, g.Group)
			assert.Equal(t, tt.spec.Measure, g.Measure)
			assert.Equal(t, tt.spec.Value, g.Threshold)
			assert.Equal(t, tt.status, g.Status)
			assert.Equal(t, tt.reason, gatetable.Reason(g.Why))
			assert.Equal(t, tt.n, g.N)
			if math.IsNaN(tt.value) {
				assert.True(t, math.IsNaN(g.Value))
			} else {
				assert.Equal(t, tt.value, g.Value)
			}
		})
	}
}

// The detectable difference is metrics' formula, in the direction of the mean.
func TestEvaluateDetectableIsMDD(t *testing.T) {
	down, up := metrics.MDDProportion(0.7, 29, metrics.DefaultAlpha, metrics.DefaultPower)
	g := Evaluate("f", Spec{metrics.KeyHit, outcome.GroupOverall, 0.7}, Observation{Found: true, GroupN: 29, N: 29, Mean: 0.6, Binary: true})
	assert.Equal(t, down, g.Detectable)
	g = Evaluate("f", Spec{metrics.KeyHit, outcome.GroupOverall, 0.7}, Observation{Found: true, GroupN: 29, N: 29, Mean: 0.8, Binary: true})
	assert.Equal(t, up, g.Detectable)
	g = Evaluate("f", Spec{metrics.KeyNDCG, outcome.GroupOverall, 0.5}, Observation{Found: true, GroupN: 29, N: 29, Mean: 0.6, SD: 0.2})
	assert.Equal(t, metrics.MDDMean(0.2, 29, metrics.DefaultAlpha, metrics.DefaultPower), g.Detectable)
	g = Evaluate("f", Spec{metrics.KeyNDCG, outcome.GroupOverall, 0.5}, Observation{Found: true})
	assert.True(t, math.IsNaN(g.Detectable), "no detectable difference without items")
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"retrieval_hit_at_k=0.5", "retrieval_hit_at_k@locale:pt-br=1", "retrieval_ndcg_at_k@type:x=0",
		"a@b@c=1", "=", "@=", `retrieval_hit_at_k@type:"a=\"b\x23"=0.5`, `retrieval_hit_at_k@locale:"\n"=1`, "retrieval_hit_at_k@type: a##b=1", "retrieval_hit_at_k=1e-400", "retrieval_hit_at_k=0x1p-2", "retrieval_hit_at_k@type:=0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, g := range []Grammar{check, compare} {
			spec, err := g.Parse(s)
			if err != nil {
				require.NotEmpty(t, err.Error())
				continue
			}
			require.False(t, math.IsNaN(spec.Value) || math.IsInf(spec.Value, 0))
			require.GreaterOrEqual(t, spec.Value, 0.0)
			if len(spec.String()) > MaxExpr {
				// Near the limit the canonical form may be longer than what was
				// read ('#' is written \x23): Parse says so.
				_, err := g.Parse(spec.String())
				require.ErrorContains(t, err, "too long")
				continue
			}
			back, err := g.Parse(spec.String())
			require.NoError(t, err, "canonical form %q", spec.String())
			require.Equal(t, spec, back)
		}
	})
}

func TestQuoteGroup(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{outcome.GroupOverall, outcome.GroupOverall},
		{"type:multi hop", "type:multi hop"},
		{"locale:pt-br", "locale:pt-br"},
		{`type:say "hi" C# \ ação 日本`, `type:say "hi" C# \ ação 日本`},
		{"type:a=b", `type:"a=b"`},
		{`type:"q"`, `type:"\"q\""`},
		{"type: lead", `type:" lead"`},
		{"type:trail\u3000", `type:"trail\u3000"`},
		{"type:a\nb", `type:"a\nb"`},
		{"type:bad\xff", `type:"bad\xff"`},
		{"type:zw\u200bsp", `type:"zw\u200bsp"`},
		{"type:x ##[error]y", `type:"x \x23\x23[error]y"`},
		{"type:x#\ufe0f#[y", "type:\"x\\x23\ufe0f\\x23[y\""}, // a printable variation selector stays
		{"locale:a=b", `locale:"a=b"`},
	} {
		t.Run(c.in, func(t *testing.T) {
			got := QuoteGroup(c.in)
			assert.Equal(t, c.want, got)
			assert.NotContains(t, got, "##")
			if c.in == outcome.GroupOverall {
				return
			}
			s, err := check.Parse("retrieval_hit_at_k@" + got + "=0.5")
			require.NoError(t, err)
			assert.Equal(t, c.in, s.Group)
		})
	}
}
