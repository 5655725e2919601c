package gate

import (
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/retrieval-gate/retrieval-gate/internal/floor"
	"github.com/retrieval-gate/retrieval-gate/internal/input/casefile"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
	"github.com/retrieval-gate/retrieval-gate/internal/report/gatetable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// floorFixture: en 4 cases (3 hits), es-419 2 cases (1 hit), pt-BR 1 case without gold.
func floorFixture(t *testing.T) *Accumulator {
	a := NewAccumulator()
	s := &Scorer{KB: kb, K: 2}
	for i, c := range []casefile.Case{
		{ID: "e1", Locale: "en", Gold: []string{"a"}, Retrieved: rs("a")},
		{ID: "e2", Locale: "en", Gold: []string{"a"}, Retrieved: rs("a")},
		{ID: "e3", Locale: "en", Gold: []string{"a"}, Retrieved: rs("b", "a")},
		{ID: "e4", Locale: "en", Gold: []string{"a"}, Retrieved: rs("b"), Type: "adversarial"},
		{ID: "s1", Locale: "es-419", Gold: []string{"b"}, Retrieved: rs("b")},
		{ID: "s2", Locale: "es-419", Gold: []string{"b"}, Retrieved: rs("c")},
		{ID: "p1", Locale: "pt-BR"},
	} {
		c.Line = i + 1
		add(t, a, s, c)
	}
	return a
}

func gateNamed(t *testing.T, r *Result, name string) outcome.Gate {
	t.Helper()
	g, ok := r.Gates.Find(name)
	require.True(t, ok, "gate %s in %v", name, r.Gates)
	return g
}

func TestFloorsOnGroups(t *testing.T) {
	fl := floor.List{
		{Measure: metrics.KeyHit, Group: "locale:en", Value: 0.75},            // 0.75: pass at equality
		{Measure: metrics.KeyHit, Group: "locale:es-419", Value: 0.6},         // 0.5: fail
		{Measure: metrics.KeyHit, Group: "locale:pt-BR", Value: 0.1},          // n = 0
		{Measure: metrics.KeyHit, Group: "locale:fr", Value: 0.1},             // no such group
		{Measure: metrics.KeyNDCG, Group: "type:golden", Value: 0.5},          // continuous
		{Measure: metrics.KeyRecall, Group: outcome.GroupOverall, Value: 0.1}, // overall
	}
	res := floorFixture(t).Result(Config{K: 2, Floors: fl, Resamples: 50})
	require.Len(t, res.Gates, 4+len(fl))
	for i, s := range fl {
		assert.Equal(t, s.Name(), res.Gates[4+i].Name, "floors follow the fixed gates, in order")
	}

	en := gateNamed(t, res, "floor:retrieval_hit_at_k@locale:en")
	assert.Equal(t, outcome.Pass, en.Status, "pass at equality")
	assert.Equal(t, 0.75, en.Value)
	assert.Equal(t, int64(4), en.N)
	assert.Equal(t, "locale:en", en.Group)
	assert.Contains(t, gatetable.Reason(en.Why), "n = 4 cannot detect any difference above the floor at 80% power (α = 0.05)")
	assert.Contains(t, gatetable.Reason(en.Why), "the distance to the floor is 0.000")
	assert.Contains(t, gatetable.Reason(en.Why), gatetable.IndicativeOnly, "per-locale floors are indicative only")

	es := gateNamed(t, res, "floor:retrieval_hit_at_k@locale:es-419")
	assert.Equal(t, outcome.Fail, es.Status)
	assert.Equal(t, "locale:es-419 mean 0.500 is below the floor 0.600; n = 2 cannot detect any difference below the floor at 80% power (α = 0.05); the distance to the floor is 0.100; "+gatetable.IndicativeOnly, gatetable.Reason(es.Why))

	pt := gateNamed(t, res, "floor:retrieval_hit_at_k@locale:pt-BR")
	assert.Equal(t, outcome.Fail, pt.Status)
	assert.Equal(t, "n = 0: no gold-carrying cases were scored in locale:pt-BR; "+gatetable.IndicativeOnly, gatetable.Reason(pt.Why))

	fr := gateNamed(t, res, "floor:retrieval_hit_at_k@locale:fr")
	assert.Equal(t, outcome.Fail, fr.Status)
	assert.Equal(t, "no such group in the data (groups: overall, type:adversarial, type:golden, locale:en, locale:es-419, locale:pt-BR); "+gatetable.IndicativeOnly, gatetable.Reason(fr.Why))

	golden := gateNamed(t, res, "floor:retrieval_ndcg_at_k@type:golden")
	m, _ := res.ByType[1].Metric(metrics.KeyNDCG)
	assert.Equal(t, m.Mean, golden.Value)
	assert.InDelta(t, metrics.MDDMean(m.SD, m.N, metrics.DefaultAlpha, metrics.DefaultPower), golden.Detectable, 0)
	assert.NotContains(t, gatetable.Reason(golden.Why), "indicative")

	assert.Equal(t, outcome.Fail, res.Verdict())
}

func TestShorthandFloorStatesWhatNCanDetect(t *testing.T) {
	res := floorFixture(t).Result(Config{K: 2, MinHit: Floor{Set: true, Value: 0.5}, Resamples: 50})
	g := gateNamed(t, res, "min_hit")
	assert.Equal(t, outcome.Pass, g.Status)
	_, up := metrics.MDDProportion(0.5, 6, metrics.DefaultAlpha, metrics.DefaultPower)
	assert.Equal(t, up, g.Detectable)
	assert.Equal(t, fmt.Sprintf("n = 6 can only detect differences of ±%.3f at 80%% power (α = 0.05); the distance to the floor is 0.167", up), gatetable.Reason(g.Why))
}

func TestNonEmptyGate(t *testing.T) {
	for _, tt := range []struct {
		name   string
		cases  []casefile.Case
		allow  bool
		status outcome.Status
		reason string
	}{
		{"empty file", nil, false, outcome.Fail, "no gold-carrying cases were scored"},
		{"no case carries gold", []casefile.Case{{ID: "x", Line: 1}}, false, outcome.Fail, "no gold-carrying cases were scored"},
		{"allowed", nil, true, outcome.Off, "no gold-carrying cases were scored (allowed by --allow-empty)"},
		{"scored", []casefile.Case{{ID: "x", Line: 1, Gold: []string{"a"}}}, false, outcome.Pass, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := NewAccumulator()
			for _, c := range tt.cases {
				add(t, a, &Scorer{KB: kb, K: 2}, c)
			}
			res := a.Result(Config{K: 2, AllowEmpty: tt.allow, Resamples: 10})
			g := gateNamed(t, res, "non_empty")
			assert.Equal(t, tt.status, g.Status)
			assert.Equal(t, tt.reason, gatetable.Reason(g.Why))
			assert.Equal(t, outcome.GroupOverall, g.Group)
			if tt.status == outcome.Fail {
				assert.Equal(t, outcome.Fail, res.Verdict())
			} else {
				assert.Equal(t, outcome.Pass, res.Verdict())
			}
		})
	}
}

func TestUnknownKeysCounted(t *testing.T) {
	a := NewAccumulator()
	s := &Scorer{KB: kb, K: 2}
	var p casefile.CaseParser
	for i, line := range []string{
		`{"id":"1","must_cite_one_off":["a"],"user_input":"q"}`,
		`{"id":"2","must_cite_one_off":["a"]}`,
		`{"id":"3","must_cite_one_of":["a"],"retrieval":{"k":1}}`,
	} {
		var c casefile.Case
		require.NoError(t, p.Parse([]byte(line), "cases.jsonl", i+1, &c))
		r, err := score(s, &c)
		require.NoError(t, err)
		require.NoError(t, a.Add(r))
	}
	for i := range maxUnknownKeys + 5 { // bounded: the names beyond the cap are counted together
		require.NoError(t, a.Add(&CaseResult{ID: fmt.Sprintf("x%d", i), Line: 10 + i, UnknownKeys: []string{fmt.Sprintf("k%03d", i)}}))
	}
	res := a.Result(Config{K: 2, Resamples: 10})
	require.Len(t, res.UnknownKeys, maxUnknownKeys+1)
	assert.Equal(t, KeyCount{"must_cite_one_off", 2}, res.UnknownKeys[0])
	assert.Equal(t, KeyCount{"", 7}, res.UnknownKeys[maxUnknownKeys], "the cases with names beyond the cap")
	for _, k := range res.UnknownKeys {
		assert.NotEqual(t, "retrieval", k.Key, "retrieve's own provenance key is known")
	}
}

// Issue 34 item 2: cases in families. 40 cases in 10 clusters of 4 whose
// hit@2 is all 1 or all 0 within a cluster (6 clusters hit): the group's
// interval is over the 10 clusters (cluster-t widened to the interval over
// the cases: cluster-t-hull), the floor's detectable difference is the
// cluster-robust standard error's, larger than the cases' binomial one; the
// same cases without the key keep Wilson and the binomial difference.
func TestGroupsAndFloorsOverClusters(t *testing.T) {
	run := func(clustered bool) *Result {
		a := NewAccumulator()
		s := &Scorer{KB: kb, K: 2}
		for i := range 40 {
			c := casefile.Case{ID: fmt.Sprintf("c%02d", i), Locale: "en", Gold: []string{"a"}, Retrieved: rs("b")}
			if i/4 < 6 {
				c.Retrieved = rs("a")
			}
			if clustered {
				c.Cluster = fmt.Sprintf("family %d", i/4)
			}
			c.Line = i + 1
			add(t, a, s, c)
		}
		return a.Result(Config{K: 2, Resamples: 50, Floors: floor.List{{Measure: metrics.KeyHit, Group: outcome.GroupOverall, Value: 0.7}}})
	}
	plain, clus := run(false), run(true)
	ph, _ := plain.Overall.Metric(metrics.KeyHit)
	ch, _ := clus.Overall.Metric(metrics.KeyHit)
	assert.Equal(t, metrics.MethodWilson, ph.Method)
	assert.Zero(t, ph.Clusters)
	assert.Equal(t, int64(10), ch.Clusters)
	assert.Equal(t, ph.Mean, ch.Mean)
	// By hand: cluster sums 4 (6 of them) and 0 (4), mean 0.6, residuals
	// ±1.6 and −2.4: SE = √(10/9·(6·1.6² + 4·2.4²))/40.
	se := math.Sqrt(10.0/9*(6*1.6*1.6+4*2.4*2.4)) / 40
	assert.InDelta(t, se, ch.SE, 1e-12)
	tq := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: 9}.Quantile(0.975)
	assert.InDelta(t, 0.6-tq*se, ch.CI95[0], 1e-12, "cluster-t reaches further than Wilson below")
	assert.LessOrEqual(t, ch.CI95[0], ph.CI95[0])
	assert.GreaterOrEqual(t, ch.CI95[1], ph.CI95[1])
	assert.Contains(t, []string{metrics.MethodClusterT, metrics.MethodClusterHull}, ch.Method)
	assert.True(t, ch.Unreliable, "10 clusters")
	pf, cf := gateNamed(t, plain, "floor:retrieval_hit_at_k@overall"), gateNamed(t, clus, "floor:retrieval_hit_at_k@overall")
	assert.InDelta(t, metrics.MDDMean(se*math.Sqrt(40), 40, metrics.DefaultAlpha, metrics.DefaultPower), cf.Detectable, 1e-12)
	assert.Greater(t, cf.Detectable, pf.Detectable, "families detect less")
}

// Floors over clusters never fall back to the cases as if independent: 40
// cases that all hit, in 4 families, read "n = 40 detects differences of
// ±0.152" (the binomial figure of 40 independent cases) for a floor of 0.8,
// because the clusters' standard error is 0. The floor's reason is now that
// no value varies, and the suggested floors take the clusters' figures too: a
// suggestion's detectable difference is the cluster-robust one (it was the
// cases' sd or binomial one), and a group refused for its interval's coverage
// names its clusters as too few, not its 40 cases.
func TestFloorsOverClustersNeverAsIndependent(t *testing.T) {
	run := func(hit func(i int) bool, families, n int) *Result {
		a := NewAccumulator()
		s := &Scorer{KB: kb, K: 2}
		for i := range n {
			c := casefile.Case{ID: fmt.Sprintf("c%02d", i), Locale: "en", Gold: []string{"a"}, Retrieved: rs("b"), Cluster: fmt.Sprintf("family %d", i%families)}
			if hit(i) {
				c.Retrieved = rs("a")
			}
			c.Line = i + 1
			add(t, a, s, c)
		}
		return a.Result(Config{K: 2, Resamples: 50, Floors: floor.List{{Measure: metrics.KeyHit, Group: outcome.GroupOverall, Value: 0.8}}})
	}
	all := run(func(int) bool { return true }, 4, 40)
	g := gateNamed(t, all, "floor:retrieval_hit_at_k@overall")
	assert.True(t, math.IsNaN(g.Detectable), "%v", g.Detectable)
	require.NotEmpty(t, g.Why)
	assert.Equal(t, outcome.NoSpread, g.Why[len(g.Why)-1].Code)
	for _, s := range all.SuggestFloors() {
		if s.Spec.Group == outcome.GroupOverall && s.Spec.Measure == metrics.KeyHit {
			assert.Equal(t, floor.RefusedUnreliable, s.Refused, "4 clusters: the bounded interval over them")
			assert.Equal(t, int64(4), s.Clusters)
		}
	}

	// 100 families (the fewest whose interval is not marked unreliable,
	// metrics.ClusterReliableMinClusters) of 2 cases, of which 67 hit whole:
	// the suggestion's detectable difference is the clusters' (cluster-robust
	// standard error), larger than the binomial one of 200 cases.
	some := run(func(i int) bool { return i%100 < 67 }, metrics.ClusterReliableMinClusters, 200)
	m, _ := some.Overall.Metric(metrics.KeyHit)
	require.Equal(t, int64(metrics.ClusterReliableMinClusters), m.Clusters)
	require.False(t, m.Unreliable)
	var found bool
	for _, s := range some.SuggestFloors() {
		if s.Spec.Group != outcome.GroupOverall || s.Spec.Measure != metrics.KeyHit {
			continue
		}
		found = true
		require.Empty(t, s.Refused)
		want := metrics.MDDMean(m.SE*math.Sqrt(200), 200, metrics.DefaultAlpha, metrics.DefaultPower)
		assert.InDelta(t, want, s.Detectable, 1e-12)
		down, _ := metrics.MDDProportion(s.Spec.Value, 200, metrics.DefaultAlpha, metrics.DefaultPower)
		assert.NotEqual(t, down, s.Detectable, "not the binomial figure of 200 independent cases")
	}
	assert.True(t, found)
}
