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
	"net/http"
	neturl "net/url"
	"strings"
	"sync"
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

// Token transport headers, as Chroma's chroma_auth_token_transport_header
// names them: Authorization carries "Bearer <token>", X-Chroma-Token the token.
const (
	HeaderAuthorization = "Authorization"
	HeaderXChromaToken  = "X-Chroma-Token" //nolint:gosec // G101: a header's name, not a credential
)

// CloudHost is Chroma Cloud's API host: a URL on it (or a subdomain of
// trychroma.com) is Chroma Cloud, which needs an API key, a tenant and a database.
const CloudHost = "api.trychroma.com"

// Config configures Open.
type Config struct {
	URL        string
	Collection string // "" means a temporary collection
	// Tenant and Database are the tenant and database of the collections; ""
	// means Chroma's default_tenant and default_database.
	Tenant, Database string
	// APIKey is the token sent with every request to URL's origin (never to
	// another, never printed); "" sends none.
	APIKey string
	// TokenHeader is HeaderAuthorization or HeaderXChromaToken (Chroma's
	// spellings AUTHORIZATION and X_CHROMA_TOKEN, any case, are accepted); ""
	// means X-Chroma-Token on Chroma Cloud and Authorization elsewhere.
	TokenHeader string
	// CreateDatabase creates the tenant and database when they do not exist;
	// without it a missing one is an error naming it.
	CreateDatabase bool
	Fingerprint    string // of the KB content, embedder and chunking
	Chunks         int    // number of records the finished collection holds
	// MaxIDBytes is the length of the longest chunk id the collection holds (a
	// query's answer is bounded by it: queryAnswerCap); the ids Add sends
	// count too.
	MaxIDBytes int
	BatchSize  int // records per Add request; <= 0 means 500
	// Timeout bounds each request to the server; <= 0 means 2 minutes.
	Timeout time.Duration
}

// chromaPolicy is the retry policy of the Chroma client: each request bounded by
// timeout, only idempotent requests retried on 5xx (an Add may have been applied;
// a query's and a get's POSTs, which read only, are marked
// httpretry.WithSafeRetry), rate limits waited for.
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
	url       string // for messages: without the URL's credentials
	added     int
	fp        string
	chunks    int
	maxID     int // the longest id of a chunk (Config.MaxIDBytes, and every id Add sent)
	cfg       Config
	// ended is when the run's context ended (markEnded), zero before;
	// unwatch stops the watch of watchEnd.
	endMu   sync.Mutex
	ended   time.Time
	unwatch func() bool
	// Created is set when Open created the database (Config.CreateDatabase).
	Created bool
}

// ensureDatabase checks that the tenant and the database exist (the server
// lists nothing in a database that does not exist, and creates the collection of
// none), and creates them when Config.CreateDatabase says so.
func (s *Store) ensureDatabase(ctx context.Context) error {
	c, cfg := s.client, s.cfg
	err := c.getDatabase(ctx)
	if err == nil {
		return nil
	}
	if !errors.Is(err, errNotFound) {
		return fmt.Errorf("failed to look up chroma database %q of tenant %q at %s: %w", cfg.Database, cfg.Tenant, s.url, err)
	}
	terr := c.getTenant(ctx)
	if terr != nil && !errors.Is(terr, errNotFound) {
		return fmt.Errorf("failed to look up chroma tenant %q at %s: %w", cfg.Tenant, s.url, terr)
	}
	if !cfg.CreateDatabase {
		if terr != nil {
			return fmt.Errorf("chroma tenant %q does not exist at %s: create it and its database %q, or pass --chroma-create-database", cfg.Tenant, s.url, cfg.Database)
		}
		return fmt.Errorf("chroma database %q of tenant %q does not exist at %s: create it, or pass --chroma-create-database", cfg.Database, cfg.Tenant, s.url)
	}
	if terr != nil {
		if err := c.createTenant(ctx); err != nil && !conflict(err) {
			return fmt.Errorf("failed to create chroma tenant %q at %s: %w", cfg.Tenant, s.url, err)
		}
	}
	if err := c.createDatabase(ctx); err != nil && !conflict(err) {
		return fmt.Errorf("failed to create chroma database %q of tenant %q at %s: %w", cfg.Database, cfg.Tenant, s.url, err)
	}
	s.Created = true
	return nil
}

// conflict reports a 409: created meanwhile by another run.
func conflict(err error) bool { return errors.Is(err, errConflict) }

// explain adds to a refusal of the credentials (401, 403) what to check.
func (s *Store) explain(err error) error {
	if err == nil || !errors.Is(err, errAuth) {
		return err
	}
	if s.cfg.APIKey == "" {
		return fmt.Errorf("%w (the server needs a token: pass --chroma-api-key or set CHROMA_API_KEY)", err)
	}
	return fmt.Errorf("%w (the server refused the token sent as %s on tenant %q, database %q: check --chroma-api-key or $CHROMA_API_KEY, --chroma-token-header, --chroma-tenant and --chroma-database)", err, s.cfg.TokenHeader, s.cfg.Tenant, s.cfg.Database)
}

// IsCloud reports whether rawURL is Chroma Cloud (api.trychroma.com, or any host
// under trychroma.com).
func IsCloud(rawURL string) bool {
	u, err := neturl.Parse(strings.TrimSpace(rawURL))
	if err != nil {
		return false
	}
	h := strings.ToLower(u.Hostname())
	return h == "trychroma.com" || strings.HasSuffix(h, ".trychroma.com")
}

// SettingError is a setting of Config that Check refuses; Setting is its
// flag's name without "chroma-" (tenant, database, api-key, token-header).
type SettingError struct {
	Setting string
	Err     error
}

func (e *SettingError) Error() string { return e.Err.Error() }
func (e *SettingError) Unwrap() error { return e.Err }

// Check validates cfg without a request and returns it normalized: the token
// header spelled as sent, the defaults of tenant and database filled in. Chroma
// Cloud needs an API key, a tenant and a database other than the defaults (as
// chroma-go's cloud client does).
func Check(cfg Config) (Config, error) {
	switch strings.ToLower(strings.ReplaceAll(strings.TrimSpace(cfg.TokenHeader), "_", "-")) {
	case "":
		cfg.TokenHeader = HeaderAuthorization
		if IsCloud(cfg.URL) {
			cfg.TokenHeader = HeaderXChromaToken
		}
	case "authorization":
		cfg.TokenHeader = HeaderAuthorization
	case "x-chroma-token":
		cfg.TokenHeader = HeaderXChromaToken
	default:
		return cfg, &SettingError{"token-header", fmt.Errorf("must be Authorization or X-Chroma-Token, got %q", cfg.TokenHeader)}
	}
	if strings.ContainsAny(cfg.APIKey, "\r\n") {
		return cfg, &SettingError{"api-key", errors.New("the API key contains a line break")}
	}
	if IsCloud(cfg.URL) {
		switch {
		case cfg.APIKey == "":
			return cfg, &SettingError{"api-key", errors.New("an API key is required by Chroma Cloud (--chroma-api-key or $CHROMA_API_KEY)")}
		case cfg.Tenant == "" || cfg.Tenant == DefaultTenant:
			return cfg, &SettingError{"tenant", errors.New("a tenant is required by Chroma Cloud (--chroma-tenant or $CHROMA_TENANT; the tenant id of your Chroma Cloud account)")}
		case cfg.Database == "" || cfg.Database == DefaultDatabase:
			return cfg, &SettingError{"database", errors.New("a database is required by Chroma Cloud (--chroma-database or $CHROMA_DATABASE)")}
		}
	}
	if cfg.Tenant == "" {
		cfg.Tenant = DefaultTenant
	}
	if cfg.Database == "" {
		cfg.Database = DefaultDatabase
	}
	return cfg, nil
}

// Open connects to the server and prepares the collection. ready reports that a
// named collection with a matching fingerprint already holds every chunk, so
// Add must be skipped.
func Open(ctx context.Context, cfg Config) (s *Store, ready bool, err error) {
	url := strings.TrimRight(cfg.URL, "/")
	if url == "" {
		return nil, false, errors.New("no Chroma URL: pass --chroma-url or set CHROMA_URL")
	}
	if cfg, err = Check(cfg); err != nil {
		return nil, false, err
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	tr := &httpretry.Transport{Policy: chromaPolicy(timeout), MaxBody: maxAnswer}
	if cfg.APIKey != "" {
		v := cfg.APIKey
		if cfg.TokenHeader == HeaderAuthorization {
			v = "Bearer " + v
		}
		tr.Origin, tr.Credentials, tr.Secrets = httpretry.Origin(url), http.Header{cfg.TokenHeader: {v}}, []string{cfg.APIKey}
		if tr.Origin == "" {
			return nil, false, fmt.Errorf("chroma URL %q is not an absolute URL", httpretry.RedactURL(url))
		}
	}
	// The URL's own credentials (user information, sent as Basic
	// credentials) are secrets too: redacted from every error, and the URL
	// the messages name is shown without them.
	tr.Secrets = append(tr.Secrets, httpretry.URLSecrets(url)...)
	client := newClient(url, cfg.Tenant, cfg.Database, httpretry.NewHTTPClient(tr))
	client.secrets = tr.Secrets
	shown := httpretry.RedactURL(url)
	hctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	err = client.heartbeat(hctx)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return nil, false, ctx.Err()
		}
		return nil, false, fmt.Errorf("chroma server at %s is not reachable (start one with scripts/chroma-local start, or check --chroma-url): %w", shown, err)
	}
	s = &Store{client: client, batch: cfg.BatchSize, url: shown, fp: cfg.Fingerprint, chunks: cfg.Chunks, maxID: cfg.MaxIDBytes, cfg: cfg}
	opened := s
	s.unwatch = s.watchEnd(ctx)
	defer func() {
		if err != nil {
			opened.unwatch()
		}
		err = opened.explain(err)
	}()
	if cfg.Tenant != DefaultTenant || cfg.Database != DefaultDatabase {
		if err := s.ensureDatabase(ctx); err != nil {
			return nil, false, err
		}
	}
	if s.batch <= 0 {
		s.batch = 500
	}
	if cfg.Collection == "" {
		s.name = TempPrefix + time.Now().UTC().Format("20060102t150405") + "-" + randomHex(6)
		s.temporary = true
		if err := s.create(ctx, true); err != nil {
			return nil, false, s.dropFailedCreate(ctx, err)
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
		return nil, false, fmt.Errorf("failed to look up chroma collection %q at %s: %w", s.name, shown, err)
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

// dropFailedCreate deletes the temporary collection whose create failed
// (createErr), within cleanupContext's budget: the request may have reached
// the server, which created the collection, and its answer been lost (a
// connection reset, a timeout); the name is this run's, so no other run's
// collection is deleted. The error returned is createErr with what became of
// the name.
func (s *Store) dropFailedCreate(ctx context.Context, createErr error) error {
	dctx, cancel := s.cleanupContext(ctx)
	defer cancel()
	switch derr := s.client.deleteCollection(dctx, s.name); {
	case derr == nil:
		return fmt.Errorf("%w (the server had created it: deleted)", createErr)
	case errors.Is(derr, errNotFound):
		return fmt.Errorf("%w (the server did not create it)", createErr)
	default:
		return fmt.Errorf("%w; the server may have created it, and deleting it failed too (delete it on the server if it exists: %s): %w", createErr, s.deleteCommand(), derr)
	}
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
			s.maxID = max(s.maxID, len(r.ID))
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
			hits, err := s.client.query(ctx, s.col.ID, req, s.maxID)
			if err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				return nil, fmt.Errorf("chroma query on collection %q: %w", s.name, err)
			}
			for j, i := range part {
				out[i] = hits[j]
			}
		}
	}
	return out, nil
}

// ExportPage is the number of records one get request of Export reads.
const ExportPage = 1000

// Export reads every record of the collection back with its embedding and
// locale (store.Exporter), ExportPage at a time (POST .../get with limit and
// offset, in the server's order), for an exact search over the vectors the
// index holds. A page's answer is bounded by getAnswerCap; a record whose
// embedding is not of dimension dim, a page of more records than asked and a
// record read twice are errors.
func (s *Store) Export(ctx context.Context, dim int, page func(recs []store.Record) error) (store.ExportCost, error) {
	var cost store.ExportCost
	recs := make([]store.Record, 0, ExportPage)
	seen := map[string]struct{}{}
	for offset := 0; ; offset += ExportPage {
		res, n, err := s.client.get(ctx, s.col.ID, getRequest{Limit: ExportPage, Offset: offset, Include: []string{"embeddings", "metadatas"}},
			getAnswerCap(ExportPage, dim, s.maxIDBytes()), getValuesCap(ExportPage, dim))
		cost.Requests++
		cost.Bytes += n
		if err != nil {
			if ctx.Err() != nil {
				return cost, ctx.Err()
			}
			return cost, fmt.Errorf("chroma get on collection %q: %w", s.name, err)
		}
		if len(res.IDs) > ExportPage {
			return cost, fmt.Errorf("chroma get on collection %q: %d records for a limit of %d (the server ignores limit)", s.name, len(res.IDs), ExportPage)
		}
		recs = recs[:0]
		for i, id := range res.IDs {
			// Chroma's ids are unique in a collection: one read twice means
			// that the pages overlap (the server ignores offset, or the
			// collection changed while it was read), and the exact search
			// would count it twice.
			if _, dup := seen[id]; dup {
				return cost, fmt.Errorf("chroma get on collection %q: record %q read twice at offset %d (the collection changed while it was read, or the server ignores offset)", s.name, id, offset)
			}
			seen[id] = struct{}{}
			if len(res.Embeddings[i]) != dim {
				return cost, fmt.Errorf("chroma get on collection %q: record %q has dimension %d, the queries %d", s.name, id, len(res.Embeddings[i]), dim)
			}
			loc, _ := res.Metadatas[i]["locale"].(string)
			recs = append(recs, store.Record{ID: id, Locale: loc, Vector: res.Embeddings[i]})
		}
		if err := page(recs); err != nil {
			return cost, err
		}
		cost.Records += len(recs)
		if len(res.IDs) < ExportPage {
			return cost, nil
		}
	}
}

// maxIDBytes bounds the ids a get answer may hold: the longest Add sent, or
// 1 KiB when none was sent (a reused collection).
func (s *Store) maxIDBytes() int {
	if s.maxID > 0 {
		return s.maxID
	}
	return 1 << 10
}

// cleanupTimeout bounds the delete of a temporary collection. Once the run's
// context is done (a signal), the delete ends at most cancelledCleanup after
// that moment, not after the delete began: every wait stops within a second of
// SIGINT or SIGTERM, and a server that stopped answering would otherwise hold
// the process for the whole 10 s. The rest of the second is the exit's (the
// output's abort, the last lines on standard error).
//
// The budget is most of that second because a busy Chroma answers the delete
// late right after the run's adds, still busy with them although their client
// has gone (measured after a cancel: 13-300 ms on an idle machine, where an
// idle collection's delete takes 2-24 ms; up to 640 ms with three busy loops
// on two cores; adds of 64 records instead of 256 did not shorten it), and a delete
// given up is given up by the server too, leaving the collection. 300 ms
// from the start of the delete left it about once in 26 runs of
// TestRetrieveCancelDeletesTemporaryCollection.
const (
	cleanupTimeout   = 10 * time.Second
	cancelledCleanup = 750 * time.Millisecond
)

// watchEnd records when ctx, the run's context, ends (the signal), so that
// a cleanup's budget counts from then (cleanupContext); the returned func
// stops watching.
func (s *Store) watchEnd(ctx context.Context) func() bool {
	return context.AfterFunc(ctx, func() { s.markEnded() })
}

// markEnded records now as the run's end unless it was recorded before, and
// returns the end recorded.
func (s *Store) markEnded() time.Time {
	s.endMu.Lock()
	defer s.endMu.Unlock()
	if s.ended.IsZero() {
		s.ended = time.Now()
	}
	return s.ended
}

// cleanupContext is the context of a cleanup request (the delete of a
// temporary collection): its own, so that it also runs after cancellation,
// of cleanupTimeout, and done cancelledCleanup after ctx's end at most.
func (s *Store) cleanupContext(ctx context.Context) (context.Context, context.CancelFunc) {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	stop := context.AfterFunc(ctx, func() {
		time.AfterFunc(time.Until(s.markEnded().Add(cancelledCleanup)), cancel)
	})
	return dctx, func() { stop(); cancel() }
}

// deleteCommand is the shell command that deletes the collection, for the
// warning that one was left on the server: curl with the DELETE the store
// sends, the URL with its credentials masked (httpretry.RedactURL) and the API key, when one is used, as
// $CHROMA_API_KEY (never its value).
func (s *Store) deleteCommand() string {
	u := strings.ReplaceAll(httpretry.RedactURL(s.client.collectionsURL(s.name)), "'", `'\''`)
	cmd := "curl -X DELETE '" + u + "'"
	switch {
	case s.cfg.APIKey == "":
	case s.cfg.TokenHeader == HeaderXChromaToken:
		cmd += ` -H "X-Chroma-Token: $CHROMA_API_KEY"`
	default:
		cmd += ` -H "Authorization: Bearer $CHROMA_API_KEY"`
	}
	return cmd
}

// Close deletes a temporary collection within cleanupContext's budget. When
// the delete fails (after a signal: when the server did not answer it within
// the budget), the error names the collection and the command that deletes
// it. It may remain, or not: a busy Chroma mostly drops a delete whose client
// gave up, and sometimes finishes it after all (the command then answers 404).
func (s *Store) Close(ctx context.Context) error {
	var err error
	if s.temporary && s.col != nil {
		dctx, cancel := s.cleanupContext(ctx)
		if derr := s.client.deleteCollection(dctx, s.name); derr != nil {
			err = fmt.Errorf("failed to delete temporary chroma collection %q (it may remain on the server; delete it with: %s): %w", s.name, s.deleteCommand(), derr)
		}
		cancel()
		s.col = nil
	}
	if s.unwatch != nil {
		s.unwatch()
		s.unwatch = nil
	}
	return err
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func init() {
	// The variables chroma-go reads (CHROMA_API_KEY by its cloud client): names, not credentials.
	store.Register(store.Kind{Name: "chroma", Description: "a Chroma server", URLEnv: "CHROMA_URL", Collections: true, //nolint:gosec // G101: variable names
		KeyEnv:    "CHROMA_API_KEY",
		TenantEnv: "CHROMA_TENANT", DatabaseEnv: "CHROMA_DATABASE", TokenHeaderEnv: "CHROMA_AUTH_TOKEN_TRANSPORT_HEADER",
		Check: func(cfg store.Config) error {
			_, err := Check(config(cfg))
			if se := (*SettingError)(nil); errors.As(err, &se) {
				return &store.SettingError{Setting: se.Setting, Err: se.Err}
			}
			return err
		},
		Open: func(ctx context.Context, cfg store.Config) (*store.Opened, error) {
			s, ready, err := Open(ctx, config(cfg))
			if err != nil {
				return nil, err
			}
			o := &store.Opened{Store: s, Ready: ready}
			where := httpretry.RedactURL(cfg.URL)
			if c := s.cfg; c.Tenant != DefaultTenant || c.Database != DefaultDatabase {
				where += fmt.Sprintf(" (tenant %s, database %s)", c.Tenant, c.Database)
			}
			if s.Created {
				where += ", database created"
			}
			switch {
			case s.Temporary():
				o.Notice = fmt.Sprintf("chroma %s: temporary collection %s (deleted at exit)", where, s.Collection())
				o.Closed = fmt.Sprintf("temporary collection %s deleted", s.Collection())
			case ready:
				o.Notice = fmt.Sprintf("chroma %s: reusing collection %s (fingerprint matches)", where, s.Collection())
			default:
				o.Notice = fmt.Sprintf("chroma %s: (re)building collection %s", where, s.Collection())
			}
			return o, nil
		}})
}

// config is the store's Config of the registry's.
func config(cfg store.Config) Config {
	return Config{URL: cfg.URL, Collection: cfg.Collection, Chunks: cfg.Chunks, MaxIDBytes: cfg.MaxIDBytes, Fingerprint: cfg.Fingerprint,
		Tenant: cfg.Tenant, Database: cfg.Database, APIKey: cfg.APIKey, TokenHeader: cfg.TokenHeader, CreateDatabase: cfg.CreateDatabase}
}
