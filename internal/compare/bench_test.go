package compare_test

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"testing"

	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/input/inputtest"
	"github.com/retrieval-gate/retrieval-gate/internal/input/trecfile"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/report/comparereport"
)

var (
	benchQueries = flag.Int("bench-queries", 100_000, "queries in the generated benchmark run")
	benchDir     = flag.String("bench-dir", filepath.Join(os.TempDir(), "retrieval-gate-bench"), "cache of the generated benchmark files")
)

const (
	benchResults = 100 // results per query
	benchJudged  = 20  // judged documents per query
)

// benchFiles returns the generated qrels and two runs (A and B) of n queries ×
// 100 results, creating them once in the cache directory. Run A ranks a query's
// documents in an order where judged relevant ones tend to be high; run B is a
// noisier ordering of the same documents. Lines are grouped by query with scores
// descending, as retrieval systems write them.
func benchFiles(tb testing.TB, n int) (qrels, runA, runB string) {
	tb.Helper()
	dir := filepath.Join(*benchDir, "v2-"+strconv.Itoa(n))
	qrels = filepath.Join(dir, "qrels.trec")
	runA = filepath.Join(dir, "runA.trec")
	runB = filepath.Join(dir, "runB.trec")
	if _, err := os.Stat(filepath.Join(dir, "done")); err == nil {
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := writeBenchFiles(n, qrels, runA, runB); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "done"), nil, 0o644); err != nil {
		tb.Fatal(err)
	}
	return
}

func writeBenchFiles(n int, qrelsPath, aPath, bPath string) error {
	create := func(p string) (*os.File, *bufio.Writer, error) {
		f, err := os.Create(p)
		return f, bufio.NewWriterSize(f, 1<<20), err
	}
	qf, qw, err := create(qrelsPath)
	if err != nil {
		return err
	}
	af, aw, err := create(aPath)
	if err != nil {
		return err
	}
	bf, bw, err := create(bPath)
	if err != nil {
		return err
	}
	r := rand.New(rand.NewPCG(42, 7))
	var line []byte
	docs := make([]int, benchResults)
	rel := make([]int, benchResults)
	for q := range n {
		qid := fmt.Sprintf("q%06d", q)
		for i := range docs {
			docs[i] = r.IntN(10_000_000)
			for slices.Contains(docs[:i], docs[i]) {
				docs[i] = r.IntN(10_000_000)
			}
			// Graded relevance that decreases with A's rank, noisily.
			rel[i] = 0
			if x := r.Float64() * float64(i+5) / 30; x < 0.15 {
				rel[i] = 3
			} else if x < 0.3 {
				rel[i] = 2
			} else if x < 0.5 {
				rel[i] = 1
			}
		}
		// Judge the first 15 results of A and 5 later ones.
		for j := range benchJudged {
			i := j
			if j >= 15 {
				i = 15 + (j-15)*17
			}
			line = append(line[:0], qid...)
			line = append(line, " 0 d"...)
			line = strconv.AppendInt(line, int64(docs[i]), 10)
			line = append(line, ' ')
			line = strconv.AppendInt(line, int64(rel[i]), 10)
			line = append(line, '\n')
			_, _ = qw.Write(line) // a bufio.Writer keeps its first error: the Flush below returns it
		}
		// writeRun writes the docs in order with scores top, top − step, ...
		writeRun := func(w *bufio.Writer, top, step float64, tag string) {
			for i := range benchResults {
				line = append(line[:0], qid...)
				line = append(line, " Q0 d"...)
				line = strconv.AppendInt(line, int64(docs[i]), 10)
				line = append(line, ' ')
				line = strconv.AppendInt(line, int64(i+1), 10)
				line = append(line, ' ')
				line = strconv.AppendFloat(line, top-float64(i)*step, 'f', 4, 64)
				line = append(line, ' ')
				line = append(line, tag...)
				line = append(line, '\n')
				_, _ = w.Write(line) // sticky error, returned by the Flush below
			}
		}
		writeRun(aw, 100, 0.731, "runA")
		// B: the same documents, locally shuffled (a noisier ranker).
		for i := range docs {
			j := min(len(docs)-1, i+r.IntN(8))
			docs[i], docs[j] = docs[j], docs[i]
		}
		writeRun(bw, 50, 0.377, "runB")
	}
	for _, c := range []struct {
		f *os.File
		w *bufio.Writer
	}{{qf, qw}, {af, aw}, {bf, bw}} {
		if err := c.w.Flush(); err != nil {
			return err
		}
		if err := c.f.Close(); err != nil {
			return err
		}
	}
	return nil
}

// BenchmarkReadTRECRun parses one generated run (100,000 queries × 100 results,
// about 370 MB) keeping the top 10 per query, on GOMAXPROCS cores.
func BenchmarkReadTRECRun(b *testing.B) {
	_, runA, _ := benchFiles(b, *benchQueries)
	st, _ := os.Stat(runA)
	b.SetBytes(st.Size())
	for b.Loop() {
		if _, err := inputtest.ReadRun(context.Background(), runA, 10, trecfile.RunOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompareTREC is the whole compare of two generated runs against the
// qrels with the defaults (k 10, 10,000 resamples), rendering the JSON report.
func BenchmarkCompareTREC(b *testing.B) {
	qrelsPath, runA, runB := benchFiles(b, *benchQueries)
	ctx := context.Background()
	for b.Loop() {
		q, err := inputtest.ReadQrels(ctx, qrelsPath)
		if err != nil {
			b.Fatal(err)
		}
		var in []compare.Input
		for i, p := range []string{runA, runB} {
			run, err := inputtest.ReadRun(ctx, p, 10, trecfile.RunOptions{})
			if err != nil {
				b.Fatal(err)
			}
			in = append(in, compare.Input{Name: fmt.Sprint("run", i), Run: run})
		}
		res, err := compare.Compare(q, in, compare.Options{K: 10, Gain: metrics.GainExp, RelevantLevel: 2, Resamples: 10000, Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		if err := comparereport.New(res).WriteJSON(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRun is compare.Run on the generated files (k 10, 10,000
// resamples): "streamed" from the open files (sorted by query: scored as they
// are read), "whole" from plain readers (each run read whole, as before).
// B/query and allocs/query are the allocations divided by -bench-queries: run
// at two sizes, the streamed ones stay the same (what grows with the queries
// is each query's values, not the runs); the peak RSS is in BENCHMARKS.md.
func BenchmarkRun(b *testing.B) {
	qrelsPath, runA, runB := benchFiles(b, *benchQueries)
	ctx := context.Background()
	o := compare.NewOptions()
	for _, mode := range []string{"streamed", "whole"} {
		b.Run(mode, func(b *testing.B) {
			b.ReportAllocs()
			var ms0, ms1 runtime.MemStats
			runtime.ReadMemStats(&ms0)
			for b.Loop() {
				var files []*os.File
				open := func(p string) io.Reader {
					f, err := os.Open(p)
					if err != nil {
						b.Fatal(err)
					}
					files = append(files, f)
					if mode == "whole" {
						return struct{ io.Reader }{f}
					}
					return f
				}
				in := compare.In{Qrels: compare.Reader{Name: qrelsPath, R: open(qrelsPath)}}
				for i, p := range []string{runA, runB} {
					in.Runs = append(in.Runs, compare.RunReader{Strategy: fmt.Sprint("run", i), Reader: compare.Reader{Name: p, R: open(p)}})
				}
				if _, err := compare.Run(ctx, in, o); err != nil {
					b.Fatal(err)
				}
				for _, f := range files {
					f.Close()
				}
			}
			runtime.ReadMemStats(&ms1)
			n := float64(b.N) * float64(*benchQueries)
			b.ReportMetric(float64(ms1.TotalAlloc-ms0.TotalAlloc)/n, "B/query")
			b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/n, "allocs/query")
		})
	}
}
