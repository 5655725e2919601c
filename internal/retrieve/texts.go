package retrieve

import (
	"context"
	"math"
	"strings"
	"unsafe"

	"github.com/retrieval-gate/retrieval-gate/internal/input/kbfile"
	"github.com/retrieval-gate/retrieval-gate/internal/offheap"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/chunk"
)

// textSlabSize is the size of one slab of chunk texts; a longer text gets a
// slab of its own.
const textSlabSize = 4 << 20

// chunkTexts holds the texts of a run's chunks outside the Go heap, in slabs
// filled in chunk order, so that the collector's headroom is not sized from
// them and a slab whose chunks are all embedded goes back to the system at once
// (release). Where no mapping is available the texts stay on the heap.
type chunkTexts struct {
	chunks  []chunk.Chunk
	slabs   []textSlab // not yet freed, in chunk order
	cur     []byte     // the unused tail of the slab being filled
	cleared int        // chunks[:cleared] have no text any more
}

type textSlab struct {
	mem []byte
	end int // index after the slab's last chunk (math.MaxInt while it is filled)
}

// splitCards chunks every card of kb in card order (chunk.Split) with each
// chunk's text in slabs outside the heap, its card id copied (one copy per
// card) and its locale interned, so that no chunk holds a string of the KB:
// kb is only read (the caller may share it), and becomes garbage as soon as
// nobody else holds it. It stops with ctx's error once ctx ends (checked
// every 1,024 cards), the chunks split so far kept for release.
func splitCards(ctx context.Context, kb *kbfile.KB, p chunk.Params) (*chunkTexts, error) {
	t := &chunkTexts{}
	locales := map[string]string{}
	for i := range kb.Cards {
		if i&1023 == 0 {
			if err := ctx.Err(); err != nil {
				t.close()
				return t, err
			}
		}
		cs := chunk.SplitCard(kb.Cards[i], p)
		if len(cs) == 0 {
			continue
		}
		parent := strings.Clone(cs[0].ParentID)
		l, ok := locales[cs[0].Locale]
		if !ok {
			// In canonical case, as Build files it (and so fingerprinted).
			l = strings.Clone(canonicalLocale(cs[0].Locale))
			locales[strings.Clone(cs[0].Locale)] = l
		}
		for _, c := range cs {
			c.ParentID, c.Locale, c.Text = parent, l, t.store(c.Text)
			t.chunks = append(t.chunks, c)
		}
	}
	t.close()
	return t, nil
}

// store copies s into the current slab (a new one when it does not fit) and
// returns the copy.
func (t *chunkTexts) store(s string) string {
	if s == "" {
		return ""
	}
	if len(s) > len(t.cur) {
		t.close()
		b, mapped := offheap.Alloc(max(len(s), textSlabSize))
		if !mapped {
			// The heap: one string per text, freed by the collector.
			return strings.Clone(s)
		}
		t.slabs = append(t.slabs, textSlab{mem: b, end: math.MaxInt})
		t.cur = b
	}
	n := copy(t.cur, s)
	out := unsafe.String(unsafe.SliceData(t.cur), n) //nolint:gosec // G103: the slab outlives every string into it (release clears them first)
	t.cur = t.cur[n:]
	return out
}

// close ends the current slab: its chunks are those added so far.
func (t *chunkTexts) close() {
	if n := len(t.slabs); n > 0 && t.slabs[n-1].end == math.MaxInt {
		t.slabs[n-1].end = len(t.chunks)
	}
	t.cur = nil
}

// release empties the texts of chunks[:done] and frees every slab that holds
// only their texts. Nothing may read those texts afterwards.
func (t *chunkTexts) release(done int) {
	done = min(done, len(t.chunks))
	for i := t.cleared; i < done; i++ {
		t.chunks[i].Text = ""
	}
	t.cleared = max(t.cleared, done)
	for len(t.slabs) > 0 && t.slabs[0].end <= t.cleared {
		offheap.Free(t.slabs[0].mem)
		t.slabs = t.slabs[1:]
	}
}
