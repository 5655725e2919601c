package kbfile

import (
	"fmt"
	"testing"
)

// BenchmarkHas looks up 10 ids (9 cards, 1 unknown) in a KB of 3,000 cards
// named like the check benchmark's ("card-1007"): check's per-case lookups.
func BenchmarkHas(b *testing.B) {
	kb := &KB{}
	for i := range 3000 {
		if err := kb.add(Card{ID: fmt.Sprintf("card-%d", i), File: "kb.jsonl", Line: i + 1}); err != nil {
			b.Fatal(err)
		}
	}
	kb.buildIndex()
	ids := make([]string, 0, 1000)
	for i := range 1000 {
		if i%10 == 9 {
			ids = append(ids, fmt.Sprintf("card-%d", 5000+i))
		} else {
			ids = append(ids, fmt.Sprintf("card-%d", (i*7919)%3000))
		}
	}
	b.ResetTimer()
	n := 0
	for i := 0; b.Loop(); i++ {
		for _, id := range ids[(i%100)*10 : (i%100)*10+10] {
			if kb.Has(id) {
				n++
			}
		}
	}
	if n == 0 {
		b.Fatal("no id found")
	}
}
