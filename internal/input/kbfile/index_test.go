package kbfile

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHasIndex checks Has (the index, and the map for ids too long for it)
// against the map alone, on ids of lengths around the index's bound,
// near misses (one byte changed, a prefix, one byte more) included.
func TestHasIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	randID := func() string {
		n := rng.IntN(40)
		if rng.IntN(50) == 0 {
			n = maxIndexedID - 2 + rng.IntN(5)
		}
		b := make([]byte, n)
		for i := range b {
			b[i] = "ab-#é0123456789"[rng.IntN(16)]
		}
		return string(b)
	}
	for _, cards := range []int{1, 7, 300, 5000} {
		kb := &KB{}
		for len(kb.Cards) < cards {
			id := randID()
			if _, dup := kb.byID[id]; dup {
				continue
			}
			require.NoError(t, kb.add(Card{ID: id, File: "kb.jsonl", Line: len(kb.Cards) + 1}))
		}
		kb.buildIndex()
		require.NotNil(t, kb.index)
		probe := func(id string) {
			_, want := kb.byID[id]
			require.Equal(t, want, kb.Has(id), "cards=%d id=%q", cards, id)
		}
		for _, c := range kb.Cards {
			probe(c.ID)
			probe(c.ID + "x")
			if c.ID != "" {
				probe(c.ID[:len(c.ID)-1])
				b := []byte(c.ID)
				b[rng.IntN(len(b))] ^= 1
				probe(string(b))
			}
		}
		for range 20000 {
			probe(randID())
		}
	}
}

// TestHasIndexLoaded checks that Load builds the index and Has answers for ids
// on both sides of the index's bound.
func TestHasIndexLoaded(t *testing.T) {
	long := strings.Repeat("x", maxIndexedID+1)
	var sb strings.Builder
	for _, id := range []string{"a", "card-1", strings.Repeat("y", maxIndexedID), long} {
		fmt.Fprintf(&sb, "{\"id\": %q, \"title\": \"t\", \"text\": \"x\"}\n", id)
	}
	path := filepath.Join(t.TempDir(), "kb.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(sb.String()), 0o644))
	kb, err := Load(context.Background(), path)
	require.NoError(t, err)
	require.NotNil(t, kb.index)
	for id, want := range map[string]bool{"a": true, "card-1": true, strings.Repeat("y", maxIndexedID): true, long: true,
		"": false, "b": false, "card-2": false, long + "x": false, long[1:]: false, strings.Repeat("y", maxIndexedID-1): false} {
		require.Equal(t, want, kb.Has(id), "%q", id)
	}
}
