package gate

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
