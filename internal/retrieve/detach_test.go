package retrieve

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"

	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/chunk"
)

// TestDetach: after detach no chunk's card id or locale shares memory with the
// line it came from, a card's chunks share one copy of its id, and a locale is
// stored once for the run.
func TestDetach(t *testing.T) {
	line := `{"id": "card-1", "locale": "en"} {"id": "card-2", "locale": "en"}`
	sub := func(s string) string { return s } // substrings of line, as a zero-copy reader gives
	chunks := []chunk.Chunk{
		{ID: "card-1#c1", ParentID: sub(line[8:14]), Locale: sub(line[28:30])},
		{ID: "card-1#c2", ParentID: sub(line[8:14]), Locale: sub(line[28:30])},
		{ID: "card-2#c1", ParentID: sub(line[42:48]), Locale: sub(line[62:64])},
	}
	detach(chunks)
	lo, hi := uintptr(unsafe.Pointer(unsafe.StringData(line))), uintptr(unsafe.Pointer(unsafe.StringData(line)))+uintptr(len(line))
	inLine := func(s string) bool {
		p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
		return p >= lo && p < hi
	}
	for _, c := range chunks {
		assert.False(t, inLine(c.ParentID), c.ID)
		assert.False(t, inLine(c.Locale), c.ID)
	}
	assert.Equal(t, []string{"card-1", "card-1", "card-2"}, []string{chunks[0].ParentID, chunks[1].ParentID, chunks[2].ParentID})
	assert.Equal(t, unsafe.StringData(chunks[0].ParentID), unsafe.StringData(chunks[1].ParentID))
	assert.Equal(t, unsafe.StringData(chunks[0].Locale), unsafe.StringData(chunks[2].Locale))
	assert.Equal(t, "en", chunks[2].Locale)
}
