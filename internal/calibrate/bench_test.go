package calibrate

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/retrieval-gate/retrieval-gate/internal/dataset"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

// benchFiles returns human and judge JSONL for n cases of two dimensions, the judge
// agreeing on about three cases in four.
func benchFiles(n int) (human, judge []byte) {
	var h, j bytes.Buffer
	for _, dim := range []string{"groundedness", "faithfulness"} {
		cons := map[string]string{"groundedness": "support", "faithfulness": "contradiction-only"}[dim]
		for i := range n {
			hs := float64(i%3) / 2
			js := hs
			if i%4 == 3 {
				js = float64((i+1)%3) / 2
			}
			fmt.Fprintf(&h, `{"case_id": "case-%06d", "dimension": %q, "score": %g, "construct": %q, "labeled_at": "2026-09-01T09:00:00Z"}`+"\n", i, dim, hs, cons)
			fmt.Fprintf(&j, `{"case_id": "case-%06d", "dimension": %q, "score": %g, "construct": %q, "judged_at": "2026-10-01T09:00:00Z"}`+"\n", i, dim, js, cons)
		}
	}
	return h.Bytes(), j.Bytes()
}

const benchLock = `{"dimensions": {"groundedness": {"construct": "support", "gated": true},
 "faithfulness": {"construct": "contradiction-only", "gated": true}},
 "bins": [0.34, 0.67], "kappa_weighting": "quadratic", "min_kappa": 0.6}`

// BenchmarkReadLabels: both files of 10,000 cases × 2 dimensions.
func BenchmarkReadLabels(b *testing.B) {
	lock, err := dataset.ReadLock([]byte(benchLock), "lock.json")
	if err != nil {
		b.Fatal(err)
	}
	human, judge := benchFiles(10000)
	b.SetBytes(int64(len(human) + len(judge)))
	for b.Loop() {
		if _, err := dataset.ReadLabels(bytes.NewReader(human), "human.jsonl", dataset.HumanSide, lock); err != nil {
			b.Fatal(err)
		}
		if _, err := dataset.ReadLabels(bytes.NewReader(judge), "judge.jsonl", dataset.JudgeSide, lock); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEvaluate: pairing, kappa and a 10,000-resample bootstrap CI per dimension.
func BenchmarkEvaluate(b *testing.B) {
	for _, n := range []int{120, 10000} {
		b.Run(fmt.Sprintf("cases=%d", n), func(b *testing.B) {
			lock, err := dataset.ReadLock([]byte(benchLock), "lock.json")
			if err != nil {
				b.Fatal(err)
			}
			human, judge := benchFiles(n)
			hs, err := dataset.ReadLabels(bytes.NewReader(human), "human.jsonl", dataset.HumanSide, lock)
			if err != nil {
				b.Fatal(err)
			}
			js, err := dataset.ReadLabels(bytes.NewReader(judge), "judge.jsonl", dataset.JudgeSide, lock)
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				r := Evaluate(Input{Lock: lock, Human: hs, Judge: js, Resamples: DefaultResamples, Seed: metrics.DefaultSeed})
				if r.Dimensions[0].N != n {
					b.Fatalf("n = %d", r.Dimensions[0].N)
				}
			}
		})
	}
}
