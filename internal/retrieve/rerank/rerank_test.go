package rerank

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/httpretry"
	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos/jsontest"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/rerank/reranktest"
)

var policy = httpretry.Policy{Attempts: 3, BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond, Timeout: 5 * time.Second}

// teiServer answers like TEI: items sorted by score descending; the score is the
// number of query words in the text. fail lists statuses for the first requests.
func teiServer(fail []int, reqs *atomic.Int32) *httptest.Server {
	tei := reranktest.Handler(MaxBatch, func(query, text string) float64 {
		s := 0.0
		for _, w := range strings.Fields(query) {
			if strings.Contains(text, w) {
				s++
			}
		}
		return s
	})
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := int(reqs.Add(1))
		if n <= len(fail) {
			w.WriteHeader(fail[n-1])
			_, _ = w.Write([]byte(`{"error":"overloaded","error_type":"Overloaded"}`))
			return
		}
		if r.URL.Path != "/rerank" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		tei(w, r)
	}))
}

func TestScores(t *testing.T) {
	texts := make([]string, 40) // two requests
	for i := range texts {
		texts[i] = "filler"
	}
	texts[3] = "reset password"
	texts[35] = "password"
	tests := []struct {
		name    string
		fail    []int
		reqs    int32
		wantErr string
	}{
		{"ok", nil, 2, ""},
		{"429 then success", []int{429}, 3, ""},
		{"500s exhausted", []int{500, 500, 500}, 3, "answered HTTP 500 after 3 attempt(s)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var reqs atomic.Int32
			srv := teiServer(tt.fail, &reqs)
			defer srv.Close()
			c, err := New(srv.URL, nil, policy)
			require.NoError(t, err)
			got, err := c.Scores(context.Background(), "reset password", texts)
			assert.Equal(t, tt.reqs, reqs.Load())
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Len(t, got, 40)
			assert.Equal(t, 2.0, got[3])
			assert.Equal(t, 1.0, got[35])
			assert.Equal(t, 0.0, got[0])
		})
	}
}

func TestScoresBadResponseAndUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`[{"index": 0, "score": 1}, {"index": 0, "score": 2}]`))
	}))
	defer srv.Close()
	c, err := New(srv.URL+"/rerank", nil, policy)
	require.NoError(t, err)
	_, err = c.Scores(context.Background(), "q", []string{"a", "b"})
	require.EqualError(t, err, "reranker "+srv.URL+"/rerank: malformed response to the 2 texts sent: items 0 and 1 both have index 0")

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	c, err = New("http://"+addr, nil, policy)
	require.NoError(t, err)
	_, err = c.Scores(context.Background(), "q", []string{"a"})
	assert.ErrorContains(t, err, "reranker: http://"+addr+"/rerank unreachable after 3 attempt(s)")
}

// Issue 20 item 5, the reranker of the class: an endless answer is refused at
// httpretry.MaxAnswer.
func TestScoresEndlessAnswer(t *testing.T) {
	var sent atomic.Int64
	chunk := []byte(strings.Repeat(`{"index":0,"score":1},`, 1<<10))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("["))
		for r.Context().Err() == nil {
			n, err := w.Write(chunk)
			sent.Add(int64(n))
			if err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	c, err := New(srv.URL, nil, httpretry.Policy{Attempts: 1})
	require.NoError(t, err)
	_, err = c.Scores(context.Background(), "q", []string{"a"})
	var tl *httpretry.TooLargeError
	require.ErrorAs(t, err, &tl)
	assert.Contains(t, err.Error(), "longer than 4 MiB")
	assert.Less(t, sent.Load(), int64(64<<20))
}

// A chunk past the reranker's max input (1,200 CJK characters are past the
// 512 tokens of the common cross-encoders) does not end the run: every request
// says "truncate": true, without which TEI answers 413 ("Input validation
// error: `inputs` must have less than 512 tokens", TEI's OpenAPI document,
// POST /rerank, and its tokenization), as the stand-in does. The score is then
// the model's score of the pair's beginning: the query's word past the cut no
// longer counts.
func TestScoresLongTexts(t *testing.T) {
	var bodies []string
	tei := reranktest.Handler(MaxBatch, func(query, text string) float64 {
		s := 0.0
		for _, w := range strings.Fields(query) {
			if strings.Contains(text, w) {
				s++
			}
		}
		return s
	})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		assert.NoError(t, err)
		bodies = append(bodies, string(b))
		r.Body = io.NopCloser(bytes.NewReader(b))
		tei(w, r)
	}))
	defer srv.Close()
	c, err := New(srv.URL, nil, policy)
	require.NoError(t, err)
	cjk := strings.Repeat("密码重置", 300) // 1,200 characters, 1,200 tokens
	got, err := c.Scores(context.Background(), "密码 reset password", []string{
		"reset password",
		"reset " + cjk + " password", // "password" is past the cut
		cjk,
	})
	require.NoError(t, err)
	assert.Equal(t, []float64{2, 2, 1}, got)
	require.Len(t, bodies, 1)
	assert.JSONEq(t, `{"query":"密码 reset password","texts":["reset password","reset `+cjk+` password","`+cjk+`"],"truncate":true,"truncation_direction":"Right"}`, bodies[0])
}

// An answer that does not score each text sent once (TEI's RerankResponse: one
// {"index", "score"} per text, index its place in "texts") is refused naming
// the item at fault and the index, within the request of the texts it was
// sent (indexes are the request's, 0..31, the texts the query's).
func TestScoresNamesTheBadItem(t *testing.T) {
	tests := []struct {
		name   string
		n      int    // texts
		answer string // to the last request
		want   string
	}{
		{"index missing", 2, `[{"score":1},{"index":0,"score":2}]`, `the 2 texts sent: item 0 has no "index"`},
		{"index null", 2, `[{"index":1,"score":1},{"index":null,"score":2}]`, `the 2 texts sent: item 1 has no "index"`},
		{"index repeated", 2, `[{"index":1,"score":1},{"index":0,"score":2},{"index":1,"score":3}]`, `the 2 texts sent: items 0 and 2 both have index 1`},
		{"index past the texts", 2, `[{"index":0,"score":1},{"index":2,"score":2}]`, `the 2 texts sent: item 1 has index 2, outside 0..1`},
		{"index negative", 1, `[{"index":-1,"score":1}]`, `the one text sent: item 0 has index -1, outside 0..0`},
		{"score missing", 2, `[{"index":1,"score":1},{"index":0}]`, `the 2 texts sent: item 1 (index 0) has no "score"`},
		{"a text without an item", 3, `[{"index":2,"score":1},{"index":0,"score":2}]`, `the 3 texts sent: no item has index 1 (2 items for 3 texts)`},
		{"second request", 40, `[{"index":0,"score":1},{"index":8,"score":2}]`, `texts 32..39 of 40, sent as 0..7: item 1 has index 8, outside 0..7`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reqs := 0
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				reqs++
				if reqs*MaxBatch < tt.n { // not the last request: a correct answer
					reranktest.Handler(MaxBatch, func(string, string) float64 { return 1 })(w, r)
					return
				}
				_, _ = w.Write([]byte(tt.answer))
			}))
			defer srv.Close()
			c, err := New(srv.URL, nil, policy)
			require.NoError(t, err)
			texts := make([]string, tt.n)
			for i := range texts {
				texts[i] = "t"
			}
			_, err = c.Scores(context.Background(), "q", texts)
			require.EqualError(t, err, "reranker "+srv.URL+"/rerank: malformed response to "+tt.want)
		})
	}
}

// The reranker names its server without the URL's credentials (its user
// information) in the errors it words itself, as the HTTP
// errors do: the library (gate.Live) hands them to its caller unredacted.
func TestScoresErrorsKeepURLCredentialsOut(t *testing.T) {
	const pass = "AUDITPASS789"
	for _, body := range []string{`not json`, `[{"index":0,"score":1},{"index":0,"score":2}]`} {
		c, err := New("http://AUDITUSER:"+pass+"@rerank.test", jsontest.AnswerClient([]byte(body)), httpretry.Policy{Attempts: 1})
		require.NoError(t, err)
		_, err = c.Scores(context.Background(), "q", []string{"a", "b"})
		require.Error(t, err, body)
		assert.NotContains(t, err.Error(), pass, body)
		assert.Contains(t, err.Error(), "reranker http://***@rerank.test/rerank", body)
	}
}

// A TEI started with a --max-client-batch-size below the client's 32 refuses
// every request of 32 texts with 413 "batch size 32 > maximum allowed batch
// size 8" (its router's rerank handler; the OpenAPI document's 413 "Batch size
// error"): the client takes the limit the server states, sends the same texts
// again that many a request, and keeps to it. Other 413s (an input over the
// model's max length) and a stated limit that is not below the batch end the
// call as before.
func TestScoresFollowsTheServersBatchLimit(t *testing.T) {
	var sizes []int
	tei := reranktest.Handler(8, func(_, text string) float64 { return float64(len(text)) })
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		assert.NoError(t, err)
		var req struct {
			Texts []string `json:"texts"`
		}
		assert.NoError(t, json.Unmarshal(b, &req))
		sizes = append(sizes, len(req.Texts))
		r.Body = io.NopCloser(bytes.NewReader(b))
		tei(w, r)
	}))
	defer srv.Close()
	c, err := New(srv.URL, nil, policy)
	require.NoError(t, err)
	texts := make([]string, 40)
	for i := range texts {
		texts[i] = strings.Repeat("x", i)
	}
	got, err := c.Scores(context.Background(), "q", texts)
	require.NoError(t, err)
	for i, s := range got {
		assert.Equal(t, float64(i), s)
	}
	assert.Equal(t, []int{32, 8, 8, 8, 8, 8}, sizes)
	sizes = nil
	_, err = c.Scores(context.Background(), "q", texts[:10])
	require.NoError(t, err)
	assert.Equal(t, []int{8, 2}, sizes, "the limit kept")

	// The limit read from the JSON body, whatever its escapes.
	first := true
	tei16 := reranktest.Handler(16, func(string, string) float64 { return 1 })
	esc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if first {
			first = false
			w.WriteHeader(http.StatusRequestEntityTooLarge)
			_, _ = w.Write([]byte(`{"error":"batch size 32 \u003e maximum allowed batch size 16","error_type":"Validation"}`))
			return
		}
		tei16(w, r)
	}))
	defer esc.Close()
	c, err = New(esc.URL, nil, policy)
	require.NoError(t, err)
	_, err = c.Scores(context.Background(), "q", texts)
	require.NoError(t, err)

	for _, body := range []string{
		`{"error":"Input validation error: ` + "`inputs`" + ` must have less than 512 tokens. Given: 600","error_type":"Validation"}`,
		`{"error":"batch size 2 > maximum allowed batch size 2","error_type":"Validation"}`,
	} {
		reqs := 0
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			reqs++
			w.WriteHeader(http.StatusRequestEntityTooLarge)
			_, _ = w.Write([]byte(body))
		}))
		c, err := New(srv.URL, nil, policy)
		require.NoError(t, err)
		_, err = c.Scores(context.Background(), "q", []string{"a", "b"})
		require.ErrorContains(t, err, "answered HTTP 413 after 1 attempt(s)", body)
		assert.Equal(t, 1, reqs, body)
		srv.Close()
	}
}
