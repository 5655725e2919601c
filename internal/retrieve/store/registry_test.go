package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store"
	_ "github.com/retrieval-gate/retrieval-gate/internal/retrieve/store/chroma"
	_ "github.com/retrieval-gate/retrieval-gate/internal/retrieve/store/memory"
)

func TestRegistry(t *testing.T) {
	assert.Equal(t, []string{"chroma", "memory"}, store.Names())
	k, err := store.Lookup("chroma")
	require.NoError(t, err)
	assert.Equal(t, "CHROMA_URL", k.URLEnv)
	assert.True(t, k.Collections)
	k, err = store.Lookup("memory")
	require.NoError(t, err)
	assert.Empty(t, k.URLEnv)
	op, err := k.Open(context.Background(), store.Config{})
	require.NoError(t, err)
	assert.Equal(t, "memory", op.Store.Name())
	assert.False(t, op.Ready)

	_, err = store.Lookup("redis")
	require.EqualError(t, err, `unknown store "redis": must be chroma or memory`)
	assert.PanicsWithValue(t, "store: registered twice: memory", func() {
		store.Register(store.Kind{Name: "memory", Open: k.Open})
	})
	assert.Equal(t, "chroma (a Chroma server) or memory (in-process exact search)", store.Help())
	assert.Equal(t, "a, b or c", store.Choices([]string{"a", "b", "c"}))
}
