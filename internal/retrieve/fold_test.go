package retrieve

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/input/kbfile"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/chunk"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/embed"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store/memory"
)

// TestOtherSpellingRetrieved: a query finds the card that writes its word
// another way a reader calls the same word (docs/retrieve.md, "Embedders":
// the terms of BM25 and of the hash embedder), with every strategy. The card
// sought is "b"; "a" shares no term with the query, so when the spellings are
// different terms, lexical returns nothing and dense ranks "a" first (equal
// scores come in chunk id order).
func TestOtherSpellingRetrieved(t *testing.T) {
	tests := []struct {
		name, card, other, query string
	}{
		{"greek capitals without accents", "ΛΟΓΟΣ ΚΑΙ ΠΡΑΞΗ", "Ο ΚΑΙΡΟΣ ΣΗΜΕΡΑ", "λόγος"},
		// ɨ (i with stroke, which Unicode does not decompose) typed as i.
		{"a stroke letter typed without its stroke", "Ɨvy pytã", "Mba'éichapa", "ivy"},
	}
	for _, tt := range tests {
		cards := []kbfile.Card{{ID: "a", Title: "a", Text: tt.other}, {ID: "b", Title: "b", Text: tt.card}}
		chunks := chunk.Split(cards, chunk.Params{})
		texts := make([]string, len(chunks))
		for i, c := range chunks {
			texts[i] = c.Text
		}
		for _, strategy := range Strategies {
			t.Run(tt.name+"/"+strategy, func(t *testing.T) {
				ix, err := Build(context.Background(), chunks, embed.NewHash(256, texts), memory.New(1), false, Options{Strategy: strategy, K: 2})
				require.NoError(t, err)
				res, err := ix.Search(context.Background(), []Query{{Text: tt.query}})
				require.NoError(t, err)
				require.NotEmpty(t, res[0], "no result for %q", tt.query)
				assert.Equal(t, "b", res[0][0].ParentID)
			})
		}
	}
}
