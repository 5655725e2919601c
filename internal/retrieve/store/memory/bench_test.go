package memory

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store"
)

// BenchmarkSearch is the memory store's exact search: every query scored against
// every chunk (half the queries with a locale filter of 1/3 of the chunks), k = 10.
// One op = all queries. The portable cases force the pure-Go dot products (what
// a CPU without AVX2, or another architecture, runs).
func BenchmarkSearch(b *testing.B) {
	for _, tc := range []struct {
		chunks, queries, dim int
		portable             bool
	}{
		{10_000, 1_000, 384, false},
		{100_000, 1_000, 384, false},
		{10_000, 1_000, 384, true},
		{100_000, 1_000, 384, true},
	} {
		name := fmt.Sprintf("chunks=%d/queries=%d/dim=%d", tc.chunks, tc.queries, tc.dim)
		if tc.portable {
			name = "portable/" + name
		}
		b.Run(name, func(b *testing.B) {
			if tc.portable {
				saved := useAVX2
				useAVX2 = false
				defer func() { useAVX2 = saved }()
			}
			r := rand.New(rand.NewPCG(1, 2))
			locales := []string{"en", "es-419", "pt-BR"}
			s := New(0)
			if err := s.Add(context.Background(), records(r, tc.chunks, tc.dim, locales)); err != nil {
				b.Fatal(err)
			}
			qs := make([]store.Query, tc.queries)
			for i := range qs {
				qs[i] = store.Query{Vector: randVec(r, tc.dim)}
				if i%2 == 1 {
					qs[i].Locale = locales[i%3]
				}
			}
			b.ResetTimer()
			for b.Loop() {
				if _, err := s.Search(context.Background(), qs, 10); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(tc.queries)/1e3, "µs/query")
		})
	}
}

// BenchmarkIngest adds 10,000 chunks of dimension 384.
func BenchmarkIngest(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	recs := records(r, 10_000, 384, []string{"en", "es-419", "pt-BR"})
	for b.Loop() {
		s := New(0)
		if err := s.Add(context.Background(), recs); err != nil {
			b.Fatal(err)
		}
	}
}
