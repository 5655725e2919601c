package githubtest

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func call(t *testing.T, s *Server, method, path, accept, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, s.APIURL()+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer tok")
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// The contents endpoints follow GitHub's semantics (see contents.go).
func TestContents(t *testing.T) {
	s := New("octo", "repo", "tok")
	defer s.Close()
	assert.Equal(t, "ce013625030ba8dba906f756967f9e9ca394464a", BlobSHA([]byte("hello\n")), "git hash-object")

	st, body := call(t, s, "GET", "/repos/octo/repo/contents/h.jsonl?ref=hist", "", "")
	assert.Equal(t, 404, st)
	assert.Contains(t, body, "No commit found for the ref hist")
	st, body = call(t, s, "PUT", "/repos/octo/repo/contents/h.jsonl", "", `{"message":"m","content":"aGVsbG8K","branch":"hist"}`)
	assert.Equal(t, 404, st)
	assert.Contains(t, body, "Branch hist not found")

	big := strings.Repeat("0123456789", 20) + "\n"
	s.PutFile("hist", "h.jsonl", []byte(big))
	st, body = call(t, s, "GET", "/repos/octo/repo/contents/h.jsonl?ref=hist", "", "")
	require.Equal(t, 200, st)
	var f struct{ Type, SHA, Encoding, Content string }
	require.NoError(t, json.Unmarshal([]byte(body), &f))
	assert.Equal(t, "file", f.Type)
	assert.Equal(t, BlobSHA([]byte(big)), f.SHA)
	lines := strings.Split(strings.TrimSuffix(f.Content, "\n"), "\n")
	require.Greater(t, len(lines), 1)
	for _, l := range lines[:len(lines)-1] {
		assert.Len(t, l, 60, "wrapped as GitHub wraps it")
	}
	dec, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(f.Content, "\n", ""))
	require.NoError(t, err)
	assert.Equal(t, big, string(dec))
	st, _ = call(t, s, "GET", "/repos/octo/repo/contents/missing?ref=hist", "", "")
	assert.Equal(t, 404, st)

	// Over the inline limit: 403 too_large by default, "none" with the object type, bytes with raw.
	s.SetContentsInlineMax(100)
	st, body = call(t, s, "GET", "/repos/octo/repo/contents/h.jsonl?ref=hist", "application/vnd.github+json", "")
	assert.Equal(t, 403, st)
	assert.Contains(t, body, "too_large")
	_, body = call(t, s, "GET", "/repos/octo/repo/contents/h.jsonl?ref=hist", "application/vnd.github.object+json", "")
	require.NoError(t, json.Unmarshal([]byte(body), &f))
	assert.Equal(t, "none", f.Encoding)
	assert.Empty(t, f.Content)
	_, body = call(t, s, "GET", "/repos/octo/repo/contents/h.jsonl?ref=hist", "application/vnd.github.raw+json", "")
	assert.Equal(t, big, body)
	_, body = call(t, s, "GET", "/repos/octo/repo/git/blobs/"+f.SHA, "", "")
	assert.Contains(t, body, `"encoding":"base64"`)

	// Writes: 422 without sha, 409 with a stale one, 200 with the current one, 201 for a new file.
	put := func(sha string) (int, string) {
		b := `{"message":"m","content":"aGVsbG8K","branch":"hist"`
		if sha != "" {
			b += `,"sha":"` + sha + `"`
		}
		return call(t, s, "PUT", "/repos/octo/repo/contents/h.jsonl", "", b+"}")
	}
	st, body = put("")
	assert.Equal(t, 422, st)
	assert.Contains(t, body, `\"sha\" wasn't supplied.`)
	st, body = put(strings.Repeat("a", 40))
	assert.Equal(t, 409, st)
	assert.Contains(t, body, "h.jsonl does not match aaaa")
	st, _ = put(f.SHA)
	assert.Equal(t, 200, st)
	got, _ := s.File("hist", "h.jsonl")
	assert.Equal(t, "hello\n", string(got))
	st, _ = call(t, s, "PUT", "/repos/octo/repo/contents/new.txt", "", `{"message":"m","content":"aGVsbG8K","branch":"hist"}`)
	assert.Equal(t, 201, st)
	st, _ = call(t, s, "PUT", "/repos/octo/repo/contents/new2.txt", "", `{"message":"m","content":"%%%","branch":"hist"}`)
	assert.Equal(t, 422, st)
	assert.Len(t, s.Commits("hist"), 3)

	// Git data: an orphan branch; a second ref of the same name is 422.
	_, body = call(t, s, "POST", "/repos/octo/repo/git/blobs", "", `{"content":"aGk=","encoding":"base64"}`)
	var obj struct{ SHA string }
	require.NoError(t, json.Unmarshal([]byte(body), &obj))
	assert.Equal(t, BlobSHA([]byte("hi")), obj.SHA)
	_, body = call(t, s, "POST", "/repos/octo/repo/git/trees", "", `{"tree":[{"path":"a.txt","mode":"100644","type":"blob","sha":"`+obj.SHA+`"}]}`)
	require.NoError(t, json.Unmarshal([]byte(body), &obj))
	st, body = call(t, s, "POST", "/repos/octo/repo/git/commits", "", `{"message":"first","tree":"`+obj.SHA+`","parents":[]}`)
	assert.Equal(t, 201, st)
	require.NoError(t, json.Unmarshal([]byte(body), &obj))
	st, _ = call(t, s, "POST", "/repos/octo/repo/git/refs", "", `{"ref":"refs/heads/orphan","sha":"`+obj.SHA+`"}`)
	assert.Equal(t, 201, st)
	st, body = call(t, s, "POST", "/repos/octo/repo/git/refs", "", `{"ref":"refs/heads/orphan","sha":"`+obj.SHA+`"}`)
	assert.Equal(t, 422, st)
	assert.Contains(t, body, "Reference already exists")
	assert.Equal(t, []string{"a.txt"}, s.Files("orphan"))
	assert.Equal(t, 0, s.Commits("orphan")[0].Parents)
	st, _ = call(t, s, "GET", "/repos/octo/repo/git/ref/heads/orphan", "", "")
	assert.Equal(t, 200, st)
	st, _ = call(t, s, "GET", "/repos/octo/repo/git/ref/heads/nope", "", "")
	assert.Equal(t, 404, st)

	// A read-only token reads but does not write.
	s.ReadOnly = true
	st, body = put("")
	assert.Equal(t, 403, st)
	assert.Contains(t, body, "Resource not accessible by integration")
	st, _ = call(t, s, "POST", "/repos/octo/repo/git/trees", "", `{"tree":[]}`)
	assert.Equal(t, 403, st)
	st, _ = call(t, s, "GET", "/repos/octo/repo/contents/new.txt?ref=hist", "", "")
	assert.Equal(t, 200, st)
	st, _ = call(t, s, "GET", "/repos/octo/other/contents/new.txt?ref=hist", "", "")
	assert.Equal(t, 404, st)
}
