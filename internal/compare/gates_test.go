package compare_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/floor"
	"github.com/retrieval-gate/retrieval-gate/internal/input/trecfile"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
	"github.com/retrieval-gate/retrieval-gate/internal/racetest"
	"github.com/retrieval-gate/retrieval-gate/internal/report/gatetable"
)

// gateFixture: 30 queries, "good" finds the relevant document first every time,
// "bad" never finds it, "same" is a copy of good.
func gateFixture(t *testing.T) (*trecfile.Qrels, []compare.Input) {
	var q strings.Builder
	var good, bad []trecfile.RunQuery
	for i := range 30 {
		id := fmt.Sprintf("q%02d", i)
		fmt.Fprintf(&q, "%s 0 rel%d 3\n", id, i)
		good = append(good, trecfile.RunQuery{ID: id, Docs: []string{fmt.Sprintf("rel%d", i)}})
		bad = append(bad, trecfile.RunQuery{ID: id, Docs: []string{"junk"}})
	}
	return qrels(t, q.String()), []compare.Input{
		{Name: "bad", Run: run("bad.run", bad...)},
		{Name: "good", Run: run("good.run", good...)},
		{Name: "same", Run: run("same.run", good...)},
	}
}

func TestCompareGates(t *testing.T) {
	q, runs := gateFixture(t)
	tests := []struct {
		name    string
		gate    compare.GateOptions
		verdict outcome.Status
		gates   []string // name:status
		reason  string   // of the last gate (a substring)
	}{
		{"no gate by default", compare.GateOptions{}, outcome.Pass, nil, ""},
		{"beaten", compare.GateOptions{Strategy: "bad", FailIfBeaten: true}, outcome.Fail,
			[]string{"not_beaten:fail"}, "significantly better on dcg_at_k: good +7.000"},
		{"not beaten: the copy is not better", compare.GateOptions{Strategy: "good", FailIfBeaten: true}, outcome.Pass,
			[]string{"not_beaten:pass"}, "no strategy is significantly better on dcg_at_k (closest: same 0.000"},
		{"floor passes", compare.GateOptions{Strategy: "good", Floors: floor.List{{Measure: "ndcg_at_k", Group: outcome.GroupOverall, Value: 1}}},
			outcome.Pass, []string{"floor:ndcg_at_k:pass"}, "n = 30 cannot detect any difference above the floor"},
		{"floor fails", compare.GateOptions{Strategy: "bad", Floors: floor.List{{Measure: "hit_at_k", Group: outcome.GroupOverall, Value: 0.5}}, FailIfBeaten: true},
			outcome.Fail, []string{"floor:hit_at_k:fail", "not_beaten:fail"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := opts()
			o.Gate = tt.gate
			res, err := compare.Compare(q, runs, o)
			require.NoError(t, err)
			assert.Equal(t, tt.verdict, res.Verdict())
			var got []string
			for _, g := range res.Gates {
				got = append(got, g.Name+":"+string(g.Status))
				assert.Equal(t, outcome.StrategyGroup(tt.gate.Strategy), g.Group)
				assert.Equal(t, int64(30), g.N)
			}
			assert.Equal(t, tt.gates, got)
			if tt.reason != "" {
				assert.Contains(t, gatetable.Reason(res.Gates[len(res.Gates)-1].Why), tt.reason)
			}
		})
	}
	// The floor fails below, with the value and n of the gate strategy.
	o := opts()
	o.Gate = compare.GateOptions{Strategy: "bad", Floors: floor.List{{Measure: "hit_at_k", Group: outcome.GroupOverall, Value: 0.5}}}
	res, err := compare.Compare(q, runs, o)
	require.NoError(t, err)
	g := res.Gates[0]
	assert.Equal(t, "hit_at_k", g.Measure)
	assert.Equal(t, 0.0, g.Value)
	assert.Equal(t, 0.5, g.Threshold)
	assert.True(t, strings.HasPrefix(gatetable.Reason(g.Why), "strategy bad mean 0.000 is below the floor 0.500; n = 30 "), gatetable.Reason(g.Why))
	down, _ := metrics.MDDProportion(0.5, 30, metrics.DefaultAlpha, metrics.DefaultPower)
	assert.Equal(t, down, g.Detectable)

	// One strategy: nothing to be beaten by.
	o.Gate = compare.GateOptions{Strategy: "good", FailIfBeaten: true}
	res, err = compare.Compare(q, runs[1:2], o)
	require.NoError(t, err)
	assert.Equal(t, outcome.Off, res.Gates[0].Status)
	assert.Equal(t, "no other strategy to compare with", gatetable.Reason(res.Gates[0].Why))

	// An unknown gate strategy is an error.
	o.Gate = compare.GateOptions{Strategy: "nope", FailIfBeaten: true}
	_, err = compare.Compare(q, runs, o)
	require.EqualError(t, err, `gate strategy "nope" is not one of the runs`)
}

// largeNFixture: n queries with three judged documents (levels 3, 2, 0) and
// three strategies that rank them in a random order, "h3" more often in the
// ideal order than "base" and "h2"; DCG differences take irrational values, so
// no exact test applies.
func largeNFixture(t *testing.T, n int) (*trecfile.Qrels, []compare.Input) {
	var q strings.Builder
	for i := range n {
		fmt.Fprintf(&q, "q%05d 0 g 3\nq%05d 0 s 2\nq%05d 0 j 0\n", i, i, i)
	}
	perms := [][]string{{"g", "s", "j"}, {"g", "j", "s"}, {"s", "g", "j"}, {"s", "j", "g"}, {"j", "g", "s"}, {"j", "s", "g"}}
	var in []compare.Input
	for si, st := range []struct {
		name string
		best float64
	}{{"base", 0.30}, {"h2", 0.31}, {"h3", 0.40}} {
		r := metrics.NewRand(uint64(si) + 11)
		var qs []trecfile.RunQuery
		for i := range n {
			docs := perms[1+r.IntN(5)]
			if r.Float64() < st.best {
				docs = perms[0]
			}
			qs = append(qs, trecfile.RunQuery{ID: fmt.Sprintf("q%05d", i), Docs: docs})
		}
		in = append(in, compare.Input{Name: st.name, Run: run(st.name+".run", qs...)})
	}
	return qrels(t, q.String()), in
}

// The same data cut to 2,000 and 2,100 queries (either side of the resampling
// budget at the default 10,000 resamples) gives the same recommendation and the
// same --gate-strategy base --fail-if-beaten verdict: from 2,000 queries the
// tests without an exact form use the saddlepoint approximation, which has full
// power (the Berry–Esseen bound used above the budget before gave Holm p 0.11
// at 2,100 queries: no clear winner, and the gate passed).
func TestCompareSameVerdictAcrossResamplingBudget(t *testing.T) {
	racetest.Skip(t, "two full runs at 2,000 queries; compare.Run's goroutines are raced by the small tests")
	for _, n := range []int{2000, 2100} {
		q, in := largeNFixture(t, n)
		o := compare.Options{K: 3, Gain: metrics.GainExp, RelevantLevel: 2, Resamples: 10000, Seed: 1,
			Gate: compare.GateOptions{Strategy: "base", FailIfBeaten: true}}
		res, err := compare.Compare(q, in, o)
		require.NoError(t, err)
		assert.Equal(t, n == 2000, res.Exact, "n = %d: the bootstrap intervals resample within the budget only", n)
		assert.Equal(t, "h3", res.Recommended, "n = %d", n)
		assert.Equal(t, outcome.Fail, res.Verdict(), "n = %d", n)
		for _, p := range res.Paired {
			if p.Metric == "dcg_at_k" && p.Strategy == "h3" {
				assert.Equal(t, metrics.PMethodSaddlepoint, p.PMethod, "n = %d", n)
				assert.Less(t, p.PHolm, 1e-6, "n = %d", n)
			}
		}
	}
}
