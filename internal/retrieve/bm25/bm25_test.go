package bm25

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The hand-computed example: three documents, avgdl = (3+2+4)/3 = 3.
//
//	d0 = "cat sat mat"   d1 = "cat cat"   d2 = "dog sat on log"
//
// idf(cat) = ln(1 + (3-2+0.5)/(2+0.5)) = ln(1.6); idf(sat) = ln(1.6); idf(dog) = ln(1 + 2.5/1.5) = ln(8/3).
// For query "cat":
//
//	d0: tf=1, |d|=3: norm = 1.2·(0.25+0.75·1) = 1.2  -> ln1.6 · 1·2.2/(1+1.2)   = ln1.6 · 1
//	d1: tf=2, |d|=2: norm = 1.2·(0.25+0.5)   = 0.9  -> ln1.6 · 2·2.2/(2+0.9)   = ln1.6 · 1.517241...
func TestSearchHandComputed(t *testing.T) {
	ix := New([][]string{
		strings.Fields("cat sat mat"),
		strings.Fields("cat cat"),
		strings.Fields("dog sat on log"),
	})
	ln16 := math.Log(1.6)
	assert.InDelta(t, ln16, ix.IDF("cat"), 1e-12)
	assert.InDelta(t, math.Log(8.0/3.0), ix.IDF("dog"), 1e-12)

	hits := ix.Search([]string{"cat"}, 10, nil)
	require.Len(t, hits, 2)
	assert.Equal(t, 1, hits[0].Doc)
	assert.InDelta(t, ln16*4.4/2.9, hits[0].Score, 1e-12)
	assert.Equal(t, 0, hits[1].Doc)
	assert.InDelta(t, ln16, hits[1].Score, 1e-12)

	// "sat dog": d2 (|d|=4: norm = 1.2·(0.25+1) = 1.5) gets both terms.
	hits = ix.Search([]string{"sat", "dog", "dog"}, 10, nil)
	require.Len(t, hits, 2)
	assert.Equal(t, 2, hits[0].Doc)
	assert.InDelta(t, (ln16+math.Log(8.0/3.0))*2.2/2.5, hits[0].Score, 1e-12)
	assert.Equal(t, 0, hits[1].Doc)
	assert.InDelta(t, ln16, hits[1].Score, 1e-12)
}

func TestSearchFilterAndK(t *testing.T) {
	ix := New([][]string{{"a"}, {"a"}, {"a", "b"}, {"c"}})
	assert.Empty(t, ix.Search([]string{"zzz"}, 5, nil))
	hits := ix.Search([]string{"a"}, 2, nil)
	require.Len(t, hits, 2)
	assert.Equal(t, []int{0, 1}, []int{hits[0].Doc, hits[1].Doc}, "ties broken by doc number")
	hits = ix.Search([]string{"a"}, 5, func(d int) bool { return d >= 2 })
	require.Len(t, hits, 1)
	assert.Equal(t, 2, hits[0].Doc)
	assert.Empty(t, New(nil).Search([]string{"a"}, 3, nil))
}

// referenceIndex is BM25 as the index computed it before its postings were
// compacted (a map of posting slices, a score slice per search): the compact
// index must return the same hits, scores equal to the bit.
func referenceIndex(docs [][]string) func(query []string, k int, keep func(int) bool) []Hit {
	type posting struct{ doc, tf int }
	postings := map[string][]posting{}
	docLen := make([]float64, len(docs))
	total := 0.0
	for d, terms := range docs {
		docLen[d] = float64(len(terms))
		total += float64(len(terms))
		tf := map[string]int{}
		for _, t := range terms {
			tf[t]++
		}
		for t, n := range tf {
			postings[t] = append(postings[t], posting{d, n})
		}
	}
	return func(query []string, k int, keep func(int) bool) []Hit {
		if len(docs) == 0 || total == 0 || k <= 0 {
			return nil
		}
		avgdl := total / float64(len(docs))
		scores := make([]float64, len(docs))
		seen := map[string]bool{}
		for _, t := range query {
			if seen[t] {
				continue
			}
			seen[t] = true
			n, df := float64(len(docs)), float64(len(postings[t]))
			idf := math.Log(1 + (n-df+0.5)/(df+0.5))
			for _, p := range postings[t] {
				if keep != nil && !keep(p.doc) {
					continue
				}
				tf := float64(p.tf)
				scores[p.doc] += idf * tf * (K1 + 1) / (tf + K1*(1-B+B*docLen[p.doc]/avgdl))
			}
		}
		var hits []Hit
		for d, s := range scores {
			if s > 0 {
				hits = append(hits, Hit{Doc: d, Score: s})
			}
		}
		sort.SliceStable(hits, func(i, j int) bool { return hits[i].Score > hits[j].Score })
		if len(hits) > k {
			hits = hits[:k]
		}
		return hits
	}
}

// TestSearchMatchesReference: random documents over a Zipf-like vocabulary
// (long posting lists with gaps over 127 and tf over 127, so the varints take
// several bytes), random queries, filtered and not, searched twice (the
// reused scores must start from zero).
func TestSearchMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	docs := make([][]string, 3000)
	for d := range docs {
		n := r.IntN(40)
		if d%500 == 7 {
			n = 400 // a long document: tf above 127
		}
		for range n {
			docs[d] = append(docs[d], fmt.Sprintf("t%d", int(300*r.Float64()*r.Float64())))
		}
	}
	ix, ref := New(docs), referenceIndex(docs)
	for q := range 200 {
		var query []string
		for range 1 + r.IntN(6) {
			query = append(query, fmt.Sprintf("t%d", r.IntN(320)))
		}
		var keep func(int) bool
		if q%3 == 1 {
			keep = func(d int) bool { return d%3 == q%3 }
		}
		k := 1 + r.IntN(60)
		want := ref(query, k, keep)
		for range 2 {
			got := ix.Search(query, k, keep)
			require.Len(t, got, len(want), "query %v", query)
			for i := range want {
				require.Equal(t, want[i], got[i], "query %v, hit %d", query, i)
			}
		}
	}
}

// New indexes docs, each given as its terms (repeats count): NewFunc over
// slices, for the tests.
func New(docs [][]string) *Index {
	var b []byte
	return NewFunc(len(docs), func(d int, emit func(term []byte)) {
		for _, t := range docs[d] {
			b = append(b[:0], t...)
			emit(b)
		}
	})
}

// Close returns the postings' mapping at once; the cleanup that would have
// returned it when the index was collected then frees nothing a second time
// (a second munmap could unmap a later mapping at the same address).
func TestCloseReleasesPostings(t *testing.T) {
	docs := [][]string{{"cat", "sat", "mat"}, {"cat", "cat"}, {"dog", "sat", "on", "log"}}
	ix := NewFunc(len(docs), func(d int, emit func([]byte)) {
		for _, w := range docs[d] {
			emit([]byte(w))
		}
	})
	require.NotEmpty(t, ix.Search([]string{"cat"}, 2, nil))
	p := ix.mapped
	if runtime.GOOS == "linux" {
		require.NotNil(t, p, "the postings are mapped")
	}
	ix.Close()
	assert.Nil(t, ix.data)
	assert.Empty(t, ix.Search([]string{"cat"}, 2, nil), "a closed index finds nothing")
	if p != nil {
		assert.Nil(t, p.B, "the mapping is released")
		p.Release() // what the cleanup would do: nothing
	}
}

// TestSearchTiesByRank: of documents whose scores round to the same 6 digits,
// Search keeps those of lower tie rank (SetTieRanks), not the lower document
// numbers; without ranks the document number is the rank.
func TestSearchTiesByRank(t *testing.T) {
	docs := make([][]string, 6)
	for d := range docs {
		docs[d] = strings.Fields("refunds are paid back within five days")
	}
	docs = append(docs, strings.Fields("nothing to see"))
	for _, tc := range []struct {
		name  string
		ranks []int32
		k     int
		want  []int
	}{
		{"document numbers", nil, 2, []int{0, 1}},
		{"reversed ranks", []int32{5, 4, 3, 2, 1, 0, 6}, 2, []int{5, 4}},
		{"shuffled ranks", []int32{3, 6, 0, 5, 2, 4, 1}, 3, []int{2, 4, 0}},
		{"more than there are", []int32{3, 6, 0, 5, 2, 4, 1}, 10, []int{2, 4, 0, 5, 3, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ix := New(docs)
			if tc.ranks != nil {
				ix.SetTieRanks(tc.ranks)
			}
			var got []int
			for _, h := range ix.Search([]string{"refunds"}, tc.k, nil) {
				got = append(got, h.Doc)
			}
			assert.Equal(t, tc.want, got)
		})
	}
	assert.Panics(t, func() { New(docs).SetTieRanks([]int32{0}) })
}
