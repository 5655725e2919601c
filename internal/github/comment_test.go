package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/github/githubtest"
)

const testToken = "ghs_testTOKEN0123456789abcdefABCDEF"

var testNow = time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)

// sleeps records the waits a client asked for, without sleeping.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.d = append(s.d, d)
	return ctx.Err()
}

func (s *sleeps) all() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

func newClient(t *testing.T, srv *githubtest.Server, sl *sleeps) *Client {
	t.Helper()
	c, err := NewClient(srv.APIURL(), srv.Owner+"/"+srv.Repo, testToken, WithSleep(sl.sleep), WithClock(func() time.Time { return testNow }))
	require.NoError(t, err)
	return c
}

func countMethod(reqs []githubtest.Request, method string) int {
	n := 0
	for _, r := range reqs {
		if r.Method == method {
			n++
		}
	}
	return n
}

func TestUpsert(t *testing.T) {
	const pr = 7
	marker := Marker("default")
	tests := []struct {
		name  string
		setup func(srv *githubtest.Server)
		run   func(t *testing.T, c *Client, srv *githubtest.Server, sl *sleeps)
	}{
		{
			name: "first run creates, second run updates the same comment",
			run: func(t *testing.T, c *Client, srv *githubtest.Server, sl *sleeps) {
				first, err := c.Upsert(context.Background(), pr, marker, marker+"\nrun 1")
				require.NoError(t, err)
				assert.True(t, first.Created)
				assert.Contains(t, first.URL, fmt.Sprintf("/pull/%d#issuecomment-", pr))
				second, err := c.Upsert(context.Background(), pr, marker, marker+"\nrun 2")
				require.NoError(t, err)
				assert.False(t, second.Created)
				assert.Equal(t, first.ID, second.ID)
				cs := srv.Comments(pr)
				require.Len(t, cs, 1)
				assert.Equal(t, marker+"\nrun 2", cs[0].Body)
				assert.Empty(t, sl.all())
			},
		},
		{
			name: "two keys keep two comments",
			run: func(t *testing.T, c *Client, srv *githubtest.Server, sl *sleeps) {
				a, b := Marker("gate-a"), Marker("gate-b")
				for i := 0; i < 2; i++ {
					_, err := c.Upsert(context.Background(), pr, a, fmt.Sprintf("%s\na%d", a, i))
					require.NoError(t, err)
					_, err = c.Upsert(context.Background(), pr, b, fmt.Sprintf("%s\nb%d", b, i))
					require.NoError(t, err)
				}
				cs := srv.Comments(pr)
				require.Len(t, cs, 2)
				assert.Equal(t, a+"\na1", cs[0].Body)
				assert.Equal(t, b+"\nb1", cs[1].Body)
			},
		},
		{
			name: "a key that is a prefix of another is a different comment",
			setup: func(srv *githubtest.Server) {
				srv.AddComment(pr, "github-actions[bot]", Marker("default2")+"\nother gate")
			},
			run: func(t *testing.T, c *Client, srv *githubtest.Server, sl *sleeps) {
				got, err := c.Upsert(context.Background(), pr, marker, marker+"\nmine")
				require.NoError(t, err)
				assert.True(t, got.Created)
				require.Len(t, srv.Comments(pr), 2)
			},
		},
		{
			name: "a comment that only quotes the marker is not taken over",
			setup: func(srv *githubtest.Server) {
				srv.AddComment(pr, "reviewer", "Why does the bot write "+marker+"?")
			},
			run: func(t *testing.T, c *Client, srv *githubtest.Server, sl *sleeps) {
				got, err := c.Upsert(context.Background(), pr, marker, marker+"\nreport")
				require.NoError(t, err)
				assert.True(t, got.Created)
				cs := srv.Comments(pr)
				require.Len(t, cs, 2)
				assert.Equal(t, "Why does the bot write "+marker+"?", cs[0].Body)
			},
		},
		{
			name: "the marker comment on page 3 is found by following Link (per_page 100)",
			setup: func(srv *githubtest.Server) {
				for i := 0; i < 250; i++ {
					if i == 231 {
						srv.AddComment(pr, "github-actions[bot]", marker+"\nold report")
						continue
					}
					srv.AddComment(pr, "someone", fmt.Sprintf("comment %d", i))
				}
			},
			run: func(t *testing.T, c *Client, srv *githubtest.Server, sl *sleeps) {
				got, err := c.Upsert(context.Background(), pr, marker, marker+"\nnew report")
				require.NoError(t, err)
				assert.False(t, got.Created)
				cs := srv.Comments(pr)
				require.Len(t, cs, 250)
				assert.Equal(t, marker+"\nnew report", cs[231].Body)
				var pages []string
				for _, r := range srv.Requests() {
					if r.Method == http.MethodGet {
						assert.Equal(t, "100", r.Query.Get("per_page"))
						pages = append(pages, r.Query.Get("page"))
					}
				}
				assert.Equal(t, []string{"", "2", "3"}, pages)
			},
		},
		{
			name: "no marker among 250 comments: every page is read, then it creates",
			setup: func(srv *githubtest.Server) {
				for i := 0; i < 250; i++ {
					srv.AddComment(pr, "someone", fmt.Sprintf("comment %d", i))
				}
			},
			run: func(t *testing.T, c *Client, srv *githubtest.Server, sl *sleeps) {
				got, err := c.Upsert(context.Background(), pr, marker, marker+"\nreport")
				require.NoError(t, err)
				assert.True(t, got.Created)
				assert.Equal(t, 3, countMethod(srv.Requests(), http.MethodGet))
				assert.Len(t, srv.Comments(pr), 251)
			},
		},
		{
			name:  "read-only token: 403 Resource not accessible by integration, no retry",
			setup: func(srv *githubtest.Server) { srv.ReadOnly = true },
			run: func(t *testing.T, c *Client, srv *githubtest.Server, sl *sleeps) {
				_, err := c.Upsert(context.Background(), pr, marker, marker+"\nreport")
				var ae *APIError
				require.ErrorAs(t, err, &ae)
				assert.Equal(t, KindForbidden, ae.Kind)
				assert.Equal(t, 403, ae.Status)
				assert.Contains(t, ae.Message, "Resource not accessible by integration")
				assert.Empty(t, srv.Comments(pr))
				assert.Equal(t, 1, countMethod(srv.Requests(), http.MethodPost))
				assert.Empty(t, sl.all())
				msg := Explain(err)
				assert.Contains(t, msg, "workflow_run")
				assert.Contains(t, msg, "job summary")
				assert.Contains(t, msg, "pull-requests: write")
			},
		},
		{
			name: "unknown pull request: 404",
			run: func(t *testing.T, c *Client, srv *githubtest.Server, sl *sleeps) {
				_, err := c.Upsert(context.Background(), 999, marker, marker)
				var ae *APIError
				require.ErrorAs(t, err, &ae)
				assert.Equal(t, KindNotFound, ae.Kind)
				assert.Equal(t, "list", ae.Op)
				assert.Contains(t, Explain(err), "workflow_run")
			},
		},
		{
			name:  "wrong token: 401",
			setup: func(srv *githubtest.Server) { srv.Token = "another" },
			run: func(t *testing.T, c *Client, srv *githubtest.Server, sl *sleeps) {
				_, err := c.Upsert(context.Background(), pr, marker, marker)
				var ae *APIError
				require.ErrorAs(t, err, &ae)
				assert.Equal(t, KindUnauthorized, ae.Kind)
				assert.Contains(t, Explain(err), "github-token")
			},
		},
		{
			name: "500 on the listing, then success",
			setup: func(srv *githubtest.Server) {
				srv.Queue(githubtest.ServerError(http.MethodGet, 500))
			},
			run: func(t *testing.T, c *Client, srv *githubtest.Server, sl *sleeps) {
				got, err := c.Upsert(context.Background(), pr, marker, marker)
				require.NoError(t, err)
				assert.True(t, got.Created)
				assert.Equal(t, []time.Duration{500 * time.Millisecond}, sl.all())
			},
		},
		{
			name: "502 on create is not blindly re-posted: it lists again, then creates once",
			setup: func(srv *githubtest.Server) {
				srv.Queue(githubtest.ServerError(http.MethodPost, 502))
			},
			run: func(t *testing.T, c *Client, srv *githubtest.Server, sl *sleeps) {
				got, err := c.Upsert(context.Background(), pr, marker, marker)
				require.NoError(t, err)
				assert.True(t, got.Created)
				assert.Len(t, srv.Comments(pr), 1)
				reqs := srv.Requests()
				assert.Equal(t, 2, countMethod(reqs, http.MethodPost))
				assert.Equal(t, 2, countMethod(reqs, http.MethodGet))
				assert.Len(t, sl.all(), 1)
			},
		},
		{
			name: "503 on update, then success",
			setup: func(srv *githubtest.Server) {
				srv.AddComment(pr, "github-actions[bot]", marker+"\nold")
				srv.Queue(githubtest.ServerError(http.MethodPatch, 503))
			},
			run: func(t *testing.T, c *Client, srv *githubtest.Server, sl *sleeps) {
				got, err := c.Upsert(context.Background(), pr, marker, marker+"\nnew")
				require.NoError(t, err)
				assert.False(t, got.Created)
				assert.Equal(t, marker+"\nnew", srv.Comments(pr)[0].Body)
				assert.Equal(t, 2, countMethod(srv.Requests(), http.MethodPatch))
			},
		},
		{
			name: "5xx that persists gives up after a bounded number of tries with growing waits",
			setup: func(srv *githubtest.Server) {
				for i := 0; i < 10; i++ {
					srv.Queue(githubtest.ServerError(http.MethodGet, 502))
				}
			},
			run: func(t *testing.T, c *Client, srv *githubtest.Server, sl *sleeps) {
				_, err := c.Upsert(context.Background(), pr, marker, marker)
				var ae *APIError
				require.ErrorAs(t, err, &ae)
				assert.Equal(t, KindServer, ae.Kind)
				assert.Equal(t, 502, ae.Status)
				assert.Equal(t, 4, countMethod(srv.Requests(), http.MethodGet))
				assert.Equal(t, []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second}, sl.all())
			},
		},
		{
			name: "primary rate limit (403, X-RateLimit-Remaining 0) waits until the reset, then succeeds",
			setup: func(srv *githubtest.Server) {
				srv.Queue(githubtest.PrimaryRateLimit(http.MethodGet, testNow, 20*time.Second))
			},
			run: func(t *testing.T, c *Client, srv *githubtest.Server, sl *sleeps) {
				got, err := c.Upsert(context.Background(), pr, marker, marker)
				require.NoError(t, err)
				assert.True(t, got.Created)
				assert.Equal(t, []time.Duration{21 * time.Second}, sl.all())
			},
		},
		{
			name: "secondary rate limit (429 Retry-After) on create waits as told, then succeeds",
			setup: func(srv *githubtest.Server) {
				srv.Queue(githubtest.SecondaryRateLimit(http.MethodPost, 429, 3))
			},
			run: func(t *testing.T, c *Client, srv *githubtest.Server, sl *sleeps) {
				got, err := c.Upsert(context.Background(), pr, marker, marker)
				require.NoError(t, err)
				assert.True(t, got.Created)
				assert.Len(t, srv.Comments(pr), 1)
				assert.Equal(t, []time.Duration{3 * time.Second}, sl.all())
			},
		},
		{
			name: "secondary rate limit (403 Retry-After) waits as told",
			setup: func(srv *githubtest.Server) {
				srv.Queue(githubtest.SecondaryRateLimit(http.MethodGet, 403, 2))
			},
			run: func(t *testing.T, c *Client, srv *githubtest.Server, sl *sleeps) {
				_, err := c.Upsert(context.Background(), pr, marker, marker)
				require.NoError(t, err)
				assert.Equal(t, []time.Duration{2 * time.Second}, sl.all())
			},
		},
		{
			name: "a rate limit that resets in an hour is not waited for",
			setup: func(srv *githubtest.Server) {
				srv.Queue(githubtest.PrimaryRateLimit(http.MethodGet, testNow, time.Hour))
			},
			run: func(t *testing.T, c *Client, srv *githubtest.Server, sl *sleeps) {
				_, err := c.Upsert(context.Background(), pr, marker, marker)
				var ae *APIError
				require.ErrorAs(t, err, &ae)
				assert.Equal(t, KindRateLimited, ae.Kind)
				assert.Empty(t, sl.all())
				assert.Contains(t, Explain(err), "rate limit")
				assert.Contains(t, Explain(err), testNow.Add(time.Hour).Format(time.RFC3339))
			},
		},
		{
			name: "the token travels only as a bearer Authorization header",
			run: func(t *testing.T, c *Client, srv *githubtest.Server, sl *sleeps) {
				_, err := c.Upsert(context.Background(), pr, marker, marker)
				require.NoError(t, err)
				for _, r := range srv.Requests() {
					assert.Equal(t, "Bearer "+testToken, r.Auth)
					assert.NotContains(t, r.Path, testToken)
					assert.NotContains(t, r.Query.Encode(), testToken)
					assert.NotContains(t, r.Body, testToken)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := githubtest.New("octo", "repo", testToken, pr)
			defer srv.Close()
			if tc.setup != nil {
				tc.setup(srv)
			}
			sl := &sleeps{}
			tc.run(t, newClient(t, srv, sl), srv, sl)
		})
	}
}

func TestUpsertNetworkError(t *testing.T) {
	srv := githubtest.New("octo", "repo", testToken, 1)
	url := srv.APIURL()
	srv.Close() // nothing listens there any more
	sl := &sleeps{}
	c, err := NewClient(url, "octo/repo", testToken, WithSleep(sl.sleep))
	require.NoError(t, err)
	_, err = c.Upsert(context.Background(), 1, Marker("k"), "body")
	var ae *APIError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, KindNetwork, ae.Kind)
	assert.Len(t, sl.all(), 3, "GETs are retried a bounded number of times")
	assert.NotContains(t, err.Error(), testToken)
	assert.Contains(t, Explain(err), "GITHUB_API_URL")
}

func TestUpsertCancelledContextStopsWaiting(t *testing.T) {
	srv := githubtest.New("octo", "repo", testToken, 1)
	defer srv.Close()
	srv.Queue(githubtest.ServerError(http.MethodGet, 500))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c, err := NewClient(srv.APIURL(), "octo/repo", testToken)
	require.NoError(t, err)
	_, err = c.Upsert(ctx, 1, Marker("k"), "body")
	require.Error(t, err)
	assert.True(t, errors.Is(err, context.Canceled) || strings.Contains(err.Error(), "context canceled"))
}

func TestNewClientAPIURL(t *testing.T) {
	srv := githubtest.New("octo", "repo", testToken, 3)
	defer srv.Close()
	tests := []struct {
		name    string
		apiURL  string
		repo    string
		wantErr string
	}{
		{name: "GHES form https://HOST/api/v3", apiURL: srv.URL + "/api/v3"},
		{name: "trailing slash", apiURL: srv.URL + "/api/v3/"},
		{name: "bare host gets /api/v3 as on GHES", apiURL: srv.URL},
		{name: "not owner/name", apiURL: srv.URL, repo: "octo", wantErr: "not owner/name"},
		{name: "not a URL", apiURL: "ftp://x", wantErr: "not an http(s) URL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			repo := tc.repo
			if repo == "" {
				repo = "octo/repo"
			}
			c, err := NewClient(tc.apiURL, repo, testToken, WithSleep((&sleeps{}).sleep))
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			_, err = c.Upsert(context.Background(), 3, Marker(tc.name), Marker(tc.name))
			require.NoError(t, err)
		})
	}
	c, err := NewClient("", "octo/repo", "")
	require.NoError(t, err)
	assert.Equal(t, "https://api.github.com/", c.gh.BaseURL.String())
}

func TestRetryAfterParsing(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"", 0, false},
		{"7", 7 * time.Second, true},
		{"0", 0, true},
		{"-3", 0, false},
		{testNow.Add(9 * time.Second).Format(http.TimeFormat), 9 * time.Second, true},
		{"soon", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, ok := parseRetryAfter(tc.in, testNow)
			assert.Equal(t, tc.ok, ok)
			assert.Equal(t, tc.want, got)
		})
	}
}
