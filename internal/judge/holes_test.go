package judge

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/input/trecfile"
)

func TestHolesSplitAndWrite(t *testing.T) {
	pool := []Pair{{QueryID: "a", DocID: "1"}, {QueryID: "a", DocID: "2"}, {QueryID: "b", DocID: "1"}, {QueryID: "b", DocID: "3"}, {QueryID: "c", DocID: "9"}}
	for _, tc := range []struct {
		name, known string
		judged      []string // the pairs left to judge, "q/d"
		qrels       string   // the judge grades every pair 2
		h           HoleStats
	}{
		{"none", "", []string{"a/1", "a/2", "b/1", "b/3", "c/9"}, "a 0 1 2\na 0 2 2\nb 0 1 2\nb 0 3 2\nc 0 9 2\n", HoleStats{Pool: 5, New: 5}},
		{"first, middle and last; other queries and documents ignored", "a 0 1 0\nb 0 3 -1\nc 0 9 7\nz 0 1 3\nb 0 8 1\n",
			[]string{"a/2", "b/1"}, "a 0 1 0\na 0 2 2\nb 0 1 2\nb 0 3 -1\nc 0 9 7\n", HoleStats{Pool: 5, Known: 3, New: 2}},
		{"every pair known", "a 0 1 1\na 0 2 1\nb 0 1 1\nb 0 3 1\nc 0 9 1\n", nil, "a 0 1 1\na 0 2 1\nb 0 1 1\nb 0 3 1\nc 0 9 1\n", HoleStats{Pool: 5, Known: 5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var known *trecfile.Qrels
			if tc.known != "" {
				var err error
				known, err = trecfile.ParseQrels(context.Background(), strings.NewReader(tc.known), "known.qrels")
				require.NoError(t, err)
			}
			pairs, labels := splitKnown(pool, known)
			var got []string
			for _, p := range pairs {
				got = append(got, p.QueryID+"/"+p.DocID)
			}
			assert.Equal(t, tc.judged, got)
			res := &Result{Pairs: pairs, Grades: make([][]Judgment, len(pairs)), Repeat: 1, Known: labels}
			for i := range res.Grades {
				res.Grades[i] = []Judgment{{Grade: 2, Valid: true}}
			}
			var b strings.Builder
			require.NoError(t, WriteTREC(&b, res))
			assert.Equal(t, tc.qrels, b.String())
			assert.Equal(t, tc.h, res.Holes())
		})
	}
	t.Run("cached pairs are not new; a pair with one repeat asked is", func(t *testing.T) {
		res := &Result{Pairs: pool[:3], Repeat: 2, Grades: [][]Judgment{
			{{Valid: true, Cached: true}, {Valid: true, Cached: true}},
			{{Valid: true, Cached: true}, {Valid: true}},
			{{Cause: CauseBudget}, {Cause: CauseBudget}},
		}}
		assert.Equal(t, HoleStats{Pool: 3, Cached: 1, New: 2}, res.Holes())
	})
}
