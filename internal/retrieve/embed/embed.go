// Package embed turns texts into dense vectors: the built-in hash embedder
// (offline, lexical) and clients of embedding servers (OpenAI-compatible
// /v1/embeddings, Ollama), with batching and bounded concurrency.
package embed

import (
	"context"
	"fmt"

	"golang.org/x/sync/errgroup"
)

// Embedder embeds documents and queries. Vectors of one embedder all have the
// same dimension.
type Embedder interface {
	// Name is the --embedder name: "hash", "openai" or "ollama".
	Name() string
	// Fingerprint identifies the vectors this embedder produces (name, model,
	// dimension, server); it is part of a collection fingerprint. Never a secret.
	Fingerprint() string
	EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error)
	EmbedQueries(ctx context.Context, texts []string) ([][]float32, error)
}

// IntoEmbedder is an Embedder of a known dimension that can write document
// vectors into a caller's buffer (a store's rows) instead of allocating them.
type IntoEmbedder interface {
	Embedder
	// Dim is the dimension of every vector.
	Dim() int
	// EmbedDocumentsInto writes the vectors of texts, row-major, into dst
	// (len(texts)*Dim() floats): the vectors EmbedDocuments returns.
	EmbedDocumentsInto(ctx context.Context, texts []string, dst []float32) error
}

// batchFunc embeds one batch; it must return one vector per text, in order.
type batchFunc func(ctx context.Context, texts []string) ([][]float32, error)

// defaultBatch is the texts per request to an embedding server: TEI's default
// --max-client-batch-size, past which its /v1/embeddings (and /embed) answers
// 413 "batch size N > maximum allowed batch size 32" to every request; the
// other servers named in docs/retrieve.md take more (OpenAI 2,048, vLLM and
// Ollama any number).
const defaultBatch = 32

// Batching splits requests to a server.
type Batching struct {
	Size        int // texts per request; <= 0 means defaultBatch
	Concurrency int // requests in flight; <= 0 means 4
}

// size is the texts per request.
func (b Batching) size() int {
	if b.Size <= 0 {
		return defaultBatch
	}
	return b.Size
}

// run embeds texts in batches of b.Size with at most b.Concurrency requests in
// flight, checking that each batch returns one vector per text of one dimension.
func (b Batching) run(ctx context.Context, texts []string, fn batchFunc) ([][]float32, error) {
	size, conc := b.size(), b.Concurrency
	if conc <= 0 {
		conc = 4
	}
	out := make([][]float32, len(texts))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(conc)
	for start := 0; start < len(texts); start += size {
		end := min(start+size, len(texts))
		g.Go(func() error {
			vecs, err := fn(gctx, texts[start:end])
			if err != nil {
				return err
			}
			if len(vecs) != end-start {
				return fmt.Errorf("embedding server returned %d vectors for %d texts", len(vecs), end-start)
			}
			copy(out[start:end], vecs)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	dim := -1
	for i, v := range out {
		if len(v) == 0 {
			return nil, fmt.Errorf("embedding server returned an empty vector for text %d", i)
		}
		if allZero(v) {
			// A zero vector has no direction: every similarity is 0 and nothing
			// would be retrieved. It is the server's (or the model's) fault.
			return nil, fmt.Errorf("embedding server returned an all-zero vector for text %d (of %d): check the model and the server", i, len(out))
		}
		if dim >= 0 && len(v) != dim {
			return nil, fmt.Errorf("embedding server returned vectors of different dimensions (%d and %d)", dim, len(v))
		}
		dim = len(v)
	}
	return out, nil
}

// allZero reports whether every component of v is 0.
func allZero(v []float32) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}
