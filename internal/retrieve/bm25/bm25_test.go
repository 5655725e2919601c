package bm25

import (
	"math"
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
