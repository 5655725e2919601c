package metrics

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTopKIdentities(t *testing.T) {
	tests := []struct {
		name   string
		ranked []string
		k      int
		want   []string
	}{
		{"empty retrieved", nil, 5, []string{}},
		{"k larger than list", []string{"a", "b"}, 5, []string{"a", "b"}},
		{"k=1", []string{"a", "b"}, 1, []string{"a"}},
		{"k=0 gives none", []string{"a"}, 0, []string{}},
		{"duplicates of one parent count once, at first rank", []string{"a", "a", "a", "b", "c"}, 2, []string{"a", "b"}},
		{"dedup happens before the cut", []string{"a", "a", "a", "a", "a", "g"}, 2, []string{"a", "g"}},
		{"empty identity skipped", []string{"", "a"}, 1, []string{"a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := TopKIdentities([]string{}, tt.ranked, tt.k)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestTopKIdentitiesAppendsAfterDst(t *testing.T) {
	got := TopKIdentities([]string{"x"}, []string{"x", "y", "z"}, 2)
	assert.Equal(t, []string{"x", "x", "y"}, got, "dedup and cut apply only to the appended part")
}

func TestDedupGold(t *testing.T) {
	assert.Equal(t, []string{"a", "b"}, DedupGold([]string{"a", "b", "a", "", "b"}))
	assert.Empty(t, DedupGold(nil))
}

func TestScoreTriad(t *testing.T) {
	inv := func(r int) float64 { return 1 / math.Log2(float64(r)+1) }
	tests := []struct {
		name   string
		ranked []string
		gold   []string
		k      int
		want   Triad
	}{
		{"gold at rank 1", []string{"g", "x"}, []string{"g"}, 5, Triad{1, 1, 1}},
		{"gold at rank 2", []string{"x", "g"}, []string{"g"}, 5, Triad{1, 1, inv(2)}},
		{"miss", []string{"x", "y"}, []string{"g"}, 5, Triad{0, 0, 0}},
		{"empty retrieved", nil, []string{"g"}, 5, Triad{0, 0, 0}},
		{"k larger than list", []string{"x", "g"}, []string{"g"}, 100, Triad{1, 1, inv(2)}},
		{"k=1 hit", []string{"g", "x"}, []string{"g"}, 1, Triad{1, 1, 1}},
		{"k=1 gold at rank 2 is a miss", []string{"x", "g"}, []string{"g"}, 1, Triad{0, 0, 0}},
		{"disjunctive gold, one found: recall 0.5", []string{"a", "x"}, []string{"a", "b"}, 5, Triad{1, 0.5, 1 / (1 + inv(2))}},
		{"disjunctive gold, both found", []string{"b", "a"}, []string{"a", "b"}, 5, Triad{1, 1, 1}},
		{"duplicated gold counts once", []string{"a"}, []string{"a", "a"}, 5, Triad{1, 1, 1}},
		{"duplicates of one parent count once", []string{"a", "a", "a", "g"}, []string{"g"}, 2, Triad{1, 1, inv(2)}},
		{"gold beyond k after dedup", []string{"a", "b", "b", "b", "c", "g"}, []string{"g"}, 3, Triad{0, 0, 0}},
		{"gold within k only thanks to dedup", []string{"a", "a", "a", "b", "g"}, []string{"g"}, 3, Triad{1, 1, inv(3)}},
		{
			"gold exceeds k: ideal is k, nDCG stays 1", []string{"a", "b"},
			[]string{"a", "b", "c", "d"}, 2, Triad{1, 0.5, 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, topk := ScoreTriad(nil, tt.ranked, tt.gold, tt.k)
			assert.InDelta(t, tt.want.Hit, got.Hit, 1e-12, "hit")
			assert.InDelta(t, tt.want.Recall, got.Recall, 1e-12, "recall")
			assert.InDelta(t, tt.want.NDCG, got.NDCG, 1e-12, "ndcg")
			assert.LessOrEqual(t, got.NDCG, 1.0)
			assert.LessOrEqual(t, len(topk), tt.k)
		})
	}
}

func TestNDCGNeverAboveOne(t *testing.T) {
	ids := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	for k := 1; k <= len(ids)+2; k++ {
		for ng := 1; ng <= len(ids); ng++ {
			topk := TopKIdentities(nil, ids, k)
			v := NDCGAtK(topk, ids[:ng], k)
			require.LessOrEqual(t, v, 1.0, "k=%d gold=%d", k, ng)
			require.GreaterOrEqual(t, v, 0.0)
		}
	}
}

func TestRecallAndNDCGOfEmptyGold(t *testing.T) {
	assert.Equal(t, 0.0, RecallAtK([]string{"a"}, nil))
	assert.Equal(t, 0.0, NDCGAtK([]string{"a"}, nil, 5))
	assert.Equal(t, 0.0, HitAtK([]string{"a"}, nil))
}

func TestTriadGet(t *testing.T) {
	tr := Triad{Hit: 1, Recall: 0.5, NDCG: 0.25}
	assert.Equal(t, []float64{1, 0.5, 0.25}, []float64{tr.Get(0), tr.Get(1), tr.Get(2)})
}

func TestSummarize(t *testing.T) {
	s := Summarize(NewHistogram(), 100, DefaultSeed)
	assert.Equal(t, int64(0), s.N)
	assert.True(t, math.IsNaN(s.Mean))

	h := NewHistogram()
	for i := range 10 {
		h.Add(float64(i % 2))
	}
	s = Summarize(h, 1000, DefaultSeed)
	assert.Equal(t, int64(10), s.N)
	assert.InDelta(t, 0.5, s.Mean, 1e-12)
	assert.LessOrEqual(t, s.CI95[0], 0.5)
	assert.GreaterOrEqual(t, s.CI95[1], 0.5)
	assert.Equal(t, s, Summarize(h, 1000, DefaultSeed), "fixed seed: same CI")
}
