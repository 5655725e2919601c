package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// gitlabCI keeps what the publisher needs to name a wrong variable: the one
// the API URL and the project id were read from, and a CI_MERGE_REQUEST_IID
// that is set but not an iid (GitLab's "Predefined CI/CD variables"), which
// is no merge request rather than a pipeline without one.
func TestGitLabCIVariables(t *testing.T) {
	tests := []struct {
		name                string
		env                 map[string]string
		apiURL, apiURLVar   string
		project, projectVar string
		iid                 int
		badIID              string
	}{
		{"a merge-request pipeline", map[string]string{"CI_API_V4_URL": "https://gl.example/api/v4", "CI_PROJECT_ID": "42", "CI_MERGE_REQUEST_IID": "7"},
			"https://gl.example/api/v4", "", "42", "", 7, ""},
		{"CI_SERVER_URL alone", map[string]string{"CI_SERVER_URL": "https://gl.example/", "CI_PROJECT_ID": "42"},
			"https://gl.example/api/v4", "CI_SERVER_URL", "42", "", 0, ""},
		{"a fork's merge request", map[string]string{"CI_API_V4_URL": "https://gl.example/api/v4", "CI_PROJECT_ID": "99", "CI_MERGE_REQUEST_PROJECT_ID": "42", "CI_MERGE_REQUEST_IID": " 7 "},
			"https://gl.example/api/v4", "", "42", "CI_MERGE_REQUEST_PROJECT_ID", 7, ""},
		// A project named by its full path (GitLab's REST API, "Namespaced
		// paths"): CI_PROJECT_PATH when CI_PROJECT_ID is not set, and the merge
		// request's CI_MERGE_REQUEST_PROJECT_PATH likewise.
		{"CI_PROJECT_PATH alone", map[string]string{"CI_SERVER_URL": "https://gl.example", "CI_PROJECT_PATH": "group/sub/proj"},
			"https://gl.example/api/v4", "CI_SERVER_URL", "group/sub/proj", "CI_PROJECT_PATH", 0, ""},
		{"CI_PROJECT_ID wins over CI_PROJECT_PATH", map[string]string{"CI_PROJECT_ID": "42", "CI_PROJECT_PATH": "group/proj"},
			"", "", "42", "", 0, ""},
		{"the merge request's project path", map[string]string{"CI_PROJECT_PATH": "fork/proj", "CI_MERGE_REQUEST_PROJECT_PATH": "group/proj", "CI_MERGE_REQUEST_IID": "7"},
			"", "", "group/proj", "CI_MERGE_REQUEST_PROJECT_PATH", 7, ""},
		{"the merge request's project id wins over its path", map[string]string{"CI_PROJECT_ID": "99", "CI_MERGE_REQUEST_PROJECT_ID": "42", "CI_MERGE_REQUEST_PROJECT_PATH": "group/proj"},
			"", "", "42", "CI_MERGE_REQUEST_PROJECT_ID", 0, ""},
		{"an iid that is not one", map[string]string{"CI_PROJECT_ID": "42", "CI_MERGE_REQUEST_IID": "!7"},
			"", "", "42", "", 0, "!7"},
		{"iid 0", map[string]string{"CI_MERGE_REQUEST_IID": "0"}, "", "", "", "", 0, "0"},
		{"no iid", map[string]string{"CI_MERGE_REQUEST_IID": "  "}, "", "", "", "", 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := gitlabCI(func(k string) string { return tt.env[k] })
			assert.Equal(t, tt.apiURL, c.APIURL)
			assert.Equal(t, tt.apiURLVar, c.APIURLVar)
			assert.Equal(t, tt.project, c.ProjectID)
			assert.Equal(t, tt.projectVar, c.ProjectIDVar)
			assert.Equal(t, tt.iid, c.MRIID)
			assert.Equal(t, tt.badIID, c.BadMRIID)
		})
	}
}
