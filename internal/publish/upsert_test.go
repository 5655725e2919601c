package publish

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/github"
	"github.com/retrieval-gate/retrieval-gate/internal/github/githubtest"
	"github.com/retrieval-gate/retrieval-gate/internal/httpretry"
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

// testPolicy is github.DefaultPolicy with the waits recorded, not slept.
func testPolicy(sl *sleeps) httpretry.Policy {
	p := github.DefaultPolicy
	p.Sleep, p.Now = sl.sleep, func() time.Time { return testNow }
	return p
}

func newClient(t *testing.T, srv *githubtest.Server, sl *sleeps) *github.Client {
	t.Helper()
	c, err := github.NewClient(srv.APIURL(), srv.Owner+"/"+srv.Repo, testToken, testPolicy(sl))
	require.NoError(t, err)
	return c
}

// countMethod counts the comment requests of method: not the identity's
// (GET /user, GraphQL's viewer).
func countMethod(reqs []githubtest.Request, method string) int {
	n := 0
	for _, r := range reqs {
		if r.Method == method && r.Path != "/user" && !isViewer(r) {
			n++
		}
	}
	return n
}

// isViewer reports whether r asks GraphQL for the token's login.
func isViewer(r githubtest.Request) bool {
	return r.Path == "/graphql" && strings.Contains(r.Body, "viewer")
}

// upsert is UpsertPolicy with WhenAlways and the test's sleeps.
func upsert(c Comments, sl *sleeps, pr int, marker, body string) (Upserted, error) {
	return UpsertPolicy(context.Background(), c, pr, marker, body, Policy{}, sl.sleep)
}

func TestUpsert(t *testing.T) {
	const pr = 7
	marker := Marker("default")
	tests := []struct {
		name  string
		setup func(srv *githubtest.Server)
		run   func(t *testing.T, c *github.Client, srv *githubtest.Server, sl *sleeps)
	}{
		{
			name: "first run creates, second run updates the same comment",
			run: func(t *testing.T, c *github.Client, srv *githubtest.Server, sl *sleeps) {
				first, err := upsert(c, sl, pr, marker, marker+"\nrun 1")
				require.NoError(t, err)
				assert.True(t, first.Created)
				assert.Contains(t, first.URL, fmt.Sprintf("/pull/%d#issuecomment-", pr))
				second, err := upsert(c, sl, pr, marker, marker+"\nrun 2")
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
			run: func(t *testing.T, c *github.Client, srv *githubtest.Server, sl *sleeps) {
				a, b := Marker("gate-a"), Marker("gate-b")
				for i := 0; i < 2; i++ {
					_, err := upsert(c, sl, pr, a, fmt.Sprintf("%s\na%d", a, i))
					require.NoError(t, err)
					_, err = upsert(c, sl, pr, b, fmt.Sprintf("%s\nb%d", b, i))
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
			run: func(t *testing.T, c *github.Client, srv *githubtest.Server, sl *sleeps) {
				got, err := upsert(c, sl, pr, marker, marker+"\nmine")
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
			run: func(t *testing.T, c *github.Client, srv *githubtest.Server, sl *sleeps) {
				got, err := upsert(c, sl, pr, marker, marker+"\nreport")
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
			run: func(t *testing.T, c *github.Client, srv *githubtest.Server, sl *sleeps) {
				got, err := upsert(c, sl, pr, marker, marker+"\nnew report")
				require.NoError(t, err)
				assert.False(t, got.Created)
				cs := srv.Comments(pr)
				require.Len(t, cs, 250)
				assert.Equal(t, marker+"\nnew report", cs[231].Body)
				var pages []string
				for _, r := range srv.Requests() {
					if r.Method == http.MethodGet && r.Path != "/user" {
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
			run: func(t *testing.T, c *github.Client, srv *githubtest.Server, sl *sleeps) {
				got, err := upsert(c, sl, pr, marker, marker+"\nreport")
				require.NoError(t, err)
				assert.True(t, got.Created)
				// Three pages, then three again: the listing after a create that
				// catches a concurrent run's duplicate.
				assert.Equal(t, 6, countMethod(srv.Requests(), http.MethodGet))
				assert.Len(t, srv.Comments(pr), 251)
			},
		},
		{
			name:  "read-only token: 403 Resource not accessible by integration, no retry",
			setup: func(srv *githubtest.Server) { srv.ReadOnly = true },
			run: func(t *testing.T, c *github.Client, srv *githubtest.Server, sl *sleeps) {
				_, err := upsert(c, sl, pr, marker, marker+"\nreport")
				var ae *github.APIError
				require.ErrorAs(t, err, &ae)
				assert.Equal(t, github.KindForbidden, ae.Kind)
				assert.Equal(t, 403, ae.Status)
				assert.Contains(t, ae.Message, "Resource not accessible by integration")
				assert.Empty(t, srv.Comments(pr))
				assert.Equal(t, 1, countMethod(srv.Requests(), http.MethodPost))
				assert.Empty(t, sl.all())
				msg := github.Explain(err)
				assert.Contains(t, msg, "workflow_run")
				assert.Contains(t, msg, "job summary")
				assert.Contains(t, msg, "pull-requests: write")
			},
		},
		{
			name: "unknown pull request: 404",
			run: func(t *testing.T, c *github.Client, srv *githubtest.Server, sl *sleeps) {
				_, err := upsert(c, sl, 999, marker, marker)
				var ae *github.APIError
				require.ErrorAs(t, err, &ae)
				assert.Equal(t, github.KindNotFound, ae.Kind)
				assert.Equal(t, "list", ae.Op)
				assert.Contains(t, github.Explain(err), "workflow_run")
			},
		},
		{
			name:  "wrong token: 401",
			setup: func(srv *githubtest.Server) { srv.Token = "another" },
			run: func(t *testing.T, c *github.Client, srv *githubtest.Server, sl *sleeps) {
				_, err := upsert(c, sl, pr, marker, marker)
				var ae *github.APIError
				require.ErrorAs(t, err, &ae)
				assert.Equal(t, github.KindUnauthorized, ae.Kind)
				assert.Contains(t, github.Explain(err), "github-token")
			},
		},
		{
			name: "500 on the listing, then success",
			setup: func(srv *githubtest.Server) {
				srv.Queue(githubtest.ServerError(http.MethodGet, 500))
			},
			run: func(t *testing.T, c *github.Client, srv *githubtest.Server, sl *sleeps) {
				got, err := upsert(c, sl, pr, marker, marker)
				require.NoError(t, err)
				assert.True(t, got.Created)
				waits := sl.all()
				require.Len(t, waits, 1)
				assert.InDelta(t, 375*time.Millisecond, waits[0], float64(125*time.Millisecond), "backoff 500 ms with jitter on its upper half")
			},
		},
		{
			name: "502 on create is not blindly re-posted: it lists again, then creates once",
			setup: func(srv *githubtest.Server) {
				f := githubtest.ServerError(http.MethodPost, 502)
				f.Path = "/repos/octo/repo/issues/7/comments"
				srv.Queue(f)
			},
			run: func(t *testing.T, c *github.Client, srv *githubtest.Server, sl *sleeps) {
				got, err := upsert(c, sl, pr, marker, marker)
				require.NoError(t, err)
				assert.True(t, got.Created)
				assert.Len(t, srv.Comments(pr), 1)
				reqs := srv.Requests()
				assert.Equal(t, 2, countMethod(reqs, http.MethodPost))
				assert.Equal(t, 3, countMethod(reqs, http.MethodGet), "list, list again before the second create, list after it")
				assert.Len(t, sl.all(), 1)
			},
		},
		{
			name: "503 on update, then success",
			setup: func(srv *githubtest.Server) {
				srv.AddComment(pr, "github-actions[bot]", marker+"\nold")
				srv.Queue(githubtest.ServerError(http.MethodPatch, 503))
			},
			run: func(t *testing.T, c *github.Client, srv *githubtest.Server, sl *sleeps) {
				got, err := upsert(c, sl, pr, marker, marker+"\nnew")
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
			run: func(t *testing.T, c *github.Client, srv *githubtest.Server, sl *sleeps) {
				_, err := upsert(c, sl, pr, marker, marker)
				var ae *github.APIError
				require.ErrorAs(t, err, &ae)
				assert.Equal(t, github.KindServer, ae.Kind)
				assert.Equal(t, 502, ae.Status)
				gets := 0
				for _, r := range srv.Requests() {
					if r.Method == http.MethodGet {
						gets++
					}
				}
				assert.Equal(t, 4, gets, "the first GET (/user) is tried 4 times")
				waits := sl.all()
				require.Len(t, waits, 3)
				for i, w := range waits {
					base := 500 * time.Millisecond << i
					assert.True(t, w >= base/2 && w <= base, "wait %d: %v not in [%v, %v]", i, w, base/2, base)
				}
			},
		},
		{
			name: "primary rate limit (403, X-RateLimit-Remaining 0) waits until the reset, then succeeds",
			setup: func(srv *githubtest.Server) {
				srv.Queue(githubtest.PrimaryRateLimit(http.MethodGet, testNow, 20*time.Second))
			},
			run: func(t *testing.T, c *github.Client, srv *githubtest.Server, sl *sleeps) {
				got, err := upsert(c, sl, pr, marker, marker)
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
			run: func(t *testing.T, c *github.Client, srv *githubtest.Server, sl *sleeps) {
				got, err := upsert(c, sl, pr, marker, marker)
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
			run: func(t *testing.T, c *github.Client, srv *githubtest.Server, sl *sleeps) {
				_, err := upsert(c, sl, pr, marker, marker)
				require.NoError(t, err)
				assert.Equal(t, []time.Duration{2 * time.Second}, sl.all())
			},
		},
		{
			name: "a rate limit that resets in an hour is not waited for",
			setup: func(srv *githubtest.Server) {
				srv.Queue(githubtest.PrimaryRateLimit(http.MethodGet, testNow, time.Hour))
			},
			run: func(t *testing.T, c *github.Client, srv *githubtest.Server, sl *sleeps) {
				_, err := upsert(c, sl, pr, marker, marker)
				var ae *github.APIError
				require.ErrorAs(t, err, &ae)
				assert.Equal(t, github.KindRateLimited, ae.Kind)
				assert.Empty(t, sl.all())
				assert.Contains(t, github.Explain(err), "rate limit")
				assert.Contains(t, github.Explain(err), testNow.Add(time.Hour).Format(time.RFC3339))
			},
		},
		{
			name: "the token travels only as a bearer Authorization header",
			run: func(t *testing.T, c *github.Client, srv *githubtest.Server, sl *sleeps) {
				_, err := upsert(c, sl, pr, marker, marker)
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
	c, err := github.NewClient(url, "octo/repo", testToken, testPolicy(sl))
	require.NoError(t, err)
	_, err = upsert(c, sl, 1, Marker("k"), "body")
	var ae *github.APIError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, github.KindNetwork, ae.Kind)
	assert.Len(t, sl.all(), 3, "GETs are retried a bounded number of times")
	assert.NotContains(t, err.Error(), testToken)
	assert.Contains(t, github.Explain(err), "GITHUB_API_URL")
}

func TestUpsertCancelledContextStopsWaiting(t *testing.T) {
	srv := githubtest.New("octo", "repo", testToken, 1)
	defer srv.Close()
	srv.Queue(githubtest.ServerError(http.MethodGet, 500))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c, err := github.NewClient(srv.APIURL(), "octo/repo", testToken, github.DefaultPolicy)
	require.NoError(t, err)
	_, err = UpsertPolicy(ctx, c, 1, Marker("k"), "body", Policy{}, httpretry.Sleep)
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
			sl := &sleeps{}
			c, err := github.NewClient(tc.apiURL, repo, testToken, testPolicy(sl))
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			_, err = upsert(c, sl, 3, Marker(tc.name), Marker(tc.name))
			require.NoError(t, err)
		})
	}
}

// Issue 10 item 4: only the token's own comments are edited. A human's (or a
// hostile) comment that starts with the marker keeps its text; an older one by
// another user does not win over the bot's own.
func TestUpsertEditsOnlyOwnComments(t *testing.T) {
	const pr = 7
	marker := Marker("default")
	t.Run("Actions token: others' marker comments are ignored", func(t *testing.T) {
		srv := githubtest.New("octo", "repo", testToken, pr)
		defer srv.Close()
		human := srv.AddComment(pr, "mallory", marker+"\nI wrote this; do not erase it")
		srv.AddComment(pr, "renovate[bot]", marker+"\nanother bot")
		own := srv.AddComment(pr, github.ActionsBot, marker+"\nold report")
		sl := &sleeps{}
		got, err := upsert(newClient(t, srv, sl), sl, pr, marker, marker+"\nnew report")
		require.NoError(t, err)
		assert.False(t, got.Created)
		assert.Equal(t, own, got.ID)
		cs := srv.Comments(pr)
		require.Len(t, cs, 3)
		assert.Equal(t, human, cs[0].ID)
		assert.Equal(t, marker+"\nI wrote this; do not erase it", cs[0].Body)
		assert.Equal(t, marker+"\nanother bot", cs[1].Body)
		assert.Equal(t, marker+"\nnew report", cs[2].Body)
	})
	t.Run("only a human's marker comment: a new one is created", func(t *testing.T) {
		srv := githubtest.New("octo", "repo", testToken, pr)
		defer srv.Close()
		srv.AddComment(pr, "mallory", marker+"\nforged")
		sl := &sleeps{}
		got, err := upsert(newClient(t, srv, sl), sl, pr, marker, marker+"\nreport")
		require.NoError(t, err)
		assert.True(t, got.Created)
		cs := srv.Comments(pr)
		require.Len(t, cs, 2)
		assert.Equal(t, marker+"\nforged", cs[0].Body)
		assert.Equal(t, github.ActionsBot, cs[1].User)
	})
	t.Run("a user's token: GET /user names the identity", func(t *testing.T) {
		srv := githubtest.New("octo", "repo", testToken, pr)
		defer srv.Close()
		srv.TokenUser = "release-bot-user"
		srv.AddComment(pr, github.ActionsBot, marker+"\nthe workflow token's comment")
		mine := srv.AddComment(pr, "release-bot-user", marker+"\nmine")
		sl := &sleeps{}
		got, err := upsert(newClient(t, srv, sl), sl, pr, marker, marker+"\nupdated")
		require.NoError(t, err)
		assert.Equal(t, mine, got.ID)
		cs := srv.Comments(pr)
		assert.Equal(t, marker+"\nthe workflow token's comment", cs[0].Body)
		assert.Equal(t, marker+"\nupdated", cs[1].Body)
	})
}

// Issue 10 item 5, issue 13: concurrent runs that each created a comment for the
// key end with one: the oldest is kept and updated, the others hidden as outdated
// (their marker retired, so no later run counts them), by the next run too.
func TestUpsertRemovesDuplicates(t *testing.T) {
	const pr = 7
	marker := Marker("default")
	t.Run("a run finding two own comments keeps the oldest", func(t *testing.T) {
		srv := githubtest.New("octo", "repo", testToken, pr)
		defer srv.Close()
		first := srv.AddComment(pr, github.ActionsBot, marker+"\nrun A")
		srv.AddComment(pr, "someone", "lgtm")
		srv.AddComment(pr, github.ActionsBot, marker+"\nrun B")
		sl := &sleeps{}
		got, err := upsert(newClient(t, srv, sl), sl, pr, marker, marker+"\nrun C")
		require.NoError(t, err)
		assert.Equal(t, first, got.ID)
		assert.Equal(t, 1, got.Hidden)
		assert.Equal(t, 0, got.Removed)
		cs := srv.Comments(pr)
		require.Len(t, cs, 3)
		assert.Equal(t, marker+"\nrun C", cs[0].Body)
		assert.False(t, cs[0].Minimized)
		assert.Equal(t, "lgtm", cs[1].Body)
		assert.True(t, cs[2].Minimized)
		assert.Equal(t, "OUTDATED", cs[2].MinimizedReason)
		assert.Equal(t, "<!-- retrieval-gate:default outdated -->\nrun B", cs[2].Body, "the text is kept, the marker retired")

		// The next run neither updates nor hides it again.
		before := len(srv.Requests())
		got, err = upsert(newClient(t, srv, sl), sl, pr, marker, marker+"\nrun D")
		require.NoError(t, err)
		assert.Equal(t, first, got.ID)
		assert.Zero(t, got.Hidden)
		for _, r := range srv.Requests()[before:] {
			assert.NotContains(t, r.Body, "minimizeComment")
		}
	})
	t.Run("GitHub refuses to minimise: the duplicate is deleted", func(t *testing.T) {
		srv := githubtest.New("octo", "repo", testToken, pr)
		defer srv.Close()
		srv.MinimizeForbidden = true
		first := srv.AddComment(pr, github.ActionsBot, marker+"\nrun A")
		srv.AddComment(pr, github.ActionsBot, marker+"\nrun B")
		sl := &sleeps{}
		got, err := upsert(newClient(t, srv, sl), sl, pr, marker, marker+"\nrun C")
		require.NoError(t, err)
		assert.Equal(t, first, got.ID)
		assert.Equal(t, 0, got.Hidden)
		assert.Equal(t, 1, got.Removed)
		cs := srv.Comments(pr)
		require.Len(t, cs, 1)
		assert.Equal(t, marker+"\nrun C", cs[0].Body)
	})
	t.Run("a server error while minimising stops the cleanup", func(t *testing.T) {
		srv := githubtest.New("octo", "repo", testToken, pr)
		defer srv.Close()
		srv.AddComment(pr, github.ActionsBot, marker+"\nrun A")
		srv.AddComment(pr, github.ActionsBot, marker+"\nrun B")
		srv.Queue(githubtest.Fault{Method: http.MethodPost, Path: "/graphql", BodyHas: "minimizeComment", Status: http.StatusBadGateway, Body: `{"message":"Bad Gateway"}`})
		sl := &sleeps{}
		_, err := upsert(newClient(t, srv, sl), sl, pr, marker, marker+"\nrun C")
		var ae *github.APIError
		require.ErrorAs(t, err, &ae)
		assert.Equal(t, "hide", ae.Op)
		assert.Equal(t, github.KindServer, ae.Kind)
		assert.Len(t, srv.Comments(pr), 2, "nothing deleted: the next run hides it")
	})
	t.Run("a concurrent create between listing and creating", func(t *testing.T) {
		srv := githubtest.New("octo", "repo", testToken, pr)
		defer srv.Close()
		sl := &sleeps{}
		c := &racing{Comments: newClient(t, srv, sl), srv: srv, pr: pr, body: marker + "\nother run"}
		got, err := upsert(c, sl, pr, marker, marker+"\nthis run")
		require.NoError(t, err)
		cs := srv.Comments(pr)
		require.Len(t, cs, 2)
		assert.Equal(t, marker+"\nthis run", cs[0].Body, "the oldest carries the latest report")
		assert.False(t, cs[0].Minimized)
		assert.True(t, cs[1].Minimized, "one visible comment per key")
		assert.Equal(t, cs[0].ID, got.ID)
		assert.False(t, got.Created, "the other run's comment was kept")
		assert.Equal(t, 1, got.Hidden)
	})
}

// racing is a client whose first create is preceded by another run's create.
type racing struct {
	Comments
	srv  *githubtest.Server
	pr   int
	body string
	done bool
}

func (r *racing) CreateComment(ctx context.Context, pr int, body string) (github.IssueComment, error) {
	if !r.done {
		r.done = true
		r.srv.AddComment(r.pr, github.ActionsBot, r.body)
	}
	return r.Comments.CreateComment(ctx, pr, body)
}

// Issue 10 item 14: a 307 from the API to another host gets no Authorization.
func TestRedirectToAnotherHostGetsNoToken(t *testing.T) {
	var got []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("Authorization"))
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`[]`))
	}))
	defer other.Close()
	srv := githubtest.New("octo", "repo", testToken, 7)
	defer srv.Close()
	srv.Queue(githubtest.Redirect(http.MethodGet, http.StatusTemporaryRedirect, strings.Replace(other.URL, "127.0.0.1", "localhost", 1)+"/elsewhere"))
	sl := &sleeps{}
	c := newClient(t, srv, sl)
	_, err := c.ListComments(context.Background(), 7)
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Empty(t, got[0], "the token went to another host")
}

// Issue 10 item 13: a Retry-After of 45 s is waited for (it used to fail inside
// the client's 30 s timeout); a reset beyond the budget gives up at once with a
// sane message.
func TestGitHubRateLimitBudget(t *testing.T) {
	const pr = 7
	srv := githubtest.New("octo", "repo", testToken, pr)
	defer srv.Close()
	srv.Queue(githubtest.SecondaryRateLimit(http.MethodPost, http.StatusTooManyRequests, 45))
	sl := &sleeps{}
	_, err := upsert(newClient(t, srv, sl), sl, pr, Marker("k"), Marker("k")+"\nx")
	require.NoError(t, err)
	assert.Equal(t, []time.Duration{45 * time.Second}, sl.all())

	for _, reset := range []string{"99999999999", strconvI(testNow.Add(2 * time.Hour).Unix())} {
		srv.Queue(githubtest.Fault{Method: http.MethodGet, Status: 403, Header: http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {reset}},
			Body: `{"message":"API rate limit exceeded"}`})
		sl := &sleeps{}
		_, err = upsert(newClient(t, srv, sl), sl, pr, Marker("k"), Marker("k")+"\ny")
		var ae *github.APIError
		require.ErrorAs(t, err, &ae)
		assert.Equal(t, github.KindRateLimited, ae.Kind)
		assert.Empty(t, sl.all(), "no wait beyond the budget")
		msg := github.Explain(err)
		assert.NotRegexp(t, `[0-9]{5,}-[0-9]{2}-[0-9]{2}`, msg, "no overflowing date")
		assert.Contains(t, msg, "exit code reflects only the gates")
	}
}

func strconvI(v int64) string { return fmt.Sprint(v) }

// relistFails is a client after whose first create GitHub refuses the next
// listing (404, as for a token that lost access mid-run).
type relistFails struct {
	Comments
	srv *githubtest.Server
}

func (r *relistFails) CreateComment(ctx context.Context, pr int, body string) (github.IssueComment, error) {
	c, err := r.Comments.CreateComment(ctx, pr, body)
	if err == nil {
		r.srv.Queue(githubtest.Fault{Method: http.MethodGet, Path: fmt.Sprintf("/repos/octo/repo/issues/%d/comments", pr),
			Status: http.StatusNotFound, Body: `{"message":"Not Found","documentation_url":"https://docs.github.com/rest"}`})
	}
	return c, err
}

// A failed listing after a create is not a failed upsert (the comment exists),
// but it is reported: a concurrent run's duplicate may remain.
func TestUpsertRelistingFailsAfterCreate(t *testing.T) {
	srv := githubtest.New("octo", "repo", testToken, 7)
	defer srv.Close()
	sl := &sleeps{}
	got, err := upsert(&relistFails{Comments: newClient(t, srv, sl), srv: srv}, sl, 7, Marker("k"), Marker("k")+"\nbody")
	require.NoError(t, err)
	assert.True(t, got.Created)
	require.Len(t, srv.Comments(7), 1)
	assert.Equal(t, srv.Comments(7)[0].ID, got.ID)
	var ae *github.APIError
	require.ErrorAs(t, got.Unsettled, &ae)
	assert.Equal(t, "list", ae.Op)
	assert.Equal(t, http.StatusNotFound, ae.Status)

	// Publish says so, once, as a warning; the comment's URL is still printed.
	srv2 := githubtest.New("octo", "repo", actionsTestToken, prNumber)
	defer srv2.Close()
	r := newRunner(t, srv2, "pull_request", samePR())
	p := r.publisher()
	base := p.Comments
	p.Comments = func(api github.Endpoints, repository, token string) (Comments, error) {
		c, err := base(api, repository, token)
		return &relistFails{Comments: c, srv: srv2}, err
	}
	warns := p.Publish(context.Background(), pubFor("default", "x"))
	require.Len(t, warns, 1, "%q", warns)
	assert.Contains(t, string(warns[0]), "the PR comment was created, but the comments could not be listed again")
	assert.Contains(t, string(warns[0]), "404")
	assert.Contains(t, r.stderr.String(), "retrieval-gate: PR comment created: ")
	assert.Len(t, srv2.Comments(prNumber), 1)
}
