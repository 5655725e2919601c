package github

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/github/githubtest"
)

// The token's login, as the sticky comment matches its own comments with it.
// GET /user answers a user's token; an installation token (the Actions
// workflow token, a GitHub App's token from actions/create-github-app-token)
// gets 403 "Resource not accessible by integration" there (REST API, "Get the
// authenticated user"), and GraphQL's viewer names it ("Forming calls with
// GraphQL"; the viewer of an installation token is its app's bot,
// <app-slug>[bot]). GraphQL refuses with 200 and an errors array: the login is
// then assumed, with the reason.
func TestSelf(t *testing.T) {
	const token = "ghs_selfTOKEN0123456789abcdef"
	badGateway := githubtest.Fault{Method: http.MethodPost, Path: "/graphql", Status: http.StatusBadGateway, Body: `{"message":"Bad Gateway"}`}
	tests := []struct {
		name      string
		setup     func(*githubtest.Server)
		token     string
		want      string
		assumed   string // a part of Identity.Assumed's message; "" none
		wantErr   ErrorKind
		errPart   string
		noGraphQL bool
		graphql   int           // the viewer's requests; 0 is 1
		waits     int           // the retry waits
		firstWait time.Duration // the first wait, when not 0
	}{
		{name: "a user's token: GET /user", setup: func(s *githubtest.Server) { s.TokenUser = "octocat" }, want: "octocat", noGraphQL: true},
		{name: "the workflow token: /user 403, the viewer", want: ActionsBot},
		{name: "a GitHub App's token: /user 403, the viewer is the app's bot", setup: func(s *githubtest.Server) { s.BotLogin = "my-app[bot]" }, want: "my-app[bot]"},
		{name: "a read-only token may still ask the viewer", setup: func(s *githubtest.Server) { s.ReadOnly, s.BotLogin = true, "my-app[bot]" }, want: "my-app[bot]"},
		{
			name: "GraphQL's errors array: assumed, with GitHub's message",
			setup: func(s *githubtest.Server) {
				s.Queue(githubtest.GraphQLError("FORBIDDEN", "Resource not accessible by integration"))
			},
			want:    ActionsBot,
			assumed: "failed to identify the token's login (GraphQL viewer): GitHub answered 200 FORBIDDEN Resource not accessible by integration",
		},
		{
			// The query changes nothing, so it is re-sent as a GET would be
			// (httpretry.WithSafeRetry), though the client's POSTs are not.
			name: "GraphQL's 502 once: asked again, named",
			setup: func(s *githubtest.Server) {
				s.BotLogin = "my-app[bot]"
				s.Queue(badGateway)
			},
			want: "my-app[bot]", graphql: 2, waits: 1,
		},
		{
			// GitHub's secondary rate limit (REST API documentation, "Rate
			// limits for the REST API": wait the Retry-After's seconds).
			name: "GraphQL's secondary rate limit with Retry-After: waited, asked again",
			setup: func(s *githubtest.Server) {
				s.BotLogin = "my-app[bot]"
				f := githubtest.SecondaryRateLimit(http.MethodPost, http.StatusForbidden, 7)
				f.Path = "/graphql"
				s.Queue(f)
			},
			want: "my-app[bot]", graphql: 2, waits: 1, firstWait: 7 * time.Second,
		},
		{
			name: "GraphQL's 502 on every attempt: assumed",
			setup: func(s *githubtest.Server) {
				s.Queue(badGateway, badGateway, badGateway, badGateway)
			},
			want:    ActionsBot,
			assumed: "502 Bad Gateway", graphql: DefaultPolicy.Attempts, waits: DefaultPolicy.Attempts - 1,
		},
		{
			name: "GraphQL's answer without a viewer: assumed",
			setup: func(s *githubtest.Server) {
				s.Queue(githubtest.Fault{Method: http.MethodPost, Path: "/graphql", Status: http.StatusOK, Body: `{"data":{"viewer":null}}`})
			},
			want:    ActionsBot,
			assumed: "the answer names no login",
		},
		{name: "a rejected token: 401 from both is the error", token: "ghs_wrong", wantErr: KindUnauthorized, errPart: "failed to identify the token's user: GitHub answered 401 Bad credentials"},
		{
			name: "a server error of GET /user is the error, GraphQL not asked",
			setup: func(s *githubtest.Server) {
				s.Queue(githubtest.ServerError(http.MethodGet, 500), githubtest.ServerError(http.MethodGet, 500), githubtest.ServerError(http.MethodGet, 500), githubtest.ServerError(http.MethodGet, 500))
			},
			wantErr: KindServer, errPart: "500", noGraphQL: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := githubtest.New("octo", "repo", token, 7)
			defer srv.Close()
			if tc.setup != nil {
				tc.setup(srv)
			}
			tok := token
			if tc.token != "" {
				tok = tc.token
			}
			p := DefaultPolicy
			var waits []time.Duration
			p.Sleep = func(ctx context.Context, d time.Duration) error {
				waits = append(waits, d)
				return ctx.Err()
			}
			c, err := NewClient(srv.APIURL(), "octo/repo", tok, p)
			require.NoError(t, err)
			id, err := c.Self(context.Background())
			graphql := 0
			for _, r := range srv.Requests() {
				if r.Path == "/graphql" {
					graphql++
					assert.JSONEq(t, `{"query":"query { viewer { login } }"}`, r.Body)
					assert.Equal(t, "Bearer "+tok, r.Auth)
				}
			}
			switch {
			case tc.noGraphQL:
				assert.Zero(t, graphql)
			case tc.graphql > 0:
				assert.Equal(t, tc.graphql, graphql)
			default:
				assert.Equal(t, 1, graphql)
			}
			if !tc.noGraphQL && tc.errPart == "" {
				assert.Len(t, waits, tc.waits, "%v", waits)
			}
			if tc.firstWait > 0 && len(waits) > 0 {
				assert.Equal(t, tc.firstWait, waits[0])
			}
			if tc.errPart != "" {
				var ae *APIError
				require.ErrorAs(t, err, &ae)
				assert.Equal(t, tc.wantErr, ae.Kind)
				assert.Contains(t, err.Error(), tc.errPart)
				assert.NotContains(t, err.Error(), tok)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, id.Login)
			if tc.assumed == "" {
				assert.NoError(t, id.Assumed)
				return
			}
			require.Error(t, id.Assumed)
			assert.Contains(t, id.Assumed.Error(), tc.assumed)
		})
	}
}

// The GraphQL endpoint a client asks: GITHUB_GRAPHQL_URL when the runner sets
// it, else next to the REST base as the REST calls resolve it; on GitHub
// Enterprise Server (the fake's layout) /api/graphql, where /graphql is 404.
func TestSelfGraphQLEndpoint(t *testing.T) {
	const token = "ghs_endpointTOKEN0123456789"
	srv := githubtest.New("octo", "repo", token, 7)
	defer srv.Close()
	srv.BotLogin = "my-app[bot]"
	tests := []struct {
		name    string
		api     Endpoints
		want    string
		assumed bool
		newErr  string
	}{
		{name: "GHES REST base https://HOST/api/v3", api: Endpoints{REST: srv.APIURL()}, want: "my-app[bot]"},
		{name: "a bare GHES host: REST at /api/v3, GraphQL at /api/graphql", api: Endpoints{REST: srv.URL}, want: "my-app[bot]"},
		{name: "GITHUB_GRAPHQL_URL as the runner sets it", api: Endpoints{REST: srv.APIURL(), GraphQL: srv.URL + "/api/graphql"}, want: "my-app[bot]"},
		{name: "GITHUB_GRAPHQL_URL wins over the derived endpoint", api: Endpoints{REST: srv.APIURL(), GraphQL: srv.URL + "/graphql"}, want: ActionsBot, assumed: true},
		{name: "GITHUB_GRAPHQL_URL on another origin is refused", api: Endpoints{REST: srv.APIURL(), GraphQL: "https://elsewhere.example.com/api/graphql"}, newErr: "is not on the origin of GITHUB_API_URL"},
		{name: "GITHUB_GRAPHQL_URL not a URL", api: Endpoints{REST: srv.APIURL(), GraphQL: "ftp://x/graphql"}, newErr: `GITHUB_GRAPHQL_URL "ftp://x/graphql" is not an http(s) URL`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := NewClientAt(tc.api, "octo/repo", token, DefaultPolicy)
			if tc.newErr != "" {
				require.ErrorContains(t, err, tc.newErr)
				return
			}
			require.NoError(t, err)
			id, err := c.Self(context.Background())
			require.NoError(t, err)
			assert.Equal(t, tc.want, id.Login)
			assert.Equal(t, tc.assumed, id.Assumed != nil, "%v", id.Assumed)
		})
	}
}

func TestValidLogin(t *testing.T) {
	for s, want := range map[string]bool{
		"octocat": true, "my-app[bot]": true, "github-actions[bot]": true, "a": true, "A1-b2": true,
		"octocat_acme":  true, // an Enterprise Managed User
		"":              false,
		"-octocat":      false,
		"octo cat":      false,
		"octo.cat":      false,
		"[bot]":         false,
		"my-app[bot] ":  false,
		"my-app[bot]x":  false,
		"app[bot][bot]": false,
		"a234567890123456789012345678901234567890": false, // 40 characters
		"a23456789012345678901234567890123456789":  true,  // 39
		"octo\n::warning::x":                       false,
	} {
		assert.Equal(t, want, ValidLogin(s), "%q", s)
	}
}
