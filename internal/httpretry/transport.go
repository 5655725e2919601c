package httpretry

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Transport is the retrying http.RoundTripper, for clients built by other
// libraries (go-github, chroma-go, an embedding function). Use it through
// NewHTTPClient, whose redirect rule drops credentials on any cross-origin
// redirect; the http.Client must have no Timeout of its own (Policy.Timeout is per
// attempt, Policy.Budget in all).
type Transport struct {
	Base   http.RoundTripper // nil is http.DefaultTransport
	Policy Policy
	// Origin is the scheme://host[:port] the Credentials belong to; they are set on
	// requests to that origin only.
	Origin string
	// Credentials are headers (Authorization, an API key) sent to Origin only.
	Credentials http.Header
	// Secrets are redacted from every error, with the Credentials' values.
	Secrets []string
	// MaxBody bounds the body of every answer (LimitBody: reading past it is
	// a *TooLargeError); a request's own cap (WithMaxBody) replaces it; <= 0
	// is DefaultMaxBody.
	MaxBody int64
}

// NewHTTPClient is the http.Client of t: no overall timeout (t's policy has the
// per-attempt one) and credentials dropped on any redirect to another origin.
func NewHTTPClient(t *Transport) *http.Client {
	return &http.Client{Transport: t, CheckRedirect: CheckRedirect}
}

// CheckRedirect follows at most 10 redirects and removes every credential header
// when the redirect leaves the original request's scheme, host or port. (Go's own
// rule keeps Authorization for a subdomain or another port and forwards API-key
// headers everywhere.)
func CheckRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	if origin(req.URL) != origin(via[0].URL) {
		for name := range req.Header {
			if sensitiveHeader(name) {
				req.Header.Del(name)
			}
		}
	}
	return nil
}

// sensitiveHeader reports whether a header may carry a credential.
func sensitiveHeader(name string) bool {
	n := strings.ToLower(name)
	switch n {
	case "authorization", "proxy-authorization", "cookie", "cookie2":
		return true
	}
	for _, w := range []string{"key", "token", "secret", "auth", "password"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// origin is scheme://host:port with the default port made explicit.
func origin(u *url.URL) string {
	if u == nil {
		return ""
	}
	port := u.Port()
	if port == "" {
		switch strings.ToLower(u.Scheme) {
		case "https":
			port = "443"
		case "http":
			port = "80"
		}
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Hostname()) + ":" + port
}

// Origin is the origin of a URL, for Transport.Origin ("" when raw is not a URL).
func Origin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return ""
	}
	return origin(u)
}

// secrets are the strings Redact removes: t.Secrets and each credential value
// (with and without its scheme word, "Bearer KEY" and "KEY"; Basic
// credentials decoded too, "user:password" and the password, RFC 7617), and
// the credentials of the URLs given (URLSecrets: its user information, a key
// in its query).
func (t *Transport) secrets(urls ...string) []string {
	s := append([]string(nil), t.Secrets...)
	for _, vs := range t.Credentials {
		for _, v := range vs {
			s = append(s, v)
			scheme, rest, ok := strings.Cut(strings.TrimSpace(v), " ")
			if !ok {
				continue
			}
			rest = strings.TrimSpace(rest)
			s = append(s, rest)
			if strings.EqualFold(scheme, "Basic") {
				if b, err := base64.StdEncoding.DecodeString(rest); err == nil {
					s = append(s, string(b))
					if _, pw, ok := strings.Cut(string(b), ":"); ok {
						s = append(s, pw)
					}
				}
			}
		}
	}
	for _, u := range urls {
		s = append(s, URLSecrets(u)...)
	}
	return s
}

// RoundTrip sends req, retrying under t.Policy.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.roundTrip(req)
	if err != nil {
		return nil, redactErr(err, t.secrets(req.URL.String()))
	}
	return resp, nil
}

func (t *Transport) roundTrip(req *http.Request) (*http.Response, error) {
	p := t.Policy.normalized()
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	addCreds := len(t.Credentials) > 0 && t.Origin != "" && origin(req.URL) == t.Origin
	start := time.Now()
	var waited time.Duration
	spent := func() time.Duration { return time.Since(start) + waited }
	limited := 0 // rate limits that said no wait so far
	for attempt := 1; ; attempt++ {
		r := req.Clone(req.Context())
		if attempt > 1 && req.Body != nil && req.Body != http.NoBody {
			if req.GetBody == nil {
				return nil, fmt.Errorf("%s: cannot retry a request whose body cannot be re-read", RedactURL(req.URL.String()))
			}
			b, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			r.Body = b
		}
		if addCreds {
			for k, vs := range t.Credentials {
				r.Header[http.CanonicalHeaderKey(k)] = append([]string(nil), vs...)
			}
		}
		left := p.Budget - spent()
		if left <= 0 {
			return nil, fmt.Errorf("%s: %w (%s)", RedactURL(req.URL.String()), errBudget, p.Budget)
		}
		actx, cancel, touch := attemptContext(req.Context(), min(p.Timeout, left), p.Timeout, idleTimeoutOf(req.Context()))
		r = r.WithContext(actx)
		resp, err := base.RoundTrip(r)
		if err != nil && errors.Is(context.Cause(actx), context.DeadlineExceeded) && req.Context().Err() == nil {
			err = fmt.Errorf("no answer within %s: %w", min(p.Timeout, left), err)
		}
		d := p.decide(req, resp, err, attempt, limited)
		if d.backedOff {
			limited++
		}
		if rl := d.rateLimit; rl != nil {
			rl.URL, rl.Budget, rl.Attempts = RedactURL(req.URL.String()), p.Budget, attempt
		}
		last := attempt >= p.Attempts
		overBudget := d.retry && spent()+d.wait > p.Budget
		if !d.retry || last || overBudget {
			if d.rateLimit != nil && (overBudget || !d.retry || last) {
				if resp != nil {
					drain(resp)
				}
				cancel()
				switch left := (p.Budget - spent()).Round(time.Second); {
				case overBudget && d.backedOff:
					d.rateLimit.Why += fmt.Sprintf("; the next wait, %s, is longer than the %s left of the budget: not waiting", d.wait.Round(time.Second), left)
				case overBudget && d.rateLimit.Wait > 0:
					d.rateLimit.Why += fmt.Sprintf(", longer than the %s left of the budget: not waiting", left)
				}
				return nil, d.rateLimit
			}
			if err != nil {
				cancel()
				if attempt > 1 {
					return nil, fmt.Errorf("%s unreachable after %d attempt(s): %w", RedactURL(req.URL.String()), attempt, err)
				}
				return nil, err
			}
			limit := maxBodyOf(req.Context())
			if limit <= 0 {
				limit = t.MaxBody
			}
			if limit <= 0 {
				limit = DefaultMaxBody
			}
			url := Redact(RedactURL(req.URL.String()), t.secrets()...)
			raw := resp.Body
			if touch != nil {
				touch() // the headers came: the body has its own pauses
				raw = &idleBody{ReadCloser: raw, touch: touch, ctx: actx, cancel: cancel, idle: p.Timeout, url: url,
					minRate: p.MinRate, window: p.RateWindow, since: time.Now()}
			}
			body := LimitBody(raw, resp.ContentLength, limit, url)
			if n := maxValuesOf(req.Context()); n > 0 {
				body = countValues(body, n, url)
			}
			resp.Body = &cancelBody{ReadCloser: body, cancel: cancel}
			return resp, nil
		}
		if resp != nil {
			drain(resp)
		}
		cancel()
		waited += d.wait
		if serr := p.Sleep(req.Context(), d.wait); serr != nil {
			return nil, serr
		}
	}
}

// attemptContext is the context of one attempt: done after first (the
// attempt's timeout), or, with idle, after first without an answer and then
// after idle without a byte of the body (touch, nil without idle, restarts
// that wait). cancel ends it; its cause is context.DeadlineExceeded when a
// wait ran out.
func attemptContext(ctx context.Context, first, idle time.Duration, streamed bool) (actx context.Context, cancel context.CancelFunc, touch func()) {
	if !streamed {
		actx, cancel = context.WithTimeout(ctx, first)
		return actx, cancel, nil
	}
	actx, end := context.WithCancelCause(ctx)
	timer := time.AfterFunc(first, func() { end(context.DeadlineExceeded) })
	cancel = func() {
		timer.Stop()
		end(context.Canceled)
	}
	return actx, cancel, func() { timer.Reset(idle) }
}

// idleBody is an answer's body whose every byte restarts the attempt's idle
// wait (WithIdleTimeout); a read that fails because the wait ran out says so.
// Each window from the headers on must bring minRate bytes a second: the
// first read that returns after a window ended checks the bytes of that
// window (a read returns within idle, else the idle wait fails it), so a
// trickle is refused within window plus idle.
type idleBody struct {
	io.ReadCloser
	touch  func()
	ctx    context.Context
	cancel context.CancelFunc // ends the attempt: its connection is closed
	idle   time.Duration
	url    string

	minRate int64
	window  time.Duration
	since   time.Time // the start of the window
	got     int64     // bytes of the window
	total   int64     // bytes of the body
	err     error     // a SlowAnswerError, returned by every later read
}

func (b *idleBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.touch()
		b.got += int64(n)
		b.total += int64(n)
	}
	if err != nil && !errors.Is(err, io.EOF) && errors.Is(context.Cause(b.ctx), context.DeadlineExceeded) {
		err = fmt.Errorf("%s: the answer stopped: no data for %s: %w", b.url, b.idle, err)
	}
	if err != nil {
		return n, err
	}
	if now := time.Now(); now.Sub(b.since) >= b.window {
		in := now.Sub(b.since)
		if float64(b.got) < float64(b.minRate)*in.Seconds() {
			b.err = &SlowAnswerError{URL: b.url, Bytes: b.got, In: in, MinRate: b.minRate, Total: b.total}
			b.cancel()
			return n, b.err
		}
		b.since, b.got = now, 0
	}
	return n, nil
}

// SlowAnswerError is a streamed answer (WithIdleTimeout) refused for its
// pace: Bytes in the window of In, under MinRate bytes a second
// (Policy.MinRate). It is a timeout: errors.Is(err, context.DeadlineExceeded).
type SlowAnswerError struct {
	URL     string // redacted
	Bytes   int64
	In      time.Duration
	MinRate int64
	Total   int64 // bytes of the body so far
}

func (e *SlowAnswerError) Error() string {
	return fmt.Sprintf("%s: the answer is too slow: %d bytes in the last %s (%s), under the %s required; %d bytes in all",
		e.URL, e.Bytes, e.In.Round(time.Millisecond), rate(float64(e.Bytes)/e.In.Seconds()), rate(float64(e.MinRate)), e.Total)
}

// Unwrap makes the refusal a timeout, as a pause longer than the idle wait is.
func (e *SlowAnswerError) Unwrap() error { return context.DeadlineExceeded }

// rate is a pace in bytes a second: "12 B/s", "64 KiB/s", "1.5 MiB/s".
func rate(r float64) string {
	unit, prec := "B/s", 2
	switch {
	case r >= 1<<20:
		r, unit, prec = r/(1<<20), "MiB/s", 1
	case r >= 1<<10:
		r, unit, prec = r/(1<<10), "KiB/s", 1
	}
	f := strconv.FormatFloat(r, 'f', prec, 64)
	if strings.Contains(f, ".") {
		f = strings.TrimRight(strings.TrimRight(f, "0"), ".")
	}
	return f + " " + unit
}

// drain reads at most 64 KiB of an answer that is not returned (so that its
// connection can be reused) and closes it.
func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	resp.Body.Close()
}

// cancelBody ends the attempt's context when the caller closes the body, so the
// per-attempt timeout also bounds reading it.
type cancelBody struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}
