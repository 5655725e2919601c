// Package rerank is a client of a cross-encoder reranker speaking the TEI
// (text-embeddings-inference) /rerank protocol:
//
//	POST /rerank {"query": "...", "texts": ["...", ...], "truncate": true, "truncation_direction": "Right"}
//	  -> [{"index": 0, "score": 0.98}, ...]
//
// Every request asks the server to truncate: a cross-encoder reads at most its
// max input length of the pair (512 tokens for the common ones: query, text
// and 3 special tokens), and TEI refuses a longer pair with 413 unless asked to
// cut it (or started with --auto-truncate), which would end the whole run on
// one long chunk (1,200 CJK characters are past 512 tokens). Cut, the pair
// loses the end of the longer of query and text (the tokenizer's longest-first
// strategy, "Right"): the score is the model's score of the chunk's beginning,
// which is all the model could score anyway.
package rerank

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/retrieval-gate/retrieval-gate/internal/httpretry"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/internal/batchanswer"
)

// MaxBatch is the number of texts per request (TEI's default
// --max-client-batch-size is 32). A server that allows fewer says so in its 413
// ("batch size 32 > maximum allowed batch size 8"), and the client then sends
// that many a request (batchanswer.Limit).
const MaxBatch = 32

// request is TEI's RerankRequest, as far as the client sets it.
type request struct {
	Query               string   `json:"query"`
	Texts               []string `json:"texts"`
	Truncate            bool     `json:"truncate"`
	TruncationDirection string   `json:"truncation_direction"`
}

// Client reranks through one server.
type Client struct {
	url    string
	client *httpretry.Client
	// batch is the texts a request: MaxBatch, or the server's lower limit
	// once it stated one.
	batch batchanswer.Limit
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
	err := c.batch.Split(len(texts), MaxBatch, func(start, end int) error {
		part := texts[start:end]
		body, err := json.Marshal(request{Query: query, Texts: part, Truncate: true, TruncationDirection: "Right"})
		if err != nil {
			return err
		}
		data, err := c.client.Post(ctx, c.url, body)
		if err != nil {
			return fmt.Errorf("reranker: %w", err)
		}
		var items []answerItem
		if err := httpretry.UnmarshalAnswer(data, &items); err != nil {
			return fmt.Errorf("reranker %s: malformed response: %w", httpretry.RedactURL(c.url), err)
		}
		if err := fill(out[start:end], items); err != nil {
			return fmt.Errorf("reranker %s: malformed response to %s: %w", httpretry.RedactURL(c.url), batchanswer.Sent(start, end, len(texts)), err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// answerItem is an item of TEI's RerankResponse (its "text", with
// return_text, is not asked for).
type answerItem struct {
	Index *int     `json:"index"`
	Score *float64 `json:"score"`
}

// fill sets scores[i] from the answer item of index i, and says which item is
// wrong when an index is missing, repeated or out of range, or a score is
// missing: an answer must score every text sent once.
func fill(scores []float64, items []answerItem) error {
	_, err := batchanswer.Place(len(scores), len(items), func(k int) *int { return items[k].Index }, func(k, i int) error {
		if items[k].Score == nil {
			return fmt.Errorf("item %d (index %d) has no \"score\"", k, i)
		}
		scores[i] = *items[k].Score
		return nil
	})
	return err
}
