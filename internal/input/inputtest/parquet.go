package inputtest

import (
	"os"
	"path/filepath"
	"testing"
)

// ParquetBench is the Parquet cases file RG_BENCH_PARQUET names for a
// benchmark (e.g. go run ./cmd/benchdata check-cases-parquet 100000 > F),
// its size set as the bytes an iteration reads; without it the benchmark is
// skipped.
func ParquetBench(b *testing.B) string {
	b.Helper()
	path := os.Getenv("RG_BENCH_PARQUET")
	if path == "" {
		b.Skip("RG_BENCH_PARQUET names no file (go run ./cmd/benchdata check-cases-parquet 100000 > F)")
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	return path
}

// AddFileSeed adds the bytes of the file at path to f's seed corpus.
func AddFileSeed(f *testing.F, path string) {
	f.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
}

// ParquetFuzzFile writes a fuzz input that starts as a Parquet file does
// ("PAR1") to a file in t's temporary directory and returns its path; "" for
// any other input, which the target skips.
func ParquetFuzzFile(t *testing.T, b []byte) string {
	t.Helper()
	if len(b) < 4 || string(b[:4]) != "PAR1" {
		return ""
	}
	p := filepath.Join(t.TempDir(), "f.parquet")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
