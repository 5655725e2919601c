package memory

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store"
)

func randVec(r *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

func records(r *rand.Rand, n, dim int, locales []string) []store.Record {
	recs := make([]store.Record, n)
	for i := range recs {
		recs[i] = store.Record{ID: fmt.Sprintf("c%d", i), Locale: locales[i%len(locales)], Vector: randVec(r, dim)}
	}
	return recs
}

// brute is the reference: cosine in float64 for every record, sorted.
func brute(recs []store.Record, q store.Query, k int) []store.Hit {
	norm := func(v []float32) float64 {
		s := 0.0
		for _, x := range v {
			s += float64(x) * float64(x)
		}
		return math.Sqrt(s)
	}
	var hits []store.Hit
	for _, r := range recs {
		if q.Locale != "" && r.Locale != q.Locale {
			continue
		}
		d := 0.0
		for i := range r.Vector {
			d += float64(r.Vector[i]) * float64(q.Vector[i])
		}
		hits = append(hits, store.Hit{ID: r.ID, Score: d / norm(r.Vector) / norm(q.Vector)})
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].Score > hits[j].Score })
	if len(hits) > k {
		hits = hits[:k]
	}
	return hits
}

func TestSearchMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	locales := []string{"en", "es-419", "pt-BR"}
	for _, tc := range []struct{ n, dim, nq, k, workers int }{
		{1, 3, 1, 5, 1}, {50, 8, 7, 10, 2}, {1000, 64, 70, 10, 2}, {333, 17, 33, 1, 3},
	} {
		t.Run(fmt.Sprintf("n=%d dim=%d q=%d k=%d", tc.n, tc.dim, tc.nq, tc.k), func(t *testing.T) {
			recs := records(r, tc.n, tc.dim, locales)
			s := New(tc.workers)
			require.NoError(t, s.Add(context.Background(), recs))
			var qs []store.Query
			for i := 0; i < tc.nq; i++ {
				loc := ""
				if i%2 == 1 {
					loc = locales[i%3]
				}
				qs = append(qs, store.Query{Vector: randVec(r, tc.dim), Locale: loc})
			}
			got, err := s.Search(context.Background(), qs, tc.k)
			require.NoError(t, err)
			require.Len(t, got, len(qs))
			for i, q := range qs {
				want := brute(recs, q, tc.k)
				require.Len(t, got[i], len(want), "query %d", i)
				for j := range want {
					assert.Equal(t, want[j].ID, got[i][j].ID, "query %d rank %d", i, j)
					assert.InDelta(t, want[j].Score, got[i][j].Score, 1e-5)
				}
			}
		})
	}
}

func TestSearchEdgeCases(t *testing.T) {
	s := New(2)
	ctx := context.Background()
	require.NoError(t, s.Add(ctx, []store.Record{
		{ID: "a", Locale: "en", Vector: []float32{1, 0}},
		{ID: "b", Locale: "en", Vector: []float32{2, 0}}, // same direction as a: a tie, lower index first
		{ID: "c", Locale: "pt-BR", Vector: []float32{0, 1}},
	}))
	got, err := s.Search(ctx, []store.Query{
		{Vector: []float32{3, 0}},
		{Vector: []float32{0, 0}},
		{Vector: []float32{1, 1}, Locale: "pt-BR"},
		{Vector: []float32{1, 1}, Locale: "fr"},
	}, 10)
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b", "c"}, hitIDs(got[0]))
	assert.InDelta(t, 1.0, got[0][0].Score, 1e-6)
	assert.InDelta(t, 0.0, got[0][2].Score, 1e-6)
	assert.Empty(t, got[1], "zero query matches nothing")
	assert.Equal(t, []string{"c"}, hitIDs(got[2]))
	assert.Empty(t, got[3], "unknown locale")

	require.ErrorContains(t, s.Add(ctx, []store.Record{{ID: "d", Vector: []float32{1}}}), "dimension 1")
	_, err = s.Search(ctx, []store.Query{{Vector: []float32{1, 2, 3}}}, 1)
	require.ErrorContains(t, err, "dimension 3")

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = s.Search(cctx, []store.Query{{Vector: []float32{1, 0}}}, 1)
	assert.ErrorIs(t, err, context.Canceled)
}

// TestTiesByID: records whose scores tie (equal vectors, or scores that differ
// only beyond the 6th digit) are kept by id, whatever order they were added in.
func TestTiesByID(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		recs []store.Record
		q    []float32
		k    int
		want []string
	}{
		{"equal vectors", []store.Record{
			{ID: "e", Vector: []float32{1, 1}}, {ID: "a", Vector: []float32{1, 1}}, {ID: "d", Vector: []float32{1, 1}},
			{ID: "b", Vector: []float32{1, 1}}, {ID: "f", Vector: []float32{1, 1}}, {ID: "c", Vector: []float32{1, 1}},
		}, []float32{1, 1}, 2, []string{"a", "b"}},
		{"ties beyond the 6th digit", []store.Record{
			// Cosines 1 and 0.99999952 (both 1 to 6 digits): a tie, kept by id.
			{ID: "b", Vector: []float32{1, 0}}, {ID: "a", Vector: []float32{1, 1e-3}}, {ID: "c", Vector: []float32{0, 1}},
		}, []float32{1, 0}, 1, []string{"a"}},
		{"a better score first", []store.Record{
			{ID: "a", Vector: []float32{1, 0}}, {ID: "c", Vector: []float32{1, 1}}, {ID: "b", Vector: []float32{1, 1}},
		}, []float32{1, 1}, 2, []string{"b", "c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(5, 6))
			for range 20 {
				recs := append([]store.Record(nil), tc.recs...)
				r.Shuffle(len(recs), func(i, j int) { recs[i], recs[j] = recs[j], recs[i] })
				s := New(1)
				require.NoError(t, s.Add(ctx, recs))
				got, err := s.Search(ctx, []store.Query{{Vector: tc.q}}, tc.k)
				require.NoError(t, err)
				ids := hitIDs(got[0])
				sort.Strings(ids)
				assert.Equal(t, tc.want, ids)
			}
		})
	}
}

func hitIDs(hs []store.Hit) []string {
	var out []string
	for _, h := range hs {
		out = append(out, h.ID)
	}
	return out
}

// TestIngestPaths: records added one Add at a time (the buffer grows, through
// the mapped sizes), after a Reserve (no growth), or written by AddFilled give
// bit-identical searches.
func TestIngestPaths(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(3, 4))
	const dim = 96
	recs := records(r, 3000, dim, []string{"en", "fr"}) // 288,000 floats: past minMapped
	qs := []store.Query{{Vector: randVec(r, dim)}, {Vector: randVec(r, dim), Locale: "fr"}}

	grown := New(2)
	for i := range recs {
		require.NoError(t, grown.Add(ctx, recs[i:i+1]))
	}
	want, err := grown.Search(ctx, qs, 7)
	require.NoError(t, err)
	assert.Equal(t, brute(recs, qs[0], 7)[0].ID, want[0][0].ID)

	reserved := New(2)
	require.NoError(t, reserved.Reserve(len(recs), dim))
	c := cap(reserved.vecs)
	require.Equal(t, len(recs)*dim, c)
	require.NoError(t, reserved.Add(ctx, recs))
	assert.Equal(t, c, cap(reserved.vecs), "a reserved store does not grow")
	got, err := reserved.Search(ctx, qs, 7)
	require.NoError(t, err)
	assert.Equal(t, want, got)

	filled := New(2)
	require.EqualError(t, filled.AddFilled(ctx, recs, nil), "the store's dimension is not known (Reserve first)")
	require.NoError(t, filled.Reserve(len(recs), dim))
	for start := 0; start < len(recs); start += 500 {
		part := recs[start : start+500]
		require.NoError(t, filled.AddFilled(ctx, part, func(dst []float32) error {
			require.Len(t, dst, len(part)*dim)
			for i, rec := range part {
				copy(dst[i*dim:], rec.Vector)
			}
			return nil
		}))
		// A failing fill adds nothing.
		require.EqualError(t, filled.AddFilled(ctx, part[:1], func(dst []float32) error {
			dst[0] = 42
			return fmt.Errorf("no")
		}), "no")
		require.Equal(t, start+500, filled.Len())
	}
	got, err = filled.Search(ctx, qs, 7)
	require.NoError(t, err)
	assert.Equal(t, want, got)

	require.EqualError(t, filled.Reserve(1, dim+1), fmt.Sprintf("cannot reserve records of dimension %d, the store has %d", dim+1, dim))
	require.NoError(t, filled.Close(ctx))
	assert.Equal(t, 0, filled.Len())
	got, err = filled.Search(ctx, qs, 7)
	require.NoError(t, err)
	assert.Equal(t, [][]store.Hit{nil, nil}, got)

	// Past minMapped the vectors are mapped outside the Go heap (where the
	// system maps memory), and Close unmaps them at once.
	if runtime.GOOS == "linux" {
		require.NotNil(t, grown.mem.B, "the vectors are mapped")
	}
	require.NoError(t, grown.Close(ctx))
	assert.Nil(t, grown.mem.B, "Close released the mapping")
}

// Export hands back every record with its unit-normalised vector and locale,
// in the order added; Similarity scores one record as Search does, and only
// within the query's locale.
func TestExportAndSimilarity(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	recs := records(r, exportPage+10, 12, []string{"en", "", "pt-BR"})
	s := New(2)
	ctx := context.Background()
	require.NoError(t, s.Add(ctx, recs))
	var got []store.Record
	pages := 0
	cost, err := s.Export(ctx, 12, func(page []store.Record) error {
		pages++
		for _, x := range page {
			x.Vector = append([]float32(nil), x.Vector...)
			got = append(got, x)
		}
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, store.ExportCost{Records: len(recs)}, cost)
	assert.Equal(t, 2, pages)
	require.Len(t, got, len(recs))
	for i, x := range got {
		assert.Equal(t, recs[i].ID, x.ID)
		assert.Equal(t, recs[i].Locale, x.Locale)
		n := 0.0
		for j, v := range x.Vector {
			n += float64(v) * float64(v)
			assert.InDelta(t, 0, float64(v)*math.Sqrt(sq(recs[i].Vector))-float64(recs[i].Vector[j]), 1e-4)
		}
		assert.InDelta(t, 1, n, 1e-5)
	}
	_, err = s.Export(ctx, 13, func([]store.Record) error { return nil })
	require.Error(t, err, "another dimension")

	q := store.Query{Vector: randVec(r, 12), Locale: "pt-BR"}
	hits, err := s.Search(ctx, []store.Query{q}, 5)
	require.NoError(t, err)
	for _, h := range hits[0] {
		sim, ok := s.Similarity(q.Vector, h.ID, "pt-BR")
		require.True(t, ok)
		assert.Equal(t, h.Score, sim, "the score Search gives")
		_, ok = s.Similarity(q.Vector, h.ID, "en")
		assert.False(t, ok, "another locale")
		sim, ok = s.Similarity(q.Vector, h.ID, "")
		assert.True(t, ok)
		assert.Equal(t, h.Score, sim)
	}
	_, ok := s.Similarity(q.Vector, "nope", "")
	assert.False(t, ok)
	_, ok = s.Similarity(q.Vector, recs[0].ID, "fr")
	assert.False(t, ok, "a locale the store does not have")
	_, ok = s.Similarity(make([]float32, 12), recs[0].ID, "")
	assert.False(t, ok, "a zero query")
}

func sq(v []float32) float64 {
	s := 0.0
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return s
}
