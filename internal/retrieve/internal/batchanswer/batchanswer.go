// Package batchanswer is what the embedding and reranking clients share of
// their servers' batch protocol (TEI's /v1/embeddings and /rerank, and the
// OpenAI embeddings API they follow): the batch limit a server states in its
// 413 and the requests split under it (Limit), and the items of an answer
// placed by their "index" (Place), each fault named.
package batchanswer

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"sync/atomic"

	"github.com/retrieval-gate/retrieval-gate/internal/httpretry"
)

// refusal is TEI's message for a request of more inputs than its
// --max-client-batch-size (its router's rerank and embed handlers), with the
// limit: "batch size 64 > maximum allowed batch size 32".
var refusal = regexp.MustCompile(`batch size [0-9]+ > maximum allowed batch size ([0-9]+)`)

// Stated is the batch limit a 413 of err states, or 0. TEI writes the message
// as {"error", "error_type"} on its own routes (/rerank, /embed) and as
// {"message", "code", "type"} on its OpenAI-compatible /v1/embeddings.
func Stated(err error) int {
	var se *httpretry.StatusError
	if !errors.As(err, &se) || se.Status != http.StatusRequestEntityTooLarge {
		return 0
	}
	msg := se.Body
	var body struct {
		Error   string `json:"error"`
		Message string `json:"message"`
	}
	if json.Unmarshal([]byte(se.Body), &body) == nil && body.Error+body.Message != "" {
		msg = body.Error + " " + body.Message // any escapes read
	}
	m := refusal.FindStringSubmatch(msg)
	if m == nil {
		return 0
	}
	n, err := strconv.Atoi(m[1])
	if err != nil || n < 1 {
		return 0
	}
	return n
}

// Limit is the inputs a request may hold: a client's own size until a server
// states a lower limit, then that (the lowest stated, when requests in flight
// learn it at once). The zero Limit has no stated limit.
type Limit struct {
	stated atomic.Int64
}

// Split sends the inputs 0..total in requests of at most size inputs, or the
// stated limit when lower: send(start, end) sends inputs start..end-1. A
// request refused with a 413 that states a lower limit than its inputs is
// sent again, split under that limit, and so are the requests after it.
func (l *Limit) Split(total, size int, send func(start, end int) error) error {
	for start := 0; start < total; {
		end := min(start+l.size(size), total)
		err := send(start, end)
		if n := Stated(err); n > 0 && n < end-start {
			l.lower(int64(n))
			continue
		}
		if err != nil {
			return err
		}
		start = end
	}
	return nil
}

// size is size, or the stated limit when lower.
func (l *Limit) size(size int) int {
	if n := l.stated.Load(); n > 0 && int(n) < size {
		return int(n)
	}
	return max(size, 1)
}

// lower records a stated limit, keeping the lowest.
func (l *Limit) lower(n int64) {
	for {
		m := l.stated.Load()
		if m > 0 && m <= n || l.stated.CompareAndSwap(m, n) {
			return
		}
	}
}

// Place checks that the items of an answer to sent inputs give each input
// exactly one item, by the item's index (index(k) is item k's, nil when it
// has none), and returns the item of each input. The error names the first
// fault: an item without an index, an index outside 0..sent-1, two items of
// one index, an input no item has; check, when not nil, is called on each
// item with its index as it is placed and may name a fault of its own (a
// missing score).
func Place(sent, items int, index func(k int) *int, check func(k, i int) error) ([]int, error) {
	item := make([]int, sent) // the item of each input, +1
	for k := range items {
		i := index(k)
		switch {
		case i == nil:
			return nil, fmt.Errorf("item %d has no \"index\"", k)
		case *i < 0 || *i >= sent:
			return nil, fmt.Errorf("item %d has index %d, outside 0..%d", k, *i, sent-1)
		case item[*i] != 0:
			return nil, fmt.Errorf("items %d and %d both have index %d", item[*i]-1, k, *i)
		}
		if check != nil {
			if err := check(k, *i); err != nil {
				return nil, err
			}
		}
		item[*i] = k + 1
	}
	for i, k := range item {
		if k == 0 {
			return nil, fmt.Errorf("no item has index %d (%d items for %d texts)", i, items, sent)
		}
		item[i] = k - 1
	}
	return item, nil
}

// Sent names the inputs start..end-1 of total a request sent, for the error
// of its answer: "the 3 texts sent", "the one text sent", "texts 32..39 of
// 40, sent as 0..7" (the answer's indexes are the request's).
func Sent(start, end, total int) string {
	switch n := end - start; {
	case n < total:
		return fmt.Sprintf("texts %d..%d of %d, sent as 0..%d", start, end-1, total, n-1)
	case n == 1:
		return "the one text sent"
	default:
		return fmt.Sprintf("the %d texts sent", n)
	}
}
