package glartifact

import (
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/baseline/ciartifact"
	"github.com/retrieval-gate/retrieval-gate/internal/gitlab"
	"github.com/retrieval-gate/retrieval-gate/internal/gitlab/gitlabtest"
	"github.com/retrieval-gate/retrieval-gate/internal/httpretry"
)

func gz(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	_, err := zw.Write([]byte(s))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return b.Bytes()
}

func TestAuto(t *testing.T) {
	good := gz(t, `{"schema":"retrieval-gate/baseline@1"}`+"\n"+`{"id":"c1"}`+"\n")
	tests := []struct {
		name     string
		pipeline *gitlabtest.Pipeline
		ci       func(*gitlab.CI)
		code     string
		detail   string
	}{
		{"found", &gitlabtest.Pipeline{Ref: "main", Status: "success", Files: map[string]map[string][]byte{"retrieval-gate-baseline-default": {"baseline.jsonl.gz": good}}}, nil, "", ""},
		{"the target branch first", &gitlabtest.Pipeline{Ref: "main", Status: "success", Files: map[string]map[string][]byte{"retrieval-gate-baseline-default": {"baseline.jsonl.gz": good}}},
			func(c *gitlab.CI) { c.DefaultBranch = "develop" }, "", ""},
		{"no successful pipeline", &gitlabtest.Pipeline{Ref: "main", Status: "failed", Files: map[string]map[string][]byte{"retrieval-gate-baseline-default": {"baseline.jsonl.gz": good}}}, nil,
			string(ciartifact.NoArtifact), "no baseline.jsonl.gz from a job retrieval-gate-baseline-default on the latest successful pipeline of main"},
		{"not gzip", &gitlabtest.Pipeline{Ref: "main", Status: "success", Files: map[string]map[string][]byte{"retrieval-gate-baseline-default": {"baseline.jsonl.gz": []byte("plain")}}}, nil,
			string(ciartifact.Corrupt), "the baseline.jsonl.gz of job retrieval-gate-baseline-default on main is not gzip"},
		{"another schema", &gitlabtest.Pipeline{Ref: "main", Status: "success", Files: map[string]map[string][]byte{"retrieval-gate-baseline-default": {"baseline.jsonl.gz": gz(t, `{"schema":"other"}`+"\n")}}}, nil,
			string(ciartifact.Corrupt), "is not a retrieval-gate baseline"},
		{"a token GitLab rejects", nil, func(c *gitlab.CI) { c.JobToken = "job-WRONG-token" }, string(ciartifact.Unauthorized), "GitLab answered 401"},
		{"no branch", nil, func(c *gitlab.CI) { c.TargetBranch = "" }, string(ciartifact.NoContext), "the base branch is unknown"},
		{"no project", nil, func(c *gitlab.CI) { c.ProjectID = "" }, string(ciartifact.NoContext), "the project is unknown: CI_PROJECT_ID (or CI_PROJECT_PATH) is not set"},
		{"no API URL", nil, func(c *gitlab.CI) { c.APIURL = "" }, string(ciartifact.NoContext), "the project is unknown: CI_API_V4_URL (or CI_SERVER_URL) is not set"},
		{"CI_SERVER_URL without a scheme", nil, func(c *gitlab.CI) { c.APIURL, c.APIURLVar = "gitlab.example.com/api/v4", "CI_SERVER_URL" }, string(ciartifact.NoContext),
			`the project is unknown: CI_SERVER_URL "gitlab.example.com/api/v4" is not an http(s) URL`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := gitlabtest.New("42", "", "")
			defer srv.Close()
			srv.JobToken = "job-TOKEN-0123"
			if tt.pipeline != nil {
				srv.AddPipeline(*tt.pipeline)
			}
			ci := gitlab.CI{InCI: true, APIURL: srv.APIURL(), ProjectID: "42", TargetBranch: "main", JobToken: "job-TOKEN-0123"}
			if tt.ci != nil {
				tt.ci(&ci)
			}
			found, why := Auto(context.Background(), ci, "retrieval-gate-baseline-default", httpretry.Policy{Attempts: 1, Timeout: gitlab.DefaultPolicy.Timeout, Budget: gitlab.DefaultPolicy.Budget})
			if tt.code != "" {
				require.Nil(t, found)
				require.NotNil(t, why)
				assert.Equal(t, tt.code, why.Code)
				assert.Contains(t, why.Detail, tt.detail)
				assert.NotContains(t, why.Detail, "job-TOKEN")
				return
			}
			require.Nil(t, why)
			data, err := os.ReadFile(found.Path)
			require.NoError(t, err)
			assert.Equal(t, good, data)
			assert.Equal(t, "retrieval-gate/baseline@1", found.Schema)
			assert.Equal(t, map[string]string{"gitlab_job": "retrieval-gate-baseline-default", "gitlab_ref": "main"}, found.Source())
			require.NoError(t, found.Cleanup())
			_, err = os.Stat(found.Path)
			assert.True(t, os.IsNotExist(err))
		})
	}
}

// A token without a scope that reads the API (a read_repository token in
// GITLAB_TOKEN) is 403 insufficient_scope (GitLab's "Personal access tokens"):
// forbidden, with GitLab's words, never a corrupt artifact.
func TestAutoInsufficientScope(t *testing.T) {
	srv := gitlabtest.New("42", "glpat-readREPOSITORY0123456789", "bot")
	defer srv.Close()
	srv.Queue(gitlabtest.Fault{Method: "GET", Status: 403,
		Body: `{"error":"insufficient_scope","error_description":"The request requires higher privileges than provided by the access token.","scope":"api read_api"}`})
	ci := gitlab.CI{InCI: true, APIURL: srv.APIURL(), ProjectID: "42", TargetBranch: "main", Token: "glpat-readREPOSITORY0123456789"}
	found, why := Auto(context.Background(), ci, "retrieval-gate-baseline-default", httpretry.Policy{Attempts: 1, Timeout: gitlab.DefaultPolicy.Timeout, Budget: gitlab.DefaultPolicy.Budget})
	require.Nil(t, found)
	require.NotNil(t, why)
	assert.Equal(t, string(ciartifact.Forbidden), why.Code)
	assert.Contains(t, why.Detail, "GitLab answered 403 insufficient_scope: The request requires higher privileges than provided by the access token.")
	assert.NotContains(t, why.Detail, "glpat-readREPOSITORY")
}
