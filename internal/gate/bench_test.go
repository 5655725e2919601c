package gate

import (
	"fmt"
	"testing"

	"github.com/retrieval-gate/retrieval-gate/internal/input/casefile"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

// BenchmarkScore scores one case of 10 retrieved chunks (per-case work, run on
// the decoding workers).
func BenchmarkScore(b *testing.B) {
	kb := cardSet{}
	for i := range 100 {
		kb[fmt.Sprintf("card-%d", i)] = true
	}
	c := &casefile.Case{ID: "x", Locale: "en", Type: "golden", Gold: []string{"card-7", "card-9"}, File: "f", Line: 1}
	for i := range 10 {
		id := fmt.Sprintf("card-%d", (i*13)%100)
		c.Retrieved = append(c.Retrieved, casefile.Retrieved{ID: id + "#c1", ParentID: id})
	}
	s := &Scorer{KB: kb, K: 5}
	var r CaseResult
	b.ReportAllocs()
	for b.Loop() {
		if err := s.ScoreInto(c, &r); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAccumulate is the serial part of check: Add of 1,000,000 scored
// cases (duplicate-id hash, cell histograms), then Result (groups and their
// 10,000-resample bootstrap CIs, computed in parallel).
func BenchmarkAccumulate(b *testing.B) {
	const n = 1_000_000
	locales := []string{"en", "es-419", "pt-BR"}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("case-%d", i)
	}
	rng := metrics.NewRand(7)
	nd := []float64{0, 1, 0.63, 0.5, 0.43, 0.39, 0.76, 0.61}
	iHit, iRecall, iNDCG := metrics.CaseIndex(metrics.KeyHit), metrics.CaseIndex(metrics.KeyRecall), metrics.CaseIndex(metrics.KeyNDCG)
	b.ReportAllocs()
	for b.Loop() {
		a := NewAccumulator()
		for i := range n {
			hit := float64(rng.IntN(2))
			r := CaseResult{File: "f", Line: i + 1, ID: ids[i], Locale: locales[i%3], Type: "golden",
				Scored: true, Has: allScored,
			}
			r.Scores[iHit] = hit
			r.Scores[iRecall] = hit * 0.5 * float64(1+rng.IntN(2))
			r.Scores[iNDCG] = hit * nd[rng.IntN(len(nd))]
			if err := a.Add(&r); err != nil {
				b.Fatal(err)
			}
		}
		res := a.Result(Config{K: 5, ReferenceLocale: "en"})
		if res.Overall.N != n {
			b.Fatal(res.Overall.N)
		}
	}
}
