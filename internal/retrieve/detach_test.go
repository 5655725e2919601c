package retrieve

import (
	"strings"
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
	// Substrings of line, as a zero-copy reader gives them.
	at := func(s string, nth int) string {
		i := 0
		for range nth {
			i += strings.Index(line[i:], s) + 1
		}
		return line[i-1 : i-1+len(s)]
	}
	chunks := []chunk.Chunk{
		{ID: "card-1#c1", ParentID: at("card-1", 1), Locale: at("en", 1)},
		{ID: "card-1#c2", ParentID: at("card-1", 1), Locale: at("en", 1)},
		{ID: "card-2#c1", ParentID: at("card-2", 1), Locale: at("en", 2)},
	}
	assert.True(t, inLine(line, chunks[2].Locale))
	detach(chunks)
	for _, c := range chunks {
		assert.False(t, inLine(line, c.ParentID), c.ID)
		assert.False(t, inLine(line, c.Locale), c.ID)
	}
	assert.Equal(t, []string{"card-1", "card-1", "card-2"}, []string{chunks[0].ParentID, chunks[1].ParentID, chunks[2].ParentID})
	assert.Equal(t, unsafe.StringData(chunks[0].ParentID), unsafe.StringData(chunks[1].ParentID))
	assert.Equal(t, unsafe.StringData(chunks[0].Locale), unsafe.StringData(chunks[2].Locale))
	assert.Equal(t, "en", chunks[2].Locale)
}

// inLine reports whether s's bytes lie inside line's.
func inLine(line, s string) bool {
	lo := uintptr(unsafe.Pointer(unsafe.StringData(line)))
	p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
	return p >= lo && p < lo+uintptr(len(line))
}
