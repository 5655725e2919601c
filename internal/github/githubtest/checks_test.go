package githubtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const sha = "0123456789abcdef0123456789abcdef01234567"

func checkCall(t *testing.T, s *Server, method, path, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, s.APIURL()+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer tok")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var v map[string]any
	_ = json.Unmarshal(raw, &v)
	return resp.StatusCode, v
}

func annotations(n int) string {
	var a []string
	for i := range n {
		a = append(a, fmt.Sprintf(`{"path":"f","start_line":%d,"end_line":%d,"annotation_level":"failure","message":"m%d"}`, i+1, i+1, i))
	}
	return "[" + strings.Join(a, ",") + "]"
}

// The documented rules of "REST API endpoints for check runs".
func TestCheckRunRules(t *testing.T) {
	s := New("octo", "repo", "tok")
	defer s.Close()
	create := func(body string) (int, map[string]any) {
		return checkCall(t, s, "POST", "/repos/octo/repo/check-runs", body)
	}
	tests := []struct {
		name, body string
		status     int
	}{
		{"no name", `{"head_sha":"` + sha + `"}`, 422},
		{"no head_sha", `{"name":"n"}`, 422},
		{"completed without conclusion", `{"name":"n","head_sha":"` + sha + `","status":"completed"}`, 422},
		{"unknown conclusion", `{"name":"n","head_sha":"` + sha + `","conclusion":"passed"}`, 422},
		{"output without summary", `{"name":"n","head_sha":"` + sha + `","output":{"title":"t"}}`, 422},
		{"51 annotations", `{"name":"n","head_sha":"` + sha + `","output":{"title":"t","summary":"s","annotations":` + annotations(51) + `}}`, 422},
		{"summary over 65,535 characters", `{"name":"n","head_sha":"` + sha + `","output":{"title":"t","summary":"` + strings.Repeat("é", MaxCheckText+1) + `"}}`, 422},
		{"bad level", `{"name":"n","head_sha":"` + sha + `","output":{"title":"t","summary":"s","annotations":[{"path":"f","start_line":1,"end_line":1,"annotation_level":"error","message":"m"}]}}`, 422},
		{"columns across lines", `{"name":"n","head_sha":"` + sha + `","output":{"title":"t","summary":"s","annotations":[{"path":"f","start_line":1,"end_line":2,"start_column":1,"annotation_level":"notice","message":"m"}]}}`, 422},
		{"50 annotations", `{"name":"n","head_sha":"` + sha + `","conclusion":"success","output":{"title":"t","summary":"` + strings.Repeat("é", MaxCheckText) + `","annotations":` + annotations(50) + `}}`, 201},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, _ := create(tt.body)
			assert.Equal(t, tt.status, st)
		})
	}
	runs := s.CheckRuns()
	require.Len(t, runs, 1)
	assert.Equal(t, "completed", runs[0].Status)

	// An update appends annotations; a listing for the commit finds the run by name.
	st, _ := checkCall(t, s, "PATCH", fmt.Sprintf("/repos/octo/repo/check-runs/%d", runs[0].ID), `{"name":"n","output":{"title":"t2","summary":"s2","annotations":`+annotations(20)+`}}`)
	require.Equal(t, 200, st)
	assert.Len(t, s.CheckRuns()[0].Annotations, 70)
	st, list := checkCall(t, s, "GET", "/repos/octo/repo/commits/"+sha+"/check-runs?check_name=n", "")
	require.Equal(t, 200, st)
	assert.EqualValues(t, 1, list["total_count"])
	st, list = checkCall(t, s, "GET", "/repos/octo/repo/commits/"+sha+"/check-runs?check_name=other", "")
	require.Equal(t, 200, st)
	assert.EqualValues(t, 0, list["total_count"])

	// Without checks: write: 403 on writes, reads allowed.
	s.DenyChecks(true)
	st, v := create(`{"name":"n","head_sha":"` + sha + `"}`)
	assert.Equal(t, 403, st)
	assert.Equal(t, "Resource not accessible by integration", v["message"])
	st, _ = checkCall(t, s, "GET", "/repos/octo/repo/commits/"+sha+"/check-runs", "")
	assert.Equal(t, 200, st)
}
