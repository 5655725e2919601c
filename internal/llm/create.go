package llm

import (
	"errors"
	"fmt"
	"net"
	"net/http"

	"github.com/retrieval-gate/retrieval-gate/internal/httpretry"
)

// creating is p for a POST that creates something at the provider (an
// uploaded file, a batch): such a POST may have acted even when it failed (a
// 5xx, a connection lost before the answer), so it is retried only on a rate
// limit, never blindly (httpretry.Policy.NonIdempotentPOST). A retried batch
// creation was a second paid batch.
func creating(p httpretry.Policy) httpretry.Policy {
	p.NonIdempotentPOST = true
	return p
}

// BatchMayExistError is a batch creation that failed without saying whether
// the provider created the batch: a 5xx answer, no answer at all, or an
// interruption once the request was sent. The batch may be running (and
// billed): the message says where to list the batches.
type BatchMayExistError struct {
	Provider string
	List     string // the URL that lists the account's batches
	Err      error
}

func (e *BatchMayExistError) Error() string {
	return fmt.Sprintf("%v; the %s batch API may have created the batch before this failure: list your batches (GET %s) and cancel or wait for it before running again, so as not to pay for it twice",
		e.Err, e.Provider, httpretry.RedactURL(e.List))
}

func (e *BatchMayExistError) Unwrap() error { return e.Err }

// notActedError is a request the server provably did not act on: the
// connection was never made, or it was rate limited (429, which the providers
// document as a request not processed).
type notActedError struct{ error }

func (e *notActedError) Unwrap() error { return e.error }

// notActed reports whether err, a request's failure without an answer (as the
// transport returned it, before it is cleaned), shows that the server did not
// act on the request.
func notActed(err error) bool {
	var oe *net.OpError
	if errors.As(err, &oe) && (oe.Op == "dial" || oe.Op == "proxyconnect") {
		return true
	}
	var rl *httpretry.RateLimitError
	return errors.As(err, &rl) && rl.Status == http.StatusTooManyRequests
}

// mayExist is the error of a batch creation (err, nil: none): as it is when
// the provider refused the request (a 4xx answer) or provably never acted on
// it, else a *BatchMayExistError naming list.
func mayExist(err error, provider, list string) error {
	if err == nil {
		return nil
	}
	var na *notActedError
	if errors.As(err, &na) {
		return err
	}
	var ae *APIError
	if errors.As(err, &ae) && ae.Status < 500 {
		return err
	}
	return &BatchMayExistError{Provider: provider, List: list, Err: err}
}
