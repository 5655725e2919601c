package dataset

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var benchCases = flag.Int("bench-cases", 1_000_000, "number of cases in the generated BenchmarkMapCases file")

var benchLocales = []string{"en", "es-419", "pt-BR"}

// writeBenchCases writes n realistic cases (10 retrieved chunks with text each)
// to w, deterministically.
func writeBenchCases(w *bufio.Writer, n int) error {
	rng := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields("how do I reset my password account billing invoice refund two factor login error " +
		"export data delete team member plan upgrade downgrade api key rotate webhook retry limit quota")
	text := func(k int) string {
		var sb strings.Builder
		for sb.Len() < k {
			if sb.Len() > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(words[rng.IntN(len(words))])
		}
		return sb.String()
	}
	for i := range n {
		loc := benchLocales[i%len(benchLocales)]
		typ := "golden"
		if i%7 == 0 {
			typ = "adversarial"
		}
		fmt.Fprintf(w, `{"id": "%s-%s-%07d", "locale": "%s", "type": "%s", "query": %q, "must_cite_one_of": [`, loc, typ, i, loc, typ, text(40)+"?")
		for g := range 1 + rng.IntN(3) {
			if g > 0 {
				w.WriteString(", ")
			}
			fmt.Fprintf(w, `"%s-card-%04d"`, loc, rng.IntN(5000))
		}
		w.WriteString(`], "retrieved": [`)
		for r := range 10 {
			if r > 0 {
				w.WriteString(", ")
			}
			card := fmt.Sprintf("%s-card-%04d", loc, rng.IntN(5000))
			fmt.Fprintf(w, `{"id": "%s#c%d", "parent_id": "%s", "score": %.4f, "text": %q}`, card, rng.IntN(4), card, 1-float64(r)/20-rng.Float64()/40, text(100))
		}
		if _, err := w.WriteString("]}\n"); err != nil {
			return err
		}
	}
	return w.Flush()
}

// benchCasesFile returns a generated cases file of n cases, cached under
// os.TempDir() across runs.
func benchCasesFile(b *testing.B, n int) string {
	b.Helper()
	path := filepath.Join(os.TempDir(), fmt.Sprintf("retrieval-gate-bench-cases-v1-%d.jsonl", n))
	if _, err := os.Stat(path); err == nil {
		return path
	}
	tmp, err := os.CreateTemp(os.TempDir(), "retrieval-gate-bench-*.tmp")
	if err != nil {
		b.Fatal(err)
	}
	defer os.Remove(tmp.Name())
	if err := writeBenchCases(bufio.NewWriterSize(tmp, 1<<20), n); err != nil {
		b.Fatal(err)
	}
	if err := tmp.Close(); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkMapCases decodes a generated file of -bench-cases cases (default
// 1,000,000 × 10 retrieved, about 750 MB) with 1 and 2 workers; work computes a
// small per-case value, as check does.
func BenchmarkMapCases(b *testing.B) {
	path := benchCasesFile(b, *benchCases)
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	for _, workers := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			b.SetBytes(st.Size())
			b.ReportAllocs()
			for b.Loop() {
				f, err := os.Open(path)
				if err != nil {
					b.Fatal(err)
				}
				n, hits := 0, 0
				err = MapCases(context.Background(), f, path, workers, func(c *Case) (bool, error) {
					for _, r := range c.Retrieved[:min(5, len(c.Retrieved))] {
						for _, g := range c.Gold {
							if r.Identity() == g {
								return true, nil
							}
						}
					}
					return false, nil
				}, func(hit bool) error {
					n++
					if hit {
						hits++
					}
					return nil
				})
				f.Close()
				if err != nil {
					b.Fatal(err)
				}
				if n != *benchCases {
					b.Fatalf("got %d cases, want %d", n, *benchCases)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6, "ms/file")
		})
	}
}

// BenchmarkStreamCases is the single-goroutine reader on the same file.
func BenchmarkStreamCases(b *testing.B) {
	path := benchCasesFile(b, *benchCases)
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	b.ReportAllocs()
	for b.Loop() {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		err = StreamCases(context.Background(), f, path, func(c *Case) error { n++; return nil })
		f.Close()
		if err != nil {
			b.Fatal(err)
		}
	}
}
