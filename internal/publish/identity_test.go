package publish

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/github"
	"github.com/retrieval-gate/retrieval-gate/internal/github/githubtest"
	"github.com/retrieval-gate/retrieval-gate/internal/gitlab/gitlabtest"
)

// authored is the comments of pr by login.
func authored(srv *githubtest.Server, pr int, login string) []githubtest.Comment {
	var out []githubtest.Comment
	for _, c := range srv.Comments(pr) {
		if c.User == login {
			out = append(out, c)
		}
	}
	return out
}

// A GitHub App's installation token (actions/create-github-app-token, passed
// as `github-token`) may not read GET /user (403 "Resource not accessible by
// integration"); GraphQL's viewer names it, <app-slug>[bot] ("Forming calls
// with GraphQL"). Run after run, the step keeps one comment and updates it in
// place, as it does with the workflow token: the comment of another author
// carrying the marker (a human's, the workflow token's github-actions[bot]
// of another workflow) is never edited nor hidden.
func TestStickyCommentWithAnAppToken(t *testing.T) {
	tests := []struct {
		name    string
		bot     string
		alone   bool                                // no other comment carries the marker
		graphql func(srv *githubtest.Server) string // GITHUB_GRAPHQL_URL; "" unset
		restURL func(srv *githubtest.Server) string // GITHUB_API_URL
	}{
		{name: "the workflow token", bot: github.ActionsBot},
		{name: "a GitHub App's token, alone on the pull request", bot: "my-app[bot]", alone: true},
		{name: "a GitHub App's token", bot: "my-app[bot]"},
		{name: "a GitHub App's token, GITHUB_GRAPHQL_URL set as the runner does", bot: "my-app[bot]",
			graphql: func(srv *githubtest.Server) string { return srv.URL + "/api/graphql" }},
		{name: "a GitHub App's token, GHES given as a bare host", bot: "my-app[bot]",
			restURL: func(srv *githubtest.Server) string { return srv.URL }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := githubtest.New("octo", "repo", actionsTestToken, prNumber)
			defer srv.Close()
			srv.BotLogin = tc.bot
			marker := Marker(DefaultKey)
			var human int64
			if !tc.alone {
				human = srv.AddComment(prNumber, "someone", marker+"\nforged report")
				other := github.ActionsBot
				if tc.bot == github.ActionsBot {
					other = "other-app[bot]"
				}
				srv.AddComment(prNumber, other, marker+"\nanother workflow's report")
			}
			for run := 1; run <= 3; run++ {
				r := newRunner(t, srv, "pull_request", samePR())
				if tc.graphql != nil {
					r.env["GITHUB_GRAPHQL_URL"] = tc.graphql(srv)
				}
				if tc.restURL != nil {
					r.env["GITHUB_API_URL"] = tc.restURL(srv)
				}
				warns := r.publish(pubFor(DefaultKey, "run "+string(rune('0'+run))))
				assert.Empty(t, warns, "run %d", run)
				own := authored(srv, prNumber, tc.bot)
				require.Len(t, own, 1, "run %d: one comment, updated in place", run)
				assert.Contains(t, own[0].Body, "run "+string(rune('0'+run)))
				assert.False(t, own[0].Minimized, "run %d", run)
				if run == 1 {
					assert.Contains(t, r.stderr.String(), "PR comment created")
				} else {
					assert.Contains(t, r.stderr.String(), "PR comment updated")
				}
				r.assertNoToken(t, srv, 1)
			}
			cs := srv.Comments(prNumber)
			if tc.alone {
				assert.Len(t, cs, 1, "no comment posted on every run")
				return
			}
			require.Len(t, cs, 3)
			assert.Equal(t, human, cs[0].ID)
			assert.Equal(t, marker+"\nforged report", cs[0].Body, "another author's marker is never edited")
			assert.Equal(t, marker+"\nanother workflow's report", cs[1].Body)
			assert.False(t, cs[0].Minimized || cs[1].Minimized, "nor hidden")
		})
	}
}

// When GitHub names no login (GET /user refused, GraphQL's viewer answering
// 200 with an errors array), no comment is edited on the guess that
// github-actions[bot]'s are the step's own (another workflow's, under the
// workflow token, may carry the same marker while the step runs with an App's
// token): a new comment is posted, and the comments of the author GitHub
// names for it are settled (the oldest kept and updated, the rest hidden); the
// warning names that author and the input that fixes the next runs.
// --comment-author (the `comment-author` input) is used instead of asking.
func TestCommentAuthor(t *testing.T) {
	viewerRefused := func(srv *githubtest.Server) {
		srv.Queue(githubtest.GraphQLError("FORBIDDEN", "Resource not accessible by integration"))
	}
	other := Marker(DefaultKey) + "\nanother workflow's report"
	tests := []struct {
		name      string
		bot       string
		setup     func(srv *githubtest.Server)
		author    string
		warn      []string // parts of the one warning; nil none
		asked     bool     // GET /user and the viewer were asked
		postedAs  string
		nextRunOK bool // a second run, with the author the warning names, updates the comment
		earlier   string
		// earlier is the body of a comment of github-actions[bot] with the
		// marker there before the run ("" none): another workflow's under an
		// App's token, left alone; the step's own under the workflow token,
		// kept and updated, the new one hidden.
	}{
		{
			name: "the viewer refused, the workflow token", bot: github.ActionsBot, setup: viewerRefused, asked: true,
			warn:     []string{"could not learn the token's login", "200 FORBIDDEN Resource not accessible by integration", "edited no earlier comment", "GitHub named github-actions[bot] its author.", "set `comment-author` (--comment-author) to github-actions[bot]"},
			postedAs: github.ActionsBot, nextRunOK: true,
		},
		{
			name: "the viewer refused, the workflow token, its earlier comment", bot: github.ActionsBot, setup: viewerRefused, asked: true,
			earlier:  Marker(DefaultKey) + "\nan earlier run's report",
			warn:     []string{"edited no earlier comment", "GitHub named github-actions[bot] its author, whose earlier comment with this key was then updated, and the new one hidden as outdated"},
			postedAs: github.ActionsBot, nextRunOK: true,
		},
		{
			name: "the viewer refused, an App's token", bot: "my-app[bot]", setup: viewerRefused, asked: true,
			warn:     []string{"could not learn the token's login", "edited no earlier comment: it could only assume that those of github-actions[bot] were its own", "GitHub named my-app[bot] its author.", "set `comment-author` (--comment-author) to my-app[bot]"},
			postedAs: "my-app[bot]", nextRunOK: true,
		},
		{
			name: "the viewer refused, an App's token, another workflow's comment with the marker", bot: "my-app[bot]", setup: viewerRefused, asked: true,
			earlier:  other,
			warn:     []string{"edited no earlier comment", "GitHub named my-app[bot] its author."},
			postedAs: "my-app[bot]", nextRunOK: true,
		},
		{name: "comment-author given: nothing asked", bot: "my-app[bot]", author: "my-app[bot]", postedAs: "my-app[bot]", nextRunOK: true},
		{name: "comment-author given, in another letter case", bot: "my-app[bot]", author: "My-App[bot]", postedAs: "my-app[bot]", nextRunOK: true},
		{
			name: "comment-author that is not the token's", bot: "my-app[bot]", author: "other-app[bot]",
			warn:     []string{"--comment-author is other-app[bot], but the PR comment was posted as my-app[bot]", "Set `comment-author` (--comment-author) to my-app[bot]"},
			postedAs: "my-app[bot]", nextRunOK: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := githubtest.New("octo", "repo", actionsTestToken, prNumber)
			defer srv.Close()
			srv.BotLogin = tc.bot
			if tc.setup != nil {
				tc.setup(srv)
			}
			var earlier int64
			if tc.earlier != "" {
				earlier = srv.AddComment(prNumber, github.ActionsBot, tc.earlier)
			}
			r := newRunner(t, srv, "pull_request", samePR())
			pub := pubFor(DefaultKey, "first")
			pub.Author = tc.author
			warns := r.publish(pub)
			asked := false
			for _, q := range srv.Requests() {
				asked = asked || q.Path == "/user" || isViewer(q)
			}
			assert.Equal(t, tc.asked || tc.author == "", asked)
			if tc.warn == nil {
				assert.Empty(t, warns)
			} else {
				require.Len(t, warns, 1, "%q", warns)
				for _, part := range tc.warn {
					assert.Contains(t, string(warns[0]), part)
				}
				assert.Contains(t, r.stdout.String(), "::warning::")
			}
			visible := func() []githubtest.Comment {
				var out []githubtest.Comment
				for _, c := range authored(srv, prNumber, tc.postedAs) {
					if !c.Minimized {
						out = append(out, c)
					}
				}
				return out
			}
			require.Len(t, visible(), 1)
			switch {
			case tc.earlier == other:
				cs := srv.Comments(prNumber)
				require.Len(t, cs, 2)
				assert.Equal(t, earlier, cs[0].ID)
				assert.Equal(t, other, cs[0].Body, "another author's comment is not edited")
				assert.False(t, cs[0].Minimized, "nor hidden")
			case tc.earlier != "":
				assert.Equal(t, earlier, visible()[0].ID, "the oldest own comment is kept")
				assert.Contains(t, visible()[0].Body, "first")
				assert.Contains(t, r.stderr.String(), "PR comment updated")
			}
			if !tc.nextRunOK {
				return
			}
			// The next run, with the login the warning named (or the one given,
			// when it was right), updates that comment.
			next := newRunner(t, srv, "pull_request", samePR())
			pub = pubFor(DefaultKey, "second")
			pub.Author = tc.postedAs
			if tc.author != "" && strings.EqualFold(tc.author, tc.postedAs) {
				pub.Author = tc.author
			}
			assert.Empty(t, next.publish(pub))
			own := visible()
			require.Len(t, own, 1)
			assert.Contains(t, own[0].Body, "second")
			assert.Contains(t, next.stderr.String(), "PR comment updated")
		})
	}
}

// GITHUB_GRAPHQL_URL on another origin than GITHUB_API_URL would not get the
// token (it is sent to the API's origin only): the comment is not posted, and
// the warning names the variable.
func TestGraphQLURLOnAnotherOrigin(t *testing.T) {
	srv := githubtest.New("octo", "repo", actionsTestToken, prNumber)
	defer srv.Close()
	r := newRunner(t, srv, "pull_request", samePR())
	r.env["GITHUB_GRAPHQL_URL"] = "https://graphql.example.com/graphql"
	warns := r.publish(pubFor(DefaultKey, "x"))
	require.Len(t, warns, 1)
	assert.Contains(t, string(warns[0]), `cannot post the PR comment: GITHUB_GRAPHQL_URL "https://graphql.example.com/graphql" is not on the origin of GITHUB_API_URL`)
	assert.Empty(t, srv.Comments(prNumber))
	assert.Empty(t, srv.Requests())
}

// --comment-author is GitHub's: GitLab's GET /user answers every token (a
// project access token's bot user too), so a note is matched with the
// token's user whatever the flag says, and a warning says the flag was not
// used.
func TestCommentAuthorOnGitLab(t *testing.T) {
	srv := gitlabtest.New("42", glToken, "project_42_bot", 7)
	defer srv.Close()
	var stderr bytes.Buffer
	p := gitlabPublisher(srv, &stderr)
	for _, text := range []string{"first", "second"} {
		pub := pubFor(DefaultKey, text)
		pub.Author = "my-app[bot]"
		warns := p.Publish(context.Background(), pub)
		require.Len(t, warns, 1)
		assert.Contains(t, string(warns[0]), "--comment-author my-app[bot] applies to GitHub's PR comments only")
	}
	notes := srv.Notes(7)
	require.Len(t, notes, 1, "the token's user's note, updated")
	assert.Equal(t, "project_42_bot", notes[0].Author)
	assert.Contains(t, notes[0].Body, "second")
}
