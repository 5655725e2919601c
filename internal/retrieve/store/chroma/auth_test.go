package chroma

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store"
)

// standIn is a Chroma v2 server for what the local server (the npm 3.5.0 Rust
// server, which has no authentication) cannot show: token authentication as
// Chroma's Python server does it (chromadb.auth.token_authn: the token in the
// configured header, "Bearer <token>" in Authorization; heartbeat public; a
// missing or wrong token 401 {"detail":"Unauthorized"}, a token without access to
// the tenant 403 {"detail":"Forbidden"}) and Chroma Cloud's X-Chroma-Token. Its
// tenants, databases and collections answer as the real server does (404
// {"error":"NotFoundError",…}, 409 on a duplicate, the collection model).
type standIn struct {
	header, token, tenant string // the accepted token, in header, for tenant ("" any)
	mu                    sync.Mutex
	dbs                   map[string]bool // "tenant/db"
	tenants               map[string]bool
	cols                  map[string]string // "tenant/db/name" -> id
	seen                  []http.Header
}

func newStandIn(header, token string) *standIn {
	return &standIn{header: header, token: token, tenants: map[string]bool{"default_tenant": true},
		dbs: map[string]bool{"default_tenant/default_database": true}, cols: map[string]string{}}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (s *standIn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen = append(s.seen, r.Header.Clone())
	p := strings.Split(strings.TrimPrefix(r.URL.Path, "/api/v2/"), "/")
	if p[0] == "heartbeat" {
		writeJSON(w, 200, map[string]int64{"nanosecond heartbeat": 1})
		return
	}
	if s.token != "" {
		got := r.Header.Get(s.header)
		if s.header == HeaderAuthorization {
			if !strings.HasPrefix(got, "Bearer ") {
				writeJSON(w, 401, map[string]string{"detail": "Unauthorized"})
				return
			}
			got = strings.TrimPrefix(got, "Bearer ")
		}
		if strings.TrimSpace(got) != s.token {
			writeJSON(w, 401, map[string]string{"detail": "Unauthorized"})
			return
		}
		if len(p) > 1 && p[0] == "tenants" && s.tenant != "" && p[1] != s.tenant {
			writeJSON(w, 403, map[string]string{"detail": "Forbidden"})
			return
		}
	}
	notFound := func(what string) { writeJSON(w, 404, map[string]string{"error": "NotFoundError", "message": what}) }
	var body map[string]any
	_ = json.NewDecoder(r.Body).Decode(&body)
	switch {
	case len(p) == 1 && p[0] == "tenants" && r.Method == http.MethodPost:
		n := body["name"].(string)
		if s.tenants[n] {
			writeJSON(w, 409, map[string]string{"error": "ChromaError", "message": "Tenant [" + n + "] already exists"})
			return
		}
		s.tenants[n] = true
		writeJSON(w, 200, map[string]any{})
	case len(p) == 2 && p[0] == "tenants":
		if !s.tenants[p[1]] {
			notFound("Tenant [" + p[1] + "] not found")
			return
		}
		writeJSON(w, 200, map[string]any{"name": p[1]})
	case len(p) == 3 && r.Method == http.MethodPost:
		n := body["name"].(string)
		if s.dbs[p[1]+"/"+n] {
			writeJSON(w, 409, map[string]string{"error": "ChromaError", "message": "Database [" + n + "] already exists"})
			return
		}
		s.dbs[p[1]+"/"+n] = true
		writeJSON(w, 200, map[string]any{})
	case len(p) == 4:
		if !s.dbs[p[1]+"/"+p[3]] {
			notFound("Database [" + p[3] + "] not found. Are you sure it exists?")
			return
		}
		writeJSON(w, 200, map[string]any{"name": p[3], "tenant": p[1]})
	case len(p) >= 5:
		db := p[1] + "/" + p[3]
		if !s.dbs[db] {
			writeJSON(w, 400, map[string]string{"error": "InvalidArgumentError", "message": "Database [" + p[3] + "] does not exist"})
			return
		}
		switch {
		case len(p) == 5 && r.Method == http.MethodPost:
			n := body["name"].(string)
			s.cols[db+"/"+n] = "id-" + n
			writeJSON(w, 200, map[string]any{"id": "id-" + n, "name": n, "metadata": body["metadata"]})
		case len(p) == 6 && r.Method == http.MethodGet:
			id, ok := s.cols[db+"/"+p[5]]
			if !ok {
				notFound("Collection [" + p[5] + "] does not exist")
				return
			}
			writeJSON(w, 200, map[string]any{"id": id, "name": p[5]})
		case len(p) == 6 && r.Method == http.MethodDelete:
			delete(s.cols, db+"/"+p[5])
			writeJSON(w, 200, map[string]any{})
		case len(p) == 7 && p[6] == "add":
			writeJSON(w, 201, true)
		case len(p) == 7 && p[6] == "query":
			n := len(body["query_embeddings"].([]any))
			ids, dist := make([][]string, n), make([][]float64, n)
			for i := range ids {
				ids[i], dist[i] = []string{"a#c1"}, []float64{0.25}
			}
			writeJSON(w, 200, map[string]any{"ids": ids, "distances": dist})
		default:
			notFound("no route")
		}
	default:
		notFound("no route")
	}
}

const secretKey = "ck-SECRET-0123456789"

// Token authentication and tenant/database placement, against the stand-in:
// each case opens the store, adds and queries (or is refused with the message
// that says what to fix), and the key never appears in a message.
func TestAuthAndTenancyAgainstStandIn(t *testing.T) {
	for _, tc := range []struct {
		name       string
		srv        *standIn
		setup      func(s *standIn)
		cfg        Config
		wantHeader string // the header (and value) the server saw on a protected call
		wantErr    []string
	}{
		{name: "bearer", srv: newStandIn(HeaderAuthorization, secretKey), cfg: Config{APIKey: secretKey},
			wantHeader: "Authorization: Bearer " + secretKey},
		{name: "x-chroma-token by chroma's setting name", srv: newStandIn(HeaderXChromaToken, secretKey), cfg: Config{APIKey: secretKey, TokenHeader: "X_CHROMA_TOKEN"},
			wantHeader: "X-Chroma-Token: " + secretKey},
		{name: "no key", srv: newStandIn(HeaderAuthorization, secretKey), cfg: Config{},
			wantErr: []string{"HTTP 401: Unauthorized", "the server needs a token: pass --chroma-api-key or set CHROMA_API_KEY"}},
		{name: "wrong key", srv: newStandIn(HeaderAuthorization, "other-token-999"), cfg: Config{APIKey: secretKey},
			wantErr: []string{"HTTP 401: Unauthorized", "refused the token sent as Authorization"}},
		{name: "wrong header", srv: newStandIn(HeaderXChromaToken, secretKey), cfg: Config{APIKey: secretKey},
			wantErr: []string{"HTTP 401", "--chroma-token-header"}},
		{name: "tenant and database", srv: newStandIn(HeaderAuthorization, secretKey),
			setup: func(s *standIn) { s.tenants["team-a"], s.dbs["team-a/rag"] = true, true },
			cfg:   Config{APIKey: secretKey, Tenant: "team-a", Database: "rag"}, wantHeader: "Authorization: Bearer " + secretKey},
		{name: "forbidden tenant", srv: func() *standIn { s := newStandIn(HeaderAuthorization, secretKey); s.tenant = "team-a"; return s }(),
			setup:   func(s *standIn) { s.tenants["team-b"], s.dbs["team-b/rag"] = true, true },
			cfg:     Config{APIKey: secretKey, Tenant: "team-b", Database: "rag"},
			wantErr: []string{`chroma database "rag" of tenant "team-b"`, "HTTP 403: Forbidden", `on tenant "team-b", database "rag"`}},
		{name: "missing database refused", srv: newStandIn(HeaderAuthorization, ""),
			setup:   func(s *standIn) { s.tenants["team-a"] = true },
			cfg:     Config{Tenant: "team-a", Database: "rag"},
			wantErr: []string{`chroma database "rag" of tenant "team-a" does not exist at`, "--chroma-create-database"}},
		{name: "missing tenant refused", srv: newStandIn(HeaderAuthorization, ""), cfg: Config{Tenant: "team-z", Database: "rag"},
			wantErr: []string{`chroma tenant "team-z" does not exist at`, `its database "rag"`}},
		{name: "missing tenant and database created", srv: newStandIn(HeaderAuthorization, secretKey),
			cfg: Config{APIKey: secretKey, Tenant: "team-z", Database: "rag", CreateDatabase: true}, wantHeader: "Authorization: Bearer " + secretKey},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.setup != nil {
				tc.setup(tc.srv)
			}
			ts := httptest.NewServer(tc.srv)
			defer ts.Close()
			cfg := tc.cfg
			cfg.URL, cfg.Collection, cfg.Fingerprint, cfg.Chunks = ts.URL, "kept", "fp", 1
			s, _, err := Open(context.Background(), cfg)
			if tc.wantErr != nil {
				require.Error(t, err)
				for _, w := range tc.wantErr {
					assert.Contains(t, err.Error(), w)
				}
				assert.NotContains(t, err.Error(), secretKey)
				return
			}
			require.NoError(t, err)
			require.NoError(t, s.Add(context.Background(), []store.Record{{ID: "a#c1", ParentID: "a", Vector: []float32{1, 0}}}))
			hits, err := s.Search(context.Background(), []store.Query{{Vector: []float32{1, 0}}}, 1)
			require.NoError(t, err)
			assert.Equal(t, []store.Hit{{ID: "a#c1", Score: 0.75}}, hits[0])
			require.NoError(t, s.Close(context.Background()))
			tenant, db := cfg.Tenant, cfg.Database
			if tenant == "" {
				tenant, db = DefaultTenant, DefaultDatabase
			}
			assert.Contains(t, tc.srv.cols, tenant+"/"+db+"/kept", "the collection lives in the tenant and database asked for")
			name, value, _ := strings.Cut(tc.wantHeader, ": ")
			last := tc.srv.seen[len(tc.srv.seen)-1]
			assert.Equal(t, value, last.Get(name))
			other := map[string]string{HeaderAuthorization: HeaderXChromaToken, HeaderXChromaToken: HeaderAuthorization}[name]
			assert.Empty(t, last.Get(other), "the key travels in one header only")
		})
	}
}

// Chroma Cloud: X-Chroma-Token by default, and refused before any request
// without a key, a tenant or a database (as chroma-go's cloud client refuses).
func TestCloudSettings(t *testing.T) {
	for _, tc := range []struct {
		cfg             Config
		setting, header string
	}{
		{cfg: Config{URL: "https://api.trychroma.com", APIKey: "k", Tenant: "t", Database: "d"}, header: HeaderXChromaToken},
		{cfg: Config{URL: "https://api.trychroma.com", APIKey: "k", Tenant: "t", Database: "d", TokenHeader: "authorization"}, header: HeaderAuthorization},
		{cfg: Config{URL: "https://api.trychroma.com:443/", Tenant: "t", Database: "d"}, setting: "api-key"},
		{cfg: Config{URL: "https://api.trychroma.com", APIKey: "k", Database: "d"}, setting: "tenant"},
		{cfg: Config{URL: "https://api.trychroma.com", APIKey: "k", Tenant: "t", Database: DefaultDatabase}, setting: "database"},
		{cfg: Config{URL: "http://chroma:8000", TokenHeader: "Cookie"}, setting: "token-header"},
		{cfg: Config{URL: "http://chroma:8000"}, header: HeaderAuthorization},
	} {
		got, err := Check(tc.cfg)
		if tc.setting != "" {
			var se *SettingError
			require.ErrorAs(t, err, &se, "%+v", tc.cfg)
			assert.Equal(t, tc.setting, se.Setting)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, tc.header, got.TokenHeader)
	}
}

// Against a stand-in that plays Chroma Cloud's part (X-Chroma-Token, a tenant and
// database of the account): the store is opened through Cloud's rules.
func TestCloudAgainstStandIn(t *testing.T) {
	srv := newStandIn(HeaderXChromaToken, secretKey)
	srv.tenant, srv.tenants["acme-1234"], srv.dbs["acme-1234/prod"] = "acme-1234", true, true
	ts := httptest.NewServer(srv)
	defer ts.Close()
	cfg, err := Check(Config{URL: "https://api.trychroma.com", APIKey: secretKey, Tenant: "acme-1234", Database: "prod"})
	require.NoError(t, err)
	cfg.URL = ts.URL // the Cloud rules were applied; the requests go to the stand-in
	s, _, err := Open(context.Background(), cfg)
	require.NoError(t, err)
	require.NoError(t, s.Close(context.Background()))
	last := srv.seen[len(srv.seen)-1]
	assert.Equal(t, secretKey, last.Get("X-Chroma-Token"))
	assert.Empty(t, last.Get("Authorization"))
}

// The key goes only to the server's origin: a redirect to another host loses it.
func TestKeyNotSentToAnotherOrigin(t *testing.T) {
	var leaked []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked = append(leaked, r.Header.Get("Authorization")+r.Header.Get("X-Chroma-Token"))
		writeJSON(w, 200, map[string]int64{"nanosecond heartbeat": 1})
	}))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, strings.Replace(other.URL, "127.0.0.1", "localhost", 1)+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	_, _, _ = Open(context.Background(), Config{URL: srv.URL, APIKey: secretKey})
	require.NotEmpty(t, leaked, "the redirect was followed")
	for _, l := range leaked {
		assert.Empty(t, l)
	}
}
