package chroma

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/httpretry"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store"
)

// The REST client: the calls of Chroma's v2 HTTP API that the store needs, on
// one tenant and database. It replaces chroma-go (v0.4.0), whose v2 package also
// links its embedded local runtime and default ONNX embedder, both loaded through
// purego, which made the binary dynamically linked against libc.

const (
	// DefaultTenant and DefaultDatabase are Chroma's defaults.
	DefaultTenant   = "default_tenant"
	DefaultDatabase = "default_database"
	// maxErrBody bounds how much of an error response is read into a message.
	maxErrBody = 64 << 10
	// maxHeartbeat bounds the heartbeat's answer ({"nanosecond heartbeat": N}).
	maxHeartbeat = 64 << 10
	// maxAnswer bounds every other answer but a query's (a tenant, a database,
	// a collection with its metadata, a count): the Transport's MaxBody.
	maxAnswer = 1 << 20
	// maxQueryResult bounds one result of a query answer besides its id (the
	// distance, quotes, commas and brackets).
	maxQueryResult = 64
)

// queryAnswerCap bounds the answer to a query of n vectors for k results each,
// whose ids are at most maxID bytes (JSON escaping at most sextuples them):
// maxAnswer plus n·k·(6·maxID + maxQueryResult).
func queryAnswerCap(n, k, maxID int) int64 {
	per := 6*int64(max(maxID, 0)) + maxQueryResult
	return maxAnswer + int64(max(n, 0))*int64(max(k, 0))*per
}

var (
	// errNotFound is a 404 from the server (a collection, database or tenant
	// that does not exist).
	errNotFound = errors.New("not found")
	// errAuth is a 401 or 403: the server refused the credentials.
	errAuth = errors.New("refused")
	// errConflict is a 409: what was created exists already.
	errConflict = errors.New("exists")
)

type client struct {
	http             *http.Client
	base             string // server URL + "/api/v2"
	tenant, database string
	secrets          []string // redacted from every message (the API key)
}

func newClient(serverURL, tenant, database string, hc *http.Client) *client {
	return &client{http: hc, base: strings.TrimRight(serverURL, "/") + "/api/v2", tenant: tenant, database: database}
}

// collection is the part of Chroma's collection model the store reads.
type collection struct {
	ID       string         `json:"id"`
	Name     string         `json:"name"`
	Metadata map[string]any `json:"metadata"`
}

func (c *client) collectionsURL(parts ...string) string {
	p := []string{"tenants", url.PathEscape(c.tenant), "databases", url.PathEscape(c.database), "collections"}
	for _, s := range parts {
		p = append(p, url.PathEscape(s))
	}
	return c.base + "/" + strings.Join(p, "/")
}

// do sends one request with an optional JSON body and decodes a JSON answer of
// at most limit bytes (<= 0: maxAnswer) into out (when non-nil; a longer answer
// is an *httpretry.TooLargeError). A non-2xx status is an error naming the
// status and Chroma's error message; 404 wraps errNotFound.
func (c *client) do(ctx context.Context, method, u string, body, out any, limit int64) error {
	if limit <= 0 {
		limit = maxAnswer
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(httpretry.WithMaxBody(ctx, limit), method, u, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		raw, _ := httpretry.ReadSnippet(resp.Body, maxErrBody)
		// The Rust server's {"error", "message"}; the Python server's auth
		// refusals are FastAPI's {"detail"}.
		var e struct {
			Error   string `json:"error"`
			Message string `json:"message"`
			Detail  string `json:"detail"`
		}
		msg := strings.TrimSpace(string(raw))
		if json.Unmarshal(raw, &e) == nil && (e.Error != "" || e.Message != "") {
			msg = strings.TrimSpace(e.Error + ": " + e.Message)
		} else if e.Detail != "" {
			msg = e.Detail
		}
		msg = httpretry.Redact(msg, c.secrets...)
		err := fmt.Errorf("%s %s: HTTP %d: %s", method, strings.TrimPrefix(u, c.base), resp.StatusCode, msg)
		switch resp.StatusCode {
		case http.StatusNotFound:
			return fmt.Errorf("%w: %w", errNotFound, err)
		case http.StatusConflict:
			return fmt.Errorf("%w: %w", errConflict, err)
		case http.StatusUnauthorized, http.StatusForbidden:
			return fmt.Errorf("%w: %w", errAuth, err)
		}
		return err
	}
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body) // at most limit bytes: the body is bounded
		return nil
	}
	data, err := httpretry.ReadAnswer(ctx, resp.Body, resp.ContentLength, limit, u)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, strings.TrimPrefix(u, c.base), err)
	}
	if err := httpretry.UnmarshalAnswer(data, out); err != nil {
		// The decoder quotes the answer, which may echo a credential.
		return fmt.Errorf("%s %s: decoding the answer: %w", method, strings.TrimPrefix(u, c.base), httpretry.RedactErr(err, c.secrets...))
	}
	return nil
}

func (c *client) heartbeat(ctx context.Context) error {
	var hb map[string]json.Number
	if err := c.do(ctx, http.MethodGet, c.base+"/heartbeat", nil, &hb, maxHeartbeat); err != nil {
		return err
	}
	if _, ok := hb["nanosecond heartbeat"]; !ok {
		return errors.New("heartbeat: the answer is not a Chroma v2 heartbeat")
	}
	return nil
}

// getTenant and getDatabase look up the client's tenant and database (a 404 wraps
// errNotFound).
func (c *client) getTenant(ctx context.Context) error {
	var out map[string]any
	return c.do(ctx, http.MethodGet, c.base+"/tenants/"+url.PathEscape(c.tenant), nil, &out, 0)
}

func (c *client) getDatabase(ctx context.Context) error {
	var out map[string]any
	return c.do(ctx, http.MethodGet, c.base+"/tenants/"+url.PathEscape(c.tenant)+"/databases/"+url.PathEscape(c.database), nil, &out, 0)
}

func (c *client) createTenant(ctx context.Context) error {
	return c.do(ctx, http.MethodPost, c.base+"/tenants", map[string]string{"name": c.tenant}, nil, 0)
}

func (c *client) createDatabase(ctx context.Context) error {
	return c.do(ctx, http.MethodPost, c.base+"/tenants/"+url.PathEscape(c.tenant)+"/databases", map[string]string{"name": c.database}, nil, 0)
}

func (c *client) createCollection(ctx context.Context, name string, metadata map[string]any) (collection, error) {
	var col collection
	err := c.do(ctx, http.MethodPost, c.collectionsURL(), map[string]any{"name": name, "metadata": metadata}, &col, 0)
	return col, err
}

func (c *client) getCollection(ctx context.Context, name string) (collection, error) {
	var col collection
	err := c.do(ctx, http.MethodGet, c.collectionsURL(name), nil, &col, 0)
	return col, err
}

func (c *client) deleteCollection(ctx context.Context, name string) error {
	return c.do(ctx, http.MethodDelete, c.collectionsURL(name), nil, nil, 0)
}

func (c *client) count(ctx context.Context, id string) (int, error) {
	var n int
	err := c.do(ctx, http.MethodGet, c.collectionsURL(id, "count"), nil, &n, 0)
	return n, err
}

type addRequest struct {
	IDs        []string            `json:"ids"`
	Embeddings [][]float32         `json:"embeddings"`
	Documents  []string            `json:"documents"`
	Metadatas  []map[string]string `json:"metadatas"`
}

func (c *client) add(ctx context.Context, id string, req addRequest) error {
	return c.do(ctx, http.MethodPost, c.collectionsURL(id, "add"), req, nil, 0)
}

type queryRequest struct {
	QueryEmbeddings [][]float32    `json:"query_embeddings"`
	NResults        int            `json:"n_results"`
	Where           map[string]any `json:"where,omitempty"`
	Include         []string       `json:"include"`
}

// queryResult is a query's answer: one list of ids and one of distances per
// query vector, nearest first. A null id or distance is kept as nil, to be
// refused (encoding/json would read it as "" or 0).
type queryResult struct {
	IDs       [][]*string  `json:"ids"`
	Distances [][]*float64 `json:"distances"`
}

// query runs a query whose result ids are at most maxID bytes (the answer's cap:
// queryAnswerCap) and returns each query vector's hits, checked against
// Chroma's query semantics: one list of ids and one of distances per query
// vector, a vector's two lists of one length, at most n_results, no id or
// distance null, distances non-decreasing (nearest first).
func (c *client) query(ctx context.Context, id string, req queryRequest, maxID int) ([][]store.Hit, error) {
	var res queryResult
	// A query reads and changes nothing: re-sent on a 5xx or a lost
	// connection, which the policy does not do for a POST (an add).
	if err := c.do(httpretry.WithSafeRetry(ctx), http.MethodPost, c.collectionsURL(id, "query"), req, &res, queryAnswerCap(len(req.QueryEmbeddings), req.NResults, maxID)); err != nil {
		return nil, err
	}
	n := len(req.QueryEmbeddings)
	if len(res.IDs) != n || len(res.Distances) != n {
		return nil, fmt.Errorf("query: %d id lists and %d distance lists for %d query vectors", len(res.IDs), len(res.Distances), n)
	}
	out := make([][]store.Hit, n)
	for j, ids := range res.IDs {
		dist := res.Distances[j]
		if len(dist) != len(ids) || len(ids) > req.NResults {
			return nil, fmt.Errorf("query: vector %d: %d ids and %d distances (n_results %d)", j, len(ids), len(dist), req.NResults)
		}
		hits := make([]store.Hit, len(ids))
		for r, id := range ids {
			d := dist[r]
			switch {
			case id == nil || d == nil:
				return nil, fmt.Errorf("query: vector %d: result %d: a null id or distance", j, r)
			case r > 0 && *d < *dist[r-1]:
				return nil, fmt.Errorf("query: vector %d: distances out of order (%g after %g)", j, *d, *dist[r-1])
			}
			hits[r] = store.Hit{ID: *id, Score: 1 - *d}
		}
		out[j] = hits
	}
	return out, nil
}

type getRequest struct {
	Limit   int      `json:"limit"`
	Offset  int      `json:"offset"`
	Include []string `json:"include"`
}

type getResult struct {
	IDs        []string         `json:"ids"`
	Embeddings [][]float32      `json:"embeddings"`
	Metadatas  []map[string]any `json:"metadatas"`
}

// getAnswerCap bounds the answer to a get of n records of dimension dim:
// a float as JSON is at most 32 bytes (Chroma writes float32s, -1.2345678e-38
// and its comma), an id at most maxID bytes escaped six times over, a record's
// metadata (parent_id, locale) maxMeta, plus maxGetAnswer for the rest.
func getAnswerCap(n, dim, maxID int) int64 {
	const maxMeta, maxGetAnswer = 4 << 10, 1 << 20
	per := 32*int64(max(dim, 1)) + 6*int64(max(maxID, 256)) + maxMeta
	return maxGetAnswer + int64(max(n, 0))*per
}

// getValuesCap bounds the values of the answer to a get of n records of
// dimension dim (httpretry.UnmarshalAnswerCap): each record's embedding, its id
// and a metadata of a few keys, and a few thousand for the rest. The byte cap
// alone let a page of "{}," metadatas take 1.4 GB decoded.
func getValuesCap(n, dim int) int {
	return 4096 + max(n, 0)*(max(dim, 1)+64)
}

// get reads a page of the collection's records with their embeddings and
// metadata (POST .../get, limit and offset), at most limit bytes and maxValues
// values of answer, and returns the answer's length.
func (c *client) get(ctx context.Context, id string, req getRequest, limit int64, maxValues int) (getResult, int64, error) {
	var res getResult
	u := c.collectionsURL(id, "get")
	b, err := json.Marshal(req)
	if err != nil {
		return res, 0, err
	}
	// A get reads and changes nothing: re-sent as a query is.
	hr, err := http.NewRequestWithContext(httpretry.WithSafeRetry(httpretry.WithMaxBody(ctx, limit)), http.MethodPost, u, bytes.NewReader(b))
	if err != nil {
		return res, 0, err
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(hr)
	if err != nil {
		return res, 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrBody))
		return res, 0, fmt.Errorf("POST %s: HTTP %d: %s", strings.TrimPrefix(u, c.base), resp.StatusCode, httpretry.Redact(strings.TrimSpace(string(raw)), c.secrets...))
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return res, int64(len(data)), err
	}
	if int64(len(data)) > limit {
		return res, int64(len(data)), fmt.Errorf("POST %s: the answer is longer than %d bytes", strings.TrimPrefix(u, c.base), limit)
	}
	if err := httpretry.UnmarshalAnswerCap(data, &res, maxValues); err != nil {
		return res, int64(len(data)), fmt.Errorf("POST %s: decoding the answer: %w", strings.TrimPrefix(u, c.base), err)
	}
	if len(res.Embeddings) != len(res.IDs) || len(res.Metadatas) != len(res.IDs) {
		return res, int64(len(data)), fmt.Errorf("POST %s: %d ids, %d embeddings and %d metadatas", strings.TrimPrefix(u, c.base), len(res.IDs), len(res.Embeddings), len(res.Metadatas))
	}
	return res, int64(len(data)), nil
}
