// Package chroma is the Chroma-server vector store, through a small client of
// Chroma's v2 REST API (client.go).
//
// By default each run uses a temporary collection with a unique name, deleted by
// Close (which uses its own short timeout, so it also runs after Ctrl-C). A named
// collection is kept: it is reused while its fingerprint (stored in the collection
// metadata, together with the chunk count) matches, and dropped and rebuilt when
// it does not. Vectors are always computed by retrieval-gate and passed in; the
// collection has no embedding function, so the server never embeds.
package chroma

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

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
	client    *client
	col       *collection // nil until created or found
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
	client := newClient(url, httpretry.NewHTTPClient(&httpretry.Transport{Policy: chromaPolicy(timeout)}))
	hctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	err = client.heartbeat(hctx)
	cancel()
	if err != nil {
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
			return nil, false, err
		}
		return s, false, nil
	}
	s.name = cfg.Collection
	col, err := client.getCollection(ctx, s.name)
	switch {
	case err == nil:
		fp, _ := col.Metadata[MetaFingerprint].(string)
		n, cerr := client.count(ctx, col.ID)
		if cerr == nil && fp == cfg.Fingerprint && n == cfg.Chunks {
			s.col = &col
			return s, true, nil
		}
		// Stale (or incomplete): rebuild.
		if err := client.deleteCollection(ctx, s.name); err != nil {
			return nil, false, fmt.Errorf("failed to delete stale chroma collection %q: %w", s.name, err)
		}
	case ctx.Err() != nil:
		return nil, false, ctx.Err()
	case !errors.Is(err, errNotFound):
		return nil, false, fmt.Errorf("failed to look up chroma collection %q at %s: %w", s.name, url, err)
	}
	if err := s.create(ctx, false); err != nil {
		return nil, false, err
	}
	return s, false, nil
}

func (s *Store) create(ctx context.Context, temporary bool) error {
	md := map[string]any{
		MetaFingerprint: s.fp,
		MetaChunks:      s.chunks,
		MetaTemporary:   temporary,
		"hnsw:space":    "cosine", // the index's distance: cosine
	}
	col, err := s.client.createCollection(ctx, s.name, md)
	if err != nil {
		return fmt.Errorf("failed to create chroma collection %q at %s: %w", s.name, s.url, err)
	}
	s.col = &col
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
		req := addRequest{
			IDs:        make([]string, len(part)),
			Embeddings: make([][]float32, len(part)),
			Documents:  make([]string, len(part)),
			Metadatas:  make([]map[string]string, len(part)),
		}
		for i, r := range part {
			req.IDs[i] = r.ID
			req.Documents[i] = r.Text
			req.Embeddings[i] = r.Vector
			req.Metadatas[i] = map[string]string{"parent_id": r.ParentID, "locale": r.Locale}
		}
		if err := s.client.add(ctx, s.col.ID, req); err != nil {
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
			req := queryRequest{QueryEmbeddings: make([][]float32, len(part)), NResults: k, Include: []string{"distances"}}
			for j, i := range part {
				req.QueryEmbeddings[j] = qs[i].Vector
			}
			if loc != "" {
				req.Where = map[string]any{"locale": map[string]string{"$eq": loc}}
			}
			res, err := s.client.query(ctx, s.col.ID, req)
			if err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				return nil, fmt.Errorf("chroma query on collection %q: %w", s.name, err)
			}
			for j, i := range part {
				if j >= len(res.IDs) {
					break
				}
				ids, dist := res.IDs[j], res.Distances[j]
				if len(dist) != len(ids) {
					return nil, fmt.Errorf("chroma query on collection %q: %d ids but %d distances", s.name, len(ids), len(dist))
				}
				hits := make([]store.Hit, len(ids))
				for r, id := range ids {
					hits[r] = store.Hit{ID: id, Score: 1 - dist[r]}
				}
				out[i] = hits
			}
		}
	}
	return out, nil
}

// Close deletes a temporary collection (with a fresh 10 s context, so that it
// also happens after cancellation).
func (s *Store) Close(context.Context) error {
	var err error
	if s.temporary && s.col != nil {
		dctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if derr := s.client.deleteCollection(dctx, s.name); derr != nil {
			err = fmt.Errorf("failed to delete temporary chroma collection %q: %w", s.name, derr)
		}
		cancel()
		s.col = nil
	}
	return err
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func init() {
	store.Register(store.Kind{Name: "chroma", Description: "a Chroma server", URLEnv: "CHROMA_URL", Collections: true,
		Open: func(ctx context.Context, cfg store.Config) (*store.Opened, error) {
			s, ready, err := Open(ctx, Config{URL: cfg.URL, Collection: cfg.Collection, Chunks: cfg.Chunks, Fingerprint: cfg.Fingerprint})
			if err != nil {
				return nil, err
			}
			o := &store.Opened{Store: s, Ready: ready}
			switch {
			case s.Temporary():
				o.Notice = fmt.Sprintf("chroma %s: temporary collection %s (deleted at exit)", cfg.URL, s.Collection())
				o.Closed = fmt.Sprintf("temporary collection %s deleted", s.Collection())
			case ready:
				o.Notice = fmt.Sprintf("chroma %s: reusing collection %s (fingerprint matches)", cfg.URL, s.Collection())
			default:
				o.Notice = fmt.Sprintf("chroma %s: (re)building collection %s", cfg.URL, s.Collection())
			}
			return o, nil
		}})
}
