package ghbranch

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// refContents reads GitHub's contents answer for a file apart from the
// client, through encoding/json's token stream: one object with no key twice
// (exactly or up to case) anywhere, "type" "file", "encoding" "base64",
// "content" base64 with line breaks, "sha" the git blob id of that content.
// It returns the content, or ok false.
func refContents(data []byte) (content []byte, sha string, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, "", false
	}
	fields := map[string]any{}
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil, "", false
		}
		key := k.(string)
		for _, p := range keys {
			if strings.EqualFold(p, key) {
				return nil, "", false
			}
		}
		keys = append(keys, key)
		var raw json.RawMessage
		if dec.Decode(&raw) != nil || !noFoldedKeys(raw) {
			return nil, "", false
		}
		var v any
		if json.Unmarshal(raw, &v) != nil {
			return nil, "", false
		}
		for _, name := range []string{"type", "encoding", "content", "sha"} {
			if strings.EqualFold(name, key) { // encoding/json's match of a field
				fields[name] = v
			}
		}
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, "", false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, "", false
	}
	typ, _ := fields["type"].(string)
	enc, _ := fields["encoding"].(string)
	text, _ := fields["content"].(string)
	sha, _ = fields["sha"].(string)
	if typ != "file" || enc != "base64" {
		return nil, "", false
	}
	b, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(text, "\n", ""))
	if err != nil || BlobSHA(b) != sha {
		return nil, "", false
	}
	return b, sha, true
}

// noFoldedKeys reports that no object of the JSON value raw has two keys
// equal up to case.
func noFoldedKeys(raw []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(raw))
	var walk func() bool
	walk = func() bool {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch tok {
		case json.Delim('{'):
			var keys []string
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return false
				}
				for _, p := range keys {
					if strings.EqualFold(p, k.(string)) {
						return false
					}
				}
				keys = append(keys, k.(string))
				if !walk() {
					return false
				}
			}
			_, err = dec.Token()
			return err == nil
		case json.Delim('['):
			for dec.More() {
				if !walk() {
					return false
				}
			}
			_, err = dec.Token()
			return err == nil
		}
		return true
	}
	return walk()
}

type answerRT func(*http.Request) (*http.Response, error)

func (f answerRT) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// FuzzContentsAnswer holds the history branch's read of a file (GET contents)
// to refContents, a reader of GitHub's answer written apart from the client:
// a file read is one that reader reads too, with the same content and sha;
// the client may refuse more (sizes, sha form), never accept more.
func FuzzContentsAnswer(f *testing.F) {
	content := []byte("{\"schema\":\"retrieval-gate/history@1\"}\n")
	b64 := base64.StdEncoding.EncodeToString(content)
	sha := BlobSHA(content)
	for _, s := range []string{
		`{"type":"file","sha":"` + sha + `","size":38,"encoding":"base64","content":"` + b64[:20] + `\n` + b64[20:] + `"}`,
		`{"type":"file","sha":"` + sha + `","size":38,"encoding":"base64","content":"` + b64 + `","CONTENT":"eA=="}`,
		`{"type":"file","sha":"8ab686eafeb1f44702738c8b0f24f2567c36da6d","SHA":"` + sha + `","size":38,"encoding":"base64","content":"` + b64 + `"}`,
		`{"type":"dir","sha":"` + sha + `"}`,
		`{"type":"file","sha":"8ab686eafeb1f44702738c8b0f24f2567c36da6d","size":38,"encoding":"base64","content":"` + b64 + `"}`,
		`[{"type":"file"}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		hc := &http.Client{Transport: answerRT(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
				Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)), Request: r}, nil
		})}
		api, _ := url.Parse("https://api.github.test")
		c := &Client{api: api, owner: "o", repo: "r", http: hc}
		got, err := c.get(context.Background(), "retrieval-gate-history", "history.jsonl")
		if err != nil {
			return
		}
		want, wantSHA, ok := refContents(body)
		require.True(t, ok, "read a file a strict reader refuses: %q", body)
		require.NotNil(t, got)
		require.Equal(t, want, got.content)
		require.Equal(t, wantSHA, got.sha)
	})
}

// An answer with "sha" and "SHA" was read as the last one's: the file read
// with a sha a strict reader does not see, the sha the next write names as the
// one it replaces. Refused as not GitHub's contents JSON.
func TestGetRefusesFoldedKeys(t *testing.T) {
	content := []byte("x\n")
	body := []byte(`{"type":"file","sha":"8ab686eafeb1f44702738c8b0f24f2567c36da6d","SHA":"` + BlobSHA(content) +
		`","size":2,"encoding":"base64","content":"` + base64.StdEncoding.EncodeToString(content) + `"}`)
	hc := &http.Client{Transport: answerRT(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)), Request: r}, nil
	})}
	api, _ := url.Parse("https://api.github.test")
	_, err := (&Client{api: api, owner: "o", repo: "r", http: hc}).get(context.Background(), "b", "history.jsonl")
	require.ErrorContains(t, err, "the answer is not GitHub's contents JSON")
}
