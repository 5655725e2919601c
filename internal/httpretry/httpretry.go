// Package httpretry is the one retry policy of every HTTP client of retrieval-gate:
// GitHub (under go-github), the embedding servers, the reranker, Chroma (under
// chroma-go) and the LLM clients.
//
//   - Each attempt has its own timeout (Policy.Timeout); the waits between attempts
//     are not inside it. For a request marked WithIdleTimeout (an answer read as
//     a stream, which may be long), it bounds the wait for the headers and then
//     each pause of the body, not the whole body, and the body must bring
//     Policy.MinRate bytes a second over each Policy.RateWindow (64 KiB/s
//     over a minute: a trickle is refused, SlowAnswerError). All attempts
//     and waits of one request share a total budget (Policy.Budget): a wait
//     that would overrun it is not started, the request gives up at once
//     with a *RateLimitError or the last answer.
//   - A rate limit that says no wait (a plain 429; GitHub's secondary-rate-limit
//     body, or an exhausted X-RateLimit-Remaining without its reset, on a 403
//     or a 429) backs off from Policy.RateLimitBase doubling to RateLimitMax
//     with each repeat (a server whose limits reset per minute: GitLab; GitHub,
//     whose floor is a minute: RateLimitFloor), else as the other retries; a
//     GitHub one waits at least a minute whatever the policy. Every wait ends
//     when the request's context is done.
//   - Retried: 429 and rate-limit 403s (Retry-After, X-RateLimit-Remaining: 0 with
//     X-RateLimit-Reset, GitHub's secondary-rate-limit body on a 403 or a 429,
//     a minute or more without Retry-After; a 429 with GitLab's RateLimit-Reset or
//     RateLimit-ResetTime and no RateLimit-Remaining other than 0, until that
//     reset) for every method, since
//     the server did not act on the request (but a 503 of a NonIdempotentPOST POST is
//     not: it is no rate limit); 5xx and network errors for idempotent methods, and
//     for POST unless Policy.NonIdempotentPOST (GitHub creating a comment, a batch
//     API creating a batch) and the request is not marked WithSafeRetry (a
//     GraphQL query that changes nothing); a connection never made (a dial
//     error: the request was not sent) for every method.
//   - Credentials (Policy headers and Authorization, Cookie and any header whose
//     name says key, token, secret or auth) are sent only to the origin they were
//     configured for and dropped on any redirect to another scheme, host or port.
//   - Every error message is redacted of the configured secrets (Redact).
//   - Every answer is read through one bounded reader (body.go): a Transport
//     bounds the body of each answer it returns at the request's cap
//     (WithMaxBody), else its MaxBody, else DefaultMaxBody, whoever reads it;
//     a whole answer is read by ReadAnswer (at most its cap; all answers being
//     read at once share MaxInFlight), an error's start by ReadSnippet.
//   - A model-server client (Client) without a budget has DefaultPolicy's.
//   - A user-given server URL is completed to its endpoint by EndpointURL
//     (endpoint.go), the one rule of every model-server client.
package httpretry

import (
	"bytes"
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

// Policy bounds the retries of one request.
type Policy struct {
	Attempts  int           // total attempts, >= 1
	BaseDelay time.Duration // first backoff; doubles each retry (with jitter)
	MaxDelay  time.Duration // cap on one backoff (a server's Retry-After may ask for more, within Budget)
	Timeout   time.Duration // per attempt: connecting, sending, the answer's headers and body
	// Budget bounds all attempts and waits of one request; <= 0 means
	// Attempts·Timeout plus DefaultBudget of waiting.
	Budget time.Duration
	// RateLimitBase and RateLimitMax are the backoff of a rate limit that
	// says no wait (a 429 without Retry-After, without an exhausted
	// X-RateLimit-Remaining with its reset, without RateLimit-Reset or
	// RateLimit-ResetTime; GitHub's secondary-rate-limit body; an exhausted
	// X-RateLimit-Remaining whose X-RateLimit-Reset is missing or not a
	// number), as BaseDelay and MaxDelay are of the other retries, for a
	// server whose limits are counted per period: GitLab's per minute. The
	// n-th such answer of a request waits RateLimitBase·2^(n-1), capped at
	// RateLimitMax. 0 is BaseDelay and MaxDelay.
	RateLimitBase, RateLimitMax time.Duration
	// RateLimitFloor makes that wait a floor: the jitter adds up to a
	// quarter above it, where it otherwise takes up to half below it
	// (GitHub: "wait for at least one minute before retrying", then "an
	// exponentially increasing amount of time").
	RateLimitFloor bool
	// NonIdempotentPOST: a POST may have acted even when it failed (GitHub creates a
	// comment, a provider a paid batch), so it is retried only on rate limits (429,
	// a rate-limit 403) and when the connection was never made, never on a 5xx or
	// another network error.
	NonIdempotentPOST bool
	// Sleep waits between attempts (tests record the waits instead); nil is a timer
	// that stops early when ctx is done.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now is the clock for Retry-After dates and the rate limits' resets; nil is time.Now.
	Now func() time.Time
	// MinRate (bytes a second) and RateWindow bound the pace of a streamed
	// answer's body (WithIdleTimeout), whose pauses Timeout bounds one at a
	// time: each RateWindow from the headers on must bring MinRate·RateWindow
	// bytes, else the read fails with a *SlowAnswerError (a server or proxy
	// trickling a byte just under Timeout would otherwise hold the request
	// for as long as it likes). A body that ends within a window is never
	// judged. 0 is DefaultMinRate and DefaultRateWindow (tests lower them).
	MinRate    int64
	RateWindow time.Duration
}

// DefaultMinRate and DefaultRateWindow are the pace a streamed answer must
// keep up: 64 KiB (512 kbit) a second over each minute. The streamed answers
// are GitLab's (a baseline artifact, 8 MiB and up to its 256 MiB cap; a page
// of notes, rarely over a MiB); at the floor they take at most 2m8s (8 MiB)
// and 68 minutes (256 MiB), where a trickle of a byte every 29 s (under
// GitLab's 30 s per attempt) is refused after a minute and a half. A minute
// is twice GitLab's 30 s, so one pause that Timeout allows still leaves half
// the window to catch up. The other clients need no floor: their Timeout
// bounds the whole attempt, the body with it (GitHub's 3 minutes for a
// history file of 135 MB already asks some 750 KB a second).
const (
	DefaultMinRate    = 64 << 10
	DefaultRateWindow = time.Minute
)

// DefaultBudget is the waiting a request may do when Policy.Budget is unset.
const DefaultBudget = 2 * time.Minute

// DefaultPolicy is the policy of the model servers: 5 attempts, backoff 250 ms
// doubling to at most 4 s, 60 s per attempt, 3 minutes in all.
var DefaultPolicy = Policy{Attempts: 5, BaseDelay: 250 * time.Millisecond, MaxDelay: 4 * time.Second, Timeout: 60 * time.Second, Budget: 3 * time.Minute}

// normalized fills the zero fields of p from DefaultPolicy.
func (p Policy) normalized() Policy {
	if p.Attempts < 1 {
		p.Attempts = DefaultPolicy.Attempts
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = DefaultPolicy.BaseDelay
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = DefaultPolicy.MaxDelay
	}
	if p.RateLimitBase <= 0 || p.RateLimitMax <= 0 {
		p.RateLimitBase, p.RateLimitMax = p.BaseDelay, p.MaxDelay
	}
	if p.Timeout <= 0 {
		p.Timeout = DefaultPolicy.Timeout
	}
	if p.Budget <= 0 {
		p.Budget = time.Duration(p.Attempts)*p.Timeout + DefaultBudget
	}
	if p.Sleep == nil {
		p.Sleep = Sleep
	}
	if p.Now == nil {
		p.Now = time.Now
	}
	if p.MinRate <= 0 {
		p.MinRate = DefaultMinRate
	}
	if p.RateWindow <= 0 {
		p.RateWindow = DefaultRateWindow
	}
	return p
}

// Sleep waits d, or less when ctx is done first (then it returns ctx.Err()).
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// backoff is the wait before retry n (1-based): BaseDelay·2^(n-1) capped at
// MaxDelay, with full jitter on its upper half.
func (p Policy) backoff(n int) time.Duration {
	return backoff(n, p.BaseDelay, p.MaxDelay)
}

// backoff is the wait before retry n (1-based): base·2^(n-1) capped at most,
// with full jitter on its upper half.
func backoff(n int, base, most time.Duration) time.Duration {
	d := doubled(n, base, most)
	return d/2 + time.Duration(rand.Int64N(int64(d/2)+1))
}

// doubled is base·2^(n-1) capped at most.
func doubled(n int, base, most time.Duration) time.Duration {
	d := base
	for i := 1; i < n && d < most; i++ {
		d *= 2
	}
	return min(d, most)
}

// rateLimitBackoff is the wait of the n-th (1-based) rate limit of a request
// that says no wait: RateLimitBase·2^(n-1) capped at RateLimitMax, with
// jitter on its upper half, or, with RateLimitFloor, up to a quarter above it.
func (p Policy) rateLimitBackoff(n int) time.Duration {
	if !p.RateLimitFloor {
		return backoff(n, p.RateLimitBase, p.RateLimitMax)
	}
	d := doubled(n, p.RateLimitBase, p.RateLimitMax)
	return d + time.Duration(rand.Int64N(int64(d/4)+1))
}

func idempotent(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions:
		return true
	}
	return false
}

// notSent reports whether err, an attempt's failure without an answer, came
// before the request was sent: the connection (to the server or its proxy)
// was never made. Such an attempt is retried whatever the method.
func notSent(err error) bool {
	var oe *net.OpError
	return errors.As(err, &oe) && (oe.Op == "dial" || oe.Op == "proxyconnect")
}

// maxPlausibleWait bounds the waits a server may ask for: a Retry-After or an
// X-RateLimit-Reset further away is not a time (and would overflow a Duration).
const maxPlausibleWait = 7 * 24 * time.Hour

// RateLimitError is a request that stopped on a rate limit: the wait the server
// asked for does not fit the budget, or the attempts ran out.
type RateLimitError struct {
	URL      string
	Status   int
	Wait     time.Duration // what the server asked for (0: unknown)
	Reset    time.Time     // when the limit resets, zero when unknown or implausible
	Why      string        // the sane explanation, e.g. "the limit resets in 52m0s (at 15:04:05 UTC)"
	Budget   time.Duration
	Attempts int
}

func (e *RateLimitError) Error() string {
	return fmt.Sprintf("%s is rate limited (HTTP %d): %s; gave up after %d attempt(s) within the %s retry budget",
		e.URL, e.Status, e.Why, e.Attempts, e.Budget)
}

// decision is what to do with one answer.
type decision struct {
	retry     bool
	wait      time.Duration
	rateLimit *RateLimitError // set when the answer is a rate limit
	// backedOff: a rate limit that said no wait, whose wait is the policy's
	// (rateLimitBackoff), not the server's.
	backedOff bool
}

// decide classifies an answer (resp, or err when there was none); limited is
// how many rate limits that said no wait the request had before it.
func (p Policy) decide(req *http.Request, resp *http.Response, err error, attempt, limited int) decision {
	safe := idempotent(req.Method) || safeRetryOf(req.Context())
	if err != nil {
		if req.Context().Err() != nil {
			return decision{}
		}
		if !safe && (req.Method != http.MethodPost || p.NonIdempotentPOST) && !notSent(err) {
			return decision{}
		}
		return decision{retry: true, wait: p.backoff(attempt)}
	}
	st := resp.StatusCode
	now := p.Now()
	if st == http.StatusServiceUnavailable && !safe && req.Method == http.MethodPost && p.NonIdempotentPOST {
		// A 503, even with a Retry-After, is not a rate limit: the server
		// may have acted on the request before it failed.
		return decision{}
	}
	if st == http.StatusForbidden || st == http.StatusTooManyRequests || st == http.StatusServiceUnavailable {
		if d, why, ok := retryAfter(resp.Header.Get("Retry-After"), now); ok {
			rl := &RateLimitError{Status: st, Wait: d, Why: why}
			if d <= maxPlausibleWait {
				rl.Reset = now.Add(d)
			}
			return decision{retry: d <= maxPlausibleWait, wait: d, rateLimit: rl}
		}
		exhausted := ""
		if st != http.StatusServiceUnavailable && resp.Header.Get("X-RateLimit-Remaining") == "0" {
			v := resp.Header.Get("X-RateLimit-Reset")
			if allDigits(strings.TrimSpace(v)) {
				d, reset, why := rateLimitReset(v, now)
				rl := &RateLimitError{Status: st, Wait: d, Reset: reset, Why: why}
				return decision{retry: d > 0, wait: d, rateLimit: rl}
			}
			// No reset to wait for: GitHub's rule for a rate limit that
			// says no wait applies ("Rate limits for the REST API",
			// "Exceeding the rate limit": otherwise at least a minute).
			exhausted = "the rate limit is exhausted and gives no X-RateLimit-Reset"
			if strings.TrimSpace(v) != "" {
				exhausted = fmt.Sprintf("the rate limit is exhausted and X-RateLimit-Reset %s is not a time", headerValue(strings.TrimSpace(v)))
			}
		}
		if st == http.StatusTooManyRequests {
			if d, reset, why, ok := resetOf(resp.Header, now); ok {
				rl := &RateLimitError{Status: st, Wait: d, Reset: reset, Why: why}
				return decision{retry: d > 0, wait: d, rateLimit: rl}
			}
		}
		// A rate limit that says no wait: the policy's backoff
		// (rateLimitBackoff), growing with each repeat. GitHub's secondary
		// rate limit answers 403 or 429, and asks for at least a minute when
		// it gives no Retry-After, then an exponentially increasing wait
		// ("Rate limits for the REST API", "Exceeding the rate limit"), as
		// does an exhausted X-RateLimit-Remaining without its reset.
		why, least := exhausted, time.Minute
		switch {
		case why != "":
		case st != http.StatusServiceUnavailable && secondaryRateLimited(resp):
			why = "GitHub's secondary rate limit, which asks for a wait of at least a minute"
		case st == http.StatusTooManyRequests:
			why, least = "the server answered 429 Too Many Requests without saying how long to wait", 0
		}
		if why != "" {
			d := max(p.rateLimitBackoff(limited+1), least)
			return decision{retry: true, wait: d, backedOff: true, rateLimit: &RateLimitError{Status: st, Wait: d, Why: why}}
		}
		if st == http.StatusForbidden {
			return decision{}
		}
	}
	if st >= 500 && st <= 599 && (safe || (req.Method == http.MethodPost && !p.NonIdempotentPOST)) {
		return decision{retry: true, wait: p.backoff(attempt)}
	}
	return decision{}
}

// retryAfter reads Retry-After: delay seconds or an HTTP date.
func retryAfter(v string, now time.Time) (time.Duration, string, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, "", false
	}
	// delay-seconds is 1*DIGIT (RFC 9110, section 10.2.3): a sign is not
	// one ("+5" is not read as seconds, and no HTTP date either: no header).
	// A count of seconds too large for an int64 (ErrRange: the syntax is
	// good) is as implausible as any over the limit: read as no Retry-After
	// at all, it made a 429 retry after a backoff.
	if s, err := strconv.ParseInt(v, 10, 64); allDigits(v) && (err == nil || errors.Is(err, strconv.ErrRange)) {
		if err != nil || time.Duration(s) > maxPlausibleWait/time.Second {
			return maxPlausibleWait + 1, fmt.Sprintf("the server asked to retry after %s seconds, which is not a plausible wait", v), true
		}
		d := time.Duration(s) * time.Second
		return d, fmt.Sprintf("the server asked to retry after %s", d), true
	}
	if at, err := http.ParseTime(v); err == nil {
		d := max(at.Sub(now), 0)
		if d > maxPlausibleWait {
			return d, fmt.Sprintf("the server asked to retry at %s, which is not a plausible time", at.UTC().Format(time.RFC3339)), true
		}
		return d, fmt.Sprintf("the server asked to retry after %s", d.Round(time.Second)), true
	}
	return 0, "", false
}

// allDigits reports whether v is one or more ASCII digits and nothing else.
func allDigits(v string) bool {
	return v != "" && strings.Trim(v, "0123456789") == ""
}

// rateLimitReset reads X-RateLimit-Reset (Unix seconds): the wait until then plus
// a second, or a wait of 0 (do not retry) with the reason when the value is not
// a plausible time. A reset in the past (clock skew) is waited for 1 s.
func rateLimitReset(v string, now time.Time) (time.Duration, time.Time, string) {
	v = strings.TrimSpace(v)
	sec, err := strconv.ParseInt(v, 10, 64)
	if err != nil || !allDigits(v) {
		return 0, time.Time{}, fmt.Sprintf("the rate limit is exhausted and X-RateLimit-Reset %s is not a time", headerValue(v))
	}
	nowSec := now.Unix()
	switch {
	case sec <= nowSec:
		return time.Second, time.Time{}, fmt.Sprintf("the rate limit is exhausted and its reset time (%s) has already passed (a clock difference?)",
			time.Unix(max(sec, 0), 0).UTC().Format(time.RFC3339))
	case sec-nowSec > int64(maxPlausibleWait/time.Second):
		return 0, time.Time{}, fmt.Sprintf("the rate limit is exhausted and X-RateLimit-Reset %d is not a plausible time (more than %s away)", sec, maxPlausibleWait)
	}
	reset := time.Unix(sec, 0)
	d := reset.Sub(now) + time.Second
	return d, reset, fmt.Sprintf("the rate limit is exhausted until %s (in %s)", reset.UTC().Format(time.RFC3339), d.Round(time.Second))
}

// resetOf reads the unprefixed rate-limit headers of a 429 without
// Retry-After: GitLab's (its "Rate limits" page, user and IP rate limits,
// "Response headers": RateLimit-Remaining, RateLimit-Reset in Unix seconds,
// RateLimit-ResetTime as an HTTP date), the wait until the reset plus a
// second. They are read when RateLimit-Remaining is 0 or absent: a quota not
// exhausted is not the one that refused (an application limit answers 429
// while the user's quota still has requests left), so its reset says nothing
// of this wait. A RateLimit-Reset of at most maxPlausibleWait seconds is a
// delay in seconds (the IETF draft's RateLimit fields), a larger one a Unix
// time. ok is false when neither header is there, or either says no time:
// the 429 is then one that says no wait.
func resetOf(h http.Header, now time.Time) (d time.Duration, reset time.Time, why string, ok bool) {
	if rem := h.Values("RateLimit-Remaining"); len(rem) > 0 && strings.TrimSpace(rem[0]) != "0" {
		return 0, time.Time{}, "", false
	}
	if v := strings.TrimSpace(h.Get("RateLimit-Reset")); v != "" {
		sec, err := strconv.ParseInt(v, 10, 64)
		if err != nil || !allDigits(v) {
			return 0, time.Time{}, "", false
		}
		if sec <= int64(maxPlausibleWait/time.Second) {
			d = time.Duration(sec) * time.Second
			return d + time.Second, now.Add(d), fmt.Sprintf("the rate limit is exhausted for %s (RateLimit-Reset)", d), true
		}
		d, reset, why := rateLimitReset(v, now)
		why = strings.Replace(why, "X-RateLimit-Reset", "RateLimit-Reset", 1)
		return d, reset, why, true
	}
	if v := strings.TrimSpace(h.Get("RateLimit-ResetTime")); v != "" {
		at, err := http.ParseTime(v)
		if err != nil {
			return 0, time.Time{}, "", false
		}
		if at.Sub(now) > maxPlausibleWait {
			return 0, time.Time{}, fmt.Sprintf("the rate limit is exhausted and RateLimit-ResetTime %s is not a plausible time (more than %s away)", at.UTC().Format(time.RFC3339), maxPlausibleWait), true
		}
		d = max(at.Sub(now), 0) + time.Second
		return d, at, fmt.Sprintf("the rate limit is exhausted until %s (in %s)", at.UTC().Format(time.RFC3339), d.Round(time.Second)), true
	}
	return 0, time.Time{}, "", false
}

// headerValue is a header value for a message: quoted when it reads as a
// number (what a time header should hold), else only its length. Any other
// text may be anything the server chose to send back, the request's key
// included, and reaches every message that quotes the wait's reason, whose
// callers (errors.As) read it past the redaction of the error around it.
func headerValue(v string) string {
	if len(v) <= 24 && strings.Trim(v, "0123456789.+-eE ") == "" {
		return strconv.Quote(v)
	}
	return fmt.Sprintf("(%d bytes, not a number)", len(v))
}

// secondaryRateLimited peeks at a 403 body for GitHub's secondary-rate-limit
// answer and puts the body back for the caller to read.
func secondaryRateLimited(resp *http.Response) bool {
	data, err := ReadSnippet(resp.Body, 1<<16)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(data))
	if err != nil {
		return false
	}
	s := strings.ToLower(string(data))
	return strings.Contains(s, "secondary rate limit") || strings.Contains(s, "secondary-rate-limits") || strings.Contains(s, "abuse-rate-limits")
}

// errBudget is the cause when the budget ends during an attempt.
var errBudget = errors.New("the retry budget is spent")
