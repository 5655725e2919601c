package chroma

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/httpretry"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store/chroma/chromatest"
)

// endlessOn answers the requests whose path ends with suffix with a 200 JSON
// body that never ends (counting what it sent), the others as the stand-in.
func endlessOn(t *testing.T, suffix string) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var sent atomic.Int64
	standin := chromatest.NewStandIn(HeaderAuthorization, "")
	chunk := []byte(strings.Repeat(`"aaaaaaaaaaaaaaa",`, 2000))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, suffix) {
			standin.ServeHTTP(w, r)
			return
		}
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(`{"ids":[[`))
		for r.Context().Err() == nil {
			n, err := w.Write(chunk)
			sent.Add(int64(n))
			if err != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &sent
}

// TestEndlessAnswersBounded: every answer of the server is read through the
// bounded reader: an endless heartbeat is refused at 64 KiB (it grew to
// 1.6 GB), an endless query answer at its cap (queryAnswerCap), each with an
// error that says so.
func TestEndlessAnswersBounded(t *testing.T) {
	ctx := context.Background()
	t.Run("heartbeat", func(t *testing.T) {
		srv, sent := endlessOn(t, "/heartbeat")
		_, _, err := Open(ctx, Config{URL: srv.URL, Chunks: 1})
		var tl *httpretry.TooLargeError
		require.ErrorAs(t, err, &tl)
		assert.Equal(t, int64(maxHeartbeat), tl.Cap)
		assert.Contains(t, err.Error(), "longer than 64 KiB")
		assert.Less(t, sent.Load(), int64(16<<20), "bytes the server sent before the client stopped")
	})
	t.Run("query", func(t *testing.T) {
		srv, sent := endlessOn(t, "/query")
		s, _, err := Open(ctx, Config{URL: srv.URL, Chunks: 2})
		require.NoError(t, err)
		defer s.Close(ctx)
		require.NoError(t, s.Add(ctx, []store.Record{{ID: "card-1", Vector: []float32{1, 0}}, {ID: "card-22", Vector: []float32{0, 1}}}))
		_, err = s.Search(ctx, []store.Query{{Vector: []float32{1, 0}}}, 3)
		var tl *httpretry.TooLargeError
		require.ErrorAs(t, err, &tl)
		assert.Equal(t, queryAnswerCap(1, 3, len("card-22")), tl.Cap)
		assert.Less(t, sent.Load(), int64(16<<20))
	})
	t.Run("a collection", func(t *testing.T) {
		srv, _ := endlessOn(t, "/collections")
		_, _, err := Open(ctx, Config{URL: srv.URL, Chunks: 1})
		var tl *httpretry.TooLargeError
		require.ErrorAs(t, err, &tl)
		assert.Equal(t, int64(maxAnswer), tl.Cap)
	})
}

func TestQueryAnswerCap(t *testing.T) {
	assert.Equal(t, int64(1<<20+100*10*(6*20+64)), queryAnswerCap(100, 10, 20))
	assert.Equal(t, int64(1<<20), queryAnswerCap(0, 10, 20))
}

// TestExportRefusesOverlappingPages: Export reads the collection page by page
// (POST .../get with limit and offset, Chroma's v2 API); a server that
// ignores offset (the same page again) or limit (more records than asked)
// would give the exact check a record twice, or loop for as long as it
// answers: both are refused with an error that says so.
func TestExportRefusesOverlappingPages(t *testing.T) {
	page := func(from, n int) map[string]any {
		ids, embs, metas := make([]string, n), make([][]float32, n), make([]map[string]string, n)
		for i := range ids {
			ids[i], embs[i], metas[i] = fmt.Sprintf("r%d", from+i), []float32{1}, map[string]string{"locale": "en"}
		}
		return map[string]any{"ids": ids, "embeddings": embs, "metadatas": metas}
	}
	tests := []struct {
		name   string
		answer func(request int) map[string]any
		want   string
	}{
		{"offset ignored", func(int) map[string]any { return page(0, ExportPage) }, `record "r0" read twice at offset 1000`},
		{"limit ignored", func(int) map[string]any { return page(0, ExportPage+1) }, "1001 records for a limit of 1000 (the server ignores limit)"},
		{"pages in order", func(req int) map[string]any { return page(req*ExportPage, []int{ExportPage, 3}[req]) }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			standin := chromatest.NewStandIn(HeaderAuthorization, "")
			var gets atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if !strings.HasSuffix(r.URL.Path, "/get") {
					standin.ServeHTTP(w, r)
					return
				}
				n := int(gets.Add(1)) - 1
				if n >= 3 {
					chromatest.WriteJSON(w, 200, page(0, 0))
					return
				}
				chromatest.WriteJSON(w, 200, tt.answer(n))
			}))
			defer srv.Close()
			s, _, err := Open(ctx, Config{URL: srv.URL, Chunks: 1})
			require.NoError(t, err)
			defer s.Close(ctx)
			read := 0
			_, err = s.Export(ctx, 1, func(recs []store.Record) error { read += len(recs); return nil })
			if tt.want == "" {
				require.NoError(t, err)
				assert.Equal(t, ExportPage+3, read)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// A query and a get are POSTs that read only (Chroma's v2 API: POST
// .../query and .../get): a 502 of a proxy in front of Chroma, or a
// connection lost after sending, is retried as for a GET, where an add, which
// may have been applied, is not. A query's 502 ended the whole run.
func TestReadsRetried(t *testing.T) {
	for _, suffix := range []string{"/query", "/get", "/add"} {
		t.Run(suffix, func(t *testing.T) {
			ctx := context.Background()
			standin := chromatest.NewStandIn(HeaderAuthorization, "")
			var failed, calls atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasSuffix(r.URL.Path, suffix) {
					n := calls.Add(1)
					if failed.Add(1) == 1 {
						chromatest.WriteJSON(w, http.StatusBadGateway, map[string]string{"error": "Bad Gateway"})
						return
					}
					if suffix == "/get" { // the stand-in serves no get: the records, one page
						ids, embs, metas := []string{"card-1", "card-22"}, [][]float32{{1, 0}, {0, 1}}, []map[string]string{{}, {}}
						if n > 2 {
							ids, embs, metas = nil, nil, nil
						}
						chromatest.WriteJSON(w, 200, map[string]any{"ids": ids, "embeddings": embs, "metadatas": metas})
						return
					}
				}
				standin.ServeHTTP(w, r)
			}))
			defer srv.Close()
			s, _, err := Open(ctx, Config{URL: srv.URL, Chunks: 2})
			require.NoError(t, err)
			defer s.Close(ctx)
			err = s.Add(ctx, []store.Record{{ID: "card-1", Vector: []float32{1, 0}}, {ID: "card-22", Vector: []float32{0, 1}}})
			if suffix == "/add" {
				require.ErrorContains(t, err, "502")
				assert.Equal(t, int64(1), calls.Load(), "an add is not re-sent")
				return
			}
			require.NoError(t, err)
			if suffix == "/query" {
				hits, err := s.Search(ctx, []store.Query{{Vector: []float32{1, 0}}}, 1)
				require.NoError(t, err)
				require.Len(t, hits, 1)
				require.Len(t, hits[0], 1)
				assert.Equal(t, "card-1", hits[0][0].ID)
			} else {
				read := 0
				_, err := s.Export(ctx, 2, func(recs []store.Record) error { read += len(recs); return nil })
				require.NoError(t, err)
				assert.Equal(t, 2, read)
			}
			assert.Equal(t, int64(2), calls.Load(), "the failed request and its retry")
		})
	}
}
