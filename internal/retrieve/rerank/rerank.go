// Package rerank is a client of a cross-encoder reranker speaking the TEI
// (text-embeddings-inference) /rerank protocol:
//
//	POST /rerank {"query": "...", "texts": ["...", ...]} -> [{"index": 0, "score": 0.98}, ...]
package rerank

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/retrieval-gate/retrieval-gate/internal/httpretry"
)

// MaxBatch is the number of texts per request (TEI's default
// --max-client-batch-size is 32).
const MaxBatch = 32

// Client reranks through one server.
type Client struct {
	url    string
	client *httpretry.Client
}

// New returns a client; url is the server (".../rerank" appended unless present).
func New(url string, hc *http.Client, p httpretry.Policy) (*Client, error) {
	u, err := httpretry.EndpointURL(url, "", "/rerank")
	if err != nil {
		return nil, fmt.Errorf("--rerank-url: %w", err)
	}
	return &Client{url: u, client: &httpretry.Client{HTTP: hc, Policy: p}}, nil
}

// URL is the endpoint.
func (c *Client) URL() string { return c.url }

// Scores returns the reranker's score of each text for query, in text order.
func (c *Client) Scores(ctx context.Context, query string, texts []string) ([]float64, error) {
	out := make([]float64, len(texts))
	for start := 0; start < len(texts); start += MaxBatch {
		part := texts[start:min(start+MaxBatch, len(texts))]
		body, err := json.Marshal(struct {
			Query string   `json:"query"`
			Texts []string `json:"texts"`
		}{query, part})
		if err != nil {
			return nil, err
		}
		data, err := c.client.Post(ctx, c.url, body)
		if err != nil {
			return nil, fmt.Errorf("reranker: %w", err)
		}
		var items []struct {
			Index *int     `json:"index"`
			Score *float64 `json:"score"`
		}
		if err := httpretry.UnmarshalAnswer(data, &items); err != nil {
			return nil, fmt.Errorf("reranker %s: malformed response: %w", c.url, err)
		}
		seen := make([]bool, len(part))
		for _, it := range items {
			if it.Index == nil || it.Score == nil || *it.Index < 0 || *it.Index >= len(part) || seen[*it.Index] {
				return nil, fmt.Errorf("reranker %s: response items must be {\"index\", \"score\"} with distinct indexes 0..%d", c.url, len(part)-1)
			}
			seen[*it.Index] = true
			out[start+*it.Index] = *it.Score
		}
		for i, ok := range seen {
			if !ok {
				return nil, fmt.Errorf("reranker %s: no score for text %d", c.url, start+i)
			}
		}
	}
	return out, nil
}
