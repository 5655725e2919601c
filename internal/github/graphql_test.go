package github

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/github/githubtest"
)

// The GraphQL endpoint lies where the REST calls go: go-github sends them to
// BASE/api/v3/ for a GitHub Enterprise Server base given without it (a bare
// https://HOST), but not to a host that starts with "api." or holds ".api."
// (GHE.com's https://api.SUBDOMAIN.ghe.com); GraphQL is then at
// https://HOST/api/graphql and https://api.SUBDOMAIN.ghe.com/graphql ("Forming
// calls with GraphQL", "The GraphQL endpoint").
func TestGraphQLURL(t *testing.T) {
	for in, want := range map[string]string{
		"":                                 "https://api.github.com/graphql",
		"https://api.github.com":           "https://api.github.com/graphql",
		"https://api.github.com/":          "https://api.github.com/graphql",
		"https://ghe.example.com/api/v3":   "https://ghe.example.com/api/graphql",
		"https://ghe.example.com/api/v3/":  "https://ghe.example.com/api/graphql",
		"https://ghe.example.com":          "https://ghe.example.com/api/graphql",
		"https://ghe.example.com/":         "https://ghe.example.com/api/graphql",
		"http://127.0.0.1:8080/gh/api/v3":  "http://127.0.0.1:8080/gh/api/graphql",
		"https://proxy.example.com/github": "https://proxy.example.com/github/api/graphql",
		"https://api.acme.ghe.com":         "https://api.acme.ghe.com/graphql",
		"https://eu.api.example.com/gh":    "https://eu.api.example.com/gh/graphql",
	} {
		got, err := GraphQLURL(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	_, err := GraphQLURL("ftp://x")
	assert.Error(t, err)
}

// The minimizeComment call against the fake's GraphQL endpoint, with GitHub's
// answers: data on success, 200 with errors of type NOT_FOUND and FORBIDDEN, 401.
func TestMinimizeComment(t *testing.T) {
	const token = "ghs_graphqlTOKEN0123456789"
	srv := githubtest.New("octo", "repo", token, 7)
	defer srv.Close()
	id := srv.AddComment(7, ActionsBot, "hello")
	c, err := NewClient(srv.APIURL(), "octo/repo", token, DefaultPolicy)
	require.NoError(t, err)
	cs, err := c.ListComments(context.Background(), 7)
	require.NoError(t, err)
	require.Len(t, cs, 1)
	require.NotEmpty(t, cs[0].NodeID, "node_id is read")

	require.NoError(t, c.MinimizeComment(context.Background(), cs[0].NodeID))
	got := srv.Comments(7)
	assert.True(t, got[0].Minimized)
	assert.Equal(t, "OUTDATED", got[0].MinimizedReason)
	assert.Equal(t, id, got[0].ID)
	reqs := srv.Requests()
	last := reqs[len(reqs)-1]
	assert.Equal(t, "/graphql", last.Path)
	assert.Equal(t, "Bearer "+token, last.Auth)
	assert.Contains(t, last.Body, "minimizeComment(input: {subjectId: $id, classifier: OUTDATED})")

	var ae *APIError
	err = c.MinimizeComment(context.Background(), "IC_nope")
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, KindNotFound, ae.Kind)
	assert.Equal(t, http.StatusOK, ae.Status, "GraphQL refuses with 200 and errors")
	assert.Contains(t, ae.Message, "NOT_FOUND")

	srv.MinimizeForbidden = true
	err = c.MinimizeComment(context.Background(), cs[0].NodeID)
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, KindForbidden, ae.Kind)
	assert.Contains(t, ae.Error(), "Resource not accessible by integration")

	bad, err := NewClient(srv.APIURL(), "octo/repo", "ghs_wrong", DefaultPolicy)
	require.NoError(t, err)
	err = bad.MinimizeComment(context.Background(), cs[0].NodeID)
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, KindUnauthorized, ae.Kind)
	assert.Equal(t, http.StatusUnauthorized, ae.Status)
}
