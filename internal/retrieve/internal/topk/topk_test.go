package topk

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHeapMatchesSort: the kept items are the k first by rounded score, then
// tie rank, whatever order they are pushed in, with many exact ties and many
// scores that differ only beyond the 6th digit.
func TestHeapMatchesSort(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct {
		name  string
		score func() float64
	}{
		{"exact ties", func() float64 { return float64(r.IntN(5)) }},
		{"ties beyond the 6th digit", func() float64 { return 0.5 + float64(r.IntN(4))*1e-6 + float64(r.IntN(3))*1e-9 }},
		{"around a power of ten", func() float64 { return 1 + float64(r.IntN(7)-3)*4e-7 }},
		{"negative", func() float64 { return -0.25 - float64(r.IntN(4))*1e-8 }},
		{"spread out", func() float64 { return r.NormFloat64() }},
		{"infinities and NaN", func() float64 {
			return []float64{math.Inf(1), math.Inf(-1), math.NaN(), 0, 1}[r.IntN(5)]
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var h Heap
			for range 300 {
				k := 1 + r.IntN(8)
				n := r.IntN(60)
				scores := make([]float64, n)
				for i := range scores {
					scores[i] = tc.score()
				}
				ranks := make([]int32, n)
				for i, p := range r.Perm(n) {
					ranks[i] = int32(p)
				}
				// The reference: every item in the output's order.
				want := make([]int32, n)
				for i := range want {
					want[i] = int32(i)
				}
				key := func(i int32) float64 {
					if s := Round(scores[i]); s == s {
						return s
					}
					return math.Inf(-1) // NaN last
				}
				slices.SortFunc(want, func(a, b int32) int {
					ka, kb := key(a), key(b)
					na, nb := scores[a] != scores[a], scores[b] != scores[b]
					switch {
					case na != nb && na:
						return 1
					case na != nb:
						return -1
					case ka > kb:
						return -1
					case ka < kb:
						return 1
					}
					return int(ranks[a]) - int(ranks[b])
				})
				want = want[:min(k, n)]
				h.Reset(k, ranks)
				for _, i := range r.Perm(n) {
					h.Push(scores[i], int32(i))
				}
				items := h.Items(nil)
				got := make([]int32, len(items))
				for j, it := range items {
					got[j] = it.Index
					if scores[it.Index] == scores[it.Index] {
						require.Equal(t, scores[it.Index], it.Score)
					}
				}
				slices.Sort(got)
				slices.Sort(want)
				require.Equal(t, want, got, "k %d scores %v ranks %v", k, scores, ranks)
			}
		})
	}
}

// TestHeapOrderAndReuse: items come best first by score, then tie rank; a
// Heap is reused after Items; k = 0 keeps nothing; nil ranks are the indices.
func TestHeapOrderAndReuse(t *testing.T) {
	var h Heap
	h.Reset(3, []int32{2, 1, 0, 3})
	for i, s := range []float64{1, 1, 1, 2} {
		h.Push(s, int32(i))
	}
	assert.Equal(t, []Item{{3, 2}, {2, 1}, {1, 1}}, h.Items(nil))
	for i, s := range []float64{5, 4} {
		h.Push(s, int32(i))
	}
	assert.Equal(t, []Item{{0, 5}, {1, 4}}, h.Items(nil))
	h.Reset(2, nil)
	for i, s := range []float64{1, 1, 1} {
		h.Push(s, int32(2-i))
	}
	assert.Equal(t, []Item{{0, 1}, {1, 1}}, h.Items(nil))
	h.Reset(0, nil)
	h.Push(1, 0)
	assert.Empty(t, h.Items(nil))
}

func TestRound(t *testing.T) {
	for _, tc := range []struct{ in, want float64 }{
		{0.123456789, 0.123457},
		{1234567, 1234570},
		{-2.5e-7, -2.5e-7},
		{0, 0},
		{math.Inf(1), math.Inf(1)},
	} {
		assert.Equal(t, tc.want, Round(tc.in))
	}
	assert.True(t, math.IsNaN(Round(math.NaN())))
}

func TestRanks(t *testing.T) {
	assert.Equal(t, []int32{2, 0, 3, 1}, Ranks([]string{"b", "a", "b", "a#2"}))
	assert.Empty(t, Ranks(nil))
}
