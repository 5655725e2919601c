package embed

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/httpretry"
	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos/jsontest"
)

// An answer in which one object has two keys that differ only in case (or one
// key twice) can be read two ways: encoding/json takes the last, a strict
// reader the first. The embedders refuse it, as the chat client does.
func TestEmbeddersRefuseFoldedKeys(t *testing.T) {
	openAI := func(body string) Embedder {
		e, err := NewOpenAI(OpenAIConfig{URL: "http://embed.test", HTTP: jsontest.AnswerClient([]byte(body)), Policy: httpretry.Policy{Attempts: 1}})
		require.NoError(t, err)
		return e
	}
	ollama := func(body string) Embedder {
		e, err := NewOllama(OllamaConfig{URL: "http://embed.test", Model: "m", HTTP: jsontest.AnswerClient([]byte(body))})
		require.NoError(t, err)
		return e
	}
	tests := []struct {
		name string
		e    Embedder
	}{
		{"openai data twice", openAI(`{"data":[{"index":0,"embedding":[1]}],"DATA":[{"index":0,"embedding":[2]}]}`)},
		{"openai embedding twice", openAI(`{"data":[{"index":0,"embedding":[1],"Embedding":[2]}]}`)},
		{"openai same key twice", openAI(`{"data":[{"index":0,"embedding":[1],"embedding":[2]}]}`)},
		{"ollama embeddings twice", ollama(`{"embeddings":[[1,2]],"Embeddings":[[3,4]]}`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.e.EmbedDocuments(context.Background(), []string{"a"})
			assert.ErrorContains(t, err, "malformed response")
		})
	}
	// The same answers with the key once are read.
	vecs, err := openAI(`{"data":[{"index":0,"embedding":[1]}]}`).EmbedDocuments(context.Background(), []string{"a"})
	require.NoError(t, err)
	assert.Equal(t, [][]float32{{1}}, vecs)
	vecs, err = ollama(`{"embeddings":[[1,2]]}`).EmbedDocuments(context.Background(), []string{"a"})
	require.NoError(t, err)
	assert.Equal(t, [][]float32{{1, 2}}, vecs)
}
