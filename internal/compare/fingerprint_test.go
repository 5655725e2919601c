package compare_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

// The history fingerprint names every input by role: a comparison corrected by
// a human sheet is another series than the judge-only one.
func TestFingerprint(t *testing.T) {
	runs := []compare.RunFile{{Name: "bm25", Path: "a.trec"}, {Name: "dense", Path: "b.trec"}}
	o := compare.Options{K: 10, Gain: metrics.GainExp, RelevantLevel: 2, Baseline: "bm25", Resamples: 1000, Seed: 7}
	for _, tc := range []struct {
		name  string
		files compare.Files
		want  map[string]string
	}{
		{"judge only", compare.Files{Qrels: "q.trec", Runs: runs},
			map[string]string{"qrels": "q.trec", "run:bm25": "a.trec", "run:dense": "b.trec"}},
		{"human sheet", compare.Files{Qrels: "q.trec", Runs: runs, HumanQrels: "sheet.csv"},
			map[string]string{"qrels": "q.trec", "run:bm25": "a.trec", "run:dense": "b.trec", "human-qrels": "sheet.csv"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, params := compare.Fingerprint(tc.files, o)
			assert.Equal(t, tc.want, in)
			assert.Equal(t, map[string]string{"k": "10", "gain": o.Gain.String(), "relevant-level": "2", "baseline": "bm25", "bootstrap": "1000", "seed": "7"}, params)
		})
	}
}
