package input_test

import (
	"context"
	"io"
	"os"
	"testing"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
)

// BenchmarkParquetLines reads a Parquet cases file as JSONL lines (the file
// RG_BENCH_PARQUET names, e.g. benchdata check-cases-parquet 100000; skipped
// without it): the reader's own cost, before any cases parser.
func BenchmarkParquetLines(b *testing.B) {
	path := os.Getenv("RG_BENCH_PARQUET")
	if path == "" {
		b.Skip("RG_BENCH_PARQUET names no file (go run ./cmd/benchdata check-cases-parquet 100000 > F)")
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
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
