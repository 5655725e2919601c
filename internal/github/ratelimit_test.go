package github

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/github/githubtest"
)

// rateNow is the clock of the rate-limit tests: X-RateLimit-Reset is read
// against it, so no test depends on the time it runs at.
var rateNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// span is a wait the policy chooses with jitter: within lo..hi.
type span struct{ lo, hi time.Duration }

func exactly(d time.Duration) span { return span{d, d} }

// GitHub's rules for a rate-limited answer ("Rate limits for the REST API",
// "Exceeding the rate limit"; "Best practices for using the REST API",
// "Handle rate limit errors appropriately"), each header case against the
// stand-in: a 403 or 429 with retry-after is waited for that many seconds;
// else with x-ratelimit-remaining 0 until x-ratelimit-reset (UTC epoch
// seconds); else at least a minute, exponentially longer on each repeat, and
// an error after a bounded number of retries. A 403 with those headers is a
// rate limit too; a 403 without them is not, and is not retried. The waits
// are recorded, not slept (Policy.Sleep), and the clock is fixed (Policy.Now).
//
// At the base commit a 429 without GitHub's secondary-rate-limit message was
// retried after 0.25 to 0.5 s, an exhausted X-RateLimit-Remaining without a
// usable reset gave up at once, and a secondary rate limit without
// Retry-After waited one minute each time, however often it repeated.
func TestRateLimitRules(t *testing.T) {
	reset := func(d time.Duration) string { return strconv.FormatInt(rateNow.Add(d).Unix(), 10) }
	fault := func(status int, header map[string]string, body string) githubtest.Fault {
		h := http.Header{}
		for k, v := range header {
			h.Set(k, v)
		}
		return githubtest.Fault{Method: http.MethodGet, Status: status, Header: h, Body: body}
	}
	minute := span{time.Minute, time.Minute * 5 / 4}
	twoMinutes := span{2 * time.Minute, 2 * time.Minute * 5 / 4}
	fourMinutes := span{4 * time.Minute, 4 * time.Minute * 5 / 4}
	tests := []struct {
		name   string
		faults []githubtest.Fault
		budget time.Duration // 0: DefaultPolicy's
		waits  []span
		err    []string // the error's parts; nil: the listing succeeds after the waits
		kind   ErrorKind
	}{
		{name: "429 retry-after: its seconds", faults: []githubtest.Fault{fault(429, map[string]string{"Retry-After": "45"}, `{"message":"Too Many Requests"}`)},
			waits: []span{exactly(45 * time.Second)}},
		{name: "403 retry-after: its seconds (a rate limit too)", faults: []githubtest.Fault{fault(403, map[string]string{"Retry-After": "7"}, `{"message":"Forbidden"}`)},
			waits: []span{exactly(7 * time.Second)}},
		{name: "403 x-ratelimit-remaining 0: until x-ratelimit-reset", faults: []githubtest.Fault{githubtest.PrimaryRateLimit(http.MethodGet, rateNow, 20*time.Second)},
			waits: []span{exactly(21 * time.Second)}},
		{name: "429 x-ratelimit-remaining 0: until x-ratelimit-reset", faults: []githubtest.Fault{fault(429, map[string]string{"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": reset(30 * time.Second)}, "")},
			waits: []span{exactly(31 * time.Second)}},
		{name: "retry-after comes before x-ratelimit-reset", faults: []githubtest.Fault{fault(403, map[string]string{"Retry-After": "5", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": reset(time.Minute)}, "")},
			waits: []span{exactly(5 * time.Second)}},
		{name: "x-ratelimit-reset beyond the budget: an error at once", faults: []githubtest.Fault{githubtest.PrimaryRateLimit(http.MethodGet, rateNow, time.Hour)},
			err: []string{"403", "2026-03-01T13:00:00Z", "not waiting"}, kind: KindRateLimited},
		{name: "403 x-ratelimit-remaining 0 without x-ratelimit-reset: at least a minute", faults: []githubtest.Fault{fault(403, map[string]string{"X-RateLimit-Remaining": "0"}, `{"message":"API rate limit exceeded"}`)},
			waits: []span{minute}},
		{name: "429 x-ratelimit-remaining 0, x-ratelimit-reset not a number: at least a minute", faults: []githubtest.Fault{fault(429, map[string]string{"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "soon"}, "")},
			waits: []span{minute}},
		{name: "429 without any header: at least a minute", faults: []githubtest.Fault{fault(429, nil, `{"message":"Too Many Requests"}`)},
			waits: []span{minute}},
		{name: "429 with requests left and no message: at least a minute", faults: []githubtest.Fault{fault(429, map[string]string{"X-RateLimit-Remaining": "4999", "X-RateLimit-Reset": reset(time.Hour)}, "")},
			waits: []span{minute}},
		{name: "429 secondary rate limit with requests left: at least a minute", faults: []githubtest.Fault{githubtest.SecondaryRateLimitNoWait(http.MethodGet, 429, rateNow)},
			waits: []span{minute}},
		{name: "403 secondary rate limit without retry-after: at least a minute", faults: []githubtest.Fault{githubtest.SecondaryRateLimitNoWait(http.MethodGet, 403, rateNow)},
			waits: []span{minute}},
		{
			name:   "secondary rate limit again: the next wait, two minutes, does not fit the budget",
			faults: []githubtest.Fault{githubtest.SecondaryRateLimitNoWait(http.MethodGet, 403, rateNow), githubtest.SecondaryRateLimitNoWait(http.MethodGet, 403, rateNow)},
			waits:  []span{minute}, kind: KindRateLimited,
			err: []string{"GitHub answered 403 GitHub's secondary rate limit", "the next wait, 2m", "is longer than the 1m", "left of the budget: not waiting"},
		},
		{
			name:   "429 on every attempt under a 12-minute budget: 1, 2, 4 minutes, then an error",
			faults: []githubtest.Fault{fault(429, nil, ""), fault(429, nil, ""), fault(429, nil, ""), fault(429, nil, "")},
			budget: 12 * time.Minute, waits: []span{minute, twoMinutes, fourMinutes}, kind: KindRateLimited,
			err: []string{"429", "without saying how long to wait"},
		},
		// The repeats are the rate limits', not the attempts: a 502 before
		// the first 429 does not double its minute.
		{name: "a 502, then a 429: the backoff, then the first rate limit's minute", faults: []githubtest.Fault{githubtest.ServerError(http.MethodGet, 502), fault(429, nil, "")},
			waits: []span{{250 * time.Millisecond, 500 * time.Millisecond}, minute}},
		{name: "403 without rate-limit headers or message: not a rate limit, not retried", faults: []githubtest.Fault{fault(403, map[string]string{"X-RateLimit-Remaining": "4999"}, `{"message":"Resource not accessible by integration"}`)},
			err: []string{"403 Resource not accessible by integration"}, kind: KindForbidden},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := githubtest.New("octo", "repo", "ghs_rateTOKEN", 7)
			defer srv.Close()
			srv.Queue(tc.faults...)
			p := DefaultPolicy
			if tc.budget > 0 {
				p.Budget = tc.budget
			}
			var waits []time.Duration
			p.Sleep = func(ctx context.Context, d time.Duration) error {
				waits = append(waits, d)
				return ctx.Err()
			}
			p.Now = func() time.Time { return rateNow }
			c, err := NewClient(srv.APIURL(), "octo/repo", "ghs_rateTOKEN", p)
			require.NoError(t, err)
			_, err = c.ListComments(context.Background(), 7)
			require.Len(t, waits, len(tc.waits), "%v", waits)
			for i, w := range tc.waits {
				assert.GreaterOrEqual(t, waits[i], w.lo, "wait %d", i)
				assert.LessOrEqual(t, waits[i], w.hi, "wait %d", i)
			}
			if tc.err == nil {
				require.NoError(t, err)
				assert.Len(t, srv.Requests(), len(tc.faults)+1, "each rate limit retried once")
				return
			}
			var ae *APIError
			require.ErrorAs(t, err, &ae)
			assert.Equal(t, tc.kind, ae.Kind, "%v", err)
			for _, part := range tc.err {
				assert.Contains(t, err.Error(), part)
			}
		})
	}
}

// The minute's wait of a rate limit that says none ends within a second of
// a signal (the command's context is cancelled on SIGINT and SIGTERM), and
// the comment is not created. At the base commit the 429 was retried after
// at most half a second, and the comment created.
func TestRateLimitWaitInterrupted(t *testing.T) {
	srv := githubtest.New("octo", "repo", "ghs_rateTOKEN", 7)
	defer srv.Close()
	srv.Queue(githubtest.Fault{Method: http.MethodPost, Status: http.StatusTooManyRequests, Body: `{"message":"Too Many Requests"}`})
	c, err := NewClient(srv.APIURL(), "octo/repo", "ghs_rateTOKEN", DefaultPolicy)
	require.NoError(t, err)
	const after = 600 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(after, cancel)
	start := time.Now()
	_, err = c.CreateComment(ctx, 7, "the report")
	require.Error(t, err)
	assert.Less(t, time.Since(start), after+time.Second)
	assert.Empty(t, srv.Comments(7))
}
