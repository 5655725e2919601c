package githubtest

import (
	"archive/zip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var now = time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)

func newActions(t *testing.T) *Server {
	t.Helper()
	s := New("octo", "repo", "tok", 7)
	t.Cleanup(s.Close)
	s.SetClock(func() time.Time { return now })
	return s
}

// noFollow is a client that shows redirects instead of following them.
var noFollow = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// reply is the status and header of an answer whose body get has read and closed.
type reply struct {
	StatusCode int
	Header     http.Header
}

func get(t *testing.T, u, auth string) (reply, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	require.NoError(t, err)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := noFollow.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return reply{StatusCode: resp.StatusCode, Header: resp.Header}, string(body)
}

func TestListArtifacts(t *testing.T) {
	s := newActions(t)
	run := s.AddRun(Run{HeadBranch: "main", HeadSHA: "abc", Conclusion: "success"})
	fork := s.AddRun(Run{HeadBranch: "main", HeadSHA: "def", Conclusion: "success", Event: "pull_request", HeadRepo: "mallory/repo"})
	for i := range 5 {
		s.AddArtifact(Artifact{Name: "base", RunID: run, Zip: []byte("zip"), CreatedAt: now.Add(-time.Duration(i) * time.Hour)})
	}
	s.AddArtifact(Artifact{Name: "other", RunID: fork, Zip: []byte("zipzip"), CreatedAt: now})
	s.AddArtifact(Artifact{Name: "base", RunID: run, Zip: []byte("old"), CreatedAt: now.Add(-100 * 24 * time.Hour)})

	resp, body := get(t, s.APIURL()+"/repos/octo/repo/actions/artifacts?name=base&per_page=2&page=2", "Bearer tok")
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	var page struct {
		TotalCount int `json:"total_count"`
		Artifacts  []struct {
			ID          int64  `json:"id"`
			Name        string `json:"name"`
			Size        int64  `json:"size_in_bytes"`
			Expired     bool   `json:"expired"`
			CreatedAt   string `json:"created_at"`
			ExpiresAt   string `json:"expires_at"`
			DownloadURL string `json:"archive_download_url"`
			WorkflowRun struct {
				ID               int64  `json:"id"`
				RepositoryID     int64  `json:"repository_id"`
				HeadRepositoryID int64  `json:"head_repository_id"`
				HeadBranch       string `json:"head_branch"`
				HeadSHA          string `json:"head_sha"`
			} `json:"workflow_run"`
		} `json:"artifacts"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &page))
	assert.Equal(t, 6, page.TotalCount)
	require.Len(t, page.Artifacts, 2)
	a := page.Artifacts[0]
	assert.Equal(t, now.Add(-2*time.Hour).Format(time.RFC3339), a.CreatedAt, "newest first: page 2 starts with the third")
	assert.Equal(t, now.Add(-2*time.Hour+ArtifactRetention).Format(time.RFC3339), a.ExpiresAt)
	assert.Equal(t, int64(3), a.Size)
	assert.False(t, a.Expired)
	assert.Equal(t, fmt.Sprintf("%s/repos/octo/repo/actions/artifacts/%d/zip", s.APIURL(), a.ID), a.DownloadURL)
	assert.Equal(t, run, a.WorkflowRun.ID)
	assert.Equal(t, RepositoryID, a.WorkflowRun.RepositoryID)
	assert.Equal(t, RepositoryID, a.WorkflowRun.HeadRepositoryID)
	assert.Equal(t, "main", a.WorkflowRun.HeadBranch)
	assert.Equal(t, "abc", a.WorkflowRun.HeadSHA)

	link := resp.Header.Get("Link")
	for _, rel := range []string{"prev", "first", "next", "last"} {
		assert.Contains(t, link, `rel="`+rel+`"`)
	}
	assert.Contains(t, link, "page=3")
	assert.Contains(t, link, "name=base")
	assert.Equal(t, "5000", resp.Header.Get("X-RateLimit-Limit"))
	assert.NotEmpty(t, resp.Header.Get("X-RateLimit-Remaining"))

	// The last page: expired, still listed; no next link.
	resp, body = get(t, s.APIURL()+"/repos/octo/repo/actions/artifacts?name=base&per_page=2&page=3", "Bearer tok")
	require.NoError(t, json.Unmarshal([]byte(body), &page))
	require.Len(t, page.Artifacts, 2)
	assert.True(t, page.Artifacts[1].Expired)
	assert.NotContains(t, resp.Header.Get("Link"), `rel="next"`)

	// Without a name: every artifact; the fork run's head repository has its own id.
	_, body = get(t, s.APIURL()+"/repos/octo/repo/actions/artifacts", "Bearer tok")
	require.NoError(t, json.Unmarshal([]byte(body), &page))
	assert.Equal(t, 7, page.TotalCount)
	assert.Equal(t, "other", page.Artifacts[0].Name)
	assert.NotEqual(t, RepositoryID, page.Artifacts[0].WorkflowRun.HeadRepositoryID)
}

func TestGetRun(t *testing.T) {
	s := newActions(t)
	done := s.AddRun(Run{Name: "baseline", HeadBranch: "main", HeadSHA: "abc", Conclusion: "failure"})
	running := s.AddRun(Run{HeadBranch: "main", Event: "workflow_dispatch"})

	_, body := get(t, fmt.Sprintf("%s/repos/octo/repo/actions/runs/%d", s.APIURL(), done), "Bearer tok")
	var r map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &r))
	assert.Equal(t, "completed", r["status"])
	assert.Equal(t, "failure", r["conclusion"])
	assert.Equal(t, "push", r["event"])
	assert.Equal(t, "main", r["head_branch"])
	assert.Equal(t, "octo/repo", r["head_repository"].(map[string]any)["full_name"])

	_, body = get(t, fmt.Sprintf("%s/repos/octo/repo/actions/runs/%d", s.APIURL(), running), "Bearer tok")
	require.NoError(t, json.Unmarshal([]byte(body), &r))
	assert.Equal(t, "in_progress", r["status"])
	assert.Nil(t, r["conclusion"], "null until completed")
	assert.Equal(t, "workflow_dispatch", r["event"])

	resp, _ := get(t, s.APIURL()+"/repos/octo/repo/actions/runs/1", "Bearer tok")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
}

func TestDownloadArtifact(t *testing.T) {
	s := newActions(t)
	var leaked []string
	s.OnBlobAuthorization(func(a string) { leaked = append(leaked, a) })
	run := s.AddRun(Run{HeadBranch: "main", Conclusion: "success"})
	id := s.AddArtifact(Artifact{Name: "base", RunID: run, Zip: []byte("PK-archive")})
	gone := s.AddArtifact(Artifact{Name: "base", RunID: run, Zip: []byte("x"), CreatedAt: now.Add(-91 * 24 * time.Hour)})

	resp, _ := get(t, fmt.Sprintf("%s/repos/octo/repo/actions/artifacts/%d/zip", s.APIURL(), id), "Bearer tok")
	require.Equal(t, http.StatusFound, resp.StatusCode)
	loc, err := url.Parse(resp.Header.Get("Location"))
	require.NoError(t, err)
	api, _ := url.Parse(s.URL)
	assert.NotEqual(t, api.Host, loc.Host, "the signed URL is on another host")
	assert.True(t, strings.HasPrefix(loc.String(), s.BlobURL()))
	assert.NotEmpty(t, loc.Query().Get("sig"))

	resp, body := get(t, loc.String(), "")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "PK-archive", body)
	assert.Empty(t, leaked)

	// The storage host refuses a request that carries the API token.
	resp, body = get(t, loc.String(), "Bearer tok")
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	assert.Contains(t, body, "AuthenticationFailed")
	assert.Equal(t, []string{"Bearer tok"}, leaked)

	// A forged or stale signature is refused too.
	q := loc.Query()
	q.Set("sig", "0000")
	forged := *loc
	forged.RawQuery = q.Encode()
	resp, _ = get(t, forged.String(), "")
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	s.SetClock(func() time.Time { return now.Add(SignedURLValidity) })
	resp, _ = get(t, loc.String(), "")
	assert.Equal(t, http.StatusForbidden, resp.StatusCode, "valid for one minute")
	s.SetClock(func() time.Time { return now })

	resp, body = get(t, fmt.Sprintf("%s/repos/octo/repo/actions/artifacts/%d/zip", s.APIURL(), gone), "Bearer tok")
	assert.Equal(t, http.StatusGone, resp.StatusCode)
	assert.Contains(t, body, "Artifact has expired")

	resp, _ = get(t, s.APIURL()+"/repos/octo/repo/actions/artifacts/1/zip", "Bearer tok")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	resp, _ = get(t, fmt.Sprintf("%s/repos/octo/repo/actions/artifacts/%d/tar", s.APIURL(), id), "Bearer tok")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode, "the archive format must be zip")
	resp, _ = get(t, fmt.Sprintf("%s/repos/octo/other/actions/artifacts/%d/zip", s.APIURL(), id), "Bearer tok")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
}

func TestActionsPermissions(t *testing.T) {
	s := newActions(t)
	run := s.AddRun(Run{HeadBranch: "main", Conclusion: "success"})
	id := s.AddArtifact(Artifact{Name: "base", RunID: run, Zip: []byte("zip")})
	s.DenyActions(true)
	for _, p := range []string{
		"/repos/octo/repo/actions/artifacts",
		fmt.Sprintf("/repos/octo/repo/actions/artifacts/%d/zip", id),
		fmt.Sprintf("/repos/octo/repo/actions/runs/%d", run),
	} {
		resp, body := get(t, s.APIURL()+p, "Bearer tok")
		assert.Equal(t, http.StatusForbidden, resp.StatusCode, p)
		var e struct {
			Message string `json:"message"`
			Doc     string `json:"documentation_url"`
		}
		require.NoError(t, json.Unmarshal([]byte(body), &e))
		assert.Equal(t, "Resource not accessible by integration", e.Message)
		assert.Contains(t, e.Doc, "https://docs.github.com/rest/actions/")
	}
	resp, _ := get(t, s.APIURL()+"/repos/octo/repo/actions/artifacts", "Bearer nope")
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)

	// The comment API is unaffected.
	resp, _ = get(t, s.APIURL()+"/repos/octo/repo/issues/7/comments", "Bearer tok")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}

func TestArtifactSpec(t *testing.T) {
	s := newActions(t)
	file := filepath.Join(t.TempDir(), "baseline.jsonl.gz")
	require.NoError(t, os.WriteFile(file, []byte("gz"), 0o644))
	var specs artifactSpecs
	require.NoError(t, specs.Set("rg-base="+file))
	require.NoError(t, specs.Set("rg-base="+file+",branch=dev,conclusion=none,event=workflow_dispatch,age=48h,fork=mallory/repo,expired"))
	for _, bad := range []string{"nofile", "=x", "a=b,age=soon", "a=b,colour=red"} {
		require.Error(t, specs.Set(bad), bad)
	}
	for _, sp := range specs {
		require.NoError(t, sp.add(s))
	}
	require.Error(t, artifactSpec{file: filepath.Join(t.TempDir(), "missing")}.add(s))

	_, body := get(t, s.APIURL()+"/repos/octo/repo/actions/artifacts?name=rg-base", "Bearer tok")
	var page struct {
		Artifacts []struct {
			ID          int64 `json:"id"`
			Expired     bool  `json:"expired"`
			WorkflowRun struct {
				ID               int64  `json:"id"`
				HeadBranch       string `json:"head_branch"`
				HeadRepositoryID int64  `json:"head_repository_id"`
			} `json:"workflow_run"`
		} `json:"artifacts"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &page))
	require.Len(t, page.Artifacts, 2)
	first, second := page.Artifacts[0], page.Artifacts[1]
	assert.Equal(t, "main", first.WorkflowRun.HeadBranch)
	assert.False(t, first.Expired)
	assert.Equal(t, RepositoryID, first.WorkflowRun.HeadRepositoryID)
	assert.Equal(t, "dev", second.WorkflowRun.HeadBranch)
	assert.True(t, second.Expired)
	assert.NotEqual(t, RepositoryID, second.WorkflowRun.HeadRepositoryID)

	// The archive holds the file under its base name.
	resp, _ := get(t, fmt.Sprintf("%s/repos/octo/repo/actions/artifacts/%d/zip", s.APIURL(), first.ID), "Bearer tok")
	resp, body = get(t, resp.Header.Get("Location"), "")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	zr, err := zip.NewReader(strings.NewReader(body), int64(len(body)))
	require.NoError(t, err)
	require.Len(t, zr.File, 1)
	assert.Equal(t, "baseline.jsonl.gz", zr.File[0].Name)

	_, body = get(t, fmt.Sprintf("%s/repos/octo/repo/actions/runs/%d", s.APIURL(), second.WorkflowRun.ID), "Bearer tok")
	var r map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &r))
	assert.Nil(t, r["conclusion"])
	assert.Equal(t, "workflow_dispatch", r["event"])
	assert.Equal(t, now.Add(-48*time.Hour).Format(time.RFC3339), r["created_at"])
}
