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

// Reserver is a Store that can size itself before an ingest whose record count
// and dimension are known, so that its vectors are never copied to grow.
type Reserver interface {
	// Reserve makes room for n more records of dimension dim.
	Reserve(n, dim int) error
}

// Filler is a Store that lets the embedder write vectors straight into its own
// rows, so that no per-record vector is allocated and copied.
type Filler interface {
	// AddFilled appends recs (their Vector fields unused): fill receives
	// len(recs)*dim zeroed floats, row-major, one row per record in order, and
	// writes the vectors. The store's dimension must be known (Reserve or an
	// earlier Add). When fill fails nothing is added.
	AddFilled(ctx context.Context, recs []Record, fill func(dst []float32) error) error
}

// Exporter is a Store that can read back every record it holds with the
// vector its index searches (the exact check of retrieve --exact-check runs
// an exact search over them): page receives the records page by page (their
// slices valid only during the call), in a stable order. dim is the vectors'
// dimension (a store may size its requests by it). It returns the cost of the
// read.
type Exporter interface {
	Export(ctx context.Context, dim int, page func(recs []Record) error) (ExportCost, error)
}

// ExportCost is what reading a store's vectors back cost: the records read,
// the requests made to a server (0 in process) and the bytes of their answers.
type ExportCost struct {
	Records, Requests int
	Bytes             int64
}
