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

	// Refusals name the setting, so the caller names its own flag; Check
	// refuses what New would, before any work.
	var se *embed.SettingError
	k, _ = embed.Lookup("openai")
	for _, f := range []func(embed.Config) error{k.Check, func(c embed.Config) error { _, err := k.New(c); return err }} {
		err = f(embed.Config{})
		require.ErrorAs(t, err, &se)
		assert.Equal(t, "model", se.Setting, "no URL: api.openai.com, which needs a model")
		err = f(embed.Config{URL: "ftp://x"})
		require.ErrorAs(t, err, &se)
		assert.Equal(t, "url", se.Setting)
		require.NoError(t, f(embed.Config{Model: "text-embedding-3-small"}), "api.openai.com with a model")
	}
	k, _ = embed.Lookup("ollama")
	err = k.Check(embed.Config{})
	require.ErrorAs(t, err, &se)
	assert.Contains(t, se.Error(), "needs --embedder-model")

	// The key is a value of the Config, named by the kind's variable for the
	// front end that reads it.
	k, _ = embed.Lookup("openai")
	assert.Equal(t, "OPENAI_API_KEY", k.KeyEnv)
	e, err = k.New(embed.Config{URL: "http://127.0.0.1:1/v1", APIKey: "sk-x"})
	require.NoError(t, err)
	assert.Equal(t, "openai", e.Name())
}
