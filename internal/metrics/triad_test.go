package metrics

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/input/casefile"
)

func TestAppendDedupGold(t *testing.T) {
	assert.Equal(t, []string{"a", "b"}, AppendDedupGold(nil, []string{"a", "b", "a", "", "b"}))
	assert.Equal(t, []string{"x", "x"}, AppendDedupGold([]string{"x"}, []string{"x"}), "dedup applies to the appended part")
	assert.Empty(t, AppendDedupGold(nil, nil))
}

// triad is hit, recall, nDCG of one case, as scored by check.
type triad struct{ Hit, Recall, NDCG float64 }

func scoreTriad(ranked, gold []string, k int) (triad, []string) {
	in := CaseInput{TopK: casefile.TopKIdentities(nil, ranked, k), Gold: AppendDedupGold(nil, gold), K: k}
	var s [NumCase]float64
	ScoreCase(&s, &in)
	return triad{s[CaseIndex(KeyHit)], s[CaseIndex(KeyRecall)], s[CaseIndex(KeyNDCG)]}, in.TopK
}

func TestScoreCase(t *testing.T) {
	inv := func(r int) float64 { return 1 / math.Log2(float64(r)+1) }
	tests := []struct {
		name   string
		ranked []string
		gold   []string
		k      int
		want   triad
	}{
		{"gold at rank 1", []string{"g", "x"}, []string{"g"}, 5, triad{1, 1, 1}},
		{"gold at rank 2", []string{"x", "g"}, []string{"g"}, 5, triad{1, 1, inv(2)}},
		{"miss", []string{"x", "y"}, []string{"g"}, 5, triad{0, 0, 0}},
		{"empty retrieved", nil, []string{"g"}, 5, triad{0, 0, 0}},
		{"k larger than list", []string{"x", "g"}, []string{"g"}, 100, triad{1, 1, inv(2)}},
		{"k=1 hit", []string{"g", "x"}, []string{"g"}, 1, triad{1, 1, 1}},
		{"k=1 gold at rank 2 is a miss", []string{"x", "g"}, []string{"g"}, 1, triad{0, 0, 0}},
		{"disjunctive gold, one found: recall 0.5", []string{"a", "x"}, []string{"a", "b"}, 5, triad{1, 0.5, 1 / (1 + inv(2))}},
		{"disjunctive gold, both found", []string{"b", "a"}, []string{"a", "b"}, 5, triad{1, 1, 1}},
		{"duplicated gold counts once", []string{"a"}, []string{"a", "a"}, 5, triad{1, 1, 1}},
		{"duplicates of one parent count once", []string{"a", "a", "a", "g"}, []string{"g"}, 2, triad{1, 1, inv(2)}},
		{"gold beyond k after dedup", []string{"a", "b", "b", "b", "c", "g"}, []string{"g"}, 3, triad{0, 0, 0}},
		{"gold within k only thanks to dedup", []string{"a", "a", "a", "b", "g"}, []string{"g"}, 3, triad{1, 1, inv(3)}},
		{
			"gold exceeds k: ideal is k, nDCG stays 1", []string{"a", "b"},
			[]string{"a", "b", "c", "d"}, 2, triad{1, 0.5, 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, topk := scoreTriad(tt.ranked, tt.gold, tt.k)
			assert.InDelta(t, tt.want.Hit, got.Hit, 1e-12, "hit")
			assert.InDelta(t, tt.want.Recall, got.Recall, 1e-12, "recall")
			assert.InDelta(t, tt.want.NDCG, got.NDCG, 1e-12, "ndcg")
			assert.LessOrEqual(t, got.NDCG, 1.0)
			assert.LessOrEqual(t, len(topk), tt.k)
		})
	}
}

func TestAppendRelevant(t *testing.T) {
	assert.Equal(t, []string{"g", "a", "b"}, AppendRelevant(nil, []string{"g"}, []string{"a", "g", "", "b", "a"}), "gold ∪ relevant_ids, distinct")
	assert.Empty(t, AppendRelevant(nil, []string{"g"}, nil), "no relevant_ids: none (recall falls back to gold)")
	assert.Empty(t, AppendRelevant(nil, []string{"g"}, []string{""}), "only empty ids: none")
}

// TestScoreCaseRelevantIDs: with relevant_ids, recall@k and nDCG@k count every
// relevant card (relevant_ids ∪ gold) while hit@k still asks for a gold card.
func TestScoreCaseRelevantIDs(t *testing.T) {
	inv := func(r int) float64 { return 1 / math.Log2(float64(r)+1) }
	tests := []struct {
		name                   string
		ranked, gold, relevant []string
		k                      int
		want, lowerBound       triad
	}{
		{"gold found, two more relevant missed: recall 1/3 instead of 1",
			[]string{"g", "x"}, []string{"g"}, []string{"g", "r1", "r2"}, 5,
			triad{1, 1.0 / 3, 1 / (1 + inv(2) + inv(3))}, triad{1, 1, 1}},
		{"gold not listed in relevant_ids still counts as relevant",
			[]string{"g", "r1"}, []string{"g"}, []string{"r1", "r2"}, 5,
			triad{1, 2.0 / 3, (1 + inv(2)) / (1 + inv(2) + inv(3))}, triad{1, 1, 1}},
		{"a relevant non-gold card in the top k is no hit",
			[]string{"r1", "x"}, []string{"g"}, []string{"r1"}, 5,
			triad{0, 0.5, 1 / (1 + inv(2))}, triad{0, 0, 0}},
		{"relevant beyond k: ideal is k",
			[]string{"g", "r1", "r2"}, []string{"g"}, []string{"r1", "r2", "r3"}, 2,
			triad{1, 0.5, 1}, triad{1, 1, 1}},
		{"duplicated and empty relevant ids count once / not at all",
			[]string{"x", "r1"}, []string{"g"}, []string{"r1", "r1", ""}, 5,
			triad{0, 0.5, inv(2) / (1 + inv(2))}, triad{0, 0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gold := AppendDedupGold(nil, tt.gold)
			in := CaseInput{TopK: casefile.TopKIdentities(nil, tt.ranked, tt.k), Gold: gold, Relevant: AppendRelevant(nil, gold, tt.relevant), K: tt.k}
			var s [NumCase]float64
			ScoreCase(&s, &in)
			got := triad{s[CaseIndex(KeyHit)], s[CaseIndex(KeyRecall)], s[CaseIndex(KeyNDCG)]}
			assert.InDelta(t, tt.want.Hit, got.Hit, 1e-12, "hit")
			assert.InDelta(t, tt.want.Recall, got.Recall, 1e-12, "recall")
			assert.InDelta(t, tt.want.NDCG, got.NDCG, 1e-12, "ndcg")
			lb, _ := scoreTriad(tt.ranked, tt.gold, tt.k)
			assert.InDelta(t, tt.lowerBound.Recall, lb.Recall, 1e-12, "recall without relevant_ids")
			assert.InDelta(t, tt.lowerBound.NDCG, lb.NDCG, 1e-12, "ndcg without relevant_ids")
			assert.Equal(t, lb.Hit, got.Hit, "hit ignores relevant_ids")
		})
	}
}

func TestNDCGNeverAboveOne(t *testing.T) {
	ids := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	for k := 1; k <= len(ids)+2; k++ {
		for ng := 1; ng <= len(ids); ng++ {
			topk := casefile.TopKIdentities(nil, ids, k)
			v := NDCGAtK(&CaseInput{TopK: topk, Gold: ids[:ng], K: k})
			require.LessOrEqual(t, v, 1.0, "k=%d gold=%d", k, ng)
			require.GreaterOrEqual(t, v, 0.0)
		}
	}
}

func TestRecallAndNDCGOfEmptyGold(t *testing.T) {
	in := &CaseInput{TopK: []string{"a"}, K: 5}
	assert.Equal(t, 0.0, RecallAtK(in))
	assert.Equal(t, 0.0, NDCGAtK(in))
	assert.Equal(t, 0.0, HitAtK(in))
}

func TestSummarize(t *testing.T) {
	s := Summarize(NewHistogram(), 100, DefaultSeed, 0, 1)
	assert.Equal(t, int64(0), s.N)
	assert.True(t, math.IsNaN(s.Mean))

	h := NewHistogram()
	for i := range 10 {
		h.Add(float64(i % 2))
	}
	s = Summarize(h, 1000, DefaultSeed, 0, 1)
	assert.Equal(t, int64(10), s.N)
	assert.Equal(t, MethodWilson, s.Method)
	assert.False(t, s.Unreliable, "the continuity-corrected Wilson interval covers at least 0.945 at every n")
	assert.InDelta(t, 0.5, s.Mean, 1e-12)
	assert.LessOrEqual(t, s.CI95[0], 0.5)
	assert.GreaterOrEqual(t, s.CI95[1], 0.5)
	assert.Equal(t, s, Summarize(h, 1000, DefaultSeed, 0, 1), "fixed seed: same CI")

	// The n = 5, all hits: never the point [1, 1]; its coverage holds.
	h = NewHistogram()
	for range 5 {
		h.Add(1)
	}
	s = Summarize(h, 1000, DefaultSeed, 0, 1)
	assert.Equal(t, MethodWilson, s.Method)
	assert.False(t, s.Unreliable)
	assert.Less(t, s.CI95[0], 0.6)
	// n = 1 of a fraction: widened over the range, not [v, v].
	h = NewHistogram()
	h.Add(0.5)
	s = Summarize(h, 1000, DefaultSeed, 0, 1)
	assert.Equal(t, MethodBoundedWilson, s.Method)
	assert.Less(t, s.CI95[0], 0.5)
	assert.Greater(t, s.CI95[1], 0.5)
	// Varied fractions: hall-t below 30 items, BCa from there.
	h = NewHistogram()
	for i := range 20 {
		h.Add(float64(i%5) / 4)
	}
	assert.Equal(t, MethodHallT, Summarize(h, 1000, DefaultSeed, 0, 1).Method)
	for i := range 10 {
		h.Add(float64(i%5) / 4)
	}
	assert.Equal(t, MethodBCa, Summarize(h, 1000, DefaultSeed, 0, 1).Method)
}

// Every registered measure is complete and its key unique across both tables.
func TestRegistry(t *testing.T) {
	seen := map[string]bool{}
	check := func(i Info, hasFn bool) {
		t.Helper()
		require.NotEmpty(t, i.Key)
		require.False(t, seen[i.Key], "duplicate key %s", i.Key)
		seen[i.Key] = true
		assert.NotEmpty(t, i.Label, i.Key)
		assert.NotEmpty(t, i.Definition, i.Key)
		assert.NotZero(t, i.Params&ParamK, "%s: every measure is at a cutoff", i.Key)
		assert.True(t, hasFn, i.Key)
		got, ok := Lookup(i.Key)
		assert.True(t, ok)
		assert.Equal(t, i, got)
	}
	for _, m := range CaseMeasures {
		check(m.Info, m.Of != nil)
	}
	for _, m := range QueryMeasures {
		check(m.Info, m.Of != nil)
	}
	assert.Equal(t, -1, CaseIndex("nope"))
	assert.Equal(t, -1, QueryIndex(KeyHit))
	_, ok := Lookup("nope")
	assert.False(t, ok)
	assert.Equal(t, "hit@5", CaseMeasures[CaseIndex(KeyHit)].LabelAt(5))
	assert.Equal(t, []string{KeyHit, KeyRecall, KeyNDCG}, CaseKeys, "report order")
	for i := 1; i < len(CaseKeysSorted); i++ {
		assert.Less(t, CaseKeys[CaseKeysSorted[i-1]], CaseKeys[CaseKeysSorted[i]])
	}
	for i := 1; i < len(GradedSorted); i++ {
		assert.Less(t, GradedKeys[GradedSorted[i-1]], GradedKeys[GradedSorted[i]])
	}
	assert.True(t, ScaleUnit.InRange(1))
	assert.False(t, ScaleBinary.InRange(1.5))
	assert.True(t, ScaleUnbounded.InRange(31))
	assert.False(t, ScaleUnbounded.InRange(-1))
}

// ScoreCase marks which of the top k are gold (and relevant) once for all its
// measures: the same scores, bit for bit, as each measure comparing the strings
// itself, over random cases of ids that share lengths and last bytes, with and
// without relevant ids, and past the 64 ids a mark holds.
func TestScoreCaseMarkedAsUnmarked(t *testing.T) {
	ids := []string{"", "a", "b", "ab", "bb", "card-1", "card-2", "card-12", "dard-1", "x"}
	rng := rand.New(rand.NewPCG(37, 4))
	pick := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = ids[rng.IntN(len(ids))]
		}
		return out
	}
	for range 20000 {
		n := rng.IntN(8)
		if rng.IntN(10) == 0 {
			n = 60 + rng.IntN(10)
		}
		in := CaseInput{TopK: pick(n), Gold: pick(rng.IntN(4)), K: 1 + rng.IntN(70)}
		if rng.IntN(2) == 0 {
			in.Relevant = pick(rng.IntN(4))
		}
		var got [NumCase]float64
		ScoreCase(&got, &in)
		require.False(t, in.marked)
		for i := range CaseMeasures {
			want := CaseMeasures[i].Of(&in)
			require.Equal(t, math.Float64bits(want), math.Float64bits(got[i]), "%s of %+v", CaseMeasures[i].Key, in)
		}
	}
}
