package kbfile

import (
	"hash/maphash"
)

// idIndex answers Has for check's hot path: ten lookups per case, millions per
// run, while the cases stream through the caches and evict what is not small. A
// Go map of strings keeps each key's bytes elsewhere on the heap (a cache miss
// on top of the table's); here the table is 8 bytes a slot (32 bits of the
// id's hash and where its bytes are) and the ids are packed in one arena, so a
// lookup touches the small table and, only when the hash bits match, the arena.
// Open addressing with linear probing, at most half full. Ids longer than
// maxIndexedID bytes are not in it: Has asks the map for those.
type idIndex struct {
	seed  maphash.Seed
	mask  uint64
	slots []uint64 // 0: empty; else hash>>32 << 32 | (offset in arena + 1)
	arena []byte   // per id: its length (one byte), then its bytes
}

const (
	maxIndexedID = 255
	// maxIndexed bounds the index (2^18 slots, 2 MiB, at most); a larger KB
	// uses the map only.
	maxIndexed = 1 << 17
)

// buildIndex indexes the KB's ids of at most maxIndexedID bytes (all of them in
// the map as well), or does nothing for a KB of more than maxIndexed cards.
func (kb *KB) buildIndex() {
	if len(kb.Cards) > maxIndexed {
		return
	}
	n := 16
	for n < 2*len(kb.Cards) {
		n *= 2
	}
	x := &idIndex{seed: maphash.MakeSeed(), mask: uint64(n - 1), slots: make([]uint64, n)} //nolint:gosec // G115: n is a positive power of two
	for i := range kb.Cards {
		id := kb.Cards[i].ID
		if len(id) > maxIndexedID {
			continue
		}
		h := maphash.String(x.seed, id)
		j := h & x.mask
		for x.slots[j] != 0 {
			j = (j + 1) & x.mask
		}
		x.slots[j] = h>>32<<32 | uint64(len(x.arena)+1)
		x.arena = append(x.arena, byte(len(id))) //nolint:gosec // G115: len(id) <= maxIndexedID (255)
		x.arena = append(x.arena, id...)
	}
	kb.index = x
}

// has reports whether the index holds id, which is at most maxIndexedID bytes.
func (x *idIndex) has(id string) bool {
	h := maphash.String(x.seed, id)
	tag := h >> 32
	for j := h & x.mask; ; j = (j + 1) & x.mask {
		v := x.slots[j]
		if v == 0 {
			return false
		}
		if v>>32 == tag {
			off := int(uint32(v)) //nolint:gosec // G115: the low 32 bits hold offset + 1 (the length byte's successor)
			if n := int(x.arena[off-1]); n == len(id) && string(x.arena[off:off+n]) == id {
				return true
			}
		}
	}
}
