package casefile_test

import (
	"context"
	"testing"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/casefile"
	"github.com/retrieval-gate/retrieval-gate/internal/input/inputtest"
)

// BenchmarkParquetCases reads a Parquet cases file (the file
// RG_BENCH_PARQUET names, e.g. benchdata check-cases-parquet 100000; skipped
// without it) into cases by rows, the work on each case none: the fast
// path's reader and its workers' making of the cases.
func BenchmarkParquetCases(b *testing.B) {
	path := inputtest.ParquetBench(b)
	for b.Loop() {
		s, err := input.OpenSharded(context.Background(), path)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		err = casefile.MapCasesWith(context.Background(), s, path, casefile.MapOptions{StringsInLine: true},
			func(c *casefile.Case, v *int) error {
				*v = len(c.Retrieved)
				return nil
			},
			func(v *int) error {
				n += *v
				return nil
			})
		if err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
}
