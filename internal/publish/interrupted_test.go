package publish

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/github/githubtest"
	"github.com/retrieval-gate/retrieval-gate/internal/gitlab/gitlabtest"
)

// A signal (SIGINT, SIGTERM: the run's context cancelled) while the PR
// comment or MR note is posted makes the run exit 2 ("check: interrupted
// after its files were written", docs/action.md, "Signals"). Its warning
// blamed the API ("Check GITHUB_API_URL and the runner's network") and said
// "the exit code reflects only the gates", which the exit 2 that followed
// contradicted: it now says the run was interrupted, and nothing else.
func TestPublishInterruptedComment(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	want := map[string]string{"github": "retrieval-gate did not post the PR comment: the run was interrupted (SIGINT or SIGTERM) while it was being posted.",
		"gitlab": "retrieval-gate did not post the MR note: the run was interrupted (SIGINT or SIGTERM) while it was being posted."}
	got := map[string][]Warning{}

	srv := githubtest.New("octo", "repo", actionsTestToken, prNumber)
	defer srv.Close()
	r := newRunner(t, srv, "pull_request", samePR())
	got["github"] = r.publisher().Publish(ctx, pubFor("default", "x"))
	assert.Empty(t, srv.Comments(prNumber))

	gl := gitlabtest.New("42", glToken, "bot", 7)
	defer gl.Close()
	var stderr bytes.Buffer
	got["gitlab"] = gitlabPublisher(gl, &stderr).Publish(ctx, pubFor(DefaultKey, "x"))
	assert.Empty(t, gl.Notes(7))

	for host, warns := range got {
		var comment []string
		for _, w := range warns {
			if bytes.Contains([]byte(w), []byte("not post the")) {
				comment = append(comment, string(w))
			}
		}
		require.Len(t, comment, 1, "%s: %q", host, warns)
		assert.Equal(t, want[host], comment[0], host)
	}
}
