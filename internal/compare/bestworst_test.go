package compare_test

import (
	"cmp"
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

// Every measure's best and worst queries (issue 32 item 4: choosing a
// measure reorders the best and worst by it) are the Handful first of the
// evaluated queries sorted by the measure's direction, ties by query id, the
// queries it does not count left out; the primary's are Best and Worst.
func TestBestWorstByMeasure(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "compare")
	open := func(name string) *os.File {
		f, err := os.Open(filepath.Join(dir, name))
		require.NoError(t, err)
		t.Cleanup(func() { f.Close() })
		return f
	}
	in := compare.In{Qrels: compare.Reader{Name: "qrels.trec", R: open("qrels.trec")}}
	for _, n := range []string{"bm25", "dense", "hybrid+rerank"} {
		in.Runs = append(in.Runs, compare.RunReader{Strategy: n, Reader: compare.Reader{Name: n + ".trec", R: open(n + ".trec")}})
	}
	o := opts()
	o.K, o.Primary = 5, "mrr_at_k" // a primary other than DCG, and ties (MRR, hit)
	res, err := compare.Run(context.Background(), in, o)
	require.NoError(t, err)
	const M = metrics.NumGraded
	distinct := 0
	for _, s := range res.Strategies {
		for m, key := range metrics.GradedKeys {
			higher := metrics.QueryMeasures[m].HigherIsBetter
			var rows []int
			for i := range res.QueryIDs {
				if !math.IsNaN(s.Values[i*M+m]) {
					rows = append(rows, i)
				}
			}
			slices.SortStableFunc(rows, func(a, b int) int {
				c := cmp.Compare(s.Values[a*M+m], s.Values[b*M+m])
				if higher {
					c = -c
				}
				return c
			})
			ids := func(rows []int) []string {
				out := []string{}
				for _, i := range rows[:min(compare.Handful, len(rows))] {
					out = append(out, res.QueryIDs[i])
				}
				return out
			}
			got := s.ByMeasure[m]
			assert.Equal(t, ids(rows), got.Best, "%s best by %s", s.Name, key)
			slices.Reverse(rows)
			// The worst, lowest first, ties by query id: the reversed
			// order's ties are by descending id, so sort again.
			slices.SortStableFunc(rows, func(a, b int) int {
				c := cmp.Compare(s.Values[a*M+m], s.Values[b*M+m])
				if !higher {
					c = -c
				}
				if c == 0 {
					c = cmp.Compare(a, b)
				}
				return c
			})
			assert.Equal(t, ids(rows), got.Worst, "%s worst by %s", s.Name, key)
			if !slices.Equal(got.Best, s.ByMeasure[res.PrimaryIndex()].Best) {
				distinct++
			}
		}
		assert.Equal(t, s.Best, s.ByMeasure[res.PrimaryIndex()].Best, s.Name)
		assert.Equal(t, s.Worst, s.ByMeasure[res.PrimaryIndex()].Worst, s.Name)
	}
	assert.Positive(t, distinct, "the measures' best queries differ from the primary's")
}
