package metrics

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The seed's maximum-DCG table (2^rel − 1, every result of relevance 3) and its
// example table, whose 4.26 and 8.02 are the linear gain's (8.02 truncated
// from 8.028); docs/compare.md reproduces both, with these numbers.
func TestMaxDCGAndTheSeedsExamples(t *testing.T) {
	round2 := func(v float64) float64 { return math.Round(v*100) / 100 }
	for _, c := range []struct {
		k         int
		exp, line float64
	}{{1, 7.00, 3.00}, {3, 14.92, 6.39}, {5, 20.64, 8.85}, {10, 31.80, 13.63}, {20, 49.28, 21.12}} {
		assert.Equal(t, c.exp, round2(MaxDCG(c.k, 3, GainExp)), "exp k=%d", c.k)
		assert.Equal(t, c.line, round2(MaxDCG(c.k, 3, GainLinear)), "linear k=%d", c.k)
	}
	assert.Equal(t, 0.0, MaxDCG(0, 3, GainExp))
	assert.Equal(t, 0.0, MaxDCG(10, 0, GainExp))
	// The example rankings: DCG@5 of [3, 2, 0, 0, 0] and of [3, 3, 3, 2, 2].
	for _, c := range []struct {
		rels      []int
		line, exp float64 // to four decimals
	}{
		{[]int{3, 2, 0, 0, 0}, 4.2619, 8.8928},
		{[]int{3, 3, 3, 2, 2}, 8.0278, 17.3691},
	} {
		r4 := func(v float64) float64 { return math.Round(v*1e4) / 1e4 }
		assert.Equal(t, c.line, r4(GradedDCG(c.rels, 5, GainLinear)), "%v", c.rels)
		assert.Equal(t, c.exp, r4(GradedDCG(c.rels, 5, GainExp)), "%v", c.rels)
	}
	// 8.02 is 8.0278 truncated, not rounded (8.03).
	assert.Equal(t, 8.02, math.Trunc(GradedDCG([]int{3, 3, 3, 2, 2}, 5, GainLinear)*100)/100)
	assert.Equal(t, 4.26, math.Trunc(GradedDCG([]int{3, 2, 0, 0, 0}, 5, GainLinear)*100)/100)
}

func TestRelevanceBuckets(t *testing.T) {
	// 2 at 0, 1 at 1, 3 at 2, 3 at 3, 1 at 4 (above the seed's scale: highly relevant).
	b := RelevanceBuckets([]int{2, 1, 3, 3, 1})
	assert.Equal(t, 10, b.N)
	assert.InDelta(t, 0.4, b.HighlyRelevant, 1e-15)
	assert.InDelta(t, 0.7, b.RelevantPlus, 1e-15)
	assert.InDelta(t, 0.3, b.NotRelevant, 1e-15)
	e := RelevanceBuckets([]int{0, 0})
	assert.Equal(t, 0, e.N)
	assert.True(t, math.IsNaN(e.HighlyRelevant) && math.IsNaN(e.RelevantPlus) && math.IsNaN(e.NotRelevant))
}

func TestMeanRelevance(t *testing.T) {
	nan := math.NaN()
	for _, c := range []struct {
		name      string
		rels      []int
		unjudged  []bool
		k         int
		mean, atK float64
	}{
		{"the issue's example", []int{3, 3}, nil, 10, 3, 0.6},
		{"negative judged counts 0", []int{3, -2, 1}, nil, 3, 4.0 / 3, 4.0 / 3},
		{"cut at k", []int{2, 2, 2, 0}, nil, 2, 2, 2},
		{"no result: undefined", nil, nil, 10, nan, 0},
		// The seed averages the judged pairs: an unjudged result is left out,
		// not counted 0 (the former definition gave 6/4 = 1.5 here).
		{"unjudged left out", []int{3, 0, 3, 0}, []bool{false, true, false, true}, 10, 3, 0.6},
		{"judged 0 still counts", []int{3, 0, 3, 0}, []bool{false, false, false, true}, 10, 2, 0.6},
		{"unjudged below k ignored", []int{2, 0, 3}, []bool{false, false, true}, 2, 1, 1},
		{"nothing judged: undefined", []int{0, 0}, []bool{true, true}, 10, nan, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := &QueryInput{Rels: c.rels, Unjudged: c.unjudged, K: c.k}
			if math.IsNaN(c.mean) {
				assert.True(t, math.IsNaN(MeanRelevance(in)), "%v", MeanRelevance(in))
			} else {
				assert.InDelta(t, c.mean, MeanRelevance(in), 1e-15)
			}
			assert.InDelta(t, c.atK, MeanRelevanceAtK(in), 1e-15)
		})
	}
}

func TestSampleSizes(t *testing.T) {
	// The inverse of MDDMean: at the returned n the detectable difference is at most delta.
	for _, c := range []struct{ sd, delta float64 }{{1, 0.5}, {2.3, 0.4}, {0.7, 1.035}} {
		n := QueriesToDetect(c.sd, c.delta, 0.05, 0.8)
		assert.LessOrEqual(t, MDDMean(c.sd, int64(n), 0.05, 0.8), c.delta)
		if n > 2 {
			assert.Greater(t, MDDMean(c.sd, int64(n-1), 0.05, 0.8), c.delta)
		}
	}
	assert.Equal(t, 32, QueriesToDetect(1, 0.5, 0.05, 0.8)) // (2.8016/0.5)² = 31.4
	assert.Equal(t, 0, QueriesToDetect(1, 0, 0.05, 0.8))
	assert.Equal(t, 0, QueriesToDetect(math.NaN(), 1, 0.05, 0.8))
	assert.Equal(t, 48, QueriesForHalfWidth(12, 0.2, 0.1))
	assert.Equal(t, 12, QueriesForHalfWidth(12, 0.05, 0.1))
	assert.InDelta(t, 1.0, SampleSDOf([]float64{1, 2, 3}), 1e-15)
	assert.True(t, math.IsNaN(SampleSDOf([]float64{1})))
}

// docs/compare.md's two tables of the scale of DCG state these numbers: each
// is recomputed here, so the page and the code cannot drift apart.
func TestScaleTablesInTheDocs(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "docs", "compare.md"))
	require.NoError(t, err)
	rows := func(head string) [][]string {
		text := string(raw)
		i := strings.Index(text, head)
		require.GreaterOrEqual(t, i, 0, head)
		var out [][]string
		for _, line := range strings.Split(text[i:], "\n")[2:] {
			if !strings.HasPrefix(line, "|") {
				break
			}
			var cells []string
			for _, c := range strings.Split(strings.Trim(line, "|"), "|") {
				cells = append(cells, strings.TrimSpace(c))
			}
			out = append(out, cells)
		}
		return out
	}
	last := func(cell string) float64 { // the last number of a cell ("3 + 2/log2(3) = 4.262")
		f := strings.Fields(cell)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		require.NoError(t, err, cell)
		return v
	}
	maxRows := rows("| k | maximum DCG@k, exp gain")
	require.Len(t, maxRows, 5)
	for _, r := range maxRows {
		k, err := strconv.Atoi(r[0])
		require.NoError(t, err)
		assert.Equal(t, math.Round(MaxDCG(k, 3, GainExp)*100)/100, last(r[1]), "k=%d exp", k)
		assert.Equal(t, math.Round(MaxDCG(k, 3, GainLinear)*100)/100, last(r[2]), "k=%d linear", k)
	}
	exRows := rows("| ranking: relevance at ranks 1–5")
	require.Len(t, exRows, 2)
	for _, r := range exRows {
		var rels []int
		for _, f := range strings.Split(r[0], ",") {
			v, err := strconv.Atoi(strings.TrimSpace(f))
			require.NoError(t, err)
			rels = append(rels, v)
		}
		assert.Equal(t, math.Round(GradedDCG(rels, 5, GainLinear)*1000)/1000, last(r[1]), "%v linear", rels)
		assert.Equal(t, math.Round(GradedDCG(rels, 5, GainExp)*1000)/1000, last(r[2]), "%v exp", rels)
		seed := strings.Fields(r[3])[0] // "4.26:" — the seed's number, the linear gain's, truncated
		assert.Equal(t, strings.TrimSuffix(seed, ":"), strconv.FormatFloat(math.Trunc(GradedDCG(rels, 5, GainLinear)*100)/100, 'f', 2, 64), "%v", rels)
	}
}
