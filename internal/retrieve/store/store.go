// Package store is the one small interface behind which the vector indexes live:
// memory (in-process exact search) and chroma (a Chroma server).
package store

import "context"

// Record is one chunk to index.
type Record struct {
	ID       string // chunk id
	ParentID string // card id
	Locale   string
	Text     string
	Vector   []float32
}

// Query is one vector query; Locale, when not empty, restricts the candidates to
// records of exactly that locale.
type Query struct {
	Vector []float32
	Locale string
}

// Hit is a result: a record id and its cosine similarity to the query.
type Hit struct {
	ID    string
	Score float64
}

// Store is a vector index.
type Store interface {
	// Name is the --store name.
	Name() string
	// Add indexes records (in batches; callers may call it several times).
	Add(ctx context.Context, recs []Record) error
	// Search returns, for each query, up to k hits, best first.
	Search(ctx context.Context, qs []Query, k int) ([][]Hit, error)
	// Close releases the store; a temporary index is deleted, even when ctx is
	// already cancelled.
	Close(ctx context.Context) error
}
