package retrieve

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/chunk"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/embed"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store/chroma"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store/memory"
)

const (
	benchChunks  = 10_000
	benchQueries = 1_000
	benchDim     = 384
	benchK       = 10
)

func benchData() ([]store.Record, []store.Query) {
	r := rand.New(rand.NewPCG(42, 1))
	locales := []string{"en", "es-419", "pt-BR"}
	vec := func() []float32 {
		v := make([]float32, benchDim)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return v
	}
	recs := make([]store.Record, benchChunks)
	for i := range recs {
		recs[i] = store.Record{ID: fmt.Sprintf("card-%d#c1", i), ParentID: fmt.Sprintf("card-%d", i), Locale: locales[i%3], Text: fmt.Sprint("chunk ", i), Vector: vec()}
	}
	qs := make([]store.Query, benchQueries)
	for i := range qs {
		qs[i] = store.Query{Vector: vec(), Locale: locales[i%3]}
	}
	return recs, qs
}

// BenchmarkStores ingests 10,000 chunks (dimension 384) into each store, then runs
// 1,000 locale-filtered queries (k = 10). Chroma runs only with $CHROMA_URL.
// One op of ingest = all chunks; one op of query = all queries.
func BenchmarkStores(b *testing.B) {
	recs, qs := benchData()
	ctx := context.Background()
	type opener func(b *testing.B) store.Store
	stores := []struct {
		name string
		open opener
	}{
		{"memory", func(*testing.B) store.Store { return memory.New(0) }},
		{"chroma", func(b *testing.B) store.Store {
			url := os.Getenv("CHROMA_URL")
			if url == "" {
				b.Skip("CHROMA_URL not set")
			}
			s, _, err := chroma.Open(ctx, chroma.Config{URL: url, Fingerprint: "bench", Chunks: len(recs)})
			if err != nil {
				b.Fatal(err)
			}
			return s
		}},
	}
	for _, st := range stores {
		b.Run(st.name+"/ingest", func(b *testing.B) {
			for b.Loop() {
				s := st.open(b)
				if err := s.Add(ctx, recs); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				if err := s.Close(ctx); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchChunks/1e3, "µs/chunk")
		})
		b.Run(st.name+"/query", func(b *testing.B) {
			s := st.open(b)
			defer s.Close(ctx)
			if err := s.Add(ctx, recs); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				res, err := s.Search(ctx, qs, benchK)
				if err != nil {
					b.Fatal(err)
				}
				if len(res[0]) != benchK {
					b.Fatalf("got %d hits", len(res[0]))
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchQueries/1e3, "µs/query")
		})
		// What --exact-check pays once: the store's vectors read back
		// (Chroma: pages of 1,000 records through .../get).
		b.Run(st.name+"/export", func(b *testing.B) {
			s := st.open(b)
			defer s.Close(ctx)
			if err := s.Add(ctx, recs); err != nil {
				b.Fatal(err)
			}
			var cost store.ExportCost
			b.ResetTimer()
			for b.Loop() {
				var err error
				if cost, err = s.(store.Exporter).Export(ctx, benchDim, func([]store.Record) error { return nil }); err != nil {
					b.Fatal(err)
				}
			}
			if cost.Records != benchChunks {
				b.Fatalf("read back %d records", cost.Records)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchChunks/1e3, "µs/chunk")
			b.ReportMetric(float64(cost.Bytes)/benchChunks, "bytes/chunk")
			b.ReportMetric(float64(cost.Requests), "requests")
		})
	}
}

// BenchmarkExactCheck is the exact check's cost at 100,000 chunks (dimension
// 384 and 1,024, three locales, half the queries filtered): load is the
// vectors read back from the memory store into the exact index (once per
// run); check is 1,000 queries answered by the store at k = 10 checked
// against exact search (their exact searches and the similarity of every
// store entry), per query.
func BenchmarkExactCheck(b *testing.B) {
	const chunks, queries = 100_000, 1_000
	ctx := context.Background()
	for _, dim := range []int{384, 1024} {
		r := rand.New(rand.NewPCG(42, uint64(dim)))
		locales := []string{"en", "es-419", "pt-BR"}
		vec := func() []float32 {
			v := make([]float32, dim)
			for i := range v {
				v[i] = float32(r.NormFloat64())
			}
			return v
		}
		st := memory.New(0)
		if err := st.Reserve(chunks, dim); err != nil {
			b.Fatal(err)
		}
		batch := make([]store.Record, 0, 1000)
		for i := range chunks {
			batch = append(batch, store.Record{ID: fmt.Sprintf("card-%d#c1", i), Locale: locales[i%3], Vector: vec()})
			if len(batch) == cap(batch) {
				if err := st.Add(ctx, batch); err != nil {
					b.Fatal(err)
				}
				batch = batch[:0]
			}
		}
		qs := make([]store.Query, queries)
		for i := range qs {
			qs[i] = store.Query{Vector: vec()}
			if i%2 == 0 {
				qs[i].Locale = locales[i%3]
			}
		}
		hits, err := st.Search(ctx, qs, benchK)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("dim=%d/load", dim), func(b *testing.B) {
			for b.Loop() {
				e, err := newExactChecker(st, ExactAll, benchK, func(string, ...any) {})
				if err != nil {
					b.Fatal(err)
				}
				if err := e.load(ctx, dim); err != nil {
					b.Fatal(err)
				}
				_ = e.exact.Close(ctx)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/chunks/1e3, "µs/chunk")
		})
		b.Run(fmt.Sprintf("dim=%d/check", dim), func(b *testing.B) {
			e, err := newExactChecker(st, ExactAll, benchK, func(string, ...any) {})
			if err != nil {
				b.Fatal(err)
			}
			if err := e.load(ctx, dim); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				for i, q := range qs {
					if err := e.observe(ctx, fmt.Sprint("q", i), "", i+1, q, hits[i]); err != nil {
						b.Fatal(err)
					}
					if (i+1)%CaseWindow == 0 {
						if err := e.flush(ctx); err != nil {
							b.Fatal(err)
						}
					}
				}
				if err := e.flush(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			if e.misses.N() != int64(b.N)*queries || e.perfect != e.misses.N() {
				b.Fatalf("checked %d, %d perfect", e.misses.N(), e.perfect)
			}
			_ = e.exact.Close(ctx)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/queries/1e3, "µs/query")
		})
		_ = st.Close(ctx)
	}
}

// BenchmarkPipeline is retrieve end to end in memory: chunks of synthetic cards
// (10,000 chunks, three locales, a 2,000-word vocabulary) embedded by the hash
// embedder (dimension 1,024) and indexed in the memory store and BM25 (build),
// then 1,000 locale-filtered queries answered by each strategy (search).
func BenchmarkPipeline(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 7))
	vocab := make([]string, 2000)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%dx", i)
	}
	words := func(n int) string {
		ws := make([]string, n)
		for i := range ws {
			// Zipf-like: low ranks are frequent.
			ws[i] = vocab[int(float64(len(vocab))*r.Float64()*r.Float64())]
		}
		return strings.Join(ws, " ")
	}
	locales := []string{"en", "es-419", "pt-BR"}
	chunks := make([]chunk.Chunk, benchChunks)
	texts := make([]string, benchChunks)
	for i := range chunks {
		chunks[i] = chunk.Chunk{ID: fmt.Sprintf("card-%d#c1", i), ParentID: fmt.Sprintf("card-%d", i), Locale: locales[i%3], Text: words(150)}
		texts[i] = chunks[i].Text
	}
	qs := make([]Query, benchQueries)
	for i := range qs {
		qs[i] = Query{Text: words(8), Locale: locales[i%3]}
	}
	ctx := context.Background()
	b.Run("build", func(b *testing.B) {
		for b.Loop() {
			if _, err := Build(ctx, chunks, embed.NewHash(0, texts), memory.New(0), false, Options{Strategy: Hybrid, K: benchK}); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, s := range Strategies {
		b.Run("search/"+s, func(b *testing.B) {
			ix, err := Build(ctx, chunks, embed.NewHash(0, texts), memory.New(0), false, Options{Strategy: s, K: benchK})
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				if _, err := ix.Search(ctx, qs); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchQueries/1e3, "µs/query")
		})
	}
}
