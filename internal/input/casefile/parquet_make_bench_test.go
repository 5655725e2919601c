package casefile

import (
	"context"
	"errors"
	"io"
	"os"
	"testing"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
)

// BenchmarkParquetMakeCases makes the batches of the first 50,000 rows of
// the file RG_BENCH_PARQUET names (read once, before the timer) into cases,
// on one goroutine as a worker does (makeCases, then makeCase for the rows
// it leaves): the case-making alone, without the reader.
func BenchmarkParquetMakeCases(b *testing.B) {
	path := os.Getenv("RG_BENCH_PARQUET")
	if path == "" {
		b.Skip("RG_BENCH_PARQUET names no file (go run ./cmd/benchdata check-cases-parquet 100000 > F)")
	}
	s, err := input.OpenSharded(context.Background(), path)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	src, ok := any(s).(parquetShards)
	if !ok {
		b.Fatal("not Parquet shards")
	}
	r, err := src.ShardRows(0)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	pl, ok := planParquet(r)
	if !ok {
		b.Fatal("not the fast path's columns")
	}
	var batches []*pqRows
	line := 0
	for rows := 0; rows < 50_000; {
		bt := &pqRows{cases: make([]Case, pqBatchCases), arena: make([]byte, 0, pqArenaSize), plan: &pl, liner: r.Liner(), line: line + 1, row: r.Row() + 1}
		bt.cols = make([]input.ParquetCol, r.NumCols())
		for bt.n < len(bt.cases) && len(bt.arena) < pqArenaSize {
			var n int
			bt.arena, n, err = r.NextRows(bt.arena, bt.cols, len(bt.cases)-bt.n, pqArenaSize)
			bt.n += n
			line += n
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		if bt.n == 0 {
			break
		}
		bt.ascii = isASCII(bt.arena)
		batches = append(batches, bt)
		rows += bt.n
	}
	var w pqWorker
	for b.Loop() {
		for _, bt := range batches {
			w.makeCases(path, bt)
			for i := range bt.n {
				if w.bad[i] {
					if err := w.makeCase(path, bt, i); err != nil {
						b.Fatal(err)
					}
				}
			}
		}
	}
}
