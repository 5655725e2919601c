package compare_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/input/trecfile"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/racetest"
)

// orderView is what a comparison says of each run and each pair, keyed by
// names so that two comparisons of the same runs given in different orders
// can be set side by side: the order of the rows is left out, every number,
// adjusted p-value, note, recommendation and decision is kept.
type orderView struct {
	Strategies map[string]string // name → means and intervals
	Paired     map[string]string // strategy/baseline/measure → the test
	Findings   map[string]string // kind/a/b → the test
	Scenarios  map[string]string // code/a/b → the scenario
	Recommend  string
	Leader     string
	Decision   string
}

// fmtFloat writes a float64 exactly (its bits), NaN included.
func fmtFloat(v float64) string {
	if math.IsNaN(v) {
		return "NaN"
	}
	return fmt.Sprintf("%x", v)
}

func fmtPaired(p compare.Paired) string {
	return fmt.Sprintf("%s-%s %s n=%d c=%d delta=%s ci=[%s,%s] p=%s %s holm=%s sig=%t note=%q identical=%t primary=%t",
		p.Strategy, p.Baseline, p.Metric, p.N, p.Clusters, fmtFloat(p.Delta), fmtFloat(p.CI.Lo), fmtFloat(p.CI.Hi),
		fmtFloat(p.P), p.PMethod, fmtFloat(p.PHolm), p.Significant, p.Note, p.Identical, p.Primary)
}

func viewOf(res *compare.Result) orderView {
	v := orderView{Strategies: map[string]string{}, Paired: map[string]string{}, Findings: map[string]string{}, Scenarios: map[string]string{}}
	for _, s := range res.Strategies {
		line := fmt.Sprintf("n=%d missing=%d", s.N, s.Missing)
		for m := range metrics.NumGraded {
			line += fmt.Sprintf(" %s=%s[%s,%s]", metrics.GradedKeys[m], fmtFloat(s.Means[m]), fmtFloat(s.CI[m].Lo), fmtFloat(s.CI[m].Hi))
		}
		v.Strategies[s.Name] = line
	}
	for _, p := range res.Paired {
		v.Paired[p.Strategy+"/"+p.Baseline+"/"+p.Metric] = fmtPaired(p)
	}
	for _, f := range res.Findings {
		v.Findings[fmt.Sprintf("%d/%s/%s", f.Kind, f.A, f.B)] = fmt.Sprintf("%s count=%d n=%d", fmtPaired(f.Test), f.Count, f.N)
	}
	for _, s := range res.Scenarios {
		test := ""
		if s.Test != nil {
			test = fmtPaired(*s.Test)
		}
		s.Test = nil
		v.Scenarios[fmt.Sprintf("%v/%s/%s", s.Code, s.A, s.B)] = fmt.Sprintf("%+v width=%s value=%s test=%s", s, fmtFloat(s.Width), fmtFloat(s.Value), test)
	}
	v.Recommend = res.Recommended
	if res.Leader != nil {
		v.Leader = fmtPaired(*res.Leader)
	}
	v.Decision = fmt.Sprintf("%+v taken=%s", res.Decision, res.Decision.Taken())
	return v
}

// permutations returns every order of xs (Heap's algorithm).
func permutations[T any](xs []T) [][]T {
	var out [][]T
	a := slices.Clone(xs)
	var gen func(k int)
	gen = func(k int) {
		if k <= 1 {
			out = append(out, slices.Clone(a))
			return
		}
		for i := range k {
			gen(k - 1)
			if k%2 == 0 {
				a[i], a[k-1] = a[k-1], a[i]
			} else {
				a[0], a[k-1] = a[k-1], a[0]
			}
		}
	}
	gen(len(a))
	return out
}

// TestCompareRunOrder: with the baseline named (--baseline), the order of
// the --run flags changes no number of the comparison, only the order of its
// rows: every mean and interval, every paired test's p-value, Holm-adjusted
// p-value and significance, every finding, scenario, the recommendation and
// the decision are the same for every permutation of the runs (the baseline's
// position included). The cases: the demo's five runs (whose randomization
// p-values tie at their floor within each Holm family), and four of them
// against hybrid; three of them with a copy of dense under another name,
// tied with it on every measure; four with the queries in clusters (tests
// over clusters); and runs that mostly miss, where dense and its copy tie
// for the best mean and the widest interval and two runs that find nothing
// tie for the highest nDCG bound.
func TestCompareRunOrder(t *testing.T) {
	racetest.Skip(t, "every order of the runs through Compare, on one goroutine")
	dir := filepath.Join("..", "..", "testdata", "compare")
	read := func(file string) *trecfile.Run {
		f, err := os.Open(filepath.Join(dir, file))
		require.NoError(t, err)
		defer f.Close()
		r, err := trecfile.ReadRunFrom(context.Background(), f, file, 10, trecfile.RunOptions{})
		require.NoError(t, err)
		return r
	}
	qf, err := os.Open(filepath.Join(dir, "qrels.trec"))
	require.NoError(t, err)
	q, err := trecfile.ParseQrels(context.Background(), qf, "qrels.trec")
	require.NoError(t, qf.Close())
	require.NoError(t, err)
	demo := []compare.Input{}
	for _, s := range []string{"bm25", "dense", "dense+rerank", "hybrid", "hybrid+rerank"} {
		demo = append(demo, compare.Input{Name: s, Run: read(s + ".trec")})
	}
	// The queries in clusters of five consecutive ids.
	clusters := map[string]string{}
	for i := range q.NumQueries() {
		clusters[q.QueryID(i)] = fmt.Sprintf("c%02d", i/5)
	}
	// low: 20 queries on which every run mostly misses (every nDCG@10 interval
	// below compare.LowNDCG, intervals wide); dense and its copy, tied, are the
	// only runs that find anything: the widest interval and the highest upper
	// bound are both theirs.
	var lb strings.Builder
	for i := range 20 {
		fmt.Fprintf(&lb, "q%02d 0 g 3\nq%02d 0 s 2\n", i, i)
	}
	lq, err := trecfile.ParseQrels(context.Background(), strings.NewReader(lb.String()), "low.trec")
	require.NoError(t, err)
	var low []compare.Input
	for si, name := range []string{"bm25", "dense", "hybrid"} {
		rng := rand.New(rand.NewPCG(uint64(si)+1, 7))
		hit := map[string]float64{"dense": 0.4}[name]
		var qs []trecfile.RunQuery
		for i := range 20 {
			docs := []string{"j1", "j2", "j3", "j4", "j5", "j6", "j7", "j8", "j9", "j10"}
			if rng.Float64() < hit {
				docs[9] = "s"
			}
			qs = append(qs, trecfile.RunQuery{ID: fmt.Sprintf("q%02d", i), Docs: docs})
		}
		low = append(low, compare.Input{Name: name, Run: &trecfile.Run{File: name, Format: "trec", K: 10, Queries: qs}})
	}
	low = append(low, compare.Input{Name: "dense copy", Run: low[1].Run})
	base := compare.NewOptions()
	base.Resamples = 200
	for _, tc := range []struct {
		name     string
		qrels    *trecfile.Qrels // nil: the demo's
		runs     []compare.Input
		baseline string
		opt      func(*compare.Options)
	}{
		{name: "demo", runs: demo, baseline: "bm25"},
		{name: "demo baseline hybrid", runs: demo[1:], baseline: "hybrid"},
		{name: "tied copy", runs: append(slices.Clone(demo[:3]), compare.Input{Name: "dense copy", Run: demo[1].Run}), baseline: "bm25"},
		{name: "clusters", runs: demo[:4], baseline: "dense", opt: func(o *compare.Options) { o.Clusters = clusters }},
		{name: "low and tied", qrels: lq, runs: low, baseline: "bm25"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opt := base
			opt.Baseline = tc.baseline
			if tc.opt != nil {
				tc.opt(&opt)
			}
			qr := q
			if tc.qrels != nil {
				qr = tc.qrels
			}
			// Every order of up to three runs; of more, a spread of a dozen
			// of them (each run first in some, the baseline anywhere) and the
			// last, to keep the test short.
			orders := permutations(tc.runs)
			if stride := len(orders) / 12; stride > 1 {
				var some [][]compare.Input
				for i := 0; i < len(orders); i += stride {
					some = append(some, orders[i])
				}
				orders = append(some, orders[len(orders)-1])
			}
			var want orderView
			for i, runs := range orders {
				res, err := compare.Compare(qr, runs, opt)
				require.NoError(t, err)
				got := viewOf(res)
				if i == 0 {
					want = got
					continue
				}
				names := make([]string, len(runs))
				for j, r := range runs {
					names[j] = r.Name
				}
				require.Equal(t, want, got, "runs in the order %q", names)
			}
		})
	}
}
