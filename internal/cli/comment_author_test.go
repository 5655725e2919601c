package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/github/githubtest"
)

// check through the Action with a GitHub App's installation token (as
// actions/create-github-app-token makes, passed as `github-token`): GET /user
// answers 403 "Resource not accessible by integration", GraphQL's viewer at
// GITHUB_GRAPHQL_URL names the App's bot ("Forming calls with GraphQL"), and
// every run updates the one comment. The `comment-author` input is used
// instead of asking, and --comment-author wins over the input (a flag given
// on the command line always does).
func TestCheckCommentWithAnAppToken(t *testing.T) {
	root := repoRoot(t)
	t.Chdir(t.TempDir())
	const token = "ghs_appTOKEN0123456789abcdefXYZ"
	srv := githubtest.New("octo", "repo", token, 7)
	defer srv.Close()
	srv.BotLogin = "my-app[bot]"
	srv.AddComment(7, "github-actions[bot]", "<!-- retrieval-gate:default -->\nanother workflow's report")

	runs := []struct {
		name  string
		with  map[string]string
		args  []string
		asked bool // GET /user and GraphQL's viewer were asked
	}{
		{name: "first run: asks, creates", asked: true},
		{name: "second run: asks, updates", asked: true},
		{name: "the comment-author input: nothing asked", with: map[string]string{"comment-author": "my-app[bot]"}},
		{name: "--comment-author wins over the input", with: map[string]string{"comment-author": "wrong-app[bot]"}, args: []string{"--comment-author", "my-app[bot]"}},
	}
	var id int64
	for i, r := range runs {
		with := map[string]string{"command": "check", "github-token": token, "cases": filepath.Join(root, "testdata/demo/cases.jsonl"), "kb": filepath.Join(root, "testdata/demo/kb")}
		for k, v := range r.with {
			with[k] = v
		}
		env, _, _ := actionsEnv(t, actionDefaults(t, root, with))
		env["GITHUB_API_URL"] = srv.APIURL()
		env["GITHUB_GRAPHQL_URL"] = srv.URL + "/api/graphql"
		env["GITHUB_EVENT_NAME"] = "pull_request"
		require.NoError(t, os.WriteFile(env["GITHUB_EVENT_PATH"], []byte(prEvent(7, "octo/repo")), 0o644))
		before := len(srv.Requests())
		code, stdout, stderr := runIn(t, env, append([]string{"check"}, r.args...)...)
		require.Equal(t, 0, code, "%s\n%s\n%s", r.name, stdout, stderr)
		assert.NotContains(t, stdout, "login", r.name) // no warning about the comment's author
		asked := false
		for _, q := range srv.Requests()[before:] {
			asked = asked || q.Path == "/user" || (q.Path == "/graphql" && strings.Contains(q.Body, "viewer"))
		}
		assert.Equal(t, r.asked, asked, r.name)
		cs := srv.Comments(7)
		require.Len(t, cs, 2, r.name)
		assert.Equal(t, "<!-- retrieval-gate:default -->\nanother workflow's report", cs[0].Body, "another author's comment is never edited")
		assert.Equal(t, "my-app[bot]", cs[1].User)
		if i == 0 {
			id = cs[1].ID
			assert.Contains(t, stderr, "PR comment created", r.name)
			continue
		}
		assert.Equal(t, id, cs[1].ID, r.name)
		assert.Contains(t, stderr, "PR comment updated", r.name)
	}
}
