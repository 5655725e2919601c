package compare_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/input/inputtest"
	"github.com/retrieval-gate/retrieval-gate/internal/input/trecfile"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/report/comparereport"
)

// benchSheet writes (once) a filled-in labelling sheet of the generated
// benchmark qrels: every judged document of every step-th query, graded as the
// qrels grade it, one grade more (capped at 3) on every third row.
func benchSheet(tb testing.TB, qrelsPath string, step int) string {
	tb.Helper()
	path := filepath.Join(filepath.Dir(qrelsPath), fmt.Sprintf("human-every-%d.csv", step))
	if _, err := os.Stat(path); err == nil {
		return path
	}
	in, err := os.ReadFile(qrelsPath)
	if err != nil {
		tb.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("query_id,doc_id,grade\n")
	row := 0
	for line := range strings.Lines(string(in)) {
		f := strings.Fields(line)
		var q, rel int
		if _, err := fmt.Sscanf(f[0], "q%d", &q); err != nil {
			tb.Fatal(err)
		}
		if q%step != 0 {
			continue
		}
		if _, err := fmt.Sscan(f[3], &rel); err != nil {
			tb.Fatal(err)
		}
		if row%3 == 2 {
			rel = min(3, rel+1)
		}
		row++
		fmt.Fprintf(&b, "%s,%s,%d\n", f[0], f[2], rel)
	}
	if err := os.WriteFile(path+".tmp", []byte(b.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		tb.Fatal(err)
	}
	return path
}

// BenchmarkCompareHuman is compare's comparison and JSON report of the two
// generated runs (100,000 queries) without human labels and with a sheet of 1%
// or 10% of the queries (PPI++ of every strategy, measure and paired test, the
// judge's bias): what --human-qrels adds, the inputs read once outside the loop.
func BenchmarkCompareHuman(b *testing.B) {
	qrelsPath, runA, runB := benchFiles(b, *benchQueries)
	ctx := context.Background()
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
	for _, tc := range []struct {
		name     string
		step     int
		clusters bool // queries in families: clusters of 3 in qrels order
	}{{"judge-only", 0, false}, {"human-1pct", 100, false}, {"human-10pct", 10, false}, {"judge-only-clusters", 0, true}, {"human-10pct-clusters", 10, true}} {
		o := compare.Options{K: 10, Gain: metrics.GainExp, RelevantLevel: 2, Resamples: 10000, Seed: 1}
		if tc.clusters {
			o.Clusters, o.ClustersFile = map[string]string{}, "clusters.tsv"
			for i := range q.NumQueries() {
				o.Clusters[q.QueryID(i)] = fmt.Sprint("c", i/3)
			}
		}
		if tc.step > 0 {
			sh, err := inputtest.ReadSheetFile(ctx, benchSheet(b, qrelsPath, tc.step))
			if err != nil {
				b.Fatal(err)
			}
			o.HumanSheet = sh
		}
		b.Run(tc.name, func(b *testing.B) {
			// The process's CPU time per op: on a loaded machine the wall time
			// swings with the other processes, the CPU much less.
			start := cpuTime()
			defer func() { b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op") }()
			for b.Loop() {
				res, err := compare.Compare(q, in, o)
				if err != nil {
					b.Fatal(err)
				}
				if err := comparereport.New(res).WriteJSON(io.Discard); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
