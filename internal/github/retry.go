package github

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// retryPolicy bounds the retries of one API request: at most attempts tries, waits
// of at most maxWait each.
type retryPolicy struct {
	attempts  int
	baseDelay time.Duration // first backoff; doubles per retry
	maxWait   time.Duration // a rate limit that resets later than this is not waited for
	sleep     func(ctx context.Context, d time.Duration) error
	now       func() time.Time
}

func defaultPolicy() retryPolicy {
	return retryPolicy{
		attempts:  4,
		baseDelay: 500 * time.Millisecond,
		maxWait:   60 * time.Second,
		sleep:     sleepCtx,
		now:       time.Now,
	}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// backoff is the wait before retry number n (1-based): baseDelay·2^(n-1), capped.
func (p *retryPolicy) backoff(n int) time.Duration {
	d := p.baseDelay
	for i := 1; i < n && d < p.maxWait; i++ {
		d *= 2
	}
	return min(d, p.maxWait)
}

// retryTransport retries, below go-github, the answers that mean "try again":
// rate limits (403/429 with Retry-After, or X-RateLimit-Remaining: 0 with
// X-RateLimit-Reset, or a secondary-rate-limit body) for every method, since GitHub
// did not act on the request; 5xx and network errors only for idempotent methods
// (a POST that failed with 5xx may have been applied: Client.Upsert lists again
// before it creates again).
type retryTransport struct {
	base   http.RoundTripper
	policy *retryPolicy
}

func idempotent(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions:
		return true
	}
	return false
}

func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	for attempt := 1; ; attempt++ {
		r := req
		if attempt > 1 {
			r = req.Clone(req.Context())
			if req.Body != nil && req.GetBody != nil {
				body, err := req.GetBody()
				if err != nil {
					return nil, err
				}
				r.Body = body
			}
		}
		resp, err := t.base.RoundTrip(r)
		var wait time.Duration
		retry := false
		if err != nil {
			if req.Context().Err() != nil || !idempotent(req.Method) {
				return nil, err
			}
			wait, retry = t.policy.backoff(attempt), true
		} else {
			wait, retry = t.retryAfter(resp, req.Method, attempt)
		}
		if !retry || attempt >= t.policy.attempts || (req.Body != nil && req.GetBody == nil) {
			return resp, err
		}
		if resp != nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
			resp.Body.Close()
		}
		if serr := t.policy.sleep(req.Context(), wait); serr != nil {
			return nil, serr
		}
	}
}

// retryAfter decides whether resp is worth another try, and after how long.
func (t *retryTransport) retryAfter(resp *http.Response, method string, attempt int) (time.Duration, bool) {
	st := resp.StatusCode
	if st == http.StatusForbidden || st == http.StatusTooManyRequests {
		if d, ok := parseRetryAfter(resp.Header.Get("Retry-After"), t.policy.now()); ok {
			return d, d <= t.policy.maxWait
		}
		if resp.Header.Get("X-RateLimit-Remaining") == "0" {
			if reset, err := strconv.ParseInt(resp.Header.Get("X-RateLimit-Reset"), 10, 64); err == nil {
				d := time.Unix(reset, 0).Sub(t.policy.now()) + time.Second
				d = max(d, time.Second)
				return d, d <= t.policy.maxWait
			}
			return 0, false
		}
		if st == http.StatusTooManyRequests {
			return t.policy.backoff(attempt), true
		}
		// A secondary rate limit without Retry-After: GitHub asks for at least a minute.
		if secondaryRateLimited(resp) {
			return time.Minute, time.Minute <= t.policy.maxWait
		}
		return 0, false
	}
	if st >= 500 && st <= 599 && idempotent(method) {
		return t.policy.backoff(attempt), true
	}
	return 0, false
}

// parseRetryAfter reads Retry-After: delay seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		const maxSeconds = 366 * 24 * 3600 // far beyond any wait; keeps the Duration from overflowing
		return time.Duration(min(s, maxSeconds)) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(at.Sub(now), 0), true
	}
	return 0, false
}

// secondaryRateLimited peeks at a 403 body for GitHub's secondary-rate-limit answer
// and puts the body back for go-github to read.
func secondaryRateLimited(resp *http.Response) bool {
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(data))
	if err != nil {
		return false
	}
	s := strings.ToLower(string(data))
	return strings.Contains(s, "secondary rate limit") || strings.Contains(s, "secondary-rate-limits") || strings.Contains(s, "abuse-rate-limits")
}
