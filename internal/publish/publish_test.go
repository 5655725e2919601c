package publish

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/github"
	"github.com/retrieval-gate/retrieval-gate/internal/github/githubtest"
)

const actionsTestToken = "ghs_CLItestTOKENabcdef0123456789XYZ"

// runner is the environment the Actions runner gives a step, with its files.
type runner struct {
	dir                  string
	env                  map[string]string
	stdout, stderr       bytes.Buffer
	outputFile, summary  string
	eventFile, workspace string
	waits                []time.Duration
}

func newRunner(t *testing.T, srv *githubtest.Server, event, payload string) *runner {
	t.Helper()
	dir := t.TempDir()
	r := &runner{dir: dir, workspace: filepath.Join(dir, "workspace")}
	require.NoError(t, os.MkdirAll(r.workspace, 0o755))
	r.outputFile = filepath.Join(dir, "output")
	r.summary = filepath.Join(dir, "summary")
	r.eventFile = filepath.Join(dir, "event.json")
	for _, f := range []string{r.outputFile, r.summary} {
		require.NoError(t, os.WriteFile(f, nil, 0o644))
	}
	require.NoError(t, os.WriteFile(r.eventFile, []byte(payload), 0o644))
	r.env = map[string]string{
		"GITHUB_ACTIONS":      "true",
		"CI":                  "true",
		"GITHUB_REPOSITORY":   "octo/repo",
		"GITHUB_EVENT_NAME":   event,
		"GITHUB_EVENT_PATH":   r.eventFile,
		"GITHUB_WORKSPACE":    r.workspace,
		"GITHUB_OUTPUT":       r.outputFile,
		"GITHUB_STEP_SUMMARY": r.summary,
		"GITHUB_SERVER_URL":   "https://github.com",
		"GITHUB_RUN_ID":       "4242",
		"INPUT_GITHUB-TOKEN":  actionsTestToken,
		"INPUT_COMMENT":       "auto",
		"RUNNER_TEMP":         filepath.Join(dir, "tmp"),
	}
	if srv != nil {
		r.env["GITHUB_API_URL"] = srv.APIURL()
	}
	return r
}

// publisher publishes in the runner's environment; the client's waits are
// recorded in r.waits, not slept.
func (r *runner) publisher() *Publisher {
	sleep := func(ctx context.Context, d time.Duration) error {
		r.waits = append(r.waits, d)
		return ctx.Err()
	}
	p := github.DefaultPolicy
	p.Sleep = sleep
	return &Publisher{Getenv: func(k string) string { return r.env[k] }, Stdout: &r.stdout, Stderr: &r.stderr,
		Comments: GitHubComments(p), Sleep: sleep}
}

// publish is r.publisher().Publish.
func (r *runner) publish(pub Publication) []Warning {
	return r.publisher().Publish(context.Background(), pub)
}

func (r *runner) read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

// assertNoToken checks every byte the run produced, except the ::add-mask:: command
// that hands the token to the runner's masker.
func (r *runner) assertNoToken(t *testing.T, srv *githubtest.Server, runs int) {
	t.Helper()
	masks := 0
	for _, line := range strings.Split(r.stdout.String(), "\n") {
		if line == "::add-mask::"+actionsTestToken {
			masks++
			continue
		}
		assert.NotContains(t, line, actionsTestToken, "stdout")
	}
	if r.env["GITHUB_ACTIONS"] == "true" && r.env["INPUT_GITHUB-TOKEN"] != "" {
		assert.Equal(t, runs, masks, "the token is masked once per run")
	}
	assert.NotContains(t, r.stderr.String(), actionsTestToken, "stderr")
	assert.NotContains(t, r.read(t, r.summary), actionsTestToken, "job summary")
	assert.NotContains(t, r.read(t, r.outputFile), actionsTestToken, "outputs")
	if srv != nil {
		for _, c := range srv.Comments(prNumber) {
			assert.NotContains(t, c.Body, actionsTestToken, "comment")
		}
	}
}

const prNumber = 7

func samePR() string { return prEvent(prNumber, "octo/repo") }

func prEvent(n int, head string) string {
	return fmt.Sprintf(`{"number":%d,"pull_request":{"number":%d,"head":{"repo":{"full_name":%q}},"base":{"repo":{"full_name":"octo/repo"}}}}`, n, n, head)
}

func pubFor(key, text string) Publication {
	return Publication{
		Key:      key,
		Markdown: Marker(key) + "\n## retrieval-gate: pass\n\n" + text + "\n",
		Outputs:  map[string]string{"verdict": "pass", "n": "3"},
		Mode:     ModeAuto,
	}
}

func TestPublish(t *testing.T) {
	tests := []struct {
		name         string
		event        string
		payload      string
		setup        func(srv *githubtest.Server, r *runner)
		pubs         []Publication
		wantComments []string // bodies' second lines, in order
		wantWarn     []string // substrings, one per warning, in order
		wantStdout   []string
		wantStderr   []string
		noRequests   bool
	}{
		{
			name:         "first run creates, second run updates the same comment",
			pubs:         []Publication{pubFor("default", "run 1"), pubFor("default", "run 2")},
			wantComments: []string{"## retrieval-gate: pass"},
			wantStderr:   []string{"PR comment created: https://github.com/octo/repo/pull/7#issuecomment-", "PR comment updated"},
		},
		{
			name:         "two keys keep two comments",
			pubs:         []Publication{pubFor("gate-a", "a"), pubFor("gate-b", "b"), pubFor("gate-a", "a2")},
			wantComments: []string{"## retrieval-gate: pass", "## retrieval-gate: pass"},
		},
		{
			name:       "never does not touch the API but writes the summary",
			pubs:       []Publication{func() Publication { p := pubFor("default", "x"); p.Mode = ModeNever; return p }()},
			noRequests: true,
		},
		{
			name:       "push event: auto posts nothing",
			event:      "push",
			payload:    `{"ref":"refs/heads/main"}`,
			pubs:       []Publication{pubFor("default", "x")},
			noRequests: true,
		},
		{
			name:    "push event with --pr: posts to that PR",
			event:   "push",
			payload: `{"ref":"refs/heads/main"}`,
			pubs: []Publication{func() Publication {
				p := pubFor("default", "x")
				p.PR = prNumber
				return p
			}()},
			wantComments: []string{"## retrieval-gate: pass"},
		},
		{
			name:    "always without a PR warns",
			event:   "push",
			payload: `{"ref":"refs/heads/main"}`,
			pubs: []Publication{func() Publication {
				p := pubFor("default", "x")
				p.Mode = ModeAlways
				return p
			}()},
			wantWarn:   []string{"no pull request is known"},
			noRequests: true,
		},
		{
			name:       "fork PR on pull_request: detected, no API call, a notice explains the fallback",
			payload:    prEvent(prNumber, "someone/repo"),
			pubs:       []Publication{pubFor("default", "x")},
			wantStdout: []string{"::notice::retrieval-gate: no PR comment: this pull request comes from a fork (someone/repo)", "workflow_run", "(see " + github.ForkCommentsDocs + ")"},
			noRequests: true,
		},
		{
			name:    "fork PR with always: tries, 403 becomes a warning",
			payload: prEvent(prNumber, "someone/repo"),
			setup:   func(srv *githubtest.Server, r *runner) { srv.ReadOnly = true },
			pubs: []Publication{func() Publication {
				p := pubFor("default", "x")
				p.Mode = ModeAlways
				return p
			}()},
			wantWarn: []string{"403 Resource not accessible by integration"},
		},
		{
			name:     "read-only token on a same-repo PR: 403 warns with the way out",
			setup:    func(srv *githubtest.Server, r *runner) { srv.ReadOnly = true },
			pubs:     []Publication{pubFor("default", "x")},
			wantWarn: []string{"workflow_run"},
		},
		{
			name:     "PR unknown to the API: 404 warns",
			payload:  prEvent(99, "octo/repo"),
			pubs:     []Publication{pubFor("default", "x")},
			wantWarn: []string{"404 Not Found"},
		},
		{
			name:         "500 then success",
			setup:        func(srv *githubtest.Server, r *runner) { srv.Queue(githubtest.ServerError(http.MethodGet, 500)) },
			pubs:         []Publication{pubFor("default", "x")},
			wantComments: []string{"## retrieval-gate: pass"},
		},
		{
			name: "rate limit then success",
			setup: func(srv *githubtest.Server, r *runner) {
				srv.Queue(githubtest.SecondaryRateLimit(http.MethodPost, http.StatusTooManyRequests, 1))
			},
			pubs:         []Publication{pubFor("default", "x")},
			wantComments: []string{"## retrieval-gate: pass"},
		},
		{
			name:       "no token: a notice, no call",
			setup:      func(srv *githubtest.Server, r *runner) { r.env["INPUT_GITHUB-TOKEN"] = "" },
			pubs:       []Publication{pubFor("default", "x")},
			wantStdout: []string{"::notice::retrieval-gate: no PR comment: the `github-token` input is empty"},
			noRequests: true,
		},
		{
			name:     "malformed event payload warns and posts nothing",
			payload:  `{"number": 7,`,
			pubs:     []Publication{pubFor("default", "x")},
			wantWarn: []string{"failed to read the event payload"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := githubtest.New("octo", "repo", actionsTestToken, prNumber)
			defer srv.Close()
			event, payload := tc.event, tc.payload
			if event == "" {
				event = "pull_request"
			}
			if payload == "" {
				payload = samePR()
			}
			r := newRunner(t, srv, event, payload)
			if tc.setup != nil {
				tc.setup(srv, r)
			}
			var warns []Warning
			for _, p := range tc.pubs {
				warns = append(warns, r.publish(p)...)
			}
			require.Len(t, warns, len(tc.wantWarn), "warnings: %q", warns)
			for i, w := range tc.wantWarn {
				assert.Contains(t, string(warns[i]), w)
				assert.Contains(t, r.stdout.String(), "::warning::", "warnings are workflow commands")
				assert.Contains(t, string(warns[i]), "job summary", "every warning says the report is kept")
			}
			cs := srv.Comments(prNumber)
			require.Len(t, cs, len(tc.wantComments))
			for i, want := range tc.wantComments {
				lines := strings.Split(cs[i].Body, "\n")
				assert.Equal(t, want, lines[1])
				assert.True(t, strings.HasPrefix(cs[i].Body, "<!-- retrieval-gate:"))
				assert.Contains(t, cs[i].Body, "[workflow run](https://github.com/octo/repo/actions/runs/4242)")
			}
			if tc.noRequests {
				assert.Empty(t, srv.Requests())
			}
			for _, s := range tc.wantStdout {
				assert.Contains(t, r.stdout.String(), s)
			}
			for _, s := range tc.wantStderr {
				assert.Contains(t, r.stderr.String(), s)
			}
			// Whatever happened to the comment, the summary holds every report and the
			// outputs are set.
			sum := r.read(t, r.summary)
			for _, p := range tc.pubs {
				assert.Contains(t, sum, p.Markdown)
			}
			assert.Contains(t, r.read(t, r.outputFile), "verdict<<")
			r.assertNoToken(t, srv, len(tc.pubs))
		})
	}
}

func TestPublishOutsideActions(t *testing.T) {
	srv := githubtest.New("octo", "repo", actionsTestToken, prNumber)
	defer srv.Close()
	r := newRunner(t, srv, "pull_request", samePR())
	delete(r.env, "GITHUB_ACTIONS")
	r.env["GITHUB_TOKEN"] = actionsTestToken
	warns := r.publish(pubFor("default", "x"))
	assert.Empty(t, warns)
	assert.Empty(t, srv.Requests(), "auto posts only inside Actions")
	assert.Empty(t, r.stdout.String())
	assert.Empty(t, r.read(t, r.summary))
	assert.Empty(t, r.read(t, r.outputFile))

	p := pubFor("default", "x")
	p.Mode, p.PR = ModeAlways, prNumber
	warns = r.publish(p)
	assert.Empty(t, warns)
	require.Len(t, srv.Comments(prNumber), 1, "always + --pr + GITHUB_TOKEN posts from a laptop too")
	assert.Empty(t, r.stdout.String(), "no workflow commands outside Actions")
	r.assertNoToken(t, srv, 0)

	srv.ReadOnly = true
	warns = r.publish(p)
	require.Len(t, warns, 1)
	assert.Contains(t, r.stderr.String(), "retrieval-gate: warning: retrieval-gate could not post the PR comment")
}

func TestPublishOversize(t *testing.T) {
	big := strings.Repeat("| case | a long query that repeats |\n", 5000) // ~185 kB
	tests := []struct {
		name     string
		render   func(maxListed int) string
		wantText string
	}{
		{name: "the command's shorter rendering is used", render: func(int) string {
			return Marker("default") + "\n## short\n… and 4990 more not shown.\n"
		}, wantText: "## short"},
		{name: "a shorter rendering without the marker gets it", render: func(int) string {
			return "## short, unmarked\n"
		}, wantText: "## short, unmarked"},
		{name: "without one the report is cut", wantText: "| case | a long query"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := githubtest.New("octo", "repo", actionsTestToken, prNumber)
			defer srv.Close()
			r := newRunner(t, srv, "pull_request", samePR())
			p := pubFor("default", big)
			p.Render = tc.render
			warns := r.publish(p)
			require.Empty(t, warns)
			cs := srv.Comments(prNumber)
			require.Len(t, cs, 1)
			body := cs[0].Body
			assert.LessOrEqual(t, len(body), MaxCommentBytes)
			assert.True(t, strings.HasPrefix(body, Marker("default")+"\n"))
			assert.Contains(t, body, tc.wantText)
			assert.Contains(t, body, "This comment was shortened to fit GitHub's 65,536-character comment limit")
			assert.Contains(t, r.read(t, r.summary), p.Markdown, "the summary (1 MiB) has it whole")
		})
	}

	t.Run("the job summary stays within 1 MiB", func(t *testing.T) {
		r := newRunner(t, nil, "push", `{}`)
		require.NoError(t, os.WriteFile(r.summary, bytes.Repeat([]byte("x"), MaxSummaryBytes-100_000), 0o644))
		p := pubFor("default", big)
		p.Mode = ModeNever
		warns := r.publish(p)
		require.Empty(t, warns)
		sum := r.read(t, r.summary)
		assert.LessOrEqual(t, len(sum), MaxSummaryBytes)
		assert.Contains(t, sum, "shortened to fit GitHub's 1 MiB job-summary limit")
	})
}

func TestPublishNetworkError(t *testing.T) {
	srv := githubtest.New("octo", "repo", actionsTestToken, prNumber)
	r := newRunner(t, srv, "pull_request", samePR())
	srv.Close()
	warns := r.publish(pubFor("default", "x"))
	require.Len(t, warns, 1)
	assert.Contains(t, string(warns[0]), "GITHUB_API_URL")
	assert.Contains(t, r.stdout.String(), "::warning::retrieval-gate could not post the PR comment")
	assert.Contains(t, r.read(t, r.summary), "## retrieval-gate: pass")
	r.assertNoToken(t, nil, 1)
}

func TestToken(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	assert.Equal(t, "in", Token(env(map[string]string{"GITHUB_ACTIONS": "true", "INPUT_GITHUB-TOKEN": " in ", "GITHUB_TOKEN": "env"})))
	assert.Equal(t, "env", Token(env(map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_TOKEN": "env"})))
	assert.Equal(t, "env", Token(env(map[string]string{"INPUT_GITHUB-TOKEN": "in", "GITHUB_TOKEN": "env"})), "inputs only count inside Actions")
}

func TestPublishWithoutMarker(t *testing.T) {
	srv := githubtest.New("octo", "repo", actionsTestToken, prNumber)
	defer srv.Close()
	r := newRunner(t, srv, "pull_request", samePR())

	// compare: the summary only, as written.
	warns := r.publish(Publication{Markdown: "## compare\n", Mode: ModeNever})
	require.Empty(t, warns)
	assert.Equal(t, "## compare\n\n", r.read(t, r.summary))
	assert.Empty(t, srv.Requests())

	// A report without a marker gets the key's, so its comment is found again.
	for i := 0; i < 2; i++ {
		warns = r.publish(Publication{Key: "calibrate", Markdown: fmt.Sprintf("## calibration %d\n", i)})
		require.Empty(t, warns)
	}
	cs := srv.Comments(prNumber)
	require.Len(t, cs, 1)
	assert.True(t, strings.HasPrefix(cs[0].Body, "<!-- retrieval-gate:calibrate -->\n## calibration 1\n"))
}

// GitHub answering every call with an error whose message echoes the token
// in the forms a JSON or HTML error body may hold it (GitHub's REST API takes
// the token as "Authorization: Bearer", docs.github.com/en/rest/authentication):
// no output of the run (stdout's annotations, stderr, the job summary, the
// step's outputs, the warnings returned) holds 8 characters of it in a row.
func TestPublishEchoedTokenRedacted(t *testing.T) {
	esc := func(f func(byte) string) string {
		var b strings.Builder
		for i := range len(actionsTestToken) {
			b.WriteString(f(actionsTestToken[i]))
		}
		return b.String()
	}
	for name, msg := range map[string]string{
		"json escapes": `{"message":"Bad credentials: ` + esc(func(c byte) string { return fmt.Sprintf(`\u%04x`, c) }) + `"}`,
		"upper case":   `{"message":"Bad credentials: ` + strings.ToUpper(actionsTestToken) + `"}`,
		"html":         `{"message":"<p>` + esc(func(c byte) string { return fmt.Sprintf("&#x%x;", c) }) + `</p>"}`,
		"percent":      `{"message":"token=` + esc(func(c byte) string { return fmt.Sprintf("%%%02X", c) }) + `"}`,
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusUnauthorized)
				_, _ = w.Write([]byte(msg))
			}))
			defer srv.Close()
			r := newRunner(t, nil, "pull_request", samePR())
			r.env["GITHUB_API_URL"] = srv.URL
			warns := r.publish(pubFor("default", "x"))
			require.NotEmpty(t, warns)
			all := r.stdout.String() + r.stderr.String() + r.read(t, r.summary) + r.read(t, r.outputFile)
			for _, w := range warns {
				all += string(w)
			}
			all = strings.ReplaceAll(all, "::add-mask::"+actionsTestToken, "")
			decoded := strings.ToLower(html.UnescapeString(all))
			if u, err := strconv.Unquote(`"` + strings.ReplaceAll(all, `"`, `\"`) + `"`); err == nil {
				decoded += strings.ToLower(u)
			}
			if u, err := url.PathUnescape(all); err == nil {
				decoded += strings.ToLower(u)
			}
			for j := 0; j+8 <= len(actionsTestToken); j++ {
				frag := strings.ToLower(actionsTestToken[j : j+8])
				if strings.Contains(strings.ToLower(all), frag) || strings.Contains(decoded, frag) {
					t.Fatalf("%q of the token in the run's outputs:\n%s", actionsTestToken[j:j+8], all)
				}
			}
		})
	}
}

// cutListing is a client whose listing stops after its first keep comments,
// as github.Client's does past its bound.
type cutListing struct {
	Comments
	keep int
}

func (c cutListing) ListComments(ctx context.Context, pr int) ([]github.IssueComment, error) {
	all, err := c.Comments.ListComments(ctx, pr)
	if err != nil || len(all) <= c.keep {
		return all, err
	}
	return all[:c.keep], &github.IncompleteError{Object: "PR comments", Read: c.keep, Pages: 300, PerPage: 100}
}

// A pull request with more comments than the listing reads: ours among those
// read is updated, with a warning that the listing stopped; none among them
// posts no new comment, with a warning that says why.
func TestPublishListingBound(t *testing.T) {
	tests := []struct {
		name    string
		ours    int // our comment's place among the 3
		updated bool
		warning string
	}{
		{"ours among those read", 0, true, "::warning::the pull request has more than 2 comments, and retrieval-gate looks for its comment among the oldest 2 only (300 pages of 100). The comment found among them was updated; a duplicate of it further on, if any, was not looked for."},
		{"ours past them", 2, false, "::warning::the pull request has more than 2 comments, and retrieval-gate looks for its comment among the oldest 2 only (300 pages of 100). No comment of key default is among them, so no new comment was posted: one may be further on, and a new comment on every run would pile up; the report is in the job summary."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := githubtest.New("octo", "repo", actionsTestToken, prNumber)
			defer srv.Close()
			for i := range 3 {
				if i == tt.ours {
					srv.AddComment(prNumber, github.ActionsBot, Marker(DefaultKey)+"\nold report")
					continue
				}
				srv.AddComment(prNumber, "someone", fmt.Sprint("comment ", i))
			}
			r := newRunner(t, srv, "pull_request", samePR())
			p := r.publisher()
			factory := p.Comments
			p.Comments = func(api github.Endpoints, repository, token string) (Comments, error) {
				c, err := factory(api, repository, token)
				return cutListing{Comments: c, keep: 2}, err
			}
			warns := p.Publish(context.Background(), pubFor(DefaultKey, "new report"))
			require.Len(t, warns, 1)
			cs := srv.Comments(prNumber)
			require.Len(t, cs, 3, "no comment is created")
			assert.Equal(t, tt.updated, strings.Contains(cs[tt.ours].Body, "new report"))
			assert.Contains(t, r.stdout.String(), tt.warning+"\n")
			r.assertNoToken(t, srv, 1)
		})
	}
}

// A report over every GitHub limit with nothing to shorten (no table, no
// shorter rendering), so each output is cut at a line: the PR comment
// (65,536 characters), the check run's summary (65,535) and the job summary
// (1 MiB) each keep the marker first, the report's closing line, the note
// that says so, and the comment the run's link last; a second run finds the
// comment by its marker and updates it. Before, the cut took the link.
func TestPublishOversizeKeepsFooter(t *testing.T) {
	closingLine := "<sub>Stratified bootstrap, 2000 resamples, seed 1; run on main@0123abc.</sub>\n"
	srv := githubtest.New("octo", "repo", actionsTestToken, prNumber)
	defer srv.Close()
	md := proseReport(MaxSummaryBytes)
	pub := Publication{Key: "compare", Markdown: md, Mode: ModeAuto, CheckRun: CheckRunName("compare"), CheckTitle: "retrieval-gate: fail", Failed: true}
	for run := 1; run <= 2; run++ {
		r := checkRunner(t, srv)
		require.Empty(t, r.publish(pub))
		cs := srv.Comments(prNumber)
		require.Len(t, cs, 1, "run %d: one comment, found again by its marker", run)
		assert.Contains(t, r.stderr.String(), []string{"", "PR comment created", "PR comment updated"}[run])
		body := cs[0].Body
		assert.LessOrEqual(t, len(body), githubtest.MaxBody)
		assert.Equal(t, Marker("compare"), MarkerOf(body))
		assert.True(t, strings.HasSuffix(body, closingLine+
			"\n\n> [!NOTE]\n> This comment was shortened to fit GitHub's 65,536-character comment limit; the job summary has the whole report.\n"+
			"\n<sub>retrieval-gate · [workflow run](https://github.com/octo/repo/actions/runs/4242)</sub>\n"), "%q", body[len(body)-400:])

		runs := srv.CheckRuns()
		require.Len(t, runs, 1)
		sum := runs[0].Summary
		assert.LessOrEqual(t, len(sum), github.MaxCheckSummary)
		assert.Equal(t, Marker("compare"), MarkerOf(sum))
		assert.True(t, strings.HasSuffix(sum, closingLine+"\n\n> [!NOTE]\n> This summary was shortened to fit GitHub's 65,535-character check-run summary limit; the job summary has the whole report.\n"), "%q", sum[len(sum)-300:])

		job := r.read(t, r.summary)
		assert.LessOrEqual(t, len(job), MaxSummaryBytes)
		assert.Equal(t, Marker("compare"), MarkerOf(job))
		assert.True(t, strings.HasSuffix(job, closingLine+"\n\n> [!NOTE]\n> This report was shortened to fit GitHub's 1 MiB job-summary limit; write the whole report with `--markdown FILE`.\n\n"), "%q", job[len(job)-300:])
		r.assertNoToken(t, srv, 1)
		pub.Markdown = strings.Replace(md, "seed 1", "seed 2", 1)
		closingLine = strings.Replace(closingLine, "seed 1", "seed 2", 1)
	}
}
