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
)

// The REST client: the seven calls of Chroma's v2 HTTP API that the store needs,
// on the default tenant and database. It replaces chroma-go (v0.4.0), whose v2
// package also links its embedded local runtime and default ONNX embedder, both
// loaded through purego, which made the binary dynamically linked against libc.

const (
	tenant   = "default_tenant"
	database = "default_database"
	// maxErrBody bounds how much of an error response is read into a message.
	maxErrBody = 64 << 10
)

// errNotFound is a 404 from the server (a collection that does not exist).
var errNotFound = errors.New("not found")

type client struct {
	http *http.Client
	base string // server URL + "/api/v2"
}

func newClient(serverURL string, hc *http.Client) *client {
	return &client{http: hc, base: strings.TrimRight(serverURL, "/") + "/api/v2"}
}

// collection is the part of Chroma's collection model the store reads.
type collection struct {
	ID       string         `json:"id"`
	Name     string         `json:"name"`
	Metadata map[string]any `json:"metadata"`
}

func (c *client) collectionsURL(parts ...string) string {
	p := []string{"tenants", tenant, "databases", database, "collections"}
	for _, s := range parts {
		p = append(p, url.PathEscape(s))
	}
	return c.base + "/" + strings.Join(p, "/")
}

// do sends one request with an optional JSON body and decodes a JSON answer into
// out (when non-nil). A non-2xx status is an error naming the status and Chroma's
// error message; 404 wraps errNotFound.
func (c *client) do(ctx context.Context, method, u string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
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
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrBody))
		var e struct {
			Error   string `json:"error"`
			Message string `json:"message"`
		}
		msg := strings.TrimSpace(string(raw))
		if json.Unmarshal(raw, &e) == nil && (e.Error != "" || e.Message != "") {
			msg = strings.TrimSpace(e.Error + ": " + e.Message)
		}
		err := fmt.Errorf("%s %s: HTTP %d: %s", method, strings.TrimPrefix(u, c.base), resp.StatusCode, msg)
		if resp.StatusCode == http.StatusNotFound {
			return fmt.Errorf("%w: %w", errNotFound, err)
		}
		return err
	}
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("%s %s: decoding the answer: %w", method, strings.TrimPrefix(u, c.base), err)
	}
	return nil
}

func (c *client) heartbeat(ctx context.Context) error {
	var hb map[string]json.Number
	if err := c.do(ctx, http.MethodGet, c.base+"/heartbeat", nil, &hb); err != nil {
		return err
	}
	if _, ok := hb["nanosecond heartbeat"]; !ok {
		return errors.New("heartbeat: the answer is not a Chroma v2 heartbeat")
	}
	return nil
}

func (c *client) createCollection(ctx context.Context, name string, metadata map[string]any) (collection, error) {
	var col collection
	err := c.do(ctx, http.MethodPost, c.collectionsURL(), map[string]any{"name": name, "metadata": metadata}, &col)
	return col, err
}

func (c *client) getCollection(ctx context.Context, name string) (collection, error) {
	var col collection
	err := c.do(ctx, http.MethodGet, c.collectionsURL(name), nil, &col)
	return col, err
}

func (c *client) deleteCollection(ctx context.Context, name string) error {
	return c.do(ctx, http.MethodDelete, c.collectionsURL(name), nil, nil)
}

func (c *client) count(ctx context.Context, id string) (int, error) {
	var n int
	err := c.do(ctx, http.MethodGet, c.collectionsURL(id, "count"), nil, &n)
	return n, err
}

type addRequest struct {
	IDs        []string            `json:"ids"`
	Embeddings [][]float32         `json:"embeddings"`
	Documents  []string            `json:"documents"`
	Metadatas  []map[string]string `json:"metadatas"`
}

func (c *client) add(ctx context.Context, id string, req addRequest) error {
	return c.do(ctx, http.MethodPost, c.collectionsURL(id, "add"), req, nil)
}

type queryRequest struct {
	QueryEmbeddings [][]float32    `json:"query_embeddings"`
	NResults        int            `json:"n_results"`
	Where           map[string]any `json:"where,omitempty"`
	Include         []string       `json:"include"`
}

type queryResult struct {
	IDs       [][]string  `json:"ids"`
	Distances [][]float64 `json:"distances"`
}

func (c *client) query(ctx context.Context, id string, req queryRequest) (queryResult, error) {
	var res queryResult
	err := c.do(ctx, http.MethodPost, c.collectionsURL(id, "query"), req, &res)
	if err == nil && len(res.Distances) != len(res.IDs) {
		err = fmt.Errorf("query: %d id lists but %d distance lists", len(res.IDs), len(res.Distances))
	}
	return res, err
}
