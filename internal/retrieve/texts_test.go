package retrieve

import (
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/input/kbfile"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/chunk"
)

// TestSplitCards: the chunks are chunk.Split's, in card order; no chunk's card
// id or locale shares memory with the card it came from, a card's chunks share
// one copy of its id, a locale is stored once for the run, the cards are
// emptied, and release empties the texts of the chunks it is given (and only
// those) and frees their slabs.
func TestSplitCards(t *testing.T) {
	line := `{"id": "card-1", "locale": "en"} {"id": "card-2", "locale": "en"}`
	// Substrings of line, as a zero-copy reader gives them.
	at := func(s string, nth int) string {
		i := 0
		for range nth {
			i += strings.Index(line[i:], s) + 1
		}
		return line[i-1 : i-1+len(s)]
	}
	long := make([]byte, 3*textSlabSize/2) // a text over the slab size: a slab of its own
	for i := range long {
		long[i] = 'a' + byte(i%26)
		if i%7 == 6 {
			long[i] = ' '
		}
	}
	cards := []kbfile.Card{
		{ID: at("card-1", 1), Locale: at("en", 1), Title: "One", Text: "first para\n\nsecond para"},
		{ID: "empty", Locale: "en"},
		{ID: at("card-2", 1), Locale: at("en", 2), Title: "Two", Text: string(long)},
		{ID: "card-3", Locale: "fr", Text: "trois"},
	}
	p := chunk.Params{MaxRunes: 1 << 30}
	want := chunk.Split(cards, p)
	kb := &kbfile.KB{Cards: append([]kbfile.Card(nil), cards...)}
	texts, err := splitCards(t.Context(), kb, p)
	require.NoError(t, err)
	require.Equal(t, want, texts.chunks)
	assert.Equal(t, cards, kb.Cards, "the KB is only read: a caller may share it")
	chunks := texts.chunks
	for _, c := range chunks {
		assert.False(t, inLine(line, c.ParentID), c.ID)
		assert.False(t, inLine(line, c.Locale), c.ID)
	}
	assert.Equal(t, unsafe.StringData(chunks[0].Locale), unsafe.StringData(chunks[1].Locale))
	if runtime.GOOS == "linux" { // mapped slabs: card-1's, card-2's long text, card-3's
		require.Len(t, texts.slabs, 3)
	}
	slabs := len(texts.slabs)
	texts.release(1)
	assert.Len(t, texts.slabs, max(0, slabs-1))
	assert.Empty(t, chunks[0].Text)
	assert.Equal(t, want[1].Text, chunks[1].Text)
	assert.Equal(t, want[2].Text, chunks[2].Text)
	texts.release(len(chunks))
	for _, c := range chunks {
		assert.Empty(t, c.Text)
	}
	assert.Empty(t, texts.slabs)
}

// inLine reports whether s's bytes lie inside line's.
func inLine(line, s string) bool {
	lo := uintptr(unsafe.Pointer(unsafe.StringData(line)))
	p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
	return p >= lo && p < lo+uintptr(len(line))
}
