package chroma

import (
	"context"
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
