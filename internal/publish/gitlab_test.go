package publish

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/gitlab"
	"github.com/retrieval-gate/retrieval-gate/internal/gitlab/gitlabtest"
	"github.com/retrieval-gate/retrieval-gate/internal/racetest"
)

const glToken = "glpat-PUBLISHtest0123456789"

func gitlabPublisher(srv *gitlabtest.Server, stderr *bytes.Buffer) *GitLabPublisher {
	p := gitlab.DefaultPolicy
	p.Sleep = func(ctx context.Context, _ time.Duration) error { return ctx.Err() }
	return &GitLabPublisher{CI: gitlab.CI{InCI: true, APIURL: srv.APIURL(), ProjectID: srv.ProjectID, MRIID: 7,
		ProjectURL: "https://gitlab.example.com/g/p", JobURL: "https://gitlab.example.com/g/p/-/jobs/5", Token: glToken},
		Stderr: stderr, Policy: p, Sleep: func(ctx context.Context, _ time.Duration) error { return ctx.Err() }}
}

// The note of a key is created once and edited in place; nobody else's note is
// ever edited, whatever it holds; a duplicate of ours (concurrent runs) is
// deleted, GitLab having no way to hide it.
func TestGitLabNote(t *testing.T) {
	srv := gitlabtest.New("42", glToken, "project_42_bot", 7)
	defer srv.Close()
	theirs := srv.AddNote(7, "alice", Marker(DefaultKey)+"\nalice's copy")
	var stderr bytes.Buffer
	p := gitlabPublisher(srv, &stderr)
	assert.Empty(t, p.Publish(context.Background(), pubFor(DefaultKey, "first")))
	notes := srv.Notes(7)
	require.Len(t, notes, 2)
	assert.Equal(t, theirs, notes[0].ID)
	assert.Equal(t, Marker(DefaultKey)+"\nalice's copy", notes[0].Body, "someone else's note is left alone")
	assert.Equal(t, "project_42_bot", notes[1].Author)
	assert.True(t, strings.HasPrefix(notes[1].Body, Marker(DefaultKey)+"\n## retrieval-gate: pass\n\nfirst\n"))
	assert.Contains(t, notes[1].Body, "<sub>retrieval-gate · [CI job](https://gitlab.example.com/g/p/-/jobs/5)</sub>")
	assert.Contains(t, stderr.String(), "retrieval-gate: MR note created: https://gitlab.example.com/g/p/-/merge_requests/7#note_")

	stderr.Reset()
	assert.Empty(t, p.Publish(context.Background(), pubFor(DefaultKey, "second")))
	notes = srv.Notes(7)
	require.Len(t, notes, 2)
	assert.Contains(t, notes[1].Body, "second")
	assert.Contains(t, stderr.String(), "MR note updated")

	// A concurrent run left a second note of ours: the next run keeps the oldest and deletes it.
	srv.AddNote(7, "project_42_bot", Marker(DefaultKey)+"\nduplicate")
	stderr.Reset()
	assert.Empty(t, p.Publish(context.Background(), pubFor(DefaultKey, "third")))
	notes = srv.Notes(7)
	require.Len(t, notes, 2)
	assert.Contains(t, notes[1].Body, "third")
	assert.Contains(t, stderr.String(), "deleted 1 duplicate MR note with the same key")
	for _, r := range srv.Requests() {
		assert.NotContains(t, r.Path, "/notes/"+itoa(theirs), "never a request on someone else's note")
	}
	assert.NotContains(t, stderr.String(), glToken)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestGitLabNoteWhen(t *testing.T) {
	srv := gitlabtest.New("42", glToken, "bot", 7)
	defer srv.Close()
	tests := []struct {
		name   string
		ci     func(*gitlab.CI)
		pub    func(*Publication)
		warns  int
		stderr string
	}{
		{"not a merge-request pipeline", func(c *gitlab.CI) { c.MRIID = 0 }, nil, 0, ""},
		{"no token", func(c *gitlab.CI) { c.Token = "" }, nil, 0, "retrieval-gate: no MR note: GITLAB_TOKEN is not set"},
		{"never", nil, func(p *Publication) { p.Mode = ModeNever }, 0, ""},
		{"always without a merge request", func(c *gitlab.CI) { c.MRIID = 0 }, func(p *Publication) { p.Mode = ModeAlways }, 1, "no merge request is known"},
		{"failures on a pass without an earlier note", nil, func(p *Publication) { p.When = WhenFailures }, 0, "no MR note: the verdict is pass"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			p := gitlabPublisher(srv, &stderr)
			if tt.ci != nil {
				tt.ci(&p.CI)
			}
			pub := pubFor(DefaultKey, "x")
			if tt.pub != nil {
				tt.pub(&pub)
			}
			assert.Len(t, p.Publish(context.Background(), pub), tt.warns)
			if tt.stderr != "" {
				assert.Contains(t, stderr.String(), tt.stderr)
			}
			assert.Empty(t, srv.Notes(7))
		})
	}
	// Fail is left to the caller's stderr: GitLab has no annotations.
	assert.False(t, (&GitLabPublisher{}).Fail(Failure{Message: "x"}))
}

// A merge request whose pages hold a hundred notes near GitLab's
// 1,000,000-character limit (GitLab's "Notes API": body), some 100 MB a page,
// besides ours: the note is found, and under --comment-mode changes an
// unchanged report is left alone (the body of our note is kept for the
// comparison). Someone else's notes with our marker are never touched.
// Before, the page was refused at a 64 MiB cap and no note was posted, run
// after run.
func TestGitLabNoteAmongLargeNotes(t *testing.T) {
	racetest.Skip(t, "moves 100 MB through one decoder")
	srv := gitlabtest.New("42", glToken, "bot", 7)
	defer srv.Close()
	var stderr bytes.Buffer
	p := gitlabPublisher(srv, &stderr)
	require.Empty(t, p.Publish(context.Background(), pubFor(DefaultKey, "first")))
	big := Marker(DefaultKey) + "\n" + strings.Repeat("x", gitlabtest.MaxNote-len(Marker(DefaultKey))-1)
	for range 100 {
		srv.AddNote(7, "alice", big)
	}
	before := len(srv.Requests())
	stderr.Reset()
	pub := pubFor(DefaultKey, "first")
	pub.When = WhenChanges
	require.Empty(t, p.Publish(context.Background(), pub))
	assert.Contains(t, stderr.String(), "retrieval-gate: MR note unchanged (--comment-mode changes)")
	var pages int
	for _, r := range srv.Requests()[before:] {
		assert.Equal(t, "GET", r.Method, "nothing written")
		if strings.HasSuffix(r.Path, "/notes") {
			pages++
		}
	}
	assert.Equal(t, 2, pages, "both pages read")
	notes := srv.Notes(7)
	require.Len(t, notes, 101)
	for _, n := range notes[1:] {
		assert.True(t, n.Author == "alice" && n.Body == big, "someone else's note is left alone")
	}

	// What the listing keeps of the others' notes holds none of their
	// bodies: the marker kept was once a slice of each body, which kept all
	// 100 MB of them alive.
	c, err := gitlab.NewClient(srv.APIURL(), srv.ProjectID, glToken, false, gitlab.DefaultPolicy)
	require.NoError(t, err)
	gn := &gitlabNotes{c: c, iid: 7, marker: Marker(DefaultKey)}
	_, err = gn.Self(context.Background())
	require.NoError(t, err)
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	got, err := gn.ListComments(context.Background(), 7)
	require.NoError(t, err)
	runtime.GC()
	runtime.ReadMemStats(&m1)
	require.Len(t, got, 101)
	assert.Equal(t, Marker(DefaultKey), got[100].Body)
	assert.Less(t, int64(m1.HeapAlloc)-int64(m0.HeapAlloc), int64(16<<20), "the others' bodies are not held")
	runtime.KeepAlive(got)
}

// Of the notes listed, the upsert keeps the whole body of the first of ours
// with the note's marker alone (the one it keeps, and compares under
// --comment-mode changes); of any other note, the marker on its first line,
// if any: all the upsert reads of it, so that a page of large notes is not
// held whole.
func TestGitLabNotesKept(t *testing.T) {
	srv := gitlabtest.New("42", glToken, "bot", 7)
	defer srv.Close()
	m, other := Marker(DefaultKey), Marker("other")
	srv.AddNote(7, "alice", m+"\nalice's copy")
	srv.AddNote(7, "bot", "no marker")
	srv.AddNote(7, "bot", other+"\nanother key")
	srv.AddNote(7, "bot", m+"\nours")
	srv.AddNote(7, "bot", m+"\na duplicate")
	c, err := gitlab.NewClient(srv.APIURL(), srv.ProjectID, glToken, false, gitlab.DefaultPolicy)
	require.NoError(t, err)
	n := &gitlabNotes{c: c, iid: 7, marker: m}
	_, err = n.Self(context.Background())
	require.NoError(t, err)
	got, err := n.ListComments(context.Background(), 7)
	require.NoError(t, err)
	var bodies []string
	for _, cm := range got {
		bodies = append(bodies, cm.Body)
	}
	assert.Equal(t, []string{m, "", other, m + "\nours", m}, bodies)
}

// A report over GitLab's 1,000,000-character note limit is fitted as the comment is.
func TestGitLabNoteFitted(t *testing.T) {
	srv := gitlabtest.New("42", glToken, "bot", 7)
	defer srv.Close()
	var stderr bytes.Buffer
	pub := pubFor(DefaultKey, "| a | b |\n|---|---|\n"+strings.Repeat("| row | ü |\n", 100000))
	assert.Empty(t, gitlabPublisher(srv, &stderr).Publish(context.Background(), pub))
	notes := srv.Notes(7)
	require.Len(t, notes, 1)
	assert.LessOrEqual(t, len(notes[0].Body), gitlabtest.MaxNote)
	assert.Contains(t, notes[0].Body, "more rows not shown")
	assert.Contains(t, notes[0].Body, "1,000,000-character note limit")
}

// A merge request with more notes than the listing reads (300 pages of 100,
// oldest first): a note of ours among those read is updated, with a warning on
// stderr that the listing stopped; none among them posts no new note (one may
// lie further on, and a new one on every run would pile up), with a warning
// that says so. Neither is a workflow command.
func TestGitLabNoteListingBound(t *testing.T) {
	const bound = gitlab.MaxPages * gitlab.PerPage
	tests := []struct {
		name    string
		ours    int // where our note is among the notes (-1: none)
		notes   int
		created bool
		updated bool
		stderr  []string
	}{
		{name: "ours among those read", ours: 0, notes: bound + 1, updated: true, stderr: []string{
			"retrieval-gate: MR note updated: ",
			"retrieval-gate: warning: the merge request has more than 30000 notes, and retrieval-gate looks for its note among the oldest 30000 only (300 pages of 100). The note found among them was updated; a duplicate of it further on, if any, was not looked for.\n",
		}},
		{name: "ours past them", ours: bound, notes: bound + 1, stderr: []string{
			"retrieval-gate: warning: the merge request has more than 30000 notes, and retrieval-gate looks for its note among the oldest 30000 only (300 pages of 100). No note of key default is among them, so no new note was posted: one may be further on, and a new note on every run would pile up. The exit code reflects only the gates; the whole report is written by --markdown FILE.\n",
		}},
		{name: "the bound's last page ends the notes", ours: -1, notes: bound, created: true, stderr: []string{"retrieval-gate: MR note created: "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := gitlabtest.New("42", glToken, "bot", 7)
			defer srv.Close()
			var ourID int64
			for i := range tt.notes {
				if i == tt.ours {
					ourID = srv.AddNote(7, "bot", Marker(DefaultKey)+"\nold report")
					continue
				}
				srv.AddNote(7, "alice", fmt.Sprint("note ", i))
			}
			var stderr bytes.Buffer
			warns := gitlabPublisher(srv, &stderr).Publish(context.Background(), pubFor(DefaultKey, "new report"))
			notes := srv.Notes(7)
			wantLen := tt.notes
			if tt.created {
				wantLen++
			}
			require.Len(t, notes, wantLen, "no note is created past the bound")
			for _, n := range notes {
				switch {
				case n.ID == ourID && tt.updated:
					assert.Contains(t, n.Body, "new report")
				case n.Author == "bot" && tt.created:
					assert.Contains(t, n.Body, "new report")
				default:
					assert.NotContains(t, n.Body, "new report")
				}
			}
			for _, want := range tt.stderr {
				assert.Contains(t, stderr.String(), want)
			}
			if !tt.created {
				assert.Len(t, warns, 1)
			} else {
				assert.Empty(t, warns)
			}
			for _, line := range strings.Split(stderr.String(), "\n") {
				assert.NotContains(t, line, "::", "no workflow command")
				assert.NotContains(t, line, "##[")
			}
			assert.NotContains(t, stderr.String(), glToken)
		})
	}
}

// A report over GitLab's 1,000,000-character note limit with nothing to
// shorten is cut at a line, and keeps the marker first, the report's closing
// line, the note that says so and the CI job's link last; a second run finds
// the note by its marker and updates it. Before, the cut took the link.
func TestGitLabNoteCutKeepsFooter(t *testing.T) {
	srv := gitlabtest.New("42", glToken, "bot", 7)
	defer srv.Close()
	md := proseReport(gitlabtest.MaxNote)
	closingLine := "<sub>Stratified bootstrap, 2000 resamples, seed 1; run on main@0123abc.</sub>\n"
	for run := 1; run <= 2; run++ {
		var stderr bytes.Buffer
		assert.Empty(t, gitlabPublisher(srv, &stderr).Publish(context.Background(), Publication{Key: "compare", Markdown: md, Mode: ModeAuto}))
		notes := srv.Notes(7)
		require.Len(t, notes, 1, "run %d: one note, found again by its marker", run)
		body := notes[0].Body
		assert.LessOrEqual(t, utf8.RuneCountInString(body), gitlabtest.MaxNote)
		assert.Equal(t, Marker("compare"), MarkerOf(body))
		assert.True(t, strings.HasSuffix(body, closingLine+
			"\n\n> **Note**\n> This note was shortened to fit GitLab's 1,000,000-character note limit; write the whole report with `--markdown FILE`.\n"+
			"\n<sub>retrieval-gate · [CI job](https://gitlab.example.com/g/p/-/jobs/5)</sub>\n"), "%q", body[len(body)-400:])
		assert.Contains(t, stderr.String(), []string{"", "MR note created", "MR note updated"}[run])
		assert.NotContains(t, stderr.String(), glToken)
		md = strings.Replace(md, "seed 1", "seed 2", 1)
		closingLine = strings.Replace(closingLine, "seed 1", "seed 2", 1)
	}
}

// A job whose variables cannot name the merge request's API is told which
// variable to fix, by the name it was read from (GitLab's "Predefined CI/CD
// variables": CI_API_V4_URL, else CI_SERVER_URL; CI_MERGE_REQUEST_PROJECT_ID
// over CI_PROJECT_ID; CI_MERGE_REQUEST_IID, a merge request's iid). Before, a
// CI_MERGE_REQUEST_IID that is not an iid was taken for a pipeline that is
// not a merge request's (no note, nothing said; with --comment always, "is
// not set"), and a missing or malformed URL or project id was "CI_API_V4_URL
// or CI_PROJECT_ID", or CI_API_V4_URL when CI_SERVER_URL was the one set.
// Nothing reaches GitLab, and the exit code is the gates' either way.
func TestGitLabNoteEnvironment(t *testing.T) {
	srv := gitlabtest.New("42", glToken, "bot", 7)
	defer srv.Close()
	tests := []struct {
		name string
		ci   func(*gitlab.CI)
		mode string
		want string
	}{
		{"iid not a number", func(c *gitlab.CI) { c.MRIID, c.BadMRIID = 0, "!7" }, ModeAuto,
			`CI_MERGE_REQUEST_IID "!7" is not a merge request iid (a positive integer): pass --pr N. The MR note was not posted.`},
		{"iid not a number, always", func(c *gitlab.CI) { c.MRIID, c.BadMRIID = 0, "-3" }, ModeAlways,
			`--comment always, but CI_MERGE_REQUEST_IID "-3" is not a merge request iid (a positive integer): pass --pr N.`},
		{"no project id", func(c *gitlab.CI) { c.ProjectID = "" }, ModeAuto,
			"cannot post the MR note: CI_PROJECT_ID (or CI_PROJECT_PATH) is not set. The MR note was not posted."},
		{"no API URL", func(c *gitlab.CI) { c.APIURL = "" }, ModeAuto,
			"cannot post the MR note: CI_API_V4_URL (or CI_SERVER_URL) is not set. The MR note was not posted."},
		{"CI_SERVER_URL without a scheme", func(c *gitlab.CI) { c.APIURL, c.APIURLVar = "gitlab.example.com/api/v4", "CI_SERVER_URL" }, ModeAuto,
			`cannot post the MR note: CI_SERVER_URL "gitlab.example.com/api/v4" is not an http(s) URL.`},
		{"the merge request's project path with an empty segment", func(c *gitlab.CI) { c.ProjectID, c.ProjectIDVar = "group//project", "CI_MERGE_REQUEST_PROJECT_ID" }, ModeAuto,
			`cannot post the MR note: CI_MERGE_REQUEST_PROJECT_ID "group//project" is not a project id or path (a number, or group/project as written, not URL-encoded).`},
		{"a project path URL-encoded already", func(c *gitlab.CI) { c.ProjectID, c.ProjectIDVar = "group%2Fproject", "CI_PROJECT_PATH" }, ModeAuto,
			`cannot post the MR note: CI_PROJECT_PATH "group%2Fproject" is not a project id or path`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(srv.Requests())
			var stderr bytes.Buffer
			p := gitlabPublisher(srv, &stderr)
			tt.ci(&p.CI)
			pub := pubFor(DefaultKey, "x")
			pub.Mode = tt.mode
			warns := p.Publish(context.Background(), pub)
			require.Len(t, warns, 1)
			assert.Contains(t, string(warns[0]), tt.want)
			assert.Equal(t, "retrieval-gate: warning: "+string(warns[0])+"\n", stderr.String())
			assert.Len(t, srv.Requests(), before, "nothing is sent")
			assert.NotContains(t, stderr.String(), glToken)
		})
	}
	assert.Empty(t, srv.Notes(7))
}

// A project named by its full path (CI_PROJECT_PATH, or a path in
// CI_PROJECT_ID) gets its note: GitLab's REST API takes the path as :id,
// URL-encoded (REST API, "Namespaced paths": group%2Fsub%2Fproject). Before,
// a path was refused as "not a project id", and the note never posted.
func TestGitLabNoteProjectPath(t *testing.T) {
	srv := gitlabtest.New("42", glToken, "bot", 7)
	defer srv.Close()
	srv.ProjectPath = "group/sub/project"
	var stderr bytes.Buffer
	p := gitlabPublisher(srv, &stderr)
	p.CI.ProjectID, p.CI.ProjectIDVar = "group/sub/project", "CI_PROJECT_PATH"
	require.Empty(t, p.Publish(context.Background(), pubFor(DefaultKey, "first")))
	require.Empty(t, p.Publish(context.Background(), pubFor(DefaultKey, "second")))
	notes := srv.Notes(7)
	require.Len(t, notes, 1)
	assert.Contains(t, notes[0].Body, "second")
	var paths []string
	for _, r := range srv.Requests() {
		if r.Path != "/user" {
			paths = append(paths, r.Method+" "+r.Path)
		}
	}
	assert.Equal(t, []string{
		"GET /projects/group%2Fsub%2Fproject/merge_requests/7/notes",
		"POST /projects/group%2Fsub%2Fproject/merge_requests/7/notes",
		"GET /projects/group%2Fsub%2Fproject/merge_requests/7/notes",
		"GET /projects/group%2Fsub%2Fproject/merge_requests/7/notes",
		"PUT /projects/group%2Fsub%2Fproject/merge_requests/7/notes/" + itoa(notes[0].ID),
	}, paths)
}

// A URL that does not lead to GitLab's REST API is named by the variable it
// was read from: a network failure says to check CI_SERVER_URL when the URL
// came from there (it said CI_API_V4_URL, a variable the job never set), and
// a 404 on GET /user, which every GitLab API serves, says the URL is wrong
// (it said the project had no such merge request, and to check the iid, the
// project id and the token's role).
func TestGitLabNoteAPIURL(t *testing.T) {
	srv := gitlabtest.New("42", glToken, "bot", 7)
	defer srv.Close()
	closed := gitlabtest.New("42", glToken, "bot", 7)
	closed.Close()
	tests := []struct {
		name, url, urlVar, want string
	}{
		{"no API there, CI_SERVER_URL", srv.URL + "/gitlab/api/v4", "CI_SERVER_URL",
			"failed to identify the token's user: GitLab answered 404 Not Found. CI_SERVER_URL does not lead to GitLab's REST API (it has no /user): check it. The exit code reflects only the gates."},
		{"no API there, CI_API_V4_URL", srv.URL + "/gitlab/api/v4", "",
			"CI_API_V4_URL does not lead to GitLab's REST API (it has no /user): check it."},
		{"no server, CI_SERVER_URL", closed.APIURL(), "CI_SERVER_URL", "Check CI_SERVER_URL and the runner's network."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			p := gitlabPublisher(srv, &stderr)
			p.CI.APIURL, p.CI.APIURLVar = tt.url, tt.urlVar
			warns := p.Publish(context.Background(), pubFor(DefaultKey, "x"))
			require.Len(t, warns, 1)
			assert.Contains(t, string(warns[0]), tt.want)
			assert.NotContains(t, string(warns[0]), "merge request !7")
		})
	}
	assert.Empty(t, srv.Notes(7))
}

// A token of the read_api scope reads the notes but may not write one: GitLab
// answers 403 {"error":"insufficient_scope", ..., "scope":"api"} (GitLab's
// "Personal access tokens", scopes), and the warning says to give the token
// the api scope, with GitLab's words. Before, the scope was dropped and the
// advice was a role ("at least the Reporter role"), which does not help.
func TestGitLabNoteScope(t *testing.T) {
	srv := gitlabtest.New("42", glToken, "bot", 7)
	defer srv.Close()
	srv.ReadAPI[glToken] = true
	var stderr bytes.Buffer
	warns := gitlabPublisher(srv, &stderr).Publish(context.Background(), pubFor(DefaultKey, "x"))
	require.Len(t, warns, 1)
	assert.Equal(t, "retrieval-gate could not post the MR note: failed to create the MR note: GitLab answered 403 insufficient_scope: The request requires higher privileges than provided by the access token. "+
		"GITLAB_TOKEN lacks the api scope, which GitLab wants for this call (a read_api token may read the notes but not write them): give the token the api scope. The exit code reflects only the gates.", string(warns[0]))
	assert.NotContains(t, stderr.String(), "Reporter")
	assert.NotContains(t, stderr.String(), glToken)
	assert.Empty(t, srv.Notes(7))
}

// GitLab answers 404 for a project or merge request that does not exist and
// for one the token's user may not see ("Notes API"; "REST API": 404 Not
// Found): the warning names the project and the merge request and the
// variable or flag each came from. Before, it advised a role alone, and
// GitLab's status came twice ("answered 404 404 Not found").
func TestGitLabNoteNotFound(t *testing.T) {
	srv := gitlabtest.New("42", glToken, "bot", 7)
	defer srv.Close()
	tests := []struct {
		name string
		ci   func(*gitlab.CI)
		pr   int
		want string
	}{
		{"the job's iid", func(c *gitlab.CI) { c.MRIID = 8 }, 0,
			"failed to list the MR notes: GitLab answered 404 Not found. Project 42 has no merge request !8 that the token can see: check CI_MERGE_REQUEST_IID and CI_PROJECT_ID, and give the token's user at least the Reporter role in the project."},
		{"--pr", nil, 9,
			"failed to list the MR notes: GitLab answered 404 Not found. Project 42 has no merge request !9 that the token can see: check --pr and CI_PROJECT_ID,"},
		{"the merge request's project", func(c *gitlab.CI) { c.ProjectID, c.ProjectIDVar = "43", "CI_MERGE_REQUEST_PROJECT_ID" }, 0,
			"failed to list the MR notes: GitLab answered 404 Project Not Found. Project 43 has no merge request !7 that the token can see: check CI_MERGE_REQUEST_IID and CI_MERGE_REQUEST_PROJECT_ID,"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			p := gitlabPublisher(srv, &stderr)
			if tt.ci != nil {
				tt.ci(&p.CI)
			}
			pub := pubFor(DefaultKey, "x")
			pub.PR = tt.pr
			warns := p.Publish(context.Background(), pub)
			require.Len(t, warns, 1)
			assert.Contains(t, string(warns[0]), tt.want)
			assert.NotContains(t, string(warns[0]), "404 404")
			assert.NotContains(t, stderr.String(), glToken)
		})
	}
	assert.Empty(t, srv.Notes(7))
}
