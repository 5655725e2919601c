// Package chroma is the Chroma-server vector store, through chroma-go's v2 API
// client (github.com/amikos-tech/chroma-go, pinned v0.4.0).
//
// By default each run uses a temporary collection with a unique name, deleted by
// Close (which uses its own short timeout, so it also runs after Ctrl-C). A named
// collection is kept: it is reused while its fingerprint (stored in the collection
// metadata, together with the chunk count) matches, and dropped and rebuilt when
// it does not. Vectors are always computed by retrieval-gate and passed in; the
// collection gets a placeholder embedding function that refuses to embed, so
// chroma-go never tries to download its default ONNX model.
package chroma

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	v2 "github.com/amikos-tech/chroma-go/pkg/api/v2"
	"github.com/amikos-tech/chroma-go/pkg/embeddings"

	"github.com/retrieval-gate/retrieval-gate/internal/httpretry"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store"
)

// Metadata keys of a collection made by retrieval-gate.
const (
	MetaFingerprint = "retrieval_gate_fingerprint"
	MetaChunks      = "retrieval_gate_chunks"
	MetaTemporary   = "retrieval_gate_temporary"
	// TempPrefix starts the name of every temporary collection.
	TempPrefix = "retrieval-gate-tmp-"
)

// Config configures Open.
type Config struct {
	URL         string
	Collection  string // "" means a temporary collection
	Fingerprint string // of the KB content, embedder and chunking
	Chunks      int    // number of records the finished collection holds
	BatchSize   int    // records per Add request; <= 0 means 500
	// Timeout bounds each request to the server; <= 0 means 2 minutes.
	Timeout time.Duration
}

// chromaPolicy is the retry policy of the Chroma client: each request bounded by
// timeout, only idempotent requests retried on 5xx (an Add may have been applied),
// rate limits waited for.
func chromaPolicy(timeout time.Duration) httpretry.Policy {
	p := httpretry.DefaultPolicy
	p.Timeout, p.Budget, p.NonIdempotentPOST = timeout, 0, true
	return p
}

// Store is a Chroma collection.
type Store struct {
	client    v2.Client
	col       v2.Collection
	name      string
	temporary bool
	batch     int
	url       string
	added     int
	fp        string
	chunks    int
}

// Open connects to the server and prepares the collection. ready reports that a
// named collection with a matching fingerprint already holds every chunk, so
// Add must be skipped.
func Open(ctx context.Context, cfg Config) (s *Store, ready bool, err error) {
	url := strings.TrimRight(cfg.URL, "/")
	if url == "" {
		return nil, false, errors.New("no Chroma URL: pass --chroma-url or set CHROMA_URL")
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	client, err := v2.NewHTTPClient(v2.WithBaseURL(url), v2.WithHTTPClient(httpretry.NewHTTPClient(&httpretry.Transport{Policy: chromaPolicy(timeout)})))
	if err != nil {
		return nil, false, fmt.Errorf("chroma client for %s: %w", url, err)
	}
	hctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	err = client.Heartbeat(hctx)
	cancel()
	if err != nil {
		_ = client.Close()
		if ctx.Err() != nil {
			return nil, false, ctx.Err()
		}
		return nil, false, fmt.Errorf("chroma server at %s is not reachable (start one with scripts/chroma-local start, or check --chroma-url): %w", url, err)
	}
	s = &Store{client: client, batch: cfg.BatchSize, url: url, fp: cfg.Fingerprint, chunks: cfg.Chunks}
	if s.batch <= 0 {
		s.batch = 500
	}
	if cfg.Collection == "" {
		s.name = TempPrefix + time.Now().UTC().Format("20060102t150405") + "-" + randomHex(6)
		s.temporary = true
		if err := s.create(ctx, true); err != nil {
			_ = client.Close()
			return nil, false, err
		}
		return s, false, nil
	}
	s.name = cfg.Collection
	col, err := client.GetCollection(ctx, s.name, v2.WithEmbeddingFunctionGet(noEmbed{}))
	if err == nil {
		fp, _ := col.Metadata().GetString(MetaFingerprint)
		n, cerr := col.Count(ctx)
		if cerr == nil && fp == cfg.Fingerprint && n == cfg.Chunks {
			s.col = col
			return s, true, nil
		}
		// Stale (or incomplete): rebuild.
		if err := client.DeleteCollection(ctx, s.name); err != nil {
			_ = client.Close()
			return nil, false, fmt.Errorf("failed to delete stale chroma collection %q: %w", s.name, err)
		}
	} else if ctx.Err() != nil {
		_ = client.Close()
		return nil, false, ctx.Err()
	}
	if err := s.create(ctx, false); err != nil {
		_ = client.Close()
		return nil, false, err
	}
	return s, false, nil
}

func (s *Store) create(ctx context.Context, temporary bool) error {
	md := v2.NewMetadata(
		v2.NewStringAttribute(MetaFingerprint, s.fp),
		v2.NewIntAttribute(MetaChunks, int64(s.chunks)),
		v2.NewBoolAttribute(MetaTemporary, temporary),
	)
	col, err := s.client.CreateCollection(ctx, s.name,
		v2.WithEmbeddingFunctionCreate(noEmbed{}),
		v2.WithDisableEFConfigStorage(),
		v2.WithCollectionMetadataCreate(md),
		v2.WithHNSWSpaceCreate(embeddings.COSINE), // after the metadata, which it writes into
	)
	if err != nil {
		return fmt.Errorf("failed to create chroma collection %q at %s: %w", s.name, s.url, err)
	}
	s.col = col
	return nil
}

// Name is "chroma".
func (s *Store) Name() string { return "chroma" }

// Collection is the collection name.
func (s *Store) Collection() string { return s.name }

// Temporary reports whether Close deletes the collection.
func (s *Store) Temporary() bool { return s.temporary }

// Add uploads records in batches of Config.BatchSize.
func (s *Store) Add(ctx context.Context, recs []store.Record) error {
	for start := 0; start < len(recs); start += s.batch {
		part := recs[start:min(start+s.batch, len(recs))]
		ids := make([]v2.DocumentID, len(part))
		texts := make([]string, len(part))
		embs := make([]embeddings.Embedding, len(part))
		mds := make([]v2.DocumentMetadata, len(part))
		for i, r := range part {
			ids[i] = v2.DocumentID(r.ID)
			texts[i] = r.Text
			embs[i] = embeddings.NewEmbeddingFromFloat32(r.Vector)
			mds[i] = v2.NewDocumentMetadata(
				v2.NewStringAttribute("parent_id", r.ParentID),
				v2.NewStringAttribute("locale", r.Locale),
			)
		}
		if err := s.col.Add(ctx, v2.WithIDs(ids...), v2.WithTexts(texts...), v2.WithEmbeddings(embs...), v2.WithMetadatas(mds...)); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("failed to add chunks to chroma collection %q: %w", s.name, err)
		}
		s.added += len(part)
	}
	return nil
}

// Search runs one Query request per locale group (Chroma's where filter applies
// to all query vectors of a request), in batches of at most 100 vectors.
// Scores are cosine similarities (1 - Chroma's cosine distance).
func (s *Store) Search(ctx context.Context, qs []store.Query, k int) ([][]store.Hit, error) {
	out := make([][]store.Hit, len(qs))
	if k <= 0 || len(qs) == 0 {
		return out, nil
	}
	groups := map[string][]int{}
	var order []string
	for i, q := range qs {
		if _, ok := groups[q.Locale]; !ok {
			order = append(order, q.Locale)
		}
		groups[q.Locale] = append(groups[q.Locale], i)
	}
	const maxVectors = 100
	for _, loc := range order {
		idx := groups[loc]
		for start := 0; start < len(idx); start += maxVectors {
			part := idx[start:min(start+maxVectors, len(idx))]
			embs := make([]embeddings.Embedding, len(part))
			for j, i := range part {
				embs[j] = embeddings.NewEmbeddingFromFloat32(qs[i].Vector)
			}
			opts := []v2.CollectionQueryOption{
				v2.WithQueryEmbeddings(embs...),
				v2.WithNResults(k),
				v2.WithIncludeQuery(v2.IncludeDistances),
			}
			if loc != "" {
				opts = append(opts, v2.WithWhereQuery(v2.EqString("locale", loc)))
			}
			res, err := s.col.Query(ctx, opts...)
			if err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				return nil, fmt.Errorf("chroma query on collection %q: %w", s.name, err)
			}
			impl, ok := res.(*v2.QueryResultImpl)
			if !ok {
				return nil, fmt.Errorf("chroma query: unexpected result type %T", res)
			}
			groups := impl.RowGroups()
			for j, i := range part {
				if j >= len(groups) {
					break
				}
				hits := make([]store.Hit, 0, len(groups[j]))
				for _, row := range groups[j] {
					hits = append(hits, store.Hit{ID: string(row.ID), Score: 1 - row.Score})
				}
				out[i] = hits
			}
		}
	}
	return out, nil
}

// Close deletes a temporary collection (with a fresh 10 s context, so that it
// also happens after cancellation) and closes the client.
func (s *Store) Close(context.Context) error {
	var err error
	if s.temporary && s.col != nil {
		dctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if derr := s.client.DeleteCollection(dctx, s.name); derr != nil {
			err = fmt.Errorf("failed to delete temporary chroma collection %q: %w", s.name, derr)
		}
		cancel()
		s.col = nil
	}
	_ = s.client.Close()
	return err
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// noEmbed is the collection's embedding function: retrieval-gate always passes
// vectors, so being asked to embed is a bug.
type noEmbed struct{}

var errNoEmbed = errors.New("retrieval-gate passes precomputed vectors; the chroma collection must not embed")

func (noEmbed) EmbedDocuments(context.Context, []string) ([]embeddings.Embedding, error) {
	return nil, errNoEmbed
}
func (noEmbed) EmbedQuery(context.Context, string) (embeddings.Embedding, error) {
	return nil, errNoEmbed
}
func (noEmbed) Name() string { return "retrieval_gate_precomputed" }
func (noEmbed) GetConfig() embeddings.EmbeddingFunctionConfig {
	return embeddings.EmbeddingFunctionConfig{}
}
func (noEmbed) DefaultSpace() embeddings.DistanceMetric { return embeddings.COSINE }
func (noEmbed) SupportedSpaces() []embeddings.DistanceMetric {
	return []embeddings.DistanceMetric{embeddings.COSINE}
}
