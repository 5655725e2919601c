package compare_test

import (
	"context"
	"testing"

	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/input/inputtest"
	"github.com/retrieval-gate/retrieval-gate/internal/input/trecfile"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

// BenchmarkCompareRunHoles is compare.Run alone (the runs read once, outside the
// loop) on the generated 100k-query benchmark runs: "plain" is the default
// compare, whose judged@k is the holes' cost; "judged-only" condenses the runs
// read 100 deep.
func BenchmarkCompareRunHoles(b *testing.B) {
	qrelsPath, runA, runB := benchFiles(b, *benchQueries)
	ctx := context.Background()
	q, err := inputtest.ReadQrels(ctx, qrelsPath)
	if err != nil {
		b.Fatal(err)
	}
	read := func(depth int) []compare.Input {
		var in []compare.Input
		for i, p := range []string{runA, runB} {
			run, err := inputtest.ReadRun(ctx, p, depth, trecfile.RunOptions{})
			if err != nil {
				b.Fatal(err)
			}
			in = append(in, compare.Input{Name: []string{"a", "b"}[i], Run: run})
		}
		return in
	}
	for _, c := range []struct {
		name       string
		depth      int
		judgedOnly bool
	}{{"plain", 10, false}, {"judged-only", 100, true}} {
		in := read(c.depth)
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := compare.Compare(q, in, compare.Options{K: 10, Gain: metrics.GainExp, RelevantLevel: 2, Resamples: 10000, Seed: 1, JudgedOnly: c.judgedOnly}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
