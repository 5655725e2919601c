package judge_test

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/retrieval-gate/retrieval-gate/internal/judge"
	"github.com/retrieval-gate/retrieval-gate/internal/llm"
	"github.com/retrieval-gate/retrieval-gate/internal/llm/llmtest"
)

// benchPairs returns n pairs over n/10 queries of 10 documents, with a hidden table.
func benchPairs(n int) ([]judge.Pair, map[string]map[string]int) {
	grades := map[string]map[string]int{}
	pairs := make([]judge.Pair, 0, n)
	for i := range n {
		q, d := i/10, i%10
		qt := fmt.Sprintf("how do I configure feature %d of the product?", q)
		doc := fmt.Sprintf("Card %d-%d. To configure feature %d open the settings page and follow the steps.", q, d, q)
		if grades[qt] == nil {
			grades[qt] = map[string]int{}
		}
		grades[qt][doc] = (q * d) % 4
		pairs = append(pairs, judge.Pair{QueryID: fmt.Sprintf("q%05d", q), Query: qt, DocID: fmt.Sprintf("c%05d-%d", q, d), Document: doc})
	}
	return pairs, grades
}

// BenchmarkJudgeSlowServer judges n pairs against a judge answering in 50 ms,
// at --concurrency 8: the floor is n/8 × 50 ms (62.5 s for 10,000 pairs).
// Run one size with -bench 'JudgeSlowServer/pairs=10000' -benchtime 1x.
func BenchmarkJudgeSlowServer(b *testing.B) {
	for _, n := range []int{400, 1600, 10000} {
		b.Run(fmt.Sprintf("pairs=%d", n), func(b *testing.B) {
			pairs, grades := benchPairs(n)
			srv := llmtest.New(llmtest.Options{Grades: grades, Delay: 50 * time.Millisecond})
			defer srv.Close()
			b.ResetTimer()
			for range b.N {
				c, _ := llm.New(llm.Config{URL: srv.URL, Model: "bench", Concurrency: 8})
				res, err := judge.Judge(context.Background(), pairs, judge.Options{Client: c, Model: "bench", Prompt: judge.DefaultPrompt(), Workers: 8})
				if err != nil {
					b.Fatal(err)
				}
				if res.Requests != int64(n) {
					b.Fatalf("%d requests for %d pairs", res.Requests, n)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "pairs/s")
		})
	}
}

// BenchmarkJudgeCachedRerun reruns 10,000 pairs whose judgments are all in the
// cache file: open (load) the cache, judge (zero requests), write the qrels.
func BenchmarkJudgeCachedRerun(b *testing.B) {
	const n = 10000
	pairs, grades := benchPairs(n)
	srv := llmtest.New(llmtest.Options{Grades: grades})
	defer srv.Close()
	path := filepath.Join(b.TempDir(), "cache.jsonl")
	cache, err := judge.OpenCache(path)
	if err != nil {
		b.Fatal(err)
	}
	c, _ := llm.New(llm.Config{URL: srv.URL, Model: "bench", Concurrency: 8})
	if _, err := judge.Judge(context.Background(), pairs, judge.Options{Client: c, Model: "bench", Prompt: judge.DefaultPrompt(), Workers: 8, Cache: cache}); err != nil {
		b.Fatal(err)
	}
	if err := cache.Close(); err != nil {
		b.Fatal(err)
	}
	before := srv.Requests()
	b.ResetTimer()
	for range b.N {
		cache, err := judge.OpenCache(path)
		if err != nil {
			b.Fatal(err)
		}
		res, err := judge.Judge(context.Background(), pairs, judge.Options{Client: c, Model: "bench", Prompt: judge.DefaultPrompt(), Workers: 8, Cache: cache})
		if err != nil {
			b.Fatal(err)
		}
		if err := judge.WriteTREC(io.Discard, res); err != nil {
			b.Fatal(err)
		}
		_ = cache.Close()
	}
	b.StopTimer()
	if srv.Requests() != before {
		b.Fatalf("the cached rerun made %d requests", srv.Requests()-before)
	}
}
