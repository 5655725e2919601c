package embed_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/embed"
)

func TestRegistry(t *testing.T) {
	assert.Equal(t, []string{"hash", "ollama", "openai"}, embed.Names())
	_, err := embed.Lookup("bert")
	require.EqualError(t, err, `unknown embedder "bert": must be hash, ollama or openai`)

	k, err := embed.Lookup("hash")
	require.NoError(t, err)
	e, err := k.New(embed.Config{Documents: []string{"a b", "b c"}})
	require.NoError(t, err)
	assert.Equal(t, "hash", e.Name())

	// Refusals name the setting, so the caller names its own flag.
	var se *embed.SettingError
	k, _ = embed.Lookup("openai")
	_, err = k.New(embed.Config{})
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "model", se.Setting)
	_, err = k.New(embed.Config{URL: "ftp://x"})
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "url", se.Setting)
	k, _ = embed.Lookup("ollama")
	_, err = k.New(embed.Config{})
	require.ErrorAs(t, err, &se)
	assert.Contains(t, se.Error(), "needs --embedder-model")

	// The key comes through Getenv, never from the environment directly.
	k, _ = embed.Lookup("openai")
	e, err = k.New(embed.Config{URL: "http://127.0.0.1:1/v1", Getenv: func(n string) string { return map[string]string{"OPENAI_API_KEY": "sk-x"}[n] }})
	require.NoError(t, err)
	assert.Equal(t, "openai", e.Name())
}
