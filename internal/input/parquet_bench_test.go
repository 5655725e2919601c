package input_test

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/inputtest"
)

// BenchmarkParquetLines reads a Parquet cases file as JSONL lines (the file
// RG_BENCH_PARQUET names, e.g. benchdata check-cases-parquet 100000; skipped
// without it): the reader's own cost, before any cases parser.
func BenchmarkParquetLines(b *testing.B) {
	path := inputtest.ParquetBench(b)
	for b.Loop() {
		s, err := input.OpenSharded(context.Background(), path)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, s); err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
}

// BenchmarkParquetRows reads the same file by rows (ParquetRows.NextRows,
// in batches of the cases reader's bounds): the fast path's reader alone.
func BenchmarkParquetRows(b *testing.B) {
	path := inputtest.ParquetBench(b)
	for b.Loop() {
		s, err := input.OpenSharded(context.Background(), path)
		if err != nil {
			b.Fatal(err)
		}
		r, err := s.ShardRows(0)
		if err != nil {
			b.Fatal(err)
		}
		cols := make([]input.ParquetCol, r.NumCols())
		arena := make([]byte, 0, 64<<10)
		for {
			arena = arena[:0]
			for k := range cols {
				cols[k].Reset()
			}
			arena, _, err = r.NextRows(arena, cols, 128, 64<<10)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		r.Close()
		s.Close()
	}
}
