package calibrate

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/retrieval-gate/retrieval-gate/internal/input/labelfile"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
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
	lock, err := labelfile.ReadLock([]byte(benchLock), "lock.json")
	if err != nil {
		b.Fatal(err)
	}
	human, judge := benchFiles(10000)
	b.SetBytes(int64(len(human) + len(judge)))
	for b.Loop() {
		if _, err := labelfile.ReadLabels(context.Background(), bytes.NewReader(human), "human.jsonl", labelfile.HumanSide, lock); err != nil {
			b.Fatal(err)
		}
		if _, err := labelfile.ReadLabels(context.Background(), bytes.NewReader(judge), "judge.jsonl", labelfile.JudgeSide, lock); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEvaluate: pairing, kappa and a 10,000-resample bootstrap CI per dimension.
func BenchmarkEvaluate(b *testing.B) {
	for _, n := range []int{120, 10000} {
		b.Run(fmt.Sprintf("cases=%d", n), func(b *testing.B) {
			lock, err := labelfile.ReadLock([]byte(benchLock), "lock.json")
			if err != nil {
				b.Fatal(err)
			}
			human, judge := benchFiles(n)
			hs, err := labelfile.ReadLabels(context.Background(), bytes.NewReader(human), "human.jsonl", labelfile.HumanSide, lock)
			if err != nil {
				b.Fatal(err)
			}
			js, err := labelfile.ReadLabels(context.Background(), bytes.NewReader(judge), "judge.jsonl", labelfile.JudgeSide, lock)
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				r, err := Evaluate(b.Context(), Input{Lock: lock, Human: hs, Judge: js, Resamples: metrics.DefaultResamples, Seed: metrics.DefaultSeed})
				if err != nil || r.Dimensions[0].N != n {
					b.Fatalf("n = %d", r.Dimensions[0].N)
				}
			}
		})
	}
}

// benchLabels returns, without reading files, human and judge labels of n cases of
// one dimension, the judge agreeing on about three cases in four.
func benchLabels(n int) (hs, js []labelfile.Label) {
	la := time.Date(2026, 9, 1, 9, 0, 0, 0, time.UTC)
	ja := la.AddDate(0, 1, 0)
	hs, js = make([]labelfile.Label, n), make([]labelfile.Label, n)
	for i := range n {
		id := fmt.Sprintf("case-%07d", i)
		h := i % 3
		j := h
		if i%4 == 3 {
			j = (i + 1) % 3
		}
		hs[i] = labelfile.Label{File: "human.jsonl", Line: i + 1, Side: labelfile.HumanSide, CaseID: id, Dimension: "groundedness",
			Bin: h, HasBin: true, Construct: "support", At: la}
		js[i] = labelfile.Label{File: "judge.jsonl", Line: i + 1, Side: labelfile.JudgeSide, CaseID: id, Dimension: "groundedness",
			Bin: j, HasBin: true, HasScore: true, Construct: "support", At: ja}
	}
	return hs, js
}

// BenchmarkEvaluatePairs: Evaluate after reading (pairing, guards, kappa and its
// 10,000-resample CI) for up to 1,000,000 pairs of one gated dimension, the labels
// in case-id order and both sides shuffled (each its own order). The CI resamples
// the 3×3 counts, so its cost does not grow with n; pairing sorts each side once
// (linear on sorted input) and merges. cpu-ns/op is the process's CPU time (user +
// system) per operation, the figure to read on a loaded machine.
func BenchmarkEvaluatePairs(b *testing.B) {
	lock, err := labelfile.ReadLock([]byte(`{"dimensions": {"groundedness": {"construct": "support", "gated": true}},
 "bins": [0.34, 0.67], "kappa_weighting": "quadratic", "min_kappa": 0.6}`), "lock.json")
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{1000, 100_000, 1_000_000} {
		for _, order := range []string{"sorted", "shuffled"} {
			b.Run(fmt.Sprintf("pairs=%d/%s", n, order), func(b *testing.B) {
				hs, js := benchLabels(n)
				if order == "shuffled" {
					rng := rand.New(rand.NewPCG(1, 2))
					rng.Shuffle(len(hs), func(i, j int) { hs[i], hs[j] = hs[j], hs[i] })
					rng.Shuffle(len(js), func(i, j int) { js[i], js[j] = js[j], js[i] })
				}
				b.ResetTimer()
				cpu0 := cpuTime()
				for b.Loop() {
					r, err := Evaluate(b.Context(), Input{Lock: lock, Human: labelfile.FromLabels(hs), Judge: labelfile.FromLabels(js), Resamples: metrics.DefaultResamples, Seed: metrics.DefaultSeed})
					if err != nil || r.Dimensions[0].N != n || r.Dimensions[0].Status != outcome.Pass {
						b.Fatalf("n = %d, status %s, %v", r.Dimensions[0].N, r.Dimensions[0].Status, err)
					}
				}
				if cpu0 >= 0 {
					b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
				}
			})
		}
	}
}
