package gitlab_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/gitlab"
	"github.com/retrieval-gate/retrieval-gate/internal/gitlab/gitlabtest"
	"github.com/retrieval-gate/retrieval-gate/internal/httpretry"
	"github.com/retrieval-gate/retrieval-gate/internal/racetest"
)

const token = "glpat-TESTtoken0123456789"

// policy records the waits instead of sleeping them.
func policy(waits *[]time.Duration) httpretry.Policy {
	p := gitlab.DefaultPolicy
	p.Sleep = func(ctx context.Context, d time.Duration) error {
		*waits = append(*waits, d)
		return ctx.Err()
	}
	return p
}

func client(t *testing.T, srv *gitlabtest.Server, tok string, job bool, waits *[]time.Duration) *gitlab.Client {
	t.Helper()
	c, err := gitlab.NewClient(srv.APIURL(), srv.ProjectID, tok, job, policy(waits))
	require.NoError(t, err)
	return c
}

// Every note of a merge request, across GitLab's pages (X-Next-Page), oldest first.
func TestListNotesPaginates(t *testing.T) {
	srv := gitlabtest.New("42", token, "bot", 7)
	defer srv.Close()
	for i := range 250 {
		srv.AddNote(7, "alice", fmt.Sprint("note ", i))
	}
	var waits []time.Duration
	notes, err := client(t, srv, token, false, &waits).ListNotes(context.Background(), 7, nil)
	require.NoError(t, err)
	require.Len(t, notes, 250)
	assert.Equal(t, "note 0", notes[0].Body)
	assert.Equal(t, "note 249", notes[249].Body)
	assert.Equal(t, "alice", notes[0].Author)
	var pages []string
	for _, r := range srv.Requests() {
		pages = append(pages, r.Query.Get("page"))
		assert.Equal(t, "100", r.Query.Get("per_page"))
		assert.Equal(t, token, r.PrivateToken)
	}
	assert.Equal(t, []string{"1", "2", "3"}, pages)
}

func TestNotesCreateEditSelf(t *testing.T) {
	srv := gitlabtest.New("42", token, "project_42_bot", 7)
	defer srv.Close()
	var waits []time.Duration
	c := client(t, srv, token, false, &waits)
	ctx := context.Background()
	u, err := c.Self(ctx)
	require.NoError(t, err)
	assert.Equal(t, "project_42_bot", u.Username)
	n, err := c.CreateNote(ctx, 7, "hello")
	require.NoError(t, err)
	assert.Equal(t, "project_42_bot", n.Author)
	e, err := c.EditNote(ctx, 7, n.ID, "bye")
	require.NoError(t, err)
	assert.Equal(t, "bye", e.Body)
	// Someone else's note: GitLab refuses the edit (only its author may).
	other := srv.AddNote(7, "alice", "hers")
	_, err = c.EditNote(ctx, 7, other, "mine now")
	var ae *gitlab.APIError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, gitlab.KindForbidden, ae.Kind)
	assert.Equal(t, "hers", srv.Notes(7)[1].Body)
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name   string
		setup  func(*gitlabtest.Server)
		tok    string
		job    bool
		iid    int
		kind   gitlab.ErrorKind
		status int
		msg    string
	}{
		{"unknown token", nil, "glpat-nope", false, 7, gitlab.KindUnauthorized, 401, "failed to create the MR note: GitLab answered 401 Unauthorized"},
		{"job token on notes", func(s *gitlabtest.Server) { s.JobToken = "job-TOKEN-1234" }, "job-TOKEN-1234", true, 7, gitlab.KindUnauthorized, 401, "401 Unauthorized"},
		{"read-only", func(s *gitlabtest.Server) { s.ReadOnly = true }, token, false, 7, gitlab.KindForbidden, 403, "403 Forbidden"},
		// A read_api token: 403 insufficient_scope, its description and the scope kept.
		{"read_api token", func(s *gitlabtest.Server) { s.ReadAPI[token] = true }, token, false, 7, gitlab.KindScope, 403,
			"failed to create the MR note: GitLab answered 403 insufficient_scope: The request requires higher privileges than provided by the access token."},
		{"no such merge request", nil, token, false, 8, gitlab.KindNotFound, 404, "404 Not found"},
		{"server error after retries", func(s *gitlabtest.Server) { s.Queue(gitlabtest.ServerError("POST", 502)) }, token, false, 7, gitlab.KindServer, 502, "502 Bad Gateway"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := gitlabtest.New("42", token, "bot", 7)
			defer srv.Close()
			if tt.setup != nil {
				tt.setup(srv)
			}
			var waits []time.Duration
			_, err := client(t, srv, tt.tok, tt.job, &waits).CreateNote(context.Background(), tt.iid, "x")
			var ae *gitlab.APIError
			require.ErrorAs(t, err, &ae)
			assert.Equal(t, tt.kind, ae.Kind)
			assert.Equal(t, tt.status, ae.Status)
			if tt.kind == gitlab.KindScope {
				assert.Equal(t, "api", ae.Scope, "the scope GitLab names")
			}
			assert.Contains(t, err.Error(), tt.msg)
			assert.NotContains(t, err.Error(), fmt.Sprintf("answered %d %d", tt.status, tt.status), "the status once")
			assert.NotContains(t, err.Error(), tt.tok)
			assert.Empty(t, srv.Notes(7), "a POST that failed with 5xx is not re-sent blindly")
		})
	}
}

// 429 with Retry-After: waited for, then the call succeeds; beyond the budget it is a rate-limit error.
func TestRateLimit(t *testing.T) {
	srv := gitlabtest.New("42", token, "bot", 7)
	defer srv.Close()
	srv.Queue(gitlabtest.RateLimit("GET", time.Now(), 2))
	var waits []time.Duration
	c := client(t, srv, token, false, &waits)
	_, err := c.ListNotes(context.Background(), 7, nil)
	require.NoError(t, err)
	assert.Equal(t, []time.Duration{2 * time.Second}, waits)

	srv.Queue(gitlabtest.RateLimit("GET", time.Now(), 3600))
	_, err = c.ListNotes(context.Background(), 7, nil)
	var ae *gitlab.APIError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, gitlab.KindRateLimited, ae.Kind)
	assert.Equal(t, 429, ae.Status)
}

// A 429 whose wait only GitLab's RateLimit headers give (GitLab's
// documentation, "User and IP rate limits" under "Rate limits",
// user/admin/settings/user_and_ip_rate_limits, "Response headers": RateLimit-Reset
// is the Unix time the quota resets, RateLimit-ResetTime the same as an HTTP
// date, RateLimit-Remaining what is left of it) is waited for until that
// reset, not the 8 to 16 s of a 429 that says no wait; a quota that still has
// requests left is not the one that refused, and its reset is not the wait.
// A reset beyond the 3-minute budget gives up at once.
func TestRateLimitReset(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		name  string
		fault gitlabtest.Fault
		lo    time.Duration // the wait, within lo..lo+2s (the reset is in whole seconds)
		hi    time.Duration // else within lo..hi
		err   string
	}{
		{name: "RateLimit-Reset and RateLimit-ResetTime", fault: gitlabtest.RateLimit("GET", now, 45).Without("Retry-After"), lo: 44 * time.Second, hi: 47 * time.Second},
		{name: "RateLimit-Reset alone", fault: gitlabtest.RateLimit("GET", now, 45).Without("Retry-After", "RateLimit-ResetTime"), lo: 44 * time.Second, hi: 47 * time.Second},
		{name: "RateLimit-ResetTime alone", fault: gitlabtest.RateLimit("GET", now, 45).Without("Retry-After", "RateLimit-Reset"), lo: 44 * time.Second, hi: 47 * time.Second},
		{name: "Retry-After first", fault: gitlabtest.RateLimit("GET", now, 45).With("Retry-After", "5"), lo: 5 * time.Second, hi: 5 * time.Second},
		{name: "a quota with requests left: the backoff", fault: gitlabtest.RateLimit("GET", now, 45).Without("Retry-After").With("RateLimit-Remaining", "12"), lo: 8 * time.Second, hi: 16 * time.Second},
		{name: "a reset beyond the budget", fault: gitlabtest.RateLimit("GET", now, 3600).Without("Retry-After"), err: "not waiting"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := gitlabtest.New("42", token, "bot", 7)
			defer srv.Close()
			srv.Queue(tc.fault)
			var waits []time.Duration
			_, err := client(t, srv, token, false, &waits).ListNotes(context.Background(), 7, nil)
			if tc.err != "" {
				var ae *gitlab.APIError
				require.ErrorAs(t, err, &ae)
				assert.Equal(t, gitlab.KindRateLimited, ae.Kind)
				assert.Contains(t, err.Error(), tc.err)
				assert.Empty(t, waits)
				return
			}
			require.NoError(t, err)
			require.Len(t, waits, 1)
			assert.GreaterOrEqual(t, waits[0], tc.lo)
			assert.LessOrEqual(t, waits[0], tc.hi)
		})
	}
}

// The wait until a RateLimit-Reset ends within a second of a signal too.
func TestRateLimitResetInterrupted(t *testing.T) {
	srv := gitlabtest.New("42", token, "bot", 7)
	defer srv.Close()
	srv.Queue(gitlabtest.RateLimit(http.MethodPost, time.Now(), 60).Without("Retry-After"))
	c, err := gitlab.NewClient(srv.APIURL(), srv.ProjectID, token, false, gitlab.DefaultPolicy)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, err = c.CreateNote(ctx, 7, "the report")
	require.Error(t, err)
	assert.Less(t, time.Since(start), time.Second)
	assert.Empty(t, srv.Notes(7))
}

// A 429 without Retry-After (GitLab's application rate limits, "Rate limit
// on Notes creation" among them, answer so; GitLab's "Rate limits" page: the
// limits are counted per minute) is waited for about a minute in all, 40 to
// 80 s over the three retries, not the 3.5 s of the other retries' backoff,
// which gave up within the minute that refused. The note is created once:
// a 429 did not act.
func TestRateLimitWithoutRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		name    string
		limited int // the 429s before the answer
		ok      bool
	}{
		{name: "three 429s, then created", limited: 3, ok: true},
		{name: "429 on every attempt: a rate-limit error", limited: 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := gitlabtest.New("42", token, "bot", 7)
			defer srv.Close()
			for range tc.limited {
				srv.Queue(gitlabtest.AppRateLimit(http.MethodPost))
			}
			var waits []time.Duration
			c := client(t, srv, token, false, &waits)
			_, err := c.CreateNote(context.Background(), 7, "the report")
			require.Len(t, waits, 3, "%v", waits)
			var total time.Duration
			for i, lo := range []time.Duration{8 * time.Second, 16 * time.Second, 16 * time.Second} {
				assert.GreaterOrEqual(t, waits[i], lo, "wait %d", i)
				assert.LessOrEqual(t, waits[i], 2*lo, "wait %d", i)
				total += waits[i]
			}
			assert.GreaterOrEqual(t, total, 40*time.Second)
			if tc.ok {
				require.NoError(t, err)
				assert.Len(t, srv.Notes(7), 1)
				return
			}
			var ae *gitlab.APIError
			require.ErrorAs(t, err, &ae)
			assert.Equal(t, gitlab.KindRateLimited, ae.Kind)
			assert.Contains(t, err.Error(), "429 Too Many Requests without saying how long to wait")
			assert.Empty(t, srv.Notes(7))
		})
	}
}

// The wait of a 429 ends within a second of a signal (the command's context
// is cancelled on SIGINT and SIGTERM), not after its 8 to 16 s.
func TestRateLimitWaitInterrupted(t *testing.T) {
	srv := gitlabtest.New("42", token, "bot", 7)
	defer srv.Close()
	srv.Queue(gitlabtest.AppRateLimit(http.MethodPost))
	c, err := gitlab.NewClient(srv.APIURL(), srv.ProjectID, token, false, gitlab.DefaultPolicy)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, err = c.CreateNote(ctx, 7, "the report")
	require.Error(t, err)
	assert.Less(t, time.Since(start), time.Second)
	assert.Empty(t, srv.Notes(7))
}

// A page of notes is read as it arrives, and may take longer than the
// attempt's timeout (a hundred notes at GitLab's limit are over 1 GB; the
// baseline artifact is up to 256 MiB): the
// timeout bounds each pause of the body, not the whole (with a total
// deadline, the page below, which keeps coming, was cut at the timeout); a
// body that stops for longer than the timeout fails, saying so, and so does
// one that keeps coming slower than the policy's floor (a trickle of some 3
// KB a second here, under a floor of 64 KiB over 80 ms windows: it used to
// be read whole however slow).
func TestListNotesSlowPage(t *testing.T) {
	const timeout = 160 * time.Millisecond
	for _, tc := range []struct {
		name     string
		stall    bool
		artifact bool // the baseline artifact (up to 256 MiB), not a page of notes
		minRate  int64
		wantErr  string
	}{
		{name: "a page that keeps coming for longer than the timeout"},
		{name: "a page that stops", stall: true, wantErr: "the answer stopped: no data for 160ms"},
		{name: "an artifact that keeps coming for longer than the timeout", artifact: true},
		{name: "a page that trickles", minRate: 64 << 10, wantErr: "the answer is too slow"},
		{name: "an artifact that trickles", artifact: true, minRate: 64 << 10, wantErr: "the answer is too slow"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusOK)
				pause := timeout / 4
				for i := range 6 {
					sep := ","
					if i == 0 {
						sep = "["
					}
					if tc.artifact {
						fmt.Fprintf(w, "part %d\n", i)
					} else {
						fmt.Fprintf(w, `%s{"id":%d,"body":"note %d","author":{"id":1,"username":"alice"},"created_at":"2026-01-01T00:00:00Z"}`, sep, i+1, i)
					}
					w.(http.Flusher).Flush()
					if tc.stall && i == 2 {
						pause = time.Hour
					}
					select {
					case <-r.Context().Done():
						return
					case <-time.After(pause):
					}
				}
				if !tc.artifact {
					fmt.Fprint(w, "]")
				}
			}))
			defer srv.Close()
			p := gitlab.DefaultPolicy
			p.Attempts, p.Timeout = 1, timeout
			if tc.minRate > 0 {
				p.MinRate, p.RateWindow = tc.minRate, timeout/2
			}
			c, err := gitlab.NewClient(srv.URL+"/api/v4", "42", token, false, p)
			require.NoError(t, err)
			if tc.artifact {
				var buf bytes.Buffer
				err := c.RawArtifact(context.Background(), "main", "eval", "baseline.jsonl.gz", 1<<20, &buf)
				if tc.wantErr != "" {
					require.ErrorContains(t, err, tc.wantErr)
					var ae *gitlab.APIError
					require.ErrorAs(t, err, &ae)
					assert.Equal(t, gitlab.KindNetwork, ae.Kind)
					return
				}
				require.NoError(t, err)
				assert.Equal(t, "part 0\npart 1\npart 2\npart 3\npart 4\npart 5\n", buf.String())
				return
			}
			notes, err := c.ListNotes(context.Background(), 7, nil)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				assert.NotContains(t, err.Error(), token)
				return
			}
			require.NoError(t, err)
			assert.Len(t, notes, 6)
		})
	}
}

// An answer over its cap fails rather than growing memory.
func TestBoundedAnswer(t *testing.T) {
	srv := gitlabtest.New("42", token, "bot", 7)
	defer srv.Close()
	defer gitlab.SetNoteCap(1 << 10)()
	srv.Queue(gitlabtest.Fault{Method: "GET", Status: 200, Body: "[" + strings.Repeat(" ", 1<<10) + "]"})
	var waits []time.Duration
	_, err := client(t, srv, token, false, &waits).ListNotes(context.Background(), 7, nil)
	var ae *gitlab.APIError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, gitlab.KindTooLarge, ae.Kind)
}

// The artifact file of the latest successful pipeline of a ref, with the job token.
func TestRawArtifact(t *testing.T) {
	srv := gitlabtest.New("42", token, "bot")
	defer srv.Close()
	srv.JobToken = "job-TOKEN-1234"
	srv.AddPipeline(gitlabtest.Pipeline{Ref: "release/1", Status: "success", Files: map[string]map[string][]byte{"base": {"baseline.jsonl.gz": []byte("old")}}})
	srv.AddPipeline(gitlabtest.Pipeline{Ref: "release/1", Status: "success", Files: map[string]map[string][]byte{"base": {"baseline.jsonl.gz": []byte("new")}}})
	srv.AddPipeline(gitlabtest.Pipeline{Ref: "release/1", Status: "failed", Files: map[string]map[string][]byte{"base": {"baseline.jsonl.gz": []byte("failed")}}})
	var waits []time.Duration
	c := client(t, srv, "job-TOKEN-1234", true, &waits)
	var b bytes.Buffer
	require.NoError(t, c.RawArtifact(context.Background(), "release/1", "base", "baseline.jsonl.gz", 10, &b))
	assert.Equal(t, "new", b.String())
	r := srv.Requests()[0]
	assert.Equal(t, "job-TOKEN-1234", r.JobToken)
	assert.Equal(t, "base", r.Query.Get("job"))

	b.Reset()
	err := c.RawArtifact(context.Background(), "release/1", "base", "baseline.jsonl.gz", 2, &b)
	var ae *gitlab.APIError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, gitlab.KindTooLarge, ae.Kind)
	err = c.RawArtifact(context.Background(), "main", "base", "baseline.jsonl.gz", 10, &b)
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, gitlab.KindNotFound, ae.Kind)
}

// An artifact larger than the transport's default answer cap
// (httpretry.DefaultMaxBody) downloads whole: the download's own cap is the
// request's (issue 33: every answer is bounded at its request's cap).
func TestRawArtifactOverTheDefaultCap(t *testing.T) {
	srv := gitlabtest.New("42", token, "bot")
	defer srv.Close()
	big := bytes.Repeat([]byte("x"), httpretry.DefaultMaxBody+1<<20)
	srv.AddPipeline(gitlabtest.Pipeline{Ref: "main", Status: "success", Files: map[string]map[string][]byte{"base": {"baseline.jsonl.gz": big}}})
	var waits []time.Duration
	var b bytes.Buffer
	require.NoError(t, client(t, srv, token, false, &waits).RawArtifact(context.Background(), "main", "base", "baseline.jsonl.gz", int64(len(big)), &b))
	assert.Equal(t, len(big), b.Len())
}

func TestCIBaseRef(t *testing.T) {
	assert.Equal(t, "main", gitlab.CI{TargetBranch: "main", DefaultBranch: "dev"}.BaseRef())
	assert.Equal(t, "dev", gitlab.CI{DefaultBranch: "dev"}.BaseRef())
}

// The listing reads at most MaxPages pages: when the last one read still names
// a next page, the notes read come back with a *TruncatedError, not silently
// fewer; a listing that ends on the bound's last page is whole.
func TestListNotesStopsExplicitly(t *testing.T) {
	defer gitlab.SetMaxPages(2)()
	tests := []struct {
		name  string
		notes int
		read  int
		cut   bool
	}{
		{"fewer than the bound", 150, 150, false},
		{"exactly the bound's pages", 200, 200, false},
		{"one more than the bound", 201, 200, true},
		{"far more", 1000, 200, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := gitlabtest.New("42", token, "bot", 7)
			defer srv.Close()
			for i := range tt.notes {
				srv.AddNote(7, "alice", fmt.Sprint("note ", i))
			}
			var waits []time.Duration
			notes, err := client(t, srv, token, false, &waits).ListNotes(context.Background(), 7, nil)
			require.Len(t, notes, tt.read)
			assert.Equal(t, "note 0", notes[0].Body, "oldest first")
			if !tt.cut {
				require.NoError(t, err)
				return
			}
			var te *gitlab.TruncatedError
			require.ErrorAs(t, err, &te)
			assert.Equal(t, gitlab.TruncatedError{Read: 200, Pages: 2}, *te)
			assert.Equal(t, "the merge request has more notes than the 200 read (2 pages of 100, oldest first)", err.Error())
			assert.Len(t, srv.Requests(), 2, "no page past the bound is asked for")
		})
	}
}

// A page of 100 notes near GitLab's limit on a note's body (1,000,000
// characters: GitLab's "Notes API", body) is some 100 MB: it is read one note
// at a time, each under MaxNote, where the whole page was once refused at a
// 64 MiB cap (and the sticky note was never posted). keep drops the bodies
// the caller does not need, so what stays is the notes' ids and authors and
// the one body kept, not the page.
func TestListNotesLargePage(t *testing.T) {
	racetest.Skip(t, "moves 100 MB through one decoder")
	srv := gitlabtest.New("42", token, "bot", 7)
	defer srv.Close()
	big := strings.Repeat("x", gitlabtest.MaxNote-1) + "\n" // one string, shared by the stand-in's notes
	var ids []int64
	for range 100 {
		ids = append(ids, srv.AddNote(7, "alice", big))
	}
	ids = append(ids, srv.AddNote(7, "bot", "<!-- mine -->\nthe report"))
	var waits []time.Duration
	c := client(t, srv, token, false, &waits)
	keep := func(n gitlab.Note) string {
		if strings.HasPrefix(n.Body, "<!-- mine -->") {
			return n.Body
		}
		return n.Body[:7] // a slice of the body: the listing keeps a copy, not the body
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	notes, err := c.ListNotes(context.Background(), 7, keep)
	require.NoError(t, err)
	runtime.GC()
	runtime.ReadMemStats(&after)
	require.Len(t, notes, 101)
	for i, n := range notes {
		assert.Equal(t, ids[i], n.ID)
	}
	assert.Equal(t, "xxxxxxx", notes[0].Body)
	assert.Equal(t, "alice", notes[99].Author)
	assert.Equal(t, "<!-- mine -->\nthe report", notes[100].Body)
	assert.Less(t, int64(after.HeapAlloc)-int64(before.HeapAlloc), int64(16<<20), "the bodies dropped are not held")
	assert.Len(t, srv.Requests(), 2, "two pages")
}

// Each note is capped, not the page: a page of a hundred notes each just
// under the cap reads, whatever the page's size; one note over it, or white
// space over it between two notes, is refused as too large. A note of
// 1,000,000 "<", which GitLab writes \u003c (6,000,000 bytes), is under
// MaxNote.
func TestListNotesNoteCap(t *testing.T) {
	t.Run("a page far over the cap of one note", func(t *testing.T) {
		defer gitlab.SetNoteCap(1 << 10)()
		srv := gitlabtest.New("42", token, "bot", 7)
		defer srv.Close()
		body := strings.Repeat("y", 600)
		for range 100 {
			srv.AddNote(7, "alice", body)
		}
		var waits []time.Duration
		notes, err := client(t, srv, token, false, &waits).ListNotes(context.Background(), 7, nil)
		require.NoError(t, err)
		require.Len(t, notes, 100)
		assert.Equal(t, body, notes[99].Body)
	})
	for _, tt := range []struct{ name, page string }{
		{"one note over the cap", `[{"id":1,"body":"a"},{"id":2,"body":"` + strings.Repeat("z", 1<<10) + `"}]`},
		{"white space over the cap", `[{"id":1,"body":"a"},` + strings.Repeat(" ", 1<<10) + `{"id":2}]`},
		{"white space over the cap after the page", `[{"id":1,"body":"a"}]` + strings.Repeat(" ", 1<<11)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			defer gitlab.SetNoteCap(1 << 10)()
			srv := gitlabtest.New("42", token, "bot", 7)
			defer srv.Close()
			srv.Queue(gitlabtest.Fault{Method: "GET", Status: 200, Body: tt.page})
			var waits []time.Duration
			_, err := client(t, srv, token, false, &waits).ListNotes(context.Background(), 7, nil)
			var ae *gitlab.APIError
			require.ErrorAs(t, err, &ae)
			assert.Equal(t, gitlab.KindTooLarge, ae.Kind)
			assert.Equal(t, "failed to list the MR notes: a note of the answer is longer than 1024 bytes, more than a note of 1,000,000 characters takes: refused", err.Error())
		})
	}
	t.Run("1,000,000 characters escaped", func(t *testing.T) {
		srv := gitlabtest.New("42", token, "bot", 7)
		defer srv.Close()
		body := strings.Repeat("<", gitlabtest.MaxNote)
		srv.AddNote(7, "alice", body)
		var waits []time.Duration
		notes, err := client(t, srv, token, false, &waits).ListNotes(context.Background(), 7, nil)
		require.NoError(t, err)
		require.Len(t, notes, 1)
		assert.Equal(t, body, notes[0].Body)
	})
}

// A page of more notes than GitLab's largest page (per_page at most 100) is
// not GitLab's answer: refused, rather than read without end.
func TestListNotesPageOverPerPage(t *testing.T) {
	srv := gitlabtest.New("42", token, "bot", 7)
	defer srv.Close()
	page := "[" + strings.TrimSuffix(strings.Repeat(`{"id":3},`, gitlab.PerPage+1), ",") + "]"
	srv.Queue(gitlabtest.Fault{Method: "GET", Status: 200, Body: page})
	var waits []time.Duration
	_, err := client(t, srv, token, false, &waits).ListNotes(context.Background(), 7, nil)
	require.EqualError(t, err, "failed to list the MR notes: the answer holds more than 100 notes, GitLab's largest page")
}

// A project named by its full path: GitLab's REST API takes it as :id,
// URL-encoded, each "/" written %2F (REST API documentation, "Namespaced
// paths": group%2Fsub%2Fproject), on every call; the id works as before.
// Before, a path was refused as "not a project id" (and, let through, would
// have gone out as group%252Fsub%252Fproject: escaped into the URL's decoded
// path, then escaped again).
func TestProjectPath(t *testing.T) {
	for _, project := range []string{"42", "group/sub/project", "my.group/my-project_1"} {
		t.Run(project, func(t *testing.T) {
			srv := gitlabtest.New("42", token, "bot", 7)
			defer srv.Close()
			srv.ProjectPath = "group/sub/project"
			if project == "my.group/my-project_1" {
				srv.ProjectPath = project
			}
			srv.AddPipeline(gitlabtest.Pipeline{Ref: "release/1", Status: "success", Files: map[string]map[string][]byte{"base": {"dir/baseline.jsonl.gz": []byte("data")}}})
			var waits []time.Duration
			c, err := gitlab.NewClient(srv.APIURL(), project, token, false, policy(&waits))
			require.NoError(t, err)
			ctx := context.Background()
			n, err := c.CreateNote(ctx, 7, "hello")
			require.NoError(t, err)
			_, err = c.EditNote(ctx, 7, n.ID, "bye")
			require.NoError(t, err)
			notes, err := c.ListNotes(ctx, 7, nil)
			require.NoError(t, err)
			require.Len(t, notes, 1)
			assert.Equal(t, "bye", notes[0].Body)
			var b bytes.Buffer
			require.NoError(t, c.RawArtifact(ctx, "release/1", "base", "dir/baseline.jsonl.gz", 10, &b))
			assert.Equal(t, "data", b.String())
			require.NoError(t, c.DeleteNote(ctx, 7, n.ID))
			assert.Empty(t, srv.Notes(7))
			id := strings.ReplaceAll(project, "/", "%2F")
			for _, r := range srv.Requests() {
				assert.True(t, strings.HasPrefix(r.Path, "/projects/"+id+"/"), "%s %s", r.Method, r.Path)
			}
			assert.Equal(t, "/projects/"+id+"/jobs/artifacts/release%2F1/raw/dir/baseline.jsonl.gz", srv.Requests()[3].Path)
		})
	}
}

// The stand-in resolves a project by its id and by its path encoded once, as
// GitLab does: the path with its slashes as written matches no route, and
// one encoded twice names no project.
func TestStandInProjectPath(t *testing.T) {
	srv := gitlabtest.New("42", token, "bot", 7)
	defer srv.Close()
	srv.ProjectPath = "group/project"
	for _, tt := range []struct {
		id     string
		status int
	}{
		{"42", 200},
		{"group%2Fproject", 200},
		{"group%2fproject", 200},
		{"group/project", 404},
		{"group%252Fproject", 404},
		{"43", 404},
	} {
		req, err := http.NewRequest(http.MethodGet, srv.APIURL()+"/projects/"+tt.id+"/merge_requests/7/notes", nil)
		require.NoError(t, err)
		req.Header.Set("PRIVATE-TOKEN", token)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		assert.Equal(t, tt.status, resp.StatusCode, tt.id)
	}
}

// What is neither a project id nor a full path is refused before anything is
// sent, named by the variable it was read from.
func TestProjectRefused(t *testing.T) {
	for _, project := range []string{"group//project", "/project", "group/", "group/../project", "group/./project",
		"group%2Fproject", "group/pro ject", "group/project?x=1", "group/project#x", "a\\b", "group/\x01"} {
		_, err := gitlab.NewClient("https://gitlab.example/api/v4", project, token, false, gitlab.DefaultPolicy)
		require.ErrorContains(t, err, "is not a project id or path", project)
		err = gitlab.CI{APIURL: "https://gitlab.example/api/v4", ProjectID: project, ProjectIDVar: "CI_PROJECT_PATH"}.Problem()
		require.ErrorContains(t, err, "CI_PROJECT_PATH ", project)
	}
	for _, project := range []string{"42", "group/project", "a/b/c/d", "Group.Name/pro-ject_2"} {
		require.NoError(t, gitlab.CI{APIURL: "https://gitlab.example/api/v4", ProjectID: project}.Problem(), project)
	}
}
