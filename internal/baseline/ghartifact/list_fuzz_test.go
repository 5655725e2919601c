package ghartifact

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos/jsontest"
	"github.com/stretchr/testify/require"
)

// refArtifact is an item of the artifact listing as refEligible reads it.
type refArtifact struct {
	id      int64
	created time.Time
}

// refEligible reads a page of "List artifacts for a repository" apart from
// the client, through encoding/json's token stream: the artifacts that may be
// the baseline of branch main when every run succeeded on a push to main, i.e.
// those whose "name" is name, "expired" is not true, "expires_at" (if any) is
// after now, and whose "workflow_run" has "head_branch" main and equal
// "repository_id" and "head_repository_id", both present and positive, as
// GitHub's ids are (an artifact that does not say whose repository built it
// is not known to be this one's). ok is
// false when the page is not one object whose fields are of GitHub's types,
// or has two keys equal up to case.
func refEligible(data []byte, name string, now time.Time) (out []refArtifact, ok bool) {
	v, ok := jsontest.Strict(data)
	if !ok {
		return nil, false
	}
	field := func(x any, k string) any {
		obj, _ := x.(map[string]any)
		return jsontest.Field(obj, k)
	}
	integer := func(x any) (int64, bool, bool) { // value, present, well typed
		if x == nil {
			return 0, false, true
		}
		n, isNum := x.(json.Number)
		if !isNum {
			return 0, false, false
		}
		i, err := strconv.ParseInt(string(n), 10, 64)
		return i, true, err == nil
	}
	stamp := func(x any) (time.Time, bool) {
		if x == nil {
			return time.Time{}, true
		}
		s, isStr := x.(string)
		if !isStr {
			return time.Time{}, false
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		return t, err == nil
	}
	if _, isObj := v.(map[string]any); !isObj && v != nil {
		return nil, false
	}
	if _, _, good := integer(field(v, "total_count")); !good {
		return nil, false
	}
	list := field(v, "artifacts")
	items, isArr := list.([]any)
	if !isArr && list != nil {
		return nil, false
	}
	for _, it := range items {
		if _, isObj := it.(map[string]any); !isObj && it != nil {
			return nil, false
		}
		id, _, g1 := integer(field(it, "id"))
		_, _, g2 := integer(field(it, "size_in_bytes"))
		created, g3 := stamp(field(it, "created_at"))
		expires, g4 := stamp(field(it, "expires_at"))
		n, isStr := field(it, "name").(string)
		expired, isBool := field(it, "expired").(bool)
		_, urlStr := field(it, "archive_download_url").(string)
		if !g1 || !g2 || !g3 || !g4 || (!isStr && field(it, "name") != nil) || (!isBool && field(it, "expired") != nil) ||
			(!urlStr && field(it, "archive_download_url") != nil) {
			return nil, false
		}
		wr := field(it, "workflow_run")
		if _, isObj := wr.(map[string]any); !isObj && wr != nil {
			return nil, false
		}
		_, _, g5 := integer(field(wr, "id"))
		repo, hasRepo, g6 := integer(field(wr, "repository_id"))
		head, hasHead, g7 := integer(field(wr, "head_repository_id"))
		branch, brStr := field(wr, "head_branch").(string)
		_, shaStr := field(wr, "head_sha").(string)
		if !g5 || !g6 || !g7 || (!brStr && field(wr, "head_branch") != nil) || (!shaStr && field(wr, "head_sha") != nil) {
			return nil, false
		}
		if n == name && wr != nil && !expired && (expires.IsZero() || now.Before(expires)) && branch == "main" &&
			hasRepo && hasHead && repo > 0 && repo == head {
			out = append(out, refArtifact{id, created})
		}
	}
	return out, true
}

// FuzzArtifactList holds the baseline artifact's choice to a reader of GitHub's
// artifact listing written apart from the client (refEligible), every run
// looked up a successful push to main: an artifact is chosen exactly when
// that reader finds one eligible, and it is the newest of them (created_at,
// then id); a listing the reader refuses gives no artifact.
func FuzzArtifactList(f *testing.F) {
	const name = "retrieval-gate-baseline"
	for _, s := range []string{
		`{"total_count":1,"artifacts":[{"id":11,"name":"retrieval-gate-baseline","size_in_bytes":9,"expired":false,"created_at":"2026-01-02T00:00:00Z","expires_at":"2026-04-01T00:00:00Z","archive_download_url":"https://api.github.test/zip","workflow_run":{"id":5,"repository_id":1,"head_repository_id":1,"head_branch":"main","head_sha":"abc"}}]}`,
		`{"artifacts":[{"id":11,"name":"retrieval-gate-baseline","created_at":"2026-01-02T00:00:00Z","workflow_run":{"id":5,"repository_id":1,"head_repository_id":1,"head_branch":"main"}},{"id":12,"name":"retrieval-gate-baseline","created_at":"2026-01-03T00:00:00Z","workflow_run":{"id":6,"repository_id":1,"head_repository_id":1,"head_branch":"main"}}]}`,
		`{"artifacts":[{"id":11,"name":"retrieval-gate-baseline","workflow_run":{"id":5,"repository_id":1,"head_repository_id":2,"head_branch":"main"}}]}`,
		`{"artifacts":[{"id":11,"name":"retrieval-gate-baseline","workflow_run":{"id":5,"head_branch":"main"}}]}`,
		`{"artifacts":[{"id":11,"name":"retrieval-gate-baseline","workflow_run":{"id":5,"repository_id":1,"head_repository_id":2,"HEAD_REPOSITORY_ID":1,"head_branch":"main"}}]}`,
		`{"artifacts":[{"id":11,"name":"retrieval-gate-baseline","expired":true,"workflow_run":{"id":5,"repository_id":1,"head_repository_id":1,"head_branch":"main"}}]}`,
		`{"artifacts":[{"id":11,"name":"other","workflow_run":{"id":5,"repository_id":1,"head_repository_id":1,"head_branch":"main"}}]}`,
		`{"artifacts":[{"id":"11"}]}`,
		`[]`,
	} {
		f.Add([]byte(s))
	}
	now := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, body []byte) {
		hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			answer := body
			if i := strings.LastIndex(r.URL.Path, "/runs/"); i >= 0 {
				answer = []byte(`{"id":` + r.URL.Path[i+len("/runs/"):] + `,"event":"push","status":"completed","conclusion":"success","head_branch":"main"}`)
			}
			return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
				Body: io.NopCloser(bytes.NewReader(answer)), ContentLength: int64(len(answer)), Request: r}, nil
		})}
		api, _ := url.Parse("https://api.github.test")
		c := &client{owner: "o", repo: "r", http: hc, api: api, now: func() time.Time { return now }}
		cand, un := c.find(context.Background(), name, "main")
		want, ok := refEligible(body, name, now)
		if !ok || len(want) == 0 {
			require.Nil(t, cand, "chose artifact %+v from %q", cand, body)
			require.NotNil(t, un)
			return
		}
		require.Nil(t, un, "%q: %v", body, un)
		best := want[0]
		for _, a := range want[1:] {
			if a.created.After(best.created) || a.created.Equal(best.created) && a.id > best.id {
				best = a
			}
		}
		require.Equal(t, best.id, cand.a.ID, "%q", body)
	})
}

// An artifact whose workflow_run does not give repository_id and
// head_repository_id was taken as the repository's own (0 == 0), and one
// with head_repository_id twice (differing in case) as the last one's: both
// are passed over, as a fork's artifact is.
func TestFindPassesOverUnknownRepository(t *testing.T) {
	for _, body := range []string{
		`{"artifacts":[{"id":11,"name":"b","workflow_run":{"id":5,"head_branch":"main"}}]}`,
		`{"artifacts":[{"id":11,"name":"b","workflow_run":{"id":5,"repository_id":0,"head_repository_id":0,"head_branch":"main"}}]}`,
		`{"artifacts":[{"id":11,"name":"b","workflow_run":{"id":5,"repository_id":1,"head_repository_id":2,"HEAD_REPOSITORY_ID":1,"head_branch":"main"}}]}`,
	} {
		hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			answer := []byte(body)
			if strings.Contains(r.URL.Path, "/runs/") {
				answer = []byte(`{"id":5,"event":"push","status":"completed","conclusion":"success","head_branch":"main"}`)
			}
			return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(bytes.NewReader(answer)), ContentLength: int64(len(answer)), Request: r}, nil
		})}
		api, _ := url.Parse("https://api.github.test")
		c := &client{owner: "o", repo: "r", http: hc, api: api, now: time.Now}
		cand, un := c.find(context.Background(), "b", "main")
		require.Nil(t, cand, body)
		require.NotNil(t, un, body)
	}
}
