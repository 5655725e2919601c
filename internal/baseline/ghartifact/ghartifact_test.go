package ghartifact

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/github"
	"github.com/retrieval-gate/retrieval-gate/internal/github/githubtest"
)

const (
	testToken = "ghs_testTOKEN0123456789abcdefABCDEF"
	testName  = "retrieval-gate-baseline-default"
)

var testNow = time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)

// baselineFile is a gzip baseline file whose first line carries schema.
func baselineFile(t testing.TB, schema string, rest string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, err := fmt.Fprintf(zw, "{\"schema\":%q,\"k\":5}\n%s", schema, rest)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

// archive is a zip holding the given files, as actions/upload-artifact makes it.
func archive(t testing.TB, files map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range sortedKeys(files) {
		w, err := zw.Create(name)
		require.NoError(t, err)
		_, err = w.Write(files[name])
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

func sortedKeys(m map[string][]byte) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	for i := range ks {
		for j := i + 1; j < len(ks); j++ {
			if ks[j] < ks[i] {
				ks[i], ks[j] = ks[j], ks[i]
			}
		}
	}
	return ks
}

func goodZip(t testing.TB, marker string) []byte {
	return archive(t, map[string][]byte{FileName: baselineFile(t, "retrieval-gate/baseline@1", `{"id":"`+marker+`"}`+"\n")})
}

// fixture is the fake GitHub with a clock, a blob host that fails the test on any
// Authorization header, and an event payload.
type fixture struct {
	t   *testing.T
	srv *githubtest.Server
	dir string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	srv := githubtest.New("octo", "repo", testToken, 7)
	t.Cleanup(srv.Close)
	srv.SetClock(func() time.Time { return testNow })
	srv.OnBlobAuthorization(func(auth string) {
		t.Errorf("the blob host received Authorization %q", auth)
	})
	return &fixture{t: t, srv: srv, dir: t.TempDir()}
}

// add stores a run and its artifact, created ago before testNow.
func (f *fixture) add(name, branch, conclusion string, ago time.Duration, zip []byte, opts ...func(*githubtest.Run, *githubtest.Artifact)) int64 {
	r := githubtest.Run{HeadBranch: branch, HeadSHA: fmt.Sprintf("%040x", ago), Conclusion: conclusion, CreatedAt: testNow.Add(-ago)}
	a := githubtest.Artifact{Name: name, Zip: zip, CreatedAt: testNow.Add(-ago)}
	for _, o := range opts {
		o(&r, &a)
	}
	a.RunID = f.srv.AddRun(r)
	return f.srv.AddArtifact(a)
}

func (f *fixture) event(payload string) string {
	p := filepath.Join(f.t.TempDir(), "event.json")
	require.NoError(f.t, os.WriteFile(p, []byte(payload), 0o644))
	return p
}

func prEvent(base, headRepo string) string {
	return fmt.Sprintf(`{"number":7,"pull_request":{"number":7,"base":{"ref":%q,"repo":{"full_name":"octo/repo"}},"head":{"ref":"topic","repo":{"full_name":%q}}},"repository":{"full_name":"octo/repo","default_branch":"main"}}`, base, headRepo)
}

func (f *fixture) deps(event string) Deps {
	return Deps{
		HTTP: &http.Client{Timeout: 10 * time.Second}, APIURL: f.srv.APIURL(), Token: testToken,
		Repo: "octo/repo", EventPath: f.event(event), Dir: f.dir, Now: func() time.Time { return testNow },
	}
}

// noSecrets asserts that no message holds the token or a signed URL's signature.
func noSecrets(t *testing.T, msgs ...string) {
	t.Helper()
	for _, m := range msgs {
		assert.NotContains(t, m, testToken)
		assert.NotContains(t, m, "sig=")
		assert.NotContains(t, m, "\n")
	}
}

func fetched(t *testing.T, found *Found, un *Unavailable) *Found {
	t.Helper()
	if un != nil {
		t.Fatalf("unavailable (%s): %s", un.Reason, un.Message)
	}
	require.NotNil(t, found)
	return found
}

func content(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	require.NoError(t, err)
	buf := new(bytes.Buffer)
	_, err = buf.ReadFrom(zr)
	require.NoError(t, err)
	return buf.String()
}

func TestFetchNewestSuccessfulOnBaseBranch(t *testing.T) {
	f := newFixture(t)
	f.add(testName, "main", "success", 72*time.Hour, goodZip(t, "old"))
	want := f.add(testName, "main", "success", 2*time.Hour, goodZip(t, "newest"))
	f.add(testName, "main", "success", 30*time.Hour, goodZip(t, "middle"))
	f.add("retrieval-gate-baseline-nightly", "main", "success", time.Hour, goodZip(t, "other key"))

	found, un := Fetch(context.Background(), f.deps(prEvent("main", "octo/repo")), testName)
	found = fetched(t, found, un)
	assert.Equal(t, want, found.ArtifactID)
	assert.Equal(t, filepath.Join(f.dir, FileName), found.Path)
	assert.Contains(t, content(t, found.Path), `"newest"`)
	assert.Equal(t, "retrieval-gate/baseline@1", found.Schema)
	assert.Equal(t, "main", found.Branch)
	assert.Equal(t, testName, found.Name)
	assert.Equal(t, fmt.Sprintf("%040x", 2*time.Hour), found.HeadSHA)
	assert.Equal(t, testNow.Add(-2*time.Hour), found.CreatedAt)
	assert.NotZero(t, found.RunID)
	assert.Empty(t, found.Skipped)

	// Only the downloaded file is left, no temporary file.
	entries, err := os.ReadDir(f.dir)
	require.NoError(t, err)
	require.Len(t, entries, 1)

	// The API saw the token and the name filter; the blob host saw no token.
	var listed, downloaded bool
	for _, r := range f.srv.Requests() {
		assert.Equal(t, "Bearer "+testToken, r.Auth, r.Path)
		if strings.HasSuffix(r.Path, "/actions/artifacts") {
			listed = true
			assert.Equal(t, testName, r.Query.Get("name"))
			assert.Equal(t, "100", r.Query.Get("per_page"))
		}
		if strings.HasSuffix(r.Path, fmt.Sprintf("/actions/artifacts/%d/zip", want)) {
			downloaded = true
		}
	}
	assert.True(t, listed)
	assert.True(t, downloaded)
	blobs := f.srv.BlobRequests()
	require.Len(t, blobs, 1)
	assert.Empty(t, blobs[0].Auth)

	require.NoError(t, found.Cleanup())
	_, err = os.Stat(found.Path)
	assert.True(t, os.IsNotExist(err))
}

func TestFetchPassesOver(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(f *fixture) (want int64)
		event   string
		skipped []string // substrings of Found.Skipped, in order
	}{
		{
			name: "failed run's newer artifact",
			setup: func(f *fixture) int64 {
				want := f.add(testName, "main", "success", 10*time.Hour, goodZip(t, "ok"))
				f.add(testName, "main", "failure", time.Hour, goodZip(t, "failed"))
				f.add(testName, "main", "cancelled", 2*time.Hour, goodZip(t, "cancelled"))
				return want
			},
			event:   prEvent("main", "octo/repo"),
			skipped: []string{"did not succeed (conclusion failure)", "did not succeed (conclusion cancelled)"},
		},
		{
			name: "run still in progress",
			setup: func(f *fixture) int64 {
				want := f.add(testName, "main", "success", 10*time.Hour, goodZip(t, "ok"))
				f.add(testName, "main", "", time.Minute, goodZip(t, "running"))
				return want
			},
			event:   prEvent("main", "octo/repo"),
			skipped: []string{`has not completed (status "in_progress")`},
		},
		{
			name: "another branch's artifact",
			setup: func(f *fixture) int64 {
				f.add(testName, "develop", "success", time.Hour, goodZip(t, "develop"))
				return f.add(testName, "main", "success", 5*time.Hour, goodZip(t, "ok"))
			},
			event: prEvent("main", "octo/repo"),
		},
		{
			name: "base branch other than the default",
			setup: func(f *fixture) int64 {
				f.add(testName, "main", "success", time.Hour, goodZip(t, "main"))
				return f.add(testName, "release/2.x", "success", 5*time.Hour, goodZip(t, "ok"))
			},
			event: prEvent("release/2.x", "octo/repo"),
		},
		{
			name: "fork PR: downloads from base, never a fork's branch of the same name",
			setup: func(f *fixture) int64 {
				f.add(testName, "main", "success", time.Hour, goodZip(t, "fork"), func(r *githubtest.Run, _ *githubtest.Artifact) {
					r.HeadRepo, r.Event = "mallory/repo", "pull_request"
				})
				return f.add(testName, "main", "success", 5*time.Hour, goodZip(t, "ok"))
			},
			event: prEvent("main", "mallory/repo"),
		},
		{
			name: "a pull_request run of the same repository on a branch called main",
			setup: func(f *fixture) int64 {
				f.add(testName, "main", "success", time.Hour, goodZip(t, "pr"), func(r *githubtest.Run, _ *githubtest.Artifact) {
					r.Event = "pull_request"
				})
				return f.add(testName, "main", "success", 5*time.Hour, goodZip(t, "ok"))
			},
			event:   prEvent("main", "octo/repo"),
			skipped: []string{`ran for event "pull_request"`},
		},
		{
			// Issue 20 item 10: an allowlist, not a denylist of pull-request events.
			name: "a issue_comment run on the base branch",
			setup: func(f *fixture) int64 {
				f.add(testName, "main", "success", time.Hour, goodZip(t, "x"), func(r *githubtest.Run, _ *githubtest.Artifact) {
					r.Event = "issue_comment"
				})
				return f.add(testName, "main", "success", 5*time.Hour, goodZip(t, "ok"))
			},
			event:   prEvent("main", "octo/repo"),
			skipped: []string{`ran for event "issue_comment"`},
		},
		{
			// Issue 20 item 10: an allowlist, not a denylist of pull-request events.
			name: "a workflow_run run on the base branch",
			setup: func(f *fixture) int64 {
				f.add(testName, "main", "success", time.Hour, goodZip(t, "x"), func(r *githubtest.Run, _ *githubtest.Artifact) {
					r.Event = "workflow_run"
				})
				return f.add(testName, "main", "success", 5*time.Hour, goodZip(t, "ok"))
			},
			event:   prEvent("main", "octo/repo"),
			skipped: []string{`ran for event "workflow_run"`},
		},
		{
			// Issue 20 item 10: an allowlist, not a denylist of pull-request events.
			name: "a pull_request_review run on the base branch",
			setup: func(f *fixture) int64 {
				f.add(testName, "main", "success", time.Hour, goodZip(t, "x"), func(r *githubtest.Run, _ *githubtest.Artifact) {
					r.Event = "pull_request_review"
				})
				return f.add(testName, "main", "success", 5*time.Hour, goodZip(t, "ok"))
			},
			event:   prEvent("main", "octo/repo"),
			skipped: []string{`ran for event "pull_request_review"`},
		},
		{
			// Issue 20 item 10: an allowlist, not a denylist of pull-request events.
			name: "a discussion_comment run on the base branch",
			setup: func(f *fixture) int64 {
				f.add(testName, "main", "success", time.Hour, goodZip(t, "x"), func(r *githubtest.Run, _ *githubtest.Artifact) {
					r.Event = "discussion_comment"
				})
				return f.add(testName, "main", "success", 5*time.Hour, goodZip(t, "ok"))
			},
			event:   prEvent("main", "octo/repo"),
			skipped: []string{`ran for event "discussion_comment"`},
		},
		{
			// Issue 20 item 10: an allowlist, not a denylist of pull-request events.
			name: "a Push run on the base branch",
			setup: func(f *fixture) int64 {
				f.add(testName, "main", "success", time.Hour, goodZip(t, "x"), func(r *githubtest.Run, _ *githubtest.Artifact) {
					r.Event = "Push"
				})
				return f.add(testName, "main", "success", 5*time.Hour, goodZip(t, "ok"))
			},
			event:   prEvent("main", "octo/repo"),
			skipped: []string{`ran for event "Push"`},
		},
		{
			name: "expired newest",
			setup: func(f *fixture) int64 {
				f.add(testName, "main", "success", time.Hour, goodZip(t, "expired"), func(_ *githubtest.Run, a *githubtest.Artifact) {
					a.Expired = true
				})
				return f.add(testName, "main", "success", 5*time.Hour, goodZip(t, "ok"))
			},
			event:   prEvent("main", "octo/repo"),
			skipped: []string{"has expired"},
		},
		{
			name: "push event: the default branch",
			setup: func(f *fixture) int64 {
				f.add(testName, "topic", "success", time.Hour, goodZip(t, "topic"))
				return f.add(testName, "trunk", "success", 5*time.Hour, goodZip(t, "ok"))
			},
			event: `{"ref":"refs/heads/topic","repository":{"full_name":"octo/repo","default_branch":"trunk"}}`,
		},
		{
			name: "merge queue: the queue's base",
			setup: func(f *fixture) int64 {
				return f.add(testName, "main", "success", 5*time.Hour, goodZip(t, "ok"))
			},
			event: `{"merge_group":{"base_ref":"refs/heads/main","head_ref":"refs/heads/gh-readonly-queue/main/pr-7"},"repository":{"default_branch":"trunk"}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			want := tt.setup(f)
			found, un := Fetch(context.Background(), f.deps(tt.event), testName)
			found = fetched(t, found, un)
			assert.Equal(t, want, found.ArtifactID)
			assert.Contains(t, content(t, found.Path), `"ok"`)
			require.Len(t, found.Skipped, len(tt.skipped), found.Skipped)
			for i, s := range tt.skipped {
				assert.Contains(t, found.Skipped[i], s)
			}
			noSecrets(t, found.Skipped...)
		})
	}
}

func TestFetchPaginates(t *testing.T) {
	f := newFixture(t)
	// 230 newer artifacts of the same name from other branches push the base
	// branch's onto the third page of 100.
	want := f.add(testName, "main", "success", 100*time.Hour, goodZip(t, "ok"))
	small := goodZip(t, "x")
	for i := range 230 {
		f.add(testName, fmt.Sprintf("topic-%d", i), "success", time.Duration(i+1)*time.Minute, small)
	}
	found, un := Fetch(context.Background(), f.deps(prEvent("main", "octo/repo")), testName)
	found = fetched(t, found, un)
	assert.Equal(t, want, found.ArtifactID)
	var pages []string
	for _, r := range f.srv.Requests() {
		if strings.HasSuffix(r.Path, "/actions/artifacts") {
			pages = append(pages, r.Query.Get("page"))
			assert.Equal(t, testName, r.Query.Get("name"))
		}
	}
	assert.Equal(t, []string{"", "2", "3"}, pages)
}

func TestFetchPageCap(t *testing.T) {
	f := newFixture(t)
	small := goodZip(t, "x")
	f.add(testName, "main", "success", 1000*time.Hour, small)
	for i := range MaxPages * 100 {
		f.add(testName, "topic", "success", time.Duration(i+1)*time.Second, small)
	}
	_, un := Fetch(context.Background(), f.deps(prEvent("main", "octo/repo")), testName)
	require.NotNil(t, un)
	assert.Equal(t, NoArtifact, un.Reason)
	assert.Contains(t, un.Message, fmt.Sprintf("among the newest %d pages", MaxPages))
	assert.Contains(t, un.Message, fmt.Sprintf("%d from other branches", MaxPages*100))
}

// expireOnDownload expires an artifact between the listing and the download, as
// retention can.
type expireOnDownload struct {
	srv  *githubtest.Server
	id   int64
	base http.RoundTripper
}

func (e *expireOnDownload) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.HasSuffix(r.URL.Path, fmt.Sprintf("/artifacts/%d/zip", e.id)) {
		e.srv.ExpireArtifact(e.id)
	}
	return e.base.RoundTrip(r)
}

// advanceBeforeBlob moves the fake's clock past the signed URL's validity before
// the blob request.
type advanceBeforeBlob struct {
	srv  *githubtest.Server
	base http.RoundTripper
}

func (a *advanceBeforeBlob) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Host != strings.TrimPrefix(a.srv.URL, "http://") {
		a.srv.SetClock(func() time.Time { return testNow.Add(2 * githubtest.SignedURLValidity) })
	}
	return a.base.RoundTrip(r)
}

func TestFetchUnavailable(t *testing.T) {
	big := make([]byte, 64<<10) // incompressible
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range big {
		big[i] = byte(rng.Uint32())
	}
	tests := []struct {
		name   string
		setup  func(f *fixture, d *Deps)
		reason Reason
		msg    []string
		blobs  int // requests the blob host must have seen
	}{
		{
			name:   "no artifact at all",
			setup:  func(f *fixture, d *Deps) {},
			reason: NoArtifact,
			msg:    []string{`no artifact "retrieval-gate-baseline-default" from branch "main"`, "run the baseline workflow on a push"},
		},
		{
			name: "only other branches and forks",
			setup: func(f *fixture, d *Deps) {
				f.add(testName, "develop", "success", time.Hour, goodZip(t, "x"))
				f.add(testName, "main", "success", time.Hour, goodZip(t, "x"), func(r *githubtest.Run, _ *githubtest.Artifact) { r.HeadRepo = "mallory/repo" })
			},
			reason: NoArtifact,
			msg:    []string{"1 from other branches", "1 from forks"},
		},
		{
			name: "only failed runs",
			setup: func(f *fixture, d *Deps) {
				f.add(testName, "main", "failure", time.Hour, goodZip(t, "x"))
				f.add(testName, "main", "failure", 2*time.Hour, goodZip(t, "x"))
			},
			reason: NoArtifact,
			msg:    []string{"from a successful run", "did not succeed (conclusion failure)", "(and 1 more passed over)"},
		},
		{
			name: "expired",
			setup: func(f *fixture, d *Deps) {
				f.add(testName, "main", "success", 100*24*time.Hour, goodZip(t, "x")) // past the 90-day retention
				f.add(testName, "main", "success", time.Hour, goodZip(t, "x"), func(_ *githubtest.Run, a *githubtest.Artifact) { a.Expired = true })
			},
			reason: Expired,
			msg:    []string{"has expired", "the newest was uploaded 2026-11-30"},
		},
		{
			name: "expired between listing and download: 410",
			setup: func(f *fixture, d *Deps) {
				id := f.add(testName, "main", "success", time.Hour, goodZip(t, "x"))
				d.HTTP.Transport = &expireOnDownload{srv: f.srv, id: id, base: http.DefaultTransport}
			},
			reason: Expired,
			msg:    []string{"410 Artifact has expired"},
		},
		{
			name: "403 without actions: read",
			setup: func(f *fixture, d *Deps) {
				f.add(testName, "main", "success", time.Hour, goodZip(t, "x"))
				f.srv.DenyActions(true)
			},
			reason: Forbidden,
			msg:    []string{"403 Resource not accessible by integration", "permissions: actions: read"},
		},
		{
			name: "404: repository not visible",
			setup: func(f *fixture, d *Deps) {
				d.Repo = "octo/private"
			},
			reason: NotFound,
			msg:    []string{"404 Not Found"},
		},
		{
			name: "401: bad token",
			setup: func(f *fixture, d *Deps) {
				d.Token = "ghs_wrong"
			},
			reason: Unauthorized,
			msg:    []string{"401 Bad credentials"},
		},
		{
			name: "rate limited",
			setup: func(f *fixture, d *Deps) {
				f.srv.Queue(githubtest.PrimaryRateLimit(http.MethodGet, testNow, 30*time.Minute))
			},
			reason: RateLimited,
			msg:    []string{"rate limit", "resets at 06:30 UTC"},
		},
		{
			name: "server error",
			setup: func(f *fixture, d *Deps) {
				f.srv.Queue(githubtest.ServerError(http.MethodGet, http.StatusBadGateway))
			},
			reason: ServerError,
			msg:    []string{"502 Bad Gateway"},
		},
		{
			name: "a server message that echoes the token is redacted",
			setup: func(f *fixture, d *Deps) {
				f.srv.Queue(githubtest.Fault{Method: http.MethodGet, Status: http.StatusInternalServerError, Body: `{"message":"bad token ` + testToken + `"}`})
			},
			reason: ServerError,
			msg:    []string{"500 bad token"},
		},
		{
			name: "network failure",
			setup: func(f *fixture, d *Deps) {
				dead := httptest.NewServer(http.NotFoundHandler())
				dead.Close()
				d.APIURL = dead.URL + "/api/v3"
			},
			reason: Network,
			msg:    []string{"could not reach http://127.0.0.1:", "/api/v3/repos/octo/repo/actions/artifacts"},
		},
		{
			name: "signed URL expired before use",
			setup: func(f *fixture, d *Deps) {
				f.add(testName, "main", "success", time.Hour, goodZip(t, "x"))
				d.HTTP.Transport = &advanceBeforeBlob{srv: f.srv, base: http.DefaultTransport}
			},
			reason: ServerError,
			msg:    []string{"the signed download URL of artifact", "answered 403 Forbidden"},
			blobs:  1,
		},
		{
			name: "oversized by size_in_bytes: not downloaded",
			setup: func(f *fixture, d *Deps) {
				f.add(testName, "main", "success", time.Hour, goodZip(t, "x"), func(_ *githubtest.Run, a *githubtest.Artifact) { a.Size = MaxArchiveBytes + 1 })
			},
			reason: TooLarge,
			msg:    []string{"268435457 bytes, over the 256 MiB cap on a baseline archive"},
		},
		{
			name: "an endless listing answer: refused at its cap",
			setup: func(f *fixture, d *Deps) {
				d.HTTP.Transport = roundTripFunc(func(r *http.Request) (*http.Response, error) {
					return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, ContentLength: -1, Request: r,
						Body: io.NopCloser(io.MultiReader(strings.NewReader(`{"artifacts":["`), endlessA{}))}, nil
				})
			},
			reason: TooLarge,
			msg:    []string{"GitHub's answer to list the artifacts", "is over 8388608 bytes"},
		},
		{
			name: "oversized download (size_in_bytes understated)",
			setup: func(f *fixture, d *Deps) {
				setLimits(t, 16<<10, MaxFileBytes, MaxExpandedBytes)
				f.add(testName, "main", "success", time.Hour, archive(t, map[string][]byte{FileName: baselineFile(t, "retrieval-gate/baseline@1", ""), "pad.bin": big}),
					func(_ *githubtest.Run, a *githubtest.Artifact) { a.Size = 100 })
			},
			reason: TooLarge,
			msg:    []string{"over the 16 KiB cap on a baseline archive"},
			blobs:  1,
		},
		{
			name: "zip bomb: the entry expands beyond the cap",
			setup: func(f *fixture, d *Deps) {
				setLimits(t, MaxArchiveBytes, 32<<10, MaxExpandedBytes)
				f.add(testName, "main", "success", time.Hour, archive(t, map[string][]byte{FileName: make([]byte, 1<<20)}))
			},
			reason: TooLarge,
			msg:    []string{"1 MiB, over the 32 KiB cap"},
			blobs:  1,
		},
		{
			name: "zip bomb: a lying size in the zip header",
			setup: func(f *fixture, d *Deps) {
				setLimits(t, MaxArchiveBytes, 32<<10, MaxExpandedBytes)
				f.add(testName, "main", "success", time.Hour, lyingZip(t, make([]byte, 1<<20), 10))
			},
			reason: Corrupt, // archive/zip stops at the claimed size
			msg:    []string{"is damaged"},
			blobs:  1,
		},
		{
			name: "gzip bomb: the file decompresses beyond the cap",
			setup: func(f *fixture, d *Deps) {
				setLimits(t, MaxArchiveBytes, MaxFileBytes, 1<<20)
				f.add(testName, "main", "success", time.Hour, archive(t, map[string][]byte{
					FileName: baselineFile(t, "retrieval-gate/baseline@1", string(make([]byte, 2<<20))),
				}))
			},
			reason: TooLarge,
			msg:    []string{"expands beyond the 1 MiB cap"},
			blobs:  1,
		},
		{
			name: "corrupt zip",
			setup: func(f *fixture, d *Deps) {
				f.add(testName, "main", "success", time.Hour, []byte("PK\x03\x04 this is not really a zip archive"))
			},
			reason: Corrupt,
			msg:    []string{"is not a readable zip archive"},
			blobs:  1,
		},
		{
			name: "damaged zip entry (CRC)",
			setup: func(f *fixture, d *Deps) {
				z := goodZip(t, "crc")
				i := bytes.Index(z, []byte(FileName)) + len(FileName) + 5 // inside the deflated data
				z[i] ^= 0xff
				f.add(testName, "main", "success", time.Hour, z)
			},
			reason: Corrupt,
			msg:    []string{"is damaged"},
			blobs:  1,
		},
		{
			name: "zip without the baseline file",
			setup: func(f *fixture, d *Deps) {
				f.add(testName, "main", "success", time.Hour, archive(t, map[string][]byte{"cases.jsonl": []byte("{}\n"), "out/baseline.jsonl.gz": baselineFile(t, "retrieval-gate/baseline@1", "")}))
			},
			reason: Corrupt,
			msg:    []string{"holds no baseline.jsonl.gz at its root (it holds cases.jsonl, out/baseline.jsonl.gz)"},
			blobs:  1,
		},
		{
			name: "not gzip",
			setup: func(f *fixture, d *Deps) {
				f.add(testName, "main", "success", time.Hour, archive(t, map[string][]byte{FileName: []byte(`{"schema":"retrieval-gate/baseline@1"}` + "\n")}))
			},
			reason: Corrupt,
			msg:    []string{"is not gzip"},
			blobs:  1,
		},
		{
			name: "truncated gzip",
			setup: func(f *fixture, d *Deps) {
				gz := baselineFile(t, "retrieval-gate/baseline@1", strings.Repeat(`{"id":"a"}`+"\n", 1000))
				f.add(testName, "main", "success", time.Hour, archive(t, map[string][]byte{FileName: gz[:len(gz)-12]}))
			},
			reason: Corrupt,
			msg:    []string{"is damaged (unexpected EOF)"},
			blobs:  1,
		},
		{
			name: "another tool's file",
			setup: func(f *fixture, d *Deps) {
				f.add(testName, "main", "success", time.Hour, archive(t, map[string][]byte{FileName: baselineFile(t, "promptfoo/v3", "")}))
			},
			reason: Corrupt,
			msg:    []string{`schema "promptfoo/v3", want retrieval-gate/…`},
			blobs:  1,
		},
		{
			name: "first line not an object",
			setup: func(f *fixture, d *Deps) {
				var buf bytes.Buffer
				zw := gzip.NewWriter(&buf)
				_, _ = zw.Write([]byte("[1,2]\n"))
				_ = zw.Close()
				f.add(testName, "main", "success", time.Hour, archive(t, map[string][]byte{FileName: buf.Bytes()}))
			},
			reason: Corrupt,
			msg:    []string{"is not a JSON object"},
			blobs:  1,
		},
		{
			name:   "not in Actions: no event",
			setup:  func(f *fixture, d *Deps) { d.EventPath = "" },
			reason: NoContext,
			msg:    []string{"GITHUB_EVENT_PATH is unset"},
		},
		{
			name:   "no repository",
			setup:  func(f *fixture, d *Deps) { d.Repo = "" },
			reason: NoContext,
			msg:    []string{"GITHUB_REPOSITORY"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			d := f.deps(prEvent("main", "octo/repo"))
			tt.setup(f, &d)
			found, un := Fetch(context.Background(), d, testName)
			require.Nil(t, found)
			require.NotNil(t, un)
			assert.Equal(t, tt.reason, un.Reason, un.Message)
			for _, m := range tt.msg {
				assert.Contains(t, un.Message, m)
			}
			noSecrets(t, un.Message)
			assert.Len(t, f.srv.BlobRequests(), tt.blobs)
			// Nothing is left behind in Dir.
			entries, err := os.ReadDir(f.dir)
			require.NoError(t, err)
			assert.Empty(t, entries)
		})
	}
}

// lyingZip stores data deflated under FileName with a central directory that
// claims an uncompressed size of claim bytes.
func lyingZip(t *testing.T, data []byte, claim uint64) []byte {
	t.Helper()
	var comp bytes.Buffer
	fw, err := flate.NewWriter(&comp, flate.BestCompression)
	require.NoError(t, err)
	_, err = fw.Write(data)
	require.NoError(t, err)
	require.NoError(t, fw.Close())
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.CreateRaw(&zip.FileHeader{Name: FileName, Method: zip.Deflate, CRC32: 0, CompressedSize64: uint64(comp.Len()), UncompressedSize64: claim})
	require.NoError(t, err)
	_, err = w.Write(comp.Bytes())
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

func setLimits(t *testing.T, archive, file, expanded int64) {
	old := limits
	t.Cleanup(func() { limits = old })
	limits.archive, limits.file, limits.expanded = archive, file, expanded
}

// TestRedirectPolicy pins the policy on its own: Authorization goes only to the
// origin it was set for.
func TestRedirectPolicy(t *testing.T) {
	mk := func(u string) *http.Request {
		r, err := http.NewRequest(http.MethodGet, u, nil)
		require.NoError(t, err)
		r.Header.Set("Authorization", "Bearer "+testToken)
		return r
	}
	tests := []struct {
		from, to string
		keep     bool
		err      string
	}{
		{"https://api.github.com/a", "https://api.github.com/b", true, ""},
		{"https://api.github.com/a", "https://pipelines.actions.githubusercontent.com/b", false, ""},
		{"https://api.github.com/a", "https://evil.api.github.com/b", false, ""},
		{"http://127.0.0.1:8080/a", "http://127.0.0.1:9090/b", false, ""},
		{"https://ghe.example/a", "http://ghe.example/b", false, "https to http"},
	}
	for _, tt := range tests {
		t.Run(tt.from+" -> "+tt.to, func(t *testing.T) {
			req := mk(tt.to)
			err := redirectPolicy(req, []*http.Request{mk(tt.from)})
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.keep, req.Header.Get("Authorization") != "")
		})
	}
	// Back on the API host after a hop elsewhere: still no token.
	req := mk("https://api.github.com/c")
	require.NoError(t, redirectPolicy(req, []*http.Request{mk("https://api.github.com/a"), mk("https://blob.example/b")}))
	assert.Empty(t, req.Header.Get("Authorization"))
	via := make([]*http.Request, maxRedirects)
	for i := range via {
		via[i] = mk("https://api.github.com/a")
	}
	assert.ErrorContains(t, redirectPolicy(mk("https://api.github.com/b"), via), "redirects")
}

// TestFetchInjectedClientKeepsItsTransport checks that Fetch uses the injected
// client (a retrying one, in production) and does not change it.
func TestFetchInjectedClientKeepsItsTransport(t *testing.T) {
	f := newFixture(t)
	f.add(testName, "main", "success", time.Hour, goodZip(t, "ok"))
	var mu sync.Mutex
	var seen []string
	d := f.deps(prEvent("main", "octo/repo"))
	d.HTTP.Transport = roundTripFunc(func(r *http.Request) (*http.Response, error) {
		mu.Lock()
		seen = append(seen, r.URL.Path)
		mu.Unlock()
		return http.DefaultTransport.RoundTrip(r)
	})
	hc := d.HTTP
	found, un := Fetch(context.Background(), d, testName)
	fetched(t, found, un)
	assert.Nil(t, hc.CheckRedirect, "the caller's client is not modified")
	assert.Len(t, seen, 4) // list, run, download (302), blob
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestFetchTempDirAndCleanup(t *testing.T) {
	f := newFixture(t)
	f.add(testName, "main", "success", 8*24*time.Hour, goodZip(t, "ok"))
	d := f.deps(prEvent("main", "octo/repo"))
	d.Dir = ""
	found, un := Fetch(context.Background(), d, testName)
	found = fetched(t, found, un)
	assert.Equal(t, testNow.Add(-8*24*time.Hour), found.CreatedAt, "8 days old")
	dir := filepath.Dir(found.Path)
	assert.NotEqual(t, f.dir, dir)
	require.NoError(t, found.Cleanup())
	_, err := os.Stat(dir)
	assert.True(t, os.IsNotExist(err), "the temporary directory is removed")
}

func TestBranchOf(t *testing.T) {
	tests := []struct {
		name, payload, want, err string
	}{
		{"pull_request", prEvent("main", "octo/repo"), "main", ""},
		{"push", `{"ref":"refs/heads/x","repository":{"default_branch":"trunk"}}`, "trunk", ""},
		{"merge_group", `{"merge_group":{"base_ref":"refs/heads/release"}}`, "release", ""},
		{"pull_request without base", `{"pull_request":{"base":{}},"repository":{"default_branch":"trunk"}}`, "", "names no base branch"},
		{"nothing", `{}`, "", "names no base branch"},
		{"not JSON", `{"pull_request":`, "", "not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, un := branchOf([]byte(tt.payload))
			if tt.err != "" {
				require.NotNil(t, un)
				assert.Equal(t, NoContext, un.Reason)
				assert.Contains(t, un.Message, tt.err)
				return
			}
			require.Nil(t, un)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestNames(t *testing.T) {
	assert.Equal(t, "retrieval-gate-baseline-default", DefaultName("default"))
	assert.Equal(t, "retrieval-gate-baseline-team-a.v2", DefaultName("team/a.v2"))
	require.NoError(t, ValidName(DefaultName("team/a.v2")))
	for _, bad := range []string{"", "a/b", "a:b", "a\nb", `a"b`, "a*", strings.Repeat("x", 257)} {
		require.Error(t, ValidName(bad), bad)
	}
	f := newFixture(t)
	_, un := Fetch(context.Background(), f.deps(prEvent("main", "octo/repo")), "bad\nname::error::x")
	require.NotNil(t, un)
	assert.Equal(t, NoContext, un.Reason)
	noSecrets(t, un.Message)
}

func TestCleanRemovesControlCharacters(t *testing.T) {
	assert.Equal(t, "a b c", github.OneLine("a\nb\rc"))
	assert.Len(t, []rune(github.OneLine(strings.Repeat("é", 300))), 201)
}

// TestFetchDefaultClientRetries uses the default httpretry client: a 502 is
// retried, a rate limit whose reset is beyond the budget is reported at once.
func TestFetchDefaultClientRetries(t *testing.T) {
	old := Policy
	t.Cleanup(func() { Policy = old })
	var waits []time.Duration
	Policy.Sleep = func(ctx context.Context, d time.Duration) error { waits = append(waits, d); return ctx.Err() }
	Policy.Now = func() time.Time { return testNow }

	f := newFixture(t)
	want := f.add(testName, "main", "success", time.Hour, goodZip(t, "ok"))
	d := f.deps(prEvent("main", "octo/repo"))
	d.HTTP = nil
	f.srv.Queue(githubtest.ServerError(http.MethodGet, http.StatusBadGateway))
	found, un := Fetch(context.Background(), d, testName)
	found = fetched(t, found, un)
	assert.Equal(t, want, found.ArtifactID)
	assert.Len(t, waits, 1)
	assert.Empty(t, f.srv.BlobRequests()[0].Auth)

	f.srv.Queue(githubtest.PrimaryRateLimit(http.MethodGet, testNow, time.Hour))
	_, un = Fetch(context.Background(), d, testName)
	require.NotNil(t, un)
	assert.Equal(t, RateLimited, un.Reason, un.Message)
	assert.Contains(t, un.Message, "HTTP 403")
	noSecrets(t, un.Message)
}

// endlessA reads 'a' for ever.
type endlessA struct{}

func (endlessA) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	return len(p), nil
}
