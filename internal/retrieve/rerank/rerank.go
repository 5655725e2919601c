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
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"sync/atomic"

	"github.com/retrieval-gate/retrieval-gate/internal/httpretry"
)

// MaxBatch is the number of texts per request (TEI's default
// --max-client-batch-size is 32). A server that allows fewer says so in its 413
// ("batch size 32 > maximum allowed batch size 8"), and the client then sends
// that many a request.
const MaxBatch = 32

// batchRefusal is TEI's message for a request of more texts than its
// --max-client-batch-size (its router's rerank handler), with the limit.
var batchRefusal = regexp.MustCompile(`batch size [0-9]+ > maximum allowed batch size ([0-9]+)`)

// serverBatch is the limit a 413 of err states, or 0.
func serverBatch(err error) int {
	var se *httpretry.StatusError
	if !errors.As(err, &se) || se.Status != http.StatusRequestEntityTooLarge {
		return 0
	}
	msg := se.Body
	var body struct {
		Error string `json:"error"`
	}
	if json.Unmarshal([]byte(se.Body), &body) == nil && body.Error != "" {
		msg = body.Error // TEI's {"error", "error_type"}, any escapes read
	}
	m := batchRefusal.FindStringSubmatch(msg)
	if m == nil {
		return 0
	}
	n, err := strconv.Atoi(m[1])
	if err != nil {
		return 0
	}
	return n
}

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
	batch atomic.Int64
}

// New returns a client; url is the server (".../rerank" appended unless present).
func New(url string, hc *http.Client, p httpretry.Policy) (*Client, error) {
	u, err := httpretry.EndpointURL(url, "", "/rerank")
	if err != nil {
		return nil, fmt.Errorf("--rerank-url: %w", err)
	}
	c := &Client{url: u, client: &httpretry.Client{HTTP: hc, Policy: p}}
	c.batch.Store(MaxBatch)
	return c, nil
}

// URL is the endpoint.
func (c *Client) URL() string { return c.url }

// Scores returns the reranker's score of each text for query, in text order.
func (c *Client) Scores(ctx context.Context, query string, texts []string) ([]float64, error) {
	out := make([]float64, len(texts))
	for start := 0; start < len(texts); {
		part := texts[start:min(start+int(c.batch.Load()), len(texts))]
		body, err := json.Marshal(request{Query: query, Texts: part, Truncate: true, TruncationDirection: "Right"})
		if err != nil {
			return nil, err
		}
		data, err := c.client.Post(ctx, c.url, body)
		if n := serverBatch(err); n > 0 && n < len(part) {
			c.batch.Store(int64(n)) // the same texts again, n a request
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reranker: %w", err)
		}
		var items []answerItem
		if err := httpretry.UnmarshalAnswer(data, &items); err != nil {
			return nil, fmt.Errorf("reranker %s: malformed response: %w", httpretry.RedactURL(c.url), err)
		}
		if err := fill(out[start:start+len(part)], items); err != nil {
			sent := fmt.Sprintf("the %d texts sent", len(part))
			switch {
			case len(part) < len(texts):
				sent = fmt.Sprintf("texts %d..%d of %d, sent as 0..%d", start, start+len(part)-1, len(texts), len(part)-1)
			case len(part) == 1:
				sent = "the one text sent"
			}
			return nil, fmt.Errorf("reranker %s: malformed response to %s: %w", httpretry.RedactURL(c.url), sent, err)
		}
		start += len(part)
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
	item := make([]int, len(scores)) // the item of each index, +1
	for n, it := range items {
		switch {
		case it.Index == nil:
			return fmt.Errorf("item %d has no \"index\"", n)
		case *it.Index < 0 || *it.Index >= len(scores):
			return fmt.Errorf("item %d has index %d, outside 0..%d", n, *it.Index, len(scores)-1)
		case item[*it.Index] != 0:
			return fmt.Errorf("items %d and %d both have index %d", item[*it.Index]-1, n, *it.Index)
		case it.Score == nil:
			return fmt.Errorf("item %d (index %d) has no \"score\"", n, *it.Index)
		}
		item[*it.Index] = n + 1
		scores[*it.Index] = *it.Score
	}
	for i, n := range item {
		if n == 0 {
			return fmt.Errorf("no item has index %d (%d items for %d texts)", i, len(items), len(scores))
		}
	}
	return nil
}
