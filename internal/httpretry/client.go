package httpretry

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"
)

// Client posts JSON to the model servers (embedders, reranker, LLMs) under one
// policy: retries as the package describes, credentials only to the URL's own
// origin, secrets redacted from every error, answers bounded (ReadAnswer).
type Client struct {
	// HTTP supplies the base transport (its Transport; nil is the default). Its
	// Timeout and CheckRedirect are not used: Policy.Timeout bounds each attempt
	// and redirects follow CheckRedirect.
	HTTP   *http.Client
	Policy Policy
	// Header is added to every request to the posted URL's origin (e.g.
	// Authorization); its values are secrets, never printed.
	Header http.Header
	// Sleep waits between attempts (tests may shorten it); nil is Policy.Sleep.
	Sleep func(ctx context.Context, d time.Duration) error
	// Secrets are redacted from every error besides the Header values.
	Secrets []string
	// MaxAnswer bounds a 2xx answer (see ReadAnswer); <= 0 is MaxAnswer.
	MaxAnswer int64
}

// StatusError is a final non-2xx answer. Body is redacted.
type StatusError struct {
	URL      string
	Status   int
	Body     string // first bytes of the response body
	Attempts int
}

func (e *StatusError) Error() string {
	if e.Attempts > 0 {
		return fmt.Sprintf("%s answered HTTP %d after %d attempt(s): %s", e.URL, e.Status, e.Attempts, e.Body)
	}
	return fmt.Sprintf("%s answered HTTP %d: %s", e.URL, e.Status, e.Body)
}

// maxErrorBody is how much of a non-2xx answer Post reads (for its message).
const maxErrorBody = 64 << 10

// Post sends body as JSON to url and returns the 2xx response body, at most
// c.MaxAnswer bytes. A zero Policy.Budget is DefaultPolicy's (3 minutes), the
// budget of every model server, whatever the attempts and timeout.
func (c *Client) Post(ctx context.Context, url string, body []byte) ([]byte, error) {
	p := c.Policy
	if c.Sleep != nil {
		p.Sleep = c.Sleep
	}
	if p.Budget <= 0 {
		p.Budget = DefaultPolicy.Budget
	}
	var base http.RoundTripper
	if c.HTTP != nil {
		base = c.HTTP.Transport
	}
	counter := &countingTransport{base: base}
	if counter.base == nil {
		counter.base = http.DefaultTransport
	}
	limit := c.MaxAnswer
	if limit <= 0 {
		limit = MaxAnswer
	}
	t := &Transport{Base: counter, Policy: p, Origin: Origin(url), Credentials: c.Header, Secrets: c.Secrets, MaxBody: limit}
	secrets := t.secrets(url)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, redactErr(err, secrets)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := NewHTTPClient(t).Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var rl *RateLimitError
		if errors.As(err, &rl) {
			return nil, redactErr(rl, secrets)
		}
		return nil, redactErr(cleanNetError(err), secrets)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 == 2 {
		data, err := ReadAnswer(ctx, resp.Body, resp.ContentLength, c.MaxAnswer, RedactURL(url))
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			var tl *TooLargeError
			if !errors.As(err, &tl) {
				err = fmt.Errorf("%s: reading the response: %w", RedactURL(url), cleanNetError(err))
			}
			return nil, redactErr(err, secrets)
		}
		return data, nil
	}
	data, err := ReadSnippet(resp.Body, maxErrorBody)
	if err != nil {
		return nil, redactErr(fmt.Errorf("%s: reading the response: %w", RedactURL(url), cleanNetError(err)), secrets)
	}
	// Redacted before it is cut, so that no part of a secret is left at the cut.
	return nil, &StatusError{URL: Redact(RedactURL(url), secrets...), Status: resp.StatusCode, Body: snippet(Redact(string(data), secrets...)), Attempts: counter.n}
}

// countingTransport counts the attempts Post made.
type countingTransport struct {
	base http.RoundTripper
	n    int
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n++
	return c.base.RoundTrip(r)
}

func snippet(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	if s == "" {
		s = "(empty body)"
	}
	return s
}

// cleanNetError drops the *url.Error wrapper (which repeats the URL, possibly with
// a key in its query) and keeps the cause, e.g. "dial tcp 127.0.0.1:9: connect:
// connection refused".
func cleanNetError(err error) error {
	var oe *net.OpError
	if errors.As(err, &oe) && !strings.Contains(err.Error(), "unreachable after") {
		return oe
	}
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) {
		if inner := ue.Unwrap(); inner != nil && strings.HasPrefix(err.Error(), "Post ") {
			return inner
		}
	}
	return err
}
