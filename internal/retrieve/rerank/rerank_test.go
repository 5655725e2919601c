package rerank

import (
	"bytes"
	"context"
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
	require.ErrorContains(t, err, "distinct indexes")

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
