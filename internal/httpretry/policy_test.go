package httpretry

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// waits records the sleeps of a policy instead of sleeping.
type waits struct{ d []time.Duration }

func (w *waits) sleep(ctx context.Context, d time.Duration) error {
	w.d = append(w.d, d)
	return ctx.Err()
}

var testNow = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// statusServer answers each request with the next of answers (the last repeats).
func statusServer(t *testing.T, answers ...func(w http.ResponseWriter)) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(n.Add(1)) - 1
		answers[min(i, len(answers)-1)](w)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func answer(status int, header map[string]string, body string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}
}

func ok() func(w http.ResponseWriter) { return answer(200, nil, `{"ok":true}`) }

// The waits a server asks for are honoured within the budget, not cut by the
// per-attempt timeout (issue 10 item 13: a Retry-After of 45 s used to fail after
// the client's 30 s timeout).
func TestRateLimitWaits(t *testing.T) {
	reset := func(d time.Duration) string { return strconv.FormatInt(testNow.Add(d).Unix(), 10) }
	const secondary = `{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again."}`
	tests := []struct {
		name      string
		first     func(w http.ResponseWriter)
		wantWaits []time.Duration
		backoffs  int // waits of the backoff (jittered, at most 1 ms) instead of wantWaits
		wantCalls int32
		wantErr   []string // substrings; nil: success
		notErr    []string
	}{
		{name: "429 Retry-After 45", first: answer(429, map[string]string{"Retry-After": "45"}, ""),
			wantWaits: []time.Duration{45 * time.Second}, wantCalls: 2},
		{name: "secondary rate limit 403 with Retry-After", first: answer(403, map[string]string{"Retry-After": "30"}, secondary),
			wantWaits: []time.Duration{30 * time.Second}, wantCalls: 2},
		{name: "secondary rate limit 403 without Retry-After waits a minute", first: answer(403, nil, secondary),
			wantWaits: []time.Duration{time.Minute}, wantCalls: 2},
		// GitHub's secondary rate limit may answer 429 too ("Rate limits for
		// the REST API": "you will receive a 403 or 429 response"); without
		// Retry-After it asks for at least a minute, not the backoff's 0.5 s.
		{name: "secondary rate limit 429 without Retry-After waits a minute", first: answer(429, nil, secondary),
			wantWaits: []time.Duration{time.Minute}, wantCalls: 2},
		{name: "primary rate limit resetting in 20 s", first: answer(403, map[string]string{"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": reset(20 * time.Second)}, `{"message":"API rate limit exceeded"}`),
			wantWaits: []time.Duration{21 * time.Second}, wantCalls: 2},
		{name: "reset in the past: a short wait, then retried", first: answer(403, map[string]string{"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": reset(-time.Hour)}, ""),
			wantWaits: []time.Duration{time.Second}, wantCalls: 2},
		{name: "reset beyond the budget gives up at once", first: answer(403, map[string]string{"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": reset(52 * time.Minute)}, ""),
			wantCalls: 1, wantErr: []string{"rate limited (HTTP 403)", "2025-03-01T12:52:00Z", "not waiting", "after 1 attempt(s) within the 5m0s retry budget"}},
		{name: "reset far in the future is not a time", first: answer(403, map[string]string{"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "99999999999999"}, ""),
			wantCalls: 1, wantErr: []string{"X-RateLimit-Reset 99999999999999 is not a plausible time"}, notErr: []string{"3170843"}},
		{name: "Retry-After far in the future", first: answer(429, map[string]string{"Retry-After": "9999999999999"}, ""),
			wantCalls: 1, wantErr: []string{"not a plausible wait"}},
		// Past int64: as implausible, not ignored (it was read as no Retry-After,
		// and the 429 retried after a backoff).
		{name: "Retry-After past int64", first: answer(429, map[string]string{"Retry-After": "99999999999999999999"}, ""),
			wantCalls: 1, wantErr: []string{"retry after 99999999999999999999 seconds, which is not a plausible wait"}},
		// GitLab's unprefixed headers on a 429 without Retry-After (GitLab's
		// "Rate limits" page, user and IP rate limits, "Response headers":
		// RateLimit-Reset is Unix seconds, RateLimit-ResetTime an HTTP date):
		// waited for until the reset, not the backoff of a 429 that says no
		// wait (here 1 ms).
		{name: "429 RateLimit-Remaining 0 and RateLimit-Reset in 20 s", first: answer(429, map[string]string{"RateLimit-Remaining": "0", "RateLimit-Reset": reset(20 * time.Second)}, ""),
			wantWaits: []time.Duration{21 * time.Second}, wantCalls: 2},
		{name: "429 RateLimit-ResetTime in 30 s", first: answer(429, map[string]string{"RateLimit-ResetTime": testNow.Add(30 * time.Second).UTC().Format(http.TimeFormat)}, ""),
			wantWaits: []time.Duration{31 * time.Second}, wantCalls: 2},
		{name: "429 RateLimit-Reset as a delay in seconds", first: answer(429, map[string]string{"RateLimit-Reset": "12"}, ""),
			wantWaits: []time.Duration{13 * time.Second}, wantCalls: 2},
		{name: "429 RateLimit-Reset beyond the budget gives up at once", first: answer(429, map[string]string{"RateLimit-Remaining": "0", "RateLimit-Reset": reset(52 * time.Minute)}, ""),
			wantCalls: 1, wantErr: []string{"rate limited (HTTP 429)", "2025-03-01T12:52:00Z", "not waiting"}},
		{name: "429 RateLimit-ResetTime far in the future is not a time", first: answer(429, map[string]string{"RateLimit-ResetTime": "Fri, 01 Mar 2030 12:00:00 GMT"}, ""),
			wantCalls: 1, wantErr: []string{"RateLimit-ResetTime 2030-03-01T12:00:00Z is not a plausible time"}},
		// A quota with requests left is not the one that refused: its reset
		// is not the wait, the 429's backoff is.
		{name: "429 with RateLimit-Remaining left: the backoff", first: answer(429, map[string]string{"RateLimit-Remaining": "594", "RateLimit-Reset": reset(50 * time.Second)}, ""),
			backoffs: 1, wantCalls: 2},
		{name: "plain 403 is not retried", first: answer(403, nil, `{"message":"Resource not accessible by integration"}`),
			wantCalls: 1, wantErr: []string{"HTTP 403 after 1 attempt(s)", "Resource not accessible"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, calls := statusServer(t, tt.first, ok())
			w := &waits{}
			c := &Client{Policy: Policy{Attempts: 3, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond, Timeout: 30 * time.Second,
				Budget: 5 * time.Minute, Sleep: w.sleep, Now: func() time.Time { return testNow }}}
			_, err := c.Post(context.Background(), srv.URL, []byte(`{}`))
			assert.Equal(t, tt.wantCalls, calls.Load())
			if tt.backoffs > 0 {
				require.Len(t, w.d, tt.backoffs)
				for _, d := range w.d {
					assert.LessOrEqual(t, d, time.Millisecond)
				}
			} else {
				assert.Equal(t, tt.wantWaits, w.d)
			}
			if tt.wantErr == nil {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			for _, s := range tt.wantErr {
				assert.Contains(t, err.Error(), s)
			}
			for _, s := range tt.notErr {
				assert.NotContains(t, err.Error(), s)
			}
		})
	}
}

// The per-attempt timeout ends a hanging attempt; the next one is tried.
func TestPerAttemptTimeout(t *testing.T) {
	var n atomic.Int32
	release := make(chan struct{})
	defer close(release)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		_, _ = w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	w := &waits{}
	c := &Client{Policy: Policy{Attempts: 2, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond, Timeout: 200 * time.Millisecond, Sleep: w.sleep}}
	start := time.Now()
	_, err := c.Post(context.Background(), srv.URL, nil)
	require.NoError(t, err)
	assert.Equal(t, int32(2), n.Load())
	assert.Less(t, time.Since(start), 5*time.Second)
}

// A budget spent by attempts stops the retries.
func TestBudgetSpent(t *testing.T) {
	srv, calls := statusServer(t, answer(503, nil, "busy"))
	c := &Client{Policy: Policy{Attempts: 100, BaseDelay: time.Second, MaxDelay: time.Second, Timeout: time.Second, Budget: 3 * time.Second,
		Sleep: func(context.Context, time.Duration) error { return nil }}}
	_, err := c.Post(context.Background(), srv.URL, nil)
	require.Error(t, err)
	assert.LessOrEqual(t, calls.Load(), int32(7), "waits of 0.5-1 s within 3 s")
}

// Credentials never reach another origin, however the redirect is made (issue 10
// item 14): Authorization and API-key headers are dropped; the same origin keeps them.
func TestRedirectDropsCredentials(t *testing.T) {
	type seen struct{ auth, key string }
	var other seen
	otherSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		other = seen{r.Header.Get("Authorization"), r.Header.Get("X-Api-Key")}
		_, _ = w.Write([]byte(`{"other":true}`))
	}))
	defer otherSrv.Close()
	// The same machine under another name and port is another origin.
	otherURL := strings.Replace(otherSrv.URL, "127.0.0.1", "localhost", 1)
	var same seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, otherURL+"/x", http.StatusTemporaryRedirect)
		case "/here":
			http.Redirect(w, r, "/final", http.StatusTemporaryRedirect)
		case "/final":
			same = seen{r.Header.Get("Authorization"), r.Header.Get("X-Api-Key")}
			_, _ = w.Write([]byte(`{}`))
		}
	}))
	defer srv.Close()
	c := &Client{Policy: Policy{Attempts: 1}, Header: http.Header{"Authorization": {"Bearer sk-live-123456"}, "X-Api-Key": {"k-987654"}}}
	body, err := c.Post(context.Background(), srv.URL+"/away", []byte(`{}`))
	require.NoError(t, err)
	assert.JSONEq(t, `{"other":true}`, string(body))
	assert.Equal(t, seen{}, other, "another origin gets no credential")
	_, err = c.Post(context.Background(), srv.URL+"/here", []byte(`{}`))
	require.NoError(t, err)
	assert.Equal(t, seen{"Bearer sk-live-123456", "k-987654"}, same, "the same origin keeps them")

	// Through NewHTTPClient, headers set by another library on the request are
	// dropped on a cross-origin redirect too.
	other = seen{}
	hc := NewHTTPClient(&Transport{Policy: Policy{Attempts: 1}})
	req, err := http.NewRequest(http.MethodGet, srv.URL+"/away", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer lib-token-1234")
	req.Header.Set("X-Chroma-Token", "chroma-5678")
	resp, err := hc.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, seen{}, other)
}

// A server echoing the key gets it redacted from every message (issue 10 item 15).
func TestErrorsRedactSecrets(t *testing.T) {
	const key = "sk-proj-SECRET0123456789"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"error":"invalid key ` + r.Header.Get("Authorization") + ` (` + strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ") + `)"}`))
	}))
	defer srv.Close()
	c := &Client{Policy: Policy{Attempts: 1}, Header: http.Header{"Authorization": {"Bearer " + key}}}
	_, err := c.Post(context.Background(), srv.URL, nil)
	require.Error(t, err)
	assert.NotContains(t, err.Error(), key)
	assert.NotContains(t, err.Error(), "SECRET")
	assert.Contains(t, err.Error(), "invalid key ***")
	var se *StatusError
	require.ErrorAs(t, err, &se)
	assert.NotContains(t, se.Body, key)

	// In a URL (a key in the query string of an unreachable server) too.
	c = &Client{Policy: Policy{Attempts: 1}, Secrets: []string{key}}
	_, err = c.Post(context.Background(), "http://127.0.0.1:1/v1?key="+key, nil)
	require.Error(t, err)
	assert.NotContains(t, err.Error(), key)
	assert.Equal(t, "a *** b ***", Redact("a "+key+" b "+strings.ReplaceAll(key, "-", "-"), key))
}

// The wait between attempts is not inside the per-attempt timeout: a Retry-After
// longer than Timeout, really slept, still ends in success.
func TestWaitOutsideAttemptTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("sleeps a second")
	}
	srv, calls := statusServer(t, answer(429, map[string]string{"Retry-After": "1"}, ""), ok())
	c := &Client{Policy: Policy{Attempts: 2, Timeout: 300 * time.Millisecond, Budget: 10 * time.Second}}
	_, err := c.Post(context.Background(), srv.URL, nil)
	require.NoError(t, err)
	assert.Equal(t, int32(2), calls.Load())
}

// refuseFirst fails its first n round trips as a refused connection does,
// before anything is sent, then sends through http.DefaultTransport.
type refuseFirst struct{ n atomic.Int32 }

func (r *refuseFirst) RoundTrip(req *http.Request) (*http.Response, error) {
	if r.n.Add(-1) >= 0 {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	}
	return http.DefaultTransport.RoundTrip(req)
}

// A NonIdempotentPOST POST (a GitHub comment, a provider's batch creation) is
// retried only where the server provably did not act on it: a 429 (the
// providers document it as not processed) and a connection never made. A
// 5xx, a 503 with Retry-After, and a connection lost once the request was
// sent are not retried: the server may have created the thing. A POST marked
// WithSafeRetry (a GraphQL query, which changes nothing) is retried as a GET.
func TestNonIdempotentPOSTRetries(t *testing.T) {
	for _, tc := range []struct {
		name    string
		refused int32
		answers []func(w http.ResponseWriter)
		calls   int32
		dials   int32 // attempts in all
		safe    bool  // the request is marked WithSafeRetry
	}{
		{"500", 0, []func(w http.ResponseWriter){answer(500, nil, "oops"), ok()}, 1, 1, false},
		{"503 with Retry-After", 0, []func(w http.ResponseWriter){answer(503, map[string]string{"Retry-After": "1"}, "busy"), ok()}, 1, 1, false},
		{"429", 0, []func(w http.ResponseWriter){answer(429, nil, "slow down"), ok()}, 2, 2, false},
		{"connection refused", 2, []func(w http.ResponseWriter){ok()}, 1, 3, false},
		{"connection lost after sending", 0, []func(w http.ResponseWriter){hangUp, ok()}, 1, 1, false},
		{"safe: 502", 0, []func(w http.ResponseWriter){answer(502, nil, "bad gateway"), ok()}, 2, 2, true},
		{"safe: 503 with Retry-After", 0, []func(w http.ResponseWriter){answer(503, map[string]string{"Retry-After": "1"}, "busy"), ok()}, 2, 2, true},
		{"safe: connection lost after sending", 0, []func(w http.ResponseWriter){hangUp, ok()}, 2, 2, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, calls := statusServer(t, tc.answers...)
			base := &refuseFirst{}
			base.n.Store(tc.refused)
			w := &waits{}
			c := &Client{HTTP: &http.Client{Transport: base}, Policy: Policy{Attempts: 5, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond, Timeout: 5 * time.Second, NonIdempotentPOST: true, Sleep: w.sleep}}
			ctx := context.Background()
			if tc.safe {
				ctx = WithSafeRetry(ctx)
			}
			_, _ = c.Post(ctx, srv.URL, []byte(`{}`))
			assert.Equal(t, tc.calls, calls.Load(), "requests the server received")
			assert.Len(t, w.d, int(tc.dials-1), "retries")
		})
	}
}

// hangUp closes the connection without an answer, once the request arrived.
func hangUp(w http.ResponseWriter) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err == nil {
		_ = conn.Close()
	}
}

// With WithIdleTimeout, the attempt's timeout bounds each pause of a streamed
// answer's body, not the whole body: a body that keeps coming for longer than
// the timeout is read whole (without the mark it is cut at the timeout), and
// one that stops for longer than the timeout fails, saying so.
func TestIdleTimeout(t *testing.T) {
	const timeout = 160 * time.Millisecond
	for _, tc := range []struct {
		name    string
		idle    bool
		stall   bool // the body stops after its first chunk
		wantErr string
	}{
		{name: "streamed for longer than the timeout", idle: true},
		{name: "without the mark: cut at the timeout", wantErr: "context deadline exceeded"},
		{name: "a pause longer than the timeout", idle: true, stall: true, wantErr: "the answer stopped: no data for 160ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusOK)
				pause := timeout / 4
				for i := range 6 {
					_, _ = w.Write([]byte(strings.Repeat("x", 1024)))
					w.(http.Flusher).Flush()
					if tc.stall && i == 0 {
						pause = time.Hour
					}
					select {
					case <-r.Context().Done():
						return
					case <-time.After(pause):
					}
				}
			}))
			defer srv.Close()
			tr := &Transport{Policy: Policy{Attempts: 1, Timeout: timeout}}
			ctx := context.Background()
			if tc.idle {
				ctx = WithIdleTimeout(ctx)
			}
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
			require.NoError(t, err)
			resp, err := NewHTTPClient(tr).Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			data, err := io.ReadAll(resp.Body)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Len(t, data, 6*1024)
		})
	}
}

// A streamed answer (WithIdleTimeout) must keep up Policy.MinRate over each
// Policy.RateWindow: a server that trickles a byte at a time, each well under
// the idle wait, is refused at the end of a window, naming the URL (its
// host), the bytes, the time and the rate required (it used to be read for as
// long as the server kept trickling); a steady answer, and a small one that
// ends within a window, are read whole. The window here is 100 ms, the idle
// wait 160 ms; the floor, 16 KiB/s, is a hundredth of the steady server's.
func TestMinRate(t *testing.T) {
	type chunk struct {
		n     int // bytes
		times int
		pause time.Duration
	}
	for _, tc := range []struct {
		name    string
		chunks  []chunk
		wantErr string // a pattern of the whole message; "": read whole
	}{
		{name: "steady: 16 KiB every 10 ms", chunks: []chunk{{16 << 10, 30, 10 * time.Millisecond}}},
		{name: "small, slow, ended within a window", chunks: []chunk{{10, 3, 20 * time.Millisecond}}},
		{name: "a trickle: a byte every 20 ms", chunks: []chunk{{1, 40, 20 * time.Millisecond}},
			wantErr: `^http://127\.0\.0\.1:\d+/trickle: the answer is too slow: \d+ bytes in the last [\d.]+m?s \([\d.]+ B/s\), under the 16 KiB/s required; \d+ bytes in all$`},
		{name: "a burst, then a trickle", chunks: []chunk{{256 << 10, 1, 0}, {1, 40, 20 * time.Millisecond}},
			wantErr: `^http://127\.0\.0\.1:\d+/trickle: the answer is too slow: \d+ bytes in the last [\d.]+m?s \([\d.]+ B/s\), under the 16 KiB/s required; 26\d{4} bytes in all$`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			want := 0
			for _, c := range tc.chunks {
				want += c.n * c.times
			}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusOK)
				for _, c := range tc.chunks {
					for range c.times {
						_, _ = w.Write([]byte(strings.Repeat("x", c.n)))
						w.(http.Flusher).Flush()
						select {
						case <-r.Context().Done():
							return
						case <-time.After(c.pause):
						}
					}
				}
			}))
			defer srv.Close()
			tr := &Transport{Policy: Policy{Attempts: 1, Timeout: 160 * time.Millisecond, MinRate: 16 << 10, RateWindow: 100 * time.Millisecond}}
			req, err := http.NewRequestWithContext(WithIdleTimeout(context.Background()), http.MethodGet, srv.URL+"/trickle", nil)
			require.NoError(t, err)
			resp, err := NewHTTPClient(tr).Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			data, err := io.ReadAll(resp.Body)
			if tc.wantErr == "" {
				require.NoError(t, err)
				assert.Len(t, data, want)
				return
			}
			require.Error(t, err)
			assert.Regexp(t, tc.wantErr, err.Error())
			var se *SlowAnswerError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, se.Total, int64(len(data)), "the bytes in all are those read")
			require.ErrorIs(t, err, context.DeadlineExceeded, "a timeout, as a pause over the idle wait is")
			assert.Less(t, len(data), want, "refused before the trickle ended")
		})
	}
}
