package generate

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/input/kbfile"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve"
)

// The round trip's searchers give back what they hold when released: the
// memory store's vectors (no dense hit after) and the lexical postings (no
// lexical hit after), at once rather than at a cleanup after a collection.
func TestRoundTripSearchersRelease(t *testing.T) {
	ctx := context.Background()
	kb := &kbfile.KB{Cards: []kbfile.Card{
		{ID: "reset", Locale: "en", Text: "How to reset your password from the sign-in page."},
		{ID: "invoice", Locale: "en", Text: "Download an invoice from the billing page."},
		{ID: "export", Locale: "en", Text: "Export your data as a CSV file from the settings."},
	}}
	searchers, release, err := roundTripSearchers(ctx, kb, 2)
	require.NoError(t, err)
	require.Len(t, searchers, len(retrieve.Strategies))
	q := []retrieve.Query{{Text: "reset password", Locale: "en"}}
	for i, s := range searchers {
		res, err := s.Search(ctx, q)
		require.NoError(t, err)
		require.NotEmpty(t, res[0], "%s before release", retrieve.Strategies[i])
	}
	release()
	for i, s := range searchers {
		res, err := s.Search(ctx, q)
		require.NoError(t, err)
		assert.Empty(t, res[0], "%s after release", retrieve.Strategies[i])
	}
}
