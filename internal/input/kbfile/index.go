package kbfile

import (
	"encoding/binary"
	"hash/maphash"
	"unsafe"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
)

// idIndex answers Has for check's hot path: ten lookups per case, millions per
// run, while the cases stream through the caches and evict what is not small.
//
// An id of at most maxShortID bytes (most ids: "card-1007", "faq/returns") is
// looked up in short: its bytes packed in two words (shortKey) are the key, so
// a lookup hashes two words inline and compares them with one slot (one cache
// line), no call and no second memory access.
//
// A longer id: a Go map of strings keeps each key's bytes elsewhere on the heap
// (a cache miss on top of the table's); here the table is 8 bytes a slot (32
// bits of the id's hash and where its bytes are) and the ids are packed in one
// arena, so a lookup touches the small table and, only when the hash bits
// match, the arena. Ids longer than maxIndexedID bytes are not in it: Has asks
// the map for those.
//
// Both tables: open addressing with linear probing, at most half full.
type idIndex struct {
	seed  maphash.Seed
	mask  uint64
	slots []uint64 // 0: empty; else hash>>32 << 32 | (offset in arena + 1)
	arena []byte   // per id: its length (one byte), then its bytes

	short     []shortSlot
	shortMask uint64
	k0, k1    uint64 // the short table's hash keys (random per index)
}

// shortSlot is an id of at most maxShortID bytes (shortKey); w1 == 0: empty.
type shortSlot struct{ w0, w1 uint64 }

// maxShortID is the longest id of the short table: 15 bytes and its length fit
// two words.
const maxShortID = 15

// shortKey packs id (at most maxShortID bytes) in two words: its bytes in
// order (little-endian), zero-padded, and its length plus one in the top byte
// of the second, so distinct ids have distinct keys and no key is all zero.
// The bytes are loaded a word (or half a word) at a time, the loads
// overlapping instead of reading past the end of the id.
func shortKey(id string) (w0, w1 uint64) {
	n := len(id)
	switch {
	case n >= 8:
		// For n = 8 the shift is 64: w1 = 0 (Go's shifts past the width),
		// with no branch on the length to mispredict (ids of 8 and 9 bytes
		// alternate at random in a stream of cases).
		w0 = input.LE64(id, 0)
		w1 = input.LE64(id, n-8) >> (8 * (16 - n))
	case n >= 4:
		w0 = uint64(input.LE32(id, 0)) | uint64(input.LE32(id, n-4)>>(8*(8-n)))<<32
	default:
		for i := n - 1; i >= 0; i-- {
			w0 = w0<<8 | uint64(id[i])
		}
	}
	return w0, w1 | uint64(n+1)<<56
}

// shortKey8 is shortKey of an id of 8 to maxShortID bytes (most ids:
// "card-1007"), small enough to be inlined where it is called: a call of
// shortKey (which its loop keeps from being inlined) spills and reloads the
// caller's registers around it.
func shortKey8(id string) (w0, w1 uint64) {
	n := len(id)
	b := unsafe.Slice(unsafe.StringData(id), n) //nolint:gosec // G103: the id's bytes, read only
	return binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[n-8:])>>(8*(16-n)) | uint64(n+1)<<56
}

// shortHash mixes a short key (keyed by k0, k1, so that the slots of a KB's
// ids differ from run to run).
func (x *idIndex) shortHash(w0, w1 uint64) uint64 {
	h := (w0^x.k0)*0x9e3779b97f4a7c15 ^ (w1^x.k1)*0xc2b2ae3d27d4eb4f
	h ^= h >> 29
	h *= 0xbf58476d1ce4e5b9
	return h ^ h>>32
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
	x := &idIndex{seed: maphash.MakeSeed()}
	nShort := 0
	for i := range kb.Cards {
		if len(kb.Cards[i].ID) <= maxShortID {
			nShort++
		}
	}
	x.k0 = maphash.String(x.seed, "k0")
	x.k1 = maphash.String(x.seed, "k1")
	x.short = make([]shortSlot, tableSize(nShort))
	x.shortMask = uint64(len(x.short) - 1) //nolint:gosec // G115: a positive power of two
	x.slots = make([]uint64, tableSize(len(kb.Cards)-nShort))
	x.mask = uint64(len(x.slots) - 1) //nolint:gosec // G115: a positive power of two
	for i := range kb.Cards {
		id := kb.Cards[i].ID
		switch {
		case len(id) <= maxShortID:
			w0, w1 := shortKey(id)
			j := x.shortHash(w0, w1) & x.shortMask
			for x.short[j].w1 != 0 {
				j = (j + 1) & x.shortMask
			}
			x.short[j] = shortSlot{w0, w1}
		case len(id) <= maxIndexedID:
			h := maphash.String(x.seed, id)
			j := h & x.mask
			for x.slots[j] != 0 {
				j = (j + 1) & x.mask
			}
			x.slots[j] = h>>32<<32 | uint64(len(x.arena)+1)
			x.arena = append(x.arena, byte(len(id))) //nolint:gosec // G115: len(id) <= maxIndexedID (255)
			x.arena = append(x.arena, id...)
		}
	}
	kb.index = x
}

// tableSize is the number of slots for n ids: a power of two, at least 2n and 16.
func tableSize(n int) int {
	size := 16
	for size < 2*n {
		size *= 2
	}
	return size
}

// has reports whether the index holds id, which is at most maxIndexedID bytes.
func (x *idIndex) has(id string) bool { return x.key(id) != 0 }

// key is id's key (KB.Keys): the short table's slot of id plus one, or
// len(short) plus the long table's slot plus one; 0 when the index does not
// hold id, which is at most maxIndexedID bytes.
func (x *idIndex) key(id string) uint64 {
	if len(id) <= maxShortID {
		w0, w1 := shortKey(id)
		return x.probeShort(w0, w1, x.shortHash(w0, w1)&x.shortMask)
	}
	h := maphash.String(x.seed, id)
	tag := h >> 32
	for j := h & x.mask; ; j = (j + 1) & x.mask {
		v := x.slots[j]
		if v == 0 {
			return 0
		}
		if v>>32 == tag {
			off := int(uint32(v)) //nolint:gosec // G115: the low 32 bits hold offset + 1 (the length byte's successor)
			if n := int(x.arena[off-1]); n == len(id) && string(x.arena[off:off+n]) == id {
				return uint64(len(x.short)) + j + 1
			}
		}
	}
}

// probeShort is the key of the short key (w0, w1), probed from slot j on.
func (x *idIndex) probeShort(w0, w1, j uint64) uint64 {
	for ; ; j = (j + 1) & x.shortMask {
		switch sl := x.short[j]; {
		case sl.w0 == w0 && sl.w1 == w1:
			return j + 1
		case sl.w1 == 0:
			return 0
		}
	}
}

// keys sets keys[i] to key(ids[i]) (each at most maxIndexedID bytes),
// probeBatch ids at a time: the short ids' slots are computed first (kept in
// keys, which needs no scratch memory to clear) and probed after, so the
// probes (a cache miss each when the stream has evicted the table) do not
// wait on one another or on the hashing between them; a short id's key words
// are made again for its probe, from its bytes just read.
func (x *idIndex) keys(ids []string, keys []uint64) {
	for len(ids) > 0 {
		n := min(len(ids), probeBatch)
		for i, id := range ids[:n] {
			var w0, w1 uint64
			switch n := len(id); {
			case n > maxShortID:
				continue
			case n >= 8:
				w0, w1 = shortKey8(id)
			default:
				w0, w1 = shortKey(id)
			}
			keys[i] = x.shortHash(w0, w1) & x.shortMask
		}
		for i, id := range ids[:n] {
			var w0, w1 uint64
			switch n := len(id); {
			case n > maxShortID:
				keys[i] = x.key(id)
				continue
			case n >= 8:
				w0, w1 = shortKey8(id)
			default:
				w0, w1 = shortKey(id)
			}
			keys[i] = x.probeShort(w0, w1, keys[i])
		}
		ids, keys = ids[n:], keys[n:]
	}
}

// probeBatch is the number of ids keys hashes before it probes them.
const probeBatch = 16
