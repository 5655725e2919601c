package kbfile

import (
	"bytes"
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

// TestHasShortIDs: ids that differ only by trailing zero bytes, or by a byte in
// the part two overlapping loads both read, are told apart (the length is part
// of the short key).
func TestHasShortIDs(t *testing.T) {
	ids := []string{"", "\x00", "a", "a\x00", "a\x00\x00\x00", "abcd", "abcde", "abcdefg", "abcdefgh",
		"abcdefgh\x00", "abcdefghi", "abcdefghijklmno", "abcdefghijklmn\x00", strings.Repeat("\xff", 15)}
	for skip := range ids {
		kb := &KB{}
		for i, id := range ids {
			if i != skip {
				require.NoError(t, kb.add(Card{ID: id, File: "kb.jsonl", Line: i + 1}))
			}
		}
		kb.buildIndex()
		for i, id := range ids {
			require.Equal(t, i != skip, kb.Has(id), "without %q: %q", ids[skip], id)
		}
		for _, id := range []string{"b", "abce", "abcdefgj", "abcdefghijklmnp", "\x00\x00"} {
			require.False(t, kb.Has(id), "%q", id)
		}
	}
}

// TestKeys checks Keys against the map: 0 exactly for the ids that are not
// cards, and one key per card id (two ids share a key only when they are
// equal), in batches of every size around the probe batch, with the index
// (ids on both sides of its bound) and without it (a KB past maxIndexed).
func TestKeys(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	randID := func() string {
		n := rng.IntN(24)
		if rng.IntN(20) == 0 {
			n = maxIndexedID - 2 + rng.IntN(5)
		}
		b := make([]byte, n)
		for i := range b {
			b[i] = "ab-#0123"[rng.IntN(8)]
		}
		return string(b)
	}
	for _, indexed := range []bool{true, false} {
		kb := &KB{}
		for len(kb.Cards) < 2000 {
			id := randID()
			if _, dup := kb.byID[id]; !dup {
				require.NoError(t, kb.add(Card{ID: id, File: "kb.jsonl", Line: len(kb.Cards) + 1}))
			}
		}
		if indexed {
			kb.buildIndex()
			require.NotNil(t, kb.index)
		}
		var probes []string
		for _, c := range kb.Cards[:500] {
			probes = append(probes, c.ID, c.ID+"x", c.ID)
		}
		for range 3000 {
			probes = append(probes, randID())
		}
		rng.Shuffle(len(probes), func(i, j int) { probes[i], probes[j] = probes[j], probes[i] })
		idOf := map[uint64]string{}
		for len(probes) > 0 {
			n := min(len(probes), 1+rng.IntN(2*probeBatch+3))
			keys := make([]uint64, n+1)
			keys[n] = 12345 // past len(ids): not written
			kb.Keys(probes[:n], keys)
			require.Equal(t, uint64(12345), keys[n])
			for i, id := range probes[:n] {
				_, card := kb.byID[id]
				require.Equal(t, card, keys[i] != 0, "indexed=%v id=%q", indexed, id)
				if keys[i] == 0 {
					continue
				}
				if prev, ok := idOf[keys[i]]; ok {
					require.Equal(t, prev, id, "indexed=%v: one key for two ids", indexed)
				}
				idOf[keys[i]] = id
			}
			probes = probes[n:]
		}
		require.Greater(t, len(idOf), 400)
	}
}

// FuzzKeys: cards and probes split from the input (cards before a 0 byte,
// probes after, one a line): Keys agrees with the map on which probes are
// cards, and gives two probes one key only when they are equal.
func FuzzKeys(f *testing.F) {
	f.Add([]byte("a\ncard-1\ncard-12\n\x00card-1\ncard-2\na\n\ncard-12"))
	f.Add([]byte("abcdefghijklmno\nabcdefghijklmnop\n\x00abcdefghijklmnop\nabcdefghijklmno\nabcdefghijklmn"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cards, probes, _ := bytes.Cut(data, []byte{0})
		kb := &KB{}
		for _, id := range strings.Split(string(cards), "\n") {
			if _, dup := kb.byID[id]; !dup {
				require.NoError(t, kb.add(Card{ID: id, File: "kb.jsonl", Line: len(kb.Cards) + 1}))
			}
		}
		kb.buildIndex()
		ids := strings.Split(string(probes), "\n")
		keys := make([]uint64, len(ids))
		kb.Keys(ids, keys)
		for i, id := range ids {
			_, card := kb.byID[id]
			require.Equal(t, card, keys[i] != 0, "%q", id)
			for j := range i {
				if keys[i] != 0 && keys[j] == keys[i] {
					require.Equal(t, ids[j], id)
				}
			}
		}
	})
}
