// Package httpretry is the HTTP client of the model servers (embedders, reranker):
// bounded retries with exponential backoff on 429 and 5xx responses and on
// connection errors, honouring Retry-After (capped), and errors that name the
// server and say what happened without ever including request headers (API keys).
package httpretry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Policy bounds the retries.
type Policy struct {
	Attempts  int           // total attempts, >= 1
	BaseDelay time.Duration // first backoff; doubles each retry (with jitter)
	MaxDelay  time.Duration // cap on one backoff, also on Retry-After
	Timeout   time.Duration // per attempt
}

// DefaultPolicy: 5 attempts, 250 ms doubling to at most 4 s, 60 s per attempt.
var DefaultPolicy = Policy{Attempts: 5, BaseDelay: 250 * time.Millisecond, MaxDelay: 4 * time.Second, Timeout: 60 * time.Second}

// Client posts JSON to one server.
type Client struct {
	HTTP   *http.Client
	Policy Policy
	// Header is added to every request (e.g. Authorization); never logged.
	Header http.Header
	// Sleep waits between attempts (tests may shorten it); nil means a timer.
	Sleep func(ctx context.Context, d time.Duration) error
}

// StatusError is a final non-2xx response.
type StatusError struct {
	URL      string
	Status   int
	Body     string // first bytes of the response body
	Attempts int
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%s answered HTTP %d after %d attempt(s): %s", e.URL, e.Status, e.Attempts, e.Body)
}

// Post sends body to url and returns the 2xx response body. It retries 429, 5xx
// and connection errors up to Policy.Attempts times.
func (c *Client) Post(ctx context.Context, url string, body []byte) ([]byte, error) {
	p := c.Policy
	if p.Attempts < 1 {
		p = DefaultPolicy
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	var lastErr error
	for attempt := 1; attempt <= p.Attempts; attempt++ {
		resp, wait, err := c.once(ctx, hc, p, url, body)
		if err == nil {
			return resp, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var se *StatusError
		if errors.As(err, &se) {
			se.Attempts = attempt
			if !retryable(se.Status) {
				return nil, se
			}
		}
		lastErr = err
		if attempt == p.Attempts {
			break
		}
		d := backoff(p, attempt)
		if wait > 0 {
			d = min(wait, p.MaxDelay)
		}
		if err := c.sleep(ctx, d); err != nil {
			return nil, err
		}
	}
	var se *StatusError
	if errors.As(lastErr, &se) {
		return nil, se
	}
	return nil, fmt.Errorf("%s unreachable after %d attempt(s): %w", url, p.Attempts, lastErr)
}

func (c *Client) once(ctx context.Context, hc *http.Client, p Policy, url string, body []byte) ([]byte, time.Duration, error) {
	actx, cancel := context.WithTimeout(ctx, p.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, url, strings.NewReader(string(body)))
	if err != nil {
		return nil, 0, &StatusError{URL: url, Status: 0, Body: err.Error()}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	for k, vs := range c.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, 0, cleanNetError(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return nil, 0, fmt.Errorf("reading the response: %w", err)
	}
	if resp.StatusCode/100 == 2 {
		return data, 0, nil
	}
	return nil, retryAfter(resp.Header.Get("Retry-After")), &StatusError{URL: url, Status: resp.StatusCode, Body: snippet(data)}
}

func retryable(status int) bool {
	return status == http.StatusTooManyRequests || status >= 500
}

func backoff(p Policy, attempt int) time.Duration {
	d := p.BaseDelay << (attempt - 1)
	if d > p.MaxDelay || d <= 0 {
		d = p.MaxDelay
	}
	// Full jitter on the upper half: [d/2, d).
	return d/2 + time.Duration(rand.Int64N(int64(d/2)+1))
}

func retryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
	}
	return 0
}

func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	if s == "" {
		s = "(empty body)"
	}
	return s
}

// cleanNetError drops the *url.Error wrapper (which repeats the URL) and keeps the
// network cause, e.g. "dial tcp 127.0.0.1:9: connect: connection refused".
func cleanNetError(err error) error {
	var ne net.Error
	var oe *net.OpError
	if errors.As(err, &oe) {
		return oe
	}
	if errors.As(err, &ne) {
		return ne
	}
	return err
}

func (c *Client) sleep(ctx context.Context, d time.Duration) error {
	if c.Sleep != nil {
		return c.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
