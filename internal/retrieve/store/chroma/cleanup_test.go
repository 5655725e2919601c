package chroma

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	neturl "net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store/chroma/chromatest"
)

// chromaProxy is a reverse proxy in front of the real Chroma at url: intercept
// handles the requests it wants (reporting true), the others are forwarded.
func chromaProxy(t *testing.T, url string, intercept func(w http.ResponseWriter, r *http.Request, forward http.Handler) bool) string {
	t.Helper()
	target, err := neturl.Parse(url)
	require.NoError(t, err)
	forward := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !intercept(w, r, forward) {
			forward.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// isDeleteCollection reports a collection's delete, isCreateCollection a
// collection's create.
func isDeleteCollection(r *http.Request) bool {
	return r.Method == http.MethodDelete && strings.Contains(r.URL.Path, "/collections/")
}

func isCreateCollection(r *http.Request) bool {
	return r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/collections")
}

// After a signal, a busy Chroma answers the delete of the temporary collection
// late right after the run's adds, still busy with them (measured up to 640 ms
// on a loaded machine), and a delete its client
// gives up is given up by the server too, leaving the collection. The proxy
// makes each delete's answer busy late. The delete has until cancelledCleanup
// after the run's end: a delete answered within it deletes the collection (it
// had 300 ms from its start, and this one was given up): the proxy forwards
// it at once and holds the answer, so that the server's own time (which, at a
// load of 16 on two cores, made the answer later than the budget 3 times in 6
// when the proxy held the request before forwarding it) is not counted. One
// the run's end leaves no time for is given up, however late Close is called:
// the proxy holds it before forwarding it (not at all once its client has
// gone), and the collection remains.
func TestTemporaryCollectionDeleteBudgetAfterCancel(t *testing.T) {
	url := chromatest.URL(t)
	const busy = 400 * time.Millisecond
	for _, tc := range []struct {
		name string
		// closeAfter is how long after the run's end Close is called.
		closeAfter time.Duration
		deleted    bool
	}{
		{"busy server, delete answered within the budget", 0, true},
		{"budget counted from the run's end, not from Close", 600 * time.Millisecond, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			proxied := chromaProxy(t, url, func(w http.ResponseWriter, r *http.Request, forward http.Handler) bool {
				if !isDeleteCollection(r) {
					return false
				}
				if tc.deleted { // answered late, deleted at once
					rec := httptest.NewRecorder()
					forward.ServeHTTP(rec, r)
					select {
					case <-r.Context().Done():
					case <-time.After(busy):
						w.WriteHeader(rec.Code)
						_, _ = w.Write(rec.Body.Bytes())
					}
					return true
				}
				select {
				case <-r.Context().Done():
				case <-time.After(busy):
					forward.ServeHTTP(w, r)
				}
				return true
			})
			ctx, cancel := context.WithCancel(context.Background())
			s, _, err := Open(ctx, Config{URL: proxied, Fingerprint: "fp", Chunks: 10})
			require.NoError(t, err)
			cancel() // Ctrl-C during ingest
			require.ErrorIs(t, s.Add(ctx, randomRecords(2, 10, 8)), context.Canceled)
			time.Sleep(tc.closeAfter)
			err = s.Close(ctx)
			if tc.deleted {
				require.NoError(t, err)
				assert.NotContains(t, chromatest.Collections(t, url), s.Collection())
				return
			}
			require.ErrorContains(t, err, `failed to delete temporary chroma collection "`+s.Collection()+`" (it may remain on the server; delete it with: curl -X DELETE '`+proxied+`/api/v2/tenants/default_tenant/databases/default_database/collections/`+s.Collection()+`'): `)
			require.ErrorIs(t, err, context.Canceled)
			// Given up before the proxy forwarded it: the collection is left,
			// as the warning says.
			assert.Contains(t, chromatest.Collections(t, url), s.Collection())
			chromatest.DeleteCollection(t, url, s.Collection())
		})
	}
}

var tempName = regexp.MustCompile(regexp.QuoteMeta(TempPrefix) + `[a-z0-9-]+`)

// The create of a temporary collection reaches the server, which creates it,
// and its answer is lost (the proxy forwards the create, then closes the
// connection without a word): the run fails, and deletes the collection of the
// name it chose rather than leave it behind. A create that never reached the
// server leaves nothing to delete; a delete that fails too is named.
func TestTemporaryCollectionDeletedWhenCreateAnswerIsLost(t *testing.T) {
	url := chromatest.URL(t)
	for _, tc := range []struct {
		name      string
		forward   bool // the create reaches the server
		deleteErr bool // the proxy refuses the delete: HTTP 400
		want      string
		left      bool // the collection remains
	}{
		{"created, answer lost", true, false, "(the server had created it: deleted)", false},
		{"never created", false, false, "(the server did not create it)", false},
		{"created, answer lost, delete refused", true, true, "; the server may have created it, and deleting it failed too (delete it on the server if it exists: curl -X DELETE 'PROXY/api/v2/tenants/default_tenant/databases/default_database/collections/NAME'): DELETE ", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			proxied := chromaProxy(t, url, func(w http.ResponseWriter, r *http.Request, forward http.Handler) bool {
				switch {
				case isCreateCollection(r):
					if tc.forward {
						rec := httptest.NewRecorder()
						forward.ServeHTTP(rec, r)
						if !assert.Equal(t, http.StatusOK, rec.Code, rec.Body.String()) {
							return true
						}
					} else {
						_, _ = io.Copy(io.Discard, r.Body)
					}
					conn, _, err := http.NewResponseController(w).Hijack()
					if assert.NoError(t, err) {
						_ = conn.Close()
					}
					return true
				case isDeleteCollection(r) && tc.deleteErr:
					http.Error(w, `{"error": "InvalidArgument", "message": "refused by the test"}`, http.StatusBadRequest)
					return true
				}
				return false
			})
			_, _, err := Open(context.Background(), Config{URL: proxied, Fingerprint: "fp", Chunks: 10})
			require.Error(t, err)
			name := tempName.FindString(err.Error())
			require.NotEmpty(t, name, err.Error())
			assert.Contains(t, err.Error(), `failed to create chroma collection "`+name+`" at `+proxied+`: `)
			assert.Contains(t, err.Error(), strings.NewReplacer("PROXY", proxied, "NAME", name).Replace(tc.want))
			cols := chromatest.Collections(t, url)
			if tc.left {
				assert.Contains(t, cols, name)
				chromatest.DeleteCollection(t, url, name)
				return
			}
			assert.NotContains(t, cols, name)
		})
	}
}

// The warning that a temporary collection was left gives the command that
// deletes it: the store's DELETE with curl, the URL with its credentials masked,
// the API key (when one is used) by name in the header it is sent in, the
// URL's quotes escaped for the shell.
func TestDeleteCommand(t *testing.T) {
	const path = "/api/v2/tenants/default_tenant/databases/default_database/collections/retrieval-gate-tmp-x"
	for _, tc := range []struct {
		name, url, key, header, want string
	}{
		{"no key", "http://127.0.0.1:8000/", "", "", `curl -X DELETE 'http://127.0.0.1:8000` + path + `'`},
		{"key in Authorization", "https://chroma.example", "sk-secret", HeaderAuthorization,
			`curl -X DELETE 'https://chroma.example` + path + `' -H "Authorization: Bearer $CHROMA_API_KEY"`},
		{"key in X-Chroma-Token", "https://chroma.example", "sk-secret", HeaderXChromaToken,
			`curl -X DELETE 'https://chroma.example` + path + `' -H "X-Chroma-Token: $CHROMA_API_KEY"`},
		{"credentials in the URL", "https://user:pw-secret@chroma.example/it's", "", "",
			`curl -X DELETE 'https://***@chroma.example/it'\''s` + path + `'`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Store{client: newClient(tc.url, DefaultTenant, DefaultDatabase, nil), name: "retrieval-gate-tmp-x",
				cfg: Config{APIKey: tc.key, TokenHeader: tc.header}}
			got := s.deleteCommand()
			assert.Equal(t, tc.want, got)
			assert.NotContains(t, got, "secret")
		})
	}
}
