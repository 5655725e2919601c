package chroma

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store/chroma/chromatest"
)

const secretKey = "ck-SECRET-0123456789"

// Token authentication and tenant/database placement, against the stand-in:
// each case opens the store, adds and queries (or is refused with the message
// that says what to fix), and the key never appears in a message.
func TestAuthAndTenancyAgainstStandIn(t *testing.T) {
	for _, tc := range []struct {
		name       string
		srv        *chromatest.StandIn
		setup      func(s *chromatest.StandIn)
		cfg        Config
		wantHeader string // the header (and value) the server saw on a protected call
		wantErr    []string
	}{
		{name: "bearer", srv: chromatest.NewStandIn(HeaderAuthorization, secretKey), cfg: Config{APIKey: secretKey},
			wantHeader: "Authorization: Bearer " + secretKey},
		{name: "x-chroma-token by chroma's setting name", srv: chromatest.NewStandIn(HeaderXChromaToken, secretKey), cfg: Config{APIKey: secretKey, TokenHeader: "X_CHROMA_TOKEN"},
			wantHeader: "X-Chroma-Token: " + secretKey},
		{name: "no key", srv: chromatest.NewStandIn(HeaderAuthorization, secretKey), cfg: Config{},
			wantErr: []string{"HTTP 401: Unauthorized", "the server needs a token: pass --chroma-api-key or set CHROMA_API_KEY"}},
		{name: "wrong key", srv: chromatest.NewStandIn(HeaderAuthorization, "other-token-999"), cfg: Config{APIKey: secretKey},
			wantErr: []string{"HTTP 401: Unauthorized", "refused the token sent as Authorization"}},
		{name: "wrong header", srv: chromatest.NewStandIn(HeaderXChromaToken, secretKey), cfg: Config{APIKey: secretKey},
			wantErr: []string{"HTTP 401", "--chroma-token-header"}},
		{name: "tenant and database", srv: chromatest.NewStandIn(HeaderAuthorization, secretKey),
			setup: func(s *chromatest.StandIn) { s.Tenants["team-a"], s.DBs["team-a/rag"] = true, true },
			cfg:   Config{APIKey: secretKey, Tenant: "team-a", Database: "rag"}, wantHeader: "Authorization: Bearer " + secretKey},
		{name: "forbidden tenant", srv: func() *chromatest.StandIn {
			s := chromatest.NewStandIn(HeaderAuthorization, secretKey)
			s.Tenant = "team-a"
			return s
		}(),
			setup:   func(s *chromatest.StandIn) { s.Tenants["team-b"], s.DBs["team-b/rag"] = true, true },
			cfg:     Config{APIKey: secretKey, Tenant: "team-b", Database: "rag"},
			wantErr: []string{`chroma database "rag" of tenant "team-b"`, "HTTP 403: Forbidden", `on tenant "team-b", database "rag"`}},
		{name: "missing database refused", srv: chromatest.NewStandIn(HeaderAuthorization, ""),
			setup:   func(s *chromatest.StandIn) { s.Tenants["team-a"] = true },
			cfg:     Config{Tenant: "team-a", Database: "rag"},
			wantErr: []string{`chroma database "rag" of tenant "team-a" does not exist at`, "--chroma-create-database"}},
		{name: "missing tenant refused", srv: chromatest.NewStandIn(HeaderAuthorization, ""), cfg: Config{Tenant: "team-z", Database: "rag"},
			wantErr: []string{`chroma tenant "team-z" does not exist at`, `its database "rag"`}},
		{name: "missing tenant and database created", srv: chromatest.NewStandIn(HeaderAuthorization, secretKey),
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
			assert.Contains(t, tc.srv.Cols, tenant+"/"+db+"/kept", "the collection lives in the tenant and database asked for")
			name, value, _ := strings.Cut(tc.wantHeader, ": ")
			last := tc.srv.Seen[len(tc.srv.Seen)-1]
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
	srv := chromatest.NewStandIn(HeaderXChromaToken, secretKey)
	srv.Tenant, srv.Tenants["acme-1234"], srv.DBs["acme-1234/prod"] = "acme-1234", true, true
	ts := httptest.NewServer(srv)
	defer ts.Close()
	cfg, err := Check(Config{URL: "https://api.trychroma.com", APIKey: secretKey, Tenant: "acme-1234", Database: "prod"})
	require.NoError(t, err)
	cfg.URL = ts.URL // the Cloud rules were applied; the requests go to the stand-in
	s, _, err := Open(context.Background(), cfg)
	require.NoError(t, err)
	require.NoError(t, s.Close(context.Background()))
	last := srv.Seen[len(srv.Seen)-1]
	assert.Equal(t, secretKey, last.Get("X-Chroma-Token"))
	assert.Empty(t, last.Get("Authorization"))
}

// The key goes only to the server's origin: a redirect to another host loses it.
func TestKeyNotSentToAnotherOrigin(t *testing.T) {
	var leaked []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked = append(leaked, r.Header.Get("Authorization")+r.Header.Get("X-Chroma-Token"))
		chromatest.WriteJSON(w, 200, map[string]int64{"nanosecond heartbeat": 1})
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

// Check never panics, and no refusal shows the key, whatever the settings.
func FuzzCheck(f *testing.F) {
	f.Add("https://api.trychroma.com", "ck-abcdef123", "", "", "X_CHROMA_TOKEN")
	f.Add("http://chroma:8000", "tok\nen-123456", "t", "d", "authorization")
	f.Add("::", "", "default_tenant", "default_database", "Cookie")
	f.Fuzz(func(t *testing.T, url, key, tenant, db, header string) {
		got, err := Check(Config{URL: url, APIKey: key, Tenant: tenant, Database: db, TokenHeader: header})
		if err != nil {
			if len(key) >= 4 && !strings.Contains(header, key) && !strings.Contains(url+tenant+db, key) {
				assert.NotContains(t, err.Error(), key)
			}
			return
		}
		assert.Contains(t, []string{HeaderAuthorization, HeaderXChromaToken}, got.TokenHeader)
		assert.NotEmpty(t, got.Tenant)
		assert.NotEmpty(t, got.Database)
	})
}

// A Chroma URL given with credentials (user information, sent as Basic
// credentials by Go's client) is named without them in the notice retrieve
// prints ("chroma URL: temporary collection …") and in an error.
func TestURLCredentialsNotShown(t *testing.T) {
	const pw = "pw-Zt6Mq0Ky4Dn8Ua2"
	srv := chromatest.NewStandIn(HeaderAuthorization, "")
	ts := httptest.NewServer(srv)
	defer ts.Close()
	kind, err := store.Lookup("chroma")
	require.NoError(t, err)
	u := strings.Replace(ts.URL, "http://", "http://user:"+pw+"@", 1)
	o, err := kind.Open(context.Background(), store.Config{URL: u, Fingerprint: "fp", Chunks: 1})
	require.NoError(t, err)
	defer o.Store.Close(context.Background())
	assert.Contains(t, o.Notice, "temporary collection")
	assert.NotContains(t, o.Notice, pw[:8])

	_, err = kind.Open(context.Background(), store.Config{URL: u, Tenant: "team-z", Database: "rag", Fingerprint: "fp", Chunks: 1})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "does not exist at")
	assert.NotContains(t, err.Error(), pw[:8])
}

// An answer the client cannot decode is quoted in the error: a server that
// echoes the URL's credentials (sent as Basic) does not put them in it.
func TestDecodeErrorKeepsURLCredentialsOut(t *testing.T) {
	const pass = "AUDITPASS789"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, _ := r.BasicAuth()
		_, _ = w.Write([]byte(`{"nanosecond heartbeat": "creds were ` + u + ":" + p + `"}`))
	}))
	defer srv.Close()
	raw := strings.Replace(srv.URL, "http://", "http://AUDITUSER:"+pass+"@", 1)
	_, _, err := Open(context.Background(), Config{URL: raw, Collection: "c"})
	require.Error(t, err)
	assert.NotContains(t, err.Error(), pass)
	assert.Contains(t, err.Error(), "decoding the answer")
}
