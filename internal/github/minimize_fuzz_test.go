package github

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos/jsontest"
	"github.com/stretchr/testify/require"
)

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// refMinimized reads a 200 answer to the minimizeComment mutation apart from
// the client, through encoding/json's token stream: the comment is minimized
// when the answer is one JSON object with no key twice (exactly or up to
// case) in any object, every field the client reads of its type or null
// ("message" a string; "errors" a list of objects whose "type" and "message"
// are strings, and empty; "data" an object), and
// data.minimizeComment.minimizedComment.isMinimized is true.
func refMinimized(data []byte) bool {
	v, ok := jsontest.Strict(data)
	if !ok {
		return false
	}
	field := func(x any, name string) any {
		obj, _ := x.(map[string]any)
		return jsontest.Field(obj, name)
	}
	isStr := func(x any) bool { _, ok := x.(string); return ok || x == nil }
	isObj := func(x any) bool { _, ok := x.(map[string]any); return ok || x == nil }
	if !isObj(v) || !isStr(field(v, "message")) {
		return false
	}
	if errs := field(v, "errors"); errs != nil {
		list, ok := errs.([]any)
		if !ok {
			return false
		}
		for _, e := range list {
			if !isObj(e) || !isStr(field(e, "type")) || !isStr(field(e, "message")) {
				return false
			}
		}
		if len(list) > 0 {
			return false
		}
	}
	d := field(v, "data")
	m := field(d, "minimizeComment")
	mc := field(m, "minimizedComment")
	if !isObj(d) || !isObj(m) || !isObj(mc) {
		return false
	}
	is, ok := field(mc, "isMinimized").(bool)
	return ok && is
}

// FuzzMinimizeAnswer holds MinimizeComment to refMinimized, a reader of
// GitHub's GraphQL answer written apart from it: the comment is reported
// hidden exactly when that reader finds it minimized; otherwise the error is
// an *APIError of op "hide".
func FuzzMinimizeAnswer(f *testing.F) {
	for _, s := range []string{
		`{"data":{"minimizeComment":{"minimizedComment":{"isMinimized":true}}}}`,
		`{"data":{"minimizeComment":{"minimizedComment":{"isMinimized":false}}}}`,
		`{"data":{"minimizeComment":null},"errors":[{"type":"NOT_FOUND","message":"Could not resolve to a node with the global id of 'IC_x'."}]}`,
		`{"data":{"minimizeComment":{"minimizedComment":{"isMinimized":true}}},"errors":[]}`,
		`{"data":{"minimizeComment":{"minimizedComment":{"isMinimized":true}}},"errors":[{"type":"FORBIDDEN"}]}`,
		`{"data":{"minimizeComment":{"minimizedComment":{"isMinimized":false,"IsMinimized":true}}}}`,
		`{"data":{"minimizeComment":{"minimizedComment":{"isMinimized":"true"}}}}`,
		`{"data":{"minimizeComment":{"minimizedComment":{"isMinimized":true}}},"message":5}`,
		`{"message":"Bad credentials"}`,
		`null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
				Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)), Request: r}, nil
		})}
		c := &Client{http: hc, graphql: "https://api.github.test/graphql", owner: "o", repo: "r"}
		err := c.MinimizeComment(context.Background(), "IC_1")
		if refMinimized(body) {
			require.NoError(t, err, "%q", body)
			return
		}
		var ae *APIError
		require.ErrorAs(t, err, &ae, "reported hidden: %q", body)
		require.Equal(t, "hide", ae.Op)
	})
}

// An answer with two keys that differ only in case reads as the last one
// with encoding/json alone: "isMinimized": false then "IsMinimized": true
// reported the comment hidden. It is malformed, as for every other client.
func TestMinimizeCommentRefusesFoldedKeys(t *testing.T) {
	body := []byte(`{"data":{"minimizeComment":{"minimizedComment":{"isMinimized":false,"IsMinimized":true}}}}`)
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)), Request: r}, nil
	})}
	c := &Client{http: hc, graphql: "https://api.github.test/graphql", owner: "o", repo: "r"}
	var ae *APIError
	require.ErrorAs(t, c.MinimizeComment(context.Background(), "IC_1"), &ae)
	require.Contains(t, ae.Message, "malformed GraphQL answer")
}
