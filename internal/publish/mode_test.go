package publish

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/github"
	"github.com/retrieval-gate/retrieval-gate/internal/github/githubtest"
)

// Issue 13: --comment-mode decides when the sticky comment is written, on the
// fake GitHub: a run per step, the previous run's comment in place.
func TestCommentModes(t *testing.T) {
	type run struct {
		body   string
		failed bool
		want   string // the comment's report after the run ("" no comment)
		skip   string // Upserted.Skipped
	}
	marker := Marker("default")
	pass, fail, fail2 := marker+"\n## pass", marker+"\n## fail: hit 0.5", marker+"\n## fail: hit 0.4"
	footer := func(run string) string {
		return "\n<sub>retrieval-gate · [workflow run](https://github.com/octo/repo/actions/runs/" + run + ")</sub>\n"
	}
	tests := []struct {
		when string
		runs []run
	}{
		{WhenAlways, []run{{pass, false, pass, ""}, {pass, false, pass, ""}, {fail, true, fail, ""}}},
		{WhenChanges, []run{
			{pass, false, pass, ""},
			{pass, false, pass, SkipUnchanged},
			{fail, true, fail, ""},
			{fail, true, fail, SkipUnchanged},
			{fail2, true, fail2, ""},
		}},
		{WhenFailures, []run{
			{pass, false, "", SkipPassing}, // no failure, no earlier comment: nothing
			{fail, true, fail, ""},
			{fail, true, fail, SkipUnchanged},
			{pass, false, pass, ""}, // the fix: the failure does not linger
			{pass, false, pass, SkipUnchanged},
			{fail2, true, fail2, ""},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.when, func(t *testing.T) {
			srv := githubtest.New("octo", "repo", testToken, 7)
			defer srv.Close()
			srv.AddComment(7, "someone", marker+"\n## pass") // a human's copy is never touched
			sl := &sleeps{}
			c := newClient(t, srv, sl)
			for i, r := range tc.runs {
				edits := countMethod(srv.Requests(), "PATCH") + countMethod(srv.Requests(), "POST")
				got, err := UpsertPolicy(t.Context(), c, 7, marker, r.body+footer(string(rune('1'+i))), Policy{When: tc.when, Failed: r.failed}, sl.sleep)
				require.NoError(t, err, "run %d", i+1)
				assert.Equal(t, r.skip, got.Skipped, "run %d", i+1)
				var own []githubtest.Comment
				for _, cm := range srv.Comments(7) {
					if cm.User == github.ActionsBot {
						own = append(own, cm)
					}
				}
				if r.want == "" {
					assert.Empty(t, own, "run %d", i+1)
					continue
				}
				require.Len(t, own, 1, "run %d", i+1)
				assert.True(t, SameReport(own[0].Body, r.want), "run %d: %q", i+1, own[0].Body)
				writes := countMethod(srv.Requests(), "PATCH") + countMethod(srv.Requests(), "POST") - edits
				if r.skip != "" {
					assert.Zero(t, writes, "run %d writes nothing", i+1)
				} else {
					assert.Equal(t, 1, writes, "run %d", i+1)
				}
			}
			assert.Equal(t, "someone", srv.Comments(7)[0].User)
			assert.Equal(t, marker+"\n## pass", srv.Comments(7)[0].Body)
		})
	}
}

func TestSameReport(t *testing.T) {
	f := func(id string) string {
		return "\n<sub>retrieval-gate · [workflow run](https://github.com/o/r/actions/runs/" + id + ")</sub>\n"
	}
	assert.True(t, SameReport("a\nb"+f("1"), "a\nb"+f("2")))
	assert.True(t, SameReport("a\r\nb\n", "a\nb"))
	assert.False(t, SameReport("a\nb"+f("1"), "a\nc"+f("1")))
	assert.False(t, SameReport("<sub>retrieval-gate · [workflow run](x)</sub> and more", "x"))
}

// --comment-mode off posts nothing even with --comment always; failures with a
// pass and no earlier comment posts nothing and says why.
func TestPublishCommentModeOffAndFailures(t *testing.T) {
	srv := githubtest.New("octo", "repo", "", prNumber)
	defer srv.Close()
	r := newRunner(t, srv, "pull_request", samePR())
	pub := pubFor("default", "x")
	pub.Mode, pub.When = ModeAlways, WhenOff
	assert.Empty(t, r.publish(pub))
	assert.Empty(t, srv.Comments(prNumber))
	assert.Zero(t, countMethod(srv.Requests(), "GET"), "no API call")

	pub.When = WhenFailures
	assert.Empty(t, r.publish(pub))
	assert.Empty(t, srv.Comments(prNumber))
	assert.Contains(t, r.stderr.String(), "no PR comment: the verdict is pass and there is no earlier comment to update")

	pub.Failed = true
	assert.Empty(t, r.publish(pub))
	assert.Len(t, srv.Comments(prNumber), 1)
}
