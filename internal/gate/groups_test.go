package gate

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

// manyGroups accumulates n cases, each of its own type, over locales of which
// the first few are large, and one case in the reference locale "ref".
func manyGroups(t testing.TB, n int) *Accumulator {
	a := NewAccumulator()
	for i := range n {
		r := &CaseResult{File: "f", Line: i + 1, ID: fmt.Sprint("c", i), Type: fmt.Sprint("t", i), Locale: fmt.Sprint("l", i%(n/2)), Scored: true}
		if i == n-1 {
			r.Locale = "ref"
		}
		for m := range r.Has {
			r.Has[m], r.Scores[m] = true, float64(i%2)
		}
		require.NoError(t, a.Add(r))
	}
	return a
}

// 50,000 distinct types and 25,000 locales: at most MaxGroups of each computed
// and shown (the largest, the reference locale always), the rest counted; the
// overall group keeps every case (BenchmarkManyGroups measures the cost).
func TestGroupsCapped(t *testing.T) {
	a := manyGroups(t, 50_000)
	res := a.Result(Config{K: 3, ReferenceLocale: "ref", Resamples: 200})
	assert.Len(t, res.ByType, MaxGroups)
	assert.Len(t, res.ByLocale, MaxGroups)
	assert.Equal(t, Omitted{Groups: 50_000 - MaxGroups, Cases: 50_000 - MaxGroups}, res.TypesOmitted)
	assert.Equal(t, 25_000+1-MaxGroups, res.LocalesOmitted.Groups)
	assert.Equal(t, int64(50_000), res.Overall.N)
	var haveRef bool
	var kept int64
	for _, g := range res.ByLocale {
		haveRef = haveRef || g.Name == "ref"
		kept += g.N
	}
	assert.True(t, haveRef, "the reference locale is always computed")
	assert.Equal(t, int64(50_000), kept+res.LocalesOmitted.Cases)
	// The kept locales are the largest (2 cases each), by name among equals.
	assert.Equal(t, "l0", res.ByLocale[0].Name)
}

// A small input keeps every group.
func TestGroupsUnderCapAllKept(t *testing.T) {
	a := manyGroups(t, 20)
	res := a.Result(Config{K: 3, Resamples: 200})
	assert.Len(t, res.ByType, 20)
	assert.Equal(t, Omitted{}, res.TypesOmitted)
}

// BenchmarkManyGroups is Result over 50,000 distinct types (issue 10 item 12).
func BenchmarkManyGroups(b *testing.B) {
	a := manyGroups(b, 50_000)
	b.ReportAllocs()
	for b.Loop() {
		a.Result(Config{K: 3, ReferenceLocale: "ref"})
	}
}

// A cell counts a measure's values in a small table in front of its
// histogram: the summaries are those of the histogram fed case by case,
// with few values, with more values than the table holds, and with 0 and -0
// in either order (the histogram keeps the first seen).
func TestValueCountsAsHistogram(t *testing.T) {
	negZero := math.Copysign(0, -1)
	rng := metrics.NewRand(3)
	tests := map[string]func(i int) float64{
		"binary":       func(int) float64 { return float64(rng.IntN(2)) },
		"few":          func(int) float64 { return float64(rng.IntN(7)) / 6 },
		"many":         func(int) float64 { return float64(rng.IntN(500)) / 499 },
		"-0 first":     func(i int) float64 { return []float64{negZero, 0, 0.5}[i%3] },
		"0 first":      func(i int) float64 { return []float64{0, negZero, 0.5}[i%3] },
		"only -0":      func(int) float64 { return negZero },
		"more later":   func(i int) float64 { return float64(i%3+i/900*(i%200)) / 1000 },
		"one distinct": func(int) float64 { return 0.25 },
	}
	for name, value := range tests {
		t.Run(name, func(t *testing.T) {
			var v valueCounts
			h, ref := metrics.NewHistogram(), metrics.NewHistogram()
			for i := range 2000 {
				x := value(i)
				ref.Add(x)
				if !v.add(x) {
					if !v.off {
						v.flush(h)
						v.off = true
					}
					h.Add(x)
				}
			}
			v.flush(h)
			got, _ := metrics.SummarizeContext(context.Background(), h, 200, 1, 0, 1)
			want, _ := metrics.SummarizeContext(context.Background(), ref, 200, 1, 0, 1)
			require.Equal(t, want.N, got.N)
			require.Equal(t, math.Float64bits(want.Mean), math.Float64bits(got.Mean), "%v %v", want.Mean, got.Mean)
			require.Equal(t, math.Float64bits(want.CI95[0]), math.Float64bits(got.CI95[0]))
			require.Equal(t, math.Float64bits(want.CI95[1]), math.Float64bits(got.CI95[1]))
			require.Equal(t, want.Method, got.Method)
		})
	}
}
