package httpretry

import (
	"context"
	"fmt"
	"io"

	"github.com/retrieval-gate/retrieval-gate/internal/format"
)

// maxValuesKey is the context key of a request's cap on its answer's values.
type maxValuesKey struct{}

// WithMaxValues is ctx for a request whose JSON answer may hold at most n
// values (n > 0), counted as UnmarshalAnswerCap counts them (brackets and commas
// outside strings) while the body is read: for an answer that a library
// decodes from the stream itself (go-github), whose byte cap alone does not
// bound what it costs decoded (a 92 MB page of check runs took 4.5 GB).
func WithMaxValues(ctx context.Context, n int) context.Context {
	return context.WithValue(ctx, maxValuesKey{}, n)
}

// maxValuesOf is the cap WithMaxValues put in ctx (0: none).
func maxValuesOf(ctx context.Context) int {
	n, _ := ctx.Value(maxValuesKey{}).(int)
	return max(n, 0)
}

// TooManyValuesError is the read error of an answer of more values than its
// request's cap (WithMaxValues).
type TooManyValuesError struct {
	URL string
	Cap int
}

func (e *TooManyValuesError) Error() string {
	return fmt.Sprintf("the answer of %s holds more than %s values (the cap on what an answer may take in memory)", e.URL, format.Thousands(e.Cap))
}

// countValues is body with its values counted as they are read; a Read that
// goes past limit fails with a *TooManyValuesError.
func countValues(body io.ReadCloser, limit int, url string) io.ReadCloser {
	return &valuesBody{ReadCloser: body, left: limit, limit: limit, url: url}
}

type valuesBody struct {
	io.ReadCloser
	left, limit int
	url         string
	inString    bool // inside a string
	escaped     bool // after a backslash inside a string
	err         error
}

func (b *valuesBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	n, err := b.ReadCloser.Read(p)
	for _, c := range p[:n] {
		switch {
		case b.escaped:
			b.escaped = false
		case b.inString:
			switch c {
			case '\\':
				b.escaped = true
			case '"':
				b.inString = false
			}
		case c == '"':
			b.inString = true
		case c == '{' || c == '[' || c == ',':
			if b.left--; b.left < 0 {
				b.err = &TooManyValuesError{URL: b.url, Cap: b.limit}
				return 0, b.err
			}
		}
	}
	return n, err
}

// safeRetryKey is the context key of a request marked safe to re-send.
type safeRetryKey struct{}

// WithSafeRetry is ctx for a request that may be re-sent whatever its method:
// a POST that reads and changes nothing (GitHub's GraphQL query { viewer {
// login } }), which a Policy.NonIdempotentPOST would otherwise send once. It
// is then retried as an idempotent method is: on a 5xx, on a network error,
// and on a 503 with Retry-After.
func WithSafeRetry(ctx context.Context) context.Context {
	return context.WithValue(ctx, safeRetryKey{}, true)
}

// safeRetryOf reports whether WithSafeRetry marked ctx.
func safeRetryOf(ctx context.Context) bool {
	ok, _ := ctx.Value(safeRetryKey{}).(bool)
	return ok
}

// idleTimeoutKey is the context key of a request whose answer is streamed.
type idleTimeoutKey struct{}

// WithIdleTimeout is ctx for a request whose answer may be long and is read as
// it arrives (a page of GitLab's notes, up to 1.2 GB; a baseline artifact):
// Policy.Timeout then bounds the wait for the answer's headers and each pause
// of its body, not the whole attempt, whose body could not be read within it
// at an ordinary speed. Reading stays bounded by the body's cap, the pace
// the body must keep up (Policy.MinRate over each Policy.RateWindow: a
// trickle of a byte just under the timeout is refused), the caller's context
// and a signal.
func WithIdleTimeout(ctx context.Context) context.Context {
	return context.WithValue(ctx, idleTimeoutKey{}, true)
}

// idleTimeoutOf reports whether WithIdleTimeout marked ctx.
func idleTimeoutOf(ctx context.Context) bool {
	ok, _ := ctx.Value(idleTimeoutKey{}).(bool)
	return ok
}
