package retrieve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/kbfile"
	"github.com/retrieval-gate/retrieval-gate/internal/option"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/rerank"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/rerank/reranktest"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store/chroma/chromatest"
)

// retrieve.Run is the retrieve command's pipeline as a typed call: stores and
// embedders by name, the cases' bytes kept, refusals as values.
func TestRunPipeline(t *testing.T) {
	dir := t.TempDir()
	kb := filepath.Join(dir, "kb.jsonl")
	require.NoError(t, os.WriteFile(kb, []byte(`{"id": "a", "text": "reset your password in settings"}`+"\n"+`{"id": "b", "text": "invoices arrive by email"}`+"\n"), 0o644))
	cases := `{"id": "q1",  "query": "password reset", "x": [1, 2]}` + "\n"
	run := func(o retrieve.RunOptions) (string, *retrieve.RunResult, error) {
		var out bytes.Buffer
		res, err := retrieve.Run(context.Background(), retrieve.In{KB: loadKB(t, kb), Cases: strings.NewReader(cases), CasesName: "cases.jsonl", Out: &out, OutName: "out.jsonl"}, o)
		return out.String(), res, err
	}
	var logs []string
	out, res, err := run(retrieve.RunOptions{Strategy: retrieve.Dense, K: 1, Store: "memory", Embedder: "hash",
		Logf: func(f string, a ...any) { logs = append(logs, f) }})
	require.NoError(t, err)
	assert.Equal(t, &retrieve.RunResult{Cases: 1, Chunks: 2, Cards: 2, Strategy: "dense", Store: "memory", Embedder: "hash", K: 1}, res)
	assert.True(t, strings.HasPrefix(out, `{"id": "q1",  "query": "password reset", "x": [1, 2], "retrieved": [{"id": "a#c1", "parent_id": "a", "score": `), out)
	assert.True(t, strings.HasSuffix(out, `"retrieval": {"strategy": "dense", "store": "memory", "embedder": "hash", "k": 1}}`+"\n"), out)
	assert.NotEmpty(t, logs)

	_, res, err = run(retrieve.RunOptions{Strategy: retrieve.Lexical, K: 1, Store: "no-such-store", Embedder: "no-such-embedder"})
	require.NoError(t, err, "lexical opens neither store nor embedder")
	assert.Equal(t, [2]string{"none", "none"}, [2]string{res.Store, res.Embedder})

	_, _, err = run(retrieve.RunOptions{Strategy: retrieve.Dense, K: 1, Store: "redis", Embedder: "hash"})
	require.EqualError(t, err, `unknown store "redis": must be chroma or memory`)
	_, _, err = run(retrieve.RunOptions{Strategy: retrieve.Dense, K: 1, Store: "memory", Embedder: "bert"})
	require.EqualError(t, err, `unknown embedder "bert": must be hash, ollama or openai`)

	var oe *option.Error
	_, _, err = run(retrieve.RunOptions{Strategy: retrieve.Dense, K: 1, Store: "memory", Embedder: "openai", EmbedderURL: "ftp://x"})
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, "embedder-url", oe.Option)
	_, _, err = run(retrieve.RunOptions{Strategy: retrieve.Dense, K: 1, Store: "memory", Embedder: "hash", RerankURL: "ftp://x"})
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, "rerank-url", oe.Option)
}

// The retrieved lists are JSON whatever characters a card id holds: the KB's
// JSON allows any character in a string (RFC 8259 section 7: control
// characters escaped), but Go's quoting writes \x7f, \a or \U000e0001, which
// are not JSON escapes, so the run file could not be read back by check.
func TestRunWritesJSONForAnyCardID(t *testing.T) {
	tests := []struct{ name, id string }{ // id as the KB writes it
		{"DEL", `a\u007fb`},
		{"bell", `a\u0007b`},
		{"vertical tab", `a\u000bb`},
		{"tag character", `a\udb40\udc01b`},
		{"quote and backslash", `a\"\\b`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kb := filepath.Join(t.TempDir(), "kb.jsonl")
			require.NoError(t, os.WriteFile(kb, []byte(`{"id": "`+tt.id+`", "text": "reset your password in settings"}`+"\n"), 0o644))
			var want string
			require.NoError(t, json.Unmarshal([]byte(`"`+tt.id+`"`), &want))
			for _, strategy := range retrieve.Strategies {
				var out bytes.Buffer
				_, err := retrieve.Run(context.Background(), retrieve.In{KB: loadKB(t, kb), Cases: strings.NewReader(`{"id": "q1", "query": "password reset"}` + "\n"),
					CasesName: "cases.jsonl", Out: &out, OutName: "out.jsonl"}, retrieve.RunOptions{Strategy: strategy, K: 1, Store: "memory", Embedder: "hash"})
				require.NoError(t, err)
				var got struct {
					Retrieved []struct {
						ID       string `json:"id"`
						ParentID string `json:"parent_id"`
					} `json:"retrieved"`
				}
				require.NoError(t, json.Unmarshal(out.Bytes(), &got), "%s: %s", strategy, out.String())
				require.Len(t, got.Retrieved, 1, strategy)
				assert.Equal(t, want, got.Retrieved[0].ParentID, strategy)
				assert.Equal(t, want+"#c1", got.Retrieved[0].ID, strategy)
			}
		})
	}
}

// A case's locale selects the cards of its locale whatever the case of either
// tag, as check groups the cases (BCP 47 tags are case-insensitive, and
// check's CanonicalLocale makes "pt-br", "pt_BR" and "pt-BR" one group): a
// case written "pt-br" against cards written "pt-BR" searched nothing, and
// its empty list read as a retrieval miss.
func TestLocaleFilterIgnoresTagCase(t *testing.T) {
	tests := []struct{ name, kbLocale, caseLocale string }{
		{"same case", "pt-BR", "pt-BR"},
		{"case lower case", "pt-BR", "pt-br"},
		{"case with underscore", "pt-BR", "pt_BR"},
		{"KB lower case", "pt-br", "PT-BR"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kb := filepath.Join(t.TempDir(), "kb.jsonl")
			require.NoError(t, os.WriteFile(kb, []byte(`{"id": "pt", "locale": "`+tt.kbLocale+`", "text": "como redefinir a senha"}`+"\n"+
				`{"id": "en", "locale": "en", "text": "how to reset the password senha"}`+"\n"), 0o644))
			for _, strategy := range retrieve.Strategies {
				var out bytes.Buffer
				_, err := retrieve.Run(context.Background(), retrieve.In{KB: loadKB(t, kb), Cases: strings.NewReader(`{"id": "q1", "locale": "` + tt.caseLocale + `", "query": "redefinir senha"}` + "\n"),
					CasesName: "cases.jsonl", Out: &out, OutName: "out.jsonl"}, retrieve.RunOptions{Strategy: strategy, K: 5, Store: "memory", Embedder: "hash"})
				require.NoError(t, err)
				var got struct {
					Retrieved []struct {
						ParentID string `json:"parent_id"`
					} `json:"retrieved"`
				}
				require.NoError(t, json.Unmarshal(out.Bytes(), &got), out.String())
				require.Len(t, got.Retrieved, 1, "%s: %s", strategy, out.String())
				assert.Equal(t, "pt", got.Retrieved[0].ParentID, strategy)
			}
		})
	}
}

// Every Chroma setting of RunOptions reaches the store, and each one left empty
// is taken from chroma-go's variable among the environment's values Resolve is
// given (an option wins over its variable): seen in
// the requests a stand-in Chroma server receives (the paths of the tenant and
// database, the token's header and value, the creation of the database).
func TestRunPassesChromaSettingsToTheStore(t *testing.T) {
	dir := t.TempDir()
	kb := filepath.Join(dir, "kb.jsonl")
	require.NoError(t, os.WriteFile(kb, []byte(`{"id": "a", "text": "reset your password"}`+"\n"), 0o644))
	const key, envKey = "opt-key-123456", "env-key-654321"
	for _, tc := range []struct {
		name     string
		o        retrieve.RunOptions
		env      map[string]string
		server   func(s *chromatest.StandIn)
		header   string // header: value on the collection requests
		path     string // the collections path used
		requests []string
	}{
		{name: "tenant and database options", o: retrieve.RunOptions{StoreTenant: "team-a", StoreDatabase: "rag"},
			server: func(s *chromatest.StandIn) { s.Tenants["team-a"], s.DBs["team-a/rag"] = true, true },
			path:   "/api/v2/tenants/team-a/databases/rag/collections"},
		{name: "tenant and database from the environment", env: map[string]string{"CHROMA_TENANT": "team-a", "CHROMA_DATABASE": "rag"},
			server: func(s *chromatest.StandIn) { s.Tenants["team-a"], s.DBs["team-a/rag"] = true, true },
			path:   "/api/v2/tenants/team-a/databases/rag/collections"},
		{name: "options win over the environment", o: retrieve.RunOptions{StoreTenant: "team-a", StoreDatabase: "rag", StoreAPIKey: key},
			env:    map[string]string{"CHROMA_TENANT": "team-b", "CHROMA_DATABASE": "other", "CHROMA_API_KEY": envKey},
			server: func(s *chromatest.StandIn) { s.Tenants["team-a"], s.DBs["team-a/rag"], s.Token = true, true, key },
			header: "Authorization: Bearer " + key, path: "/api/v2/tenants/team-a/databases/rag/collections"},
		{name: "key option", o: retrieve.RunOptions{StoreAPIKey: key}, server: func(s *chromatest.StandIn) { s.Token = key },
			header: "Authorization: Bearer " + key, path: "/api/v2/tenants/default_tenant/databases/default_database/collections"},
		{name: "key from the environment", env: map[string]string{"CHROMA_API_KEY": envKey}, server: func(s *chromatest.StandIn) { s.Token = envKey },
			header: "Authorization: Bearer " + envKey, path: "/api/v2/tenants/default_tenant/databases/default_database/collections"},
		{name: "token header option", o: retrieve.RunOptions{StoreAPIKey: key, StoreTokenHeader: "X-Chroma-Token"},
			server: func(s *chromatest.StandIn) { s.Token, s.Header = key, "X-Chroma-Token" },
			header: "X-Chroma-Token: " + key, path: "/api/v2/tenants/default_tenant/databases/default_database/collections"},
		{name: "token header from the environment", o: retrieve.RunOptions{StoreAPIKey: key}, env: map[string]string{"CHROMA_AUTH_TOKEN_TRANSPORT_HEADER": "X_CHROMA_TOKEN"},
			server: func(s *chromatest.StandIn) { s.Token, s.Header = key, "X-Chroma-Token" },
			header: "X-Chroma-Token: " + key, path: "/api/v2/tenants/default_tenant/databases/default_database/collections"},
		{name: "create database", o: retrieve.RunOptions{StoreTenant: "team-new", StoreDatabase: "rag", CreateDatabase: true},
			path:     "/api/v2/tenants/team-new/databases/rag/collections",
			requests: []string{"POST /api/v2/tenants", "POST /api/v2/tenants/team-new/databases"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := chromatest.NewStandIn("Authorization", "")
			if tc.server != nil {
				tc.server(srv)
			}
			ts := httptest.NewServer(srv)
			defer ts.Close()
			o := tc.o
			o.Strategy, o.K, o.Store, o.Embedder, o.StoreURL = retrieve.Dense, 1, "chroma", "hash", ts.URL
			require.NoError(t, o.Resolve(retrieve.Env(tc.env), true), "the environment's values resolved before the run")
			var out bytes.Buffer
			_, err := retrieve.Run(context.Background(), retrieve.In{KB: loadKB(t, kb), Cases: strings.NewReader(`{"id": "q", "query": "password"}` + "\n"), CasesName: "c", Out: &out, OutName: "o"}, o)
			require.NoError(t, err)
			srv.Lock()
			defer srv.Unlock()
			assert.Contains(t, srv.Requests, "POST "+tc.path, "the collection is created in the tenant and database: %v", srv.Requests)
			for _, r := range tc.requests {
				assert.Contains(t, srv.Requests, r)
			}
			if tc.header != "" {
				name, value, _ := strings.Cut(tc.header, ": ")
				assert.Equal(t, value, srv.Seen[len(srv.Seen)-1].Get(name))
			} else {
				assert.Empty(t, srv.Seen[len(srv.Seen)-1].Get("Authorization"))
				assert.Empty(t, srv.Seen[len(srv.Seen)-1].Get("X-Chroma-Token"))
			}
		})
	}
}

// loadKB loads the knowledge base at path, as a front end does before Run.
func loadKB(t *testing.T, path string) *kbfile.KB {
	t.Helper()
	kb, err := kbfile.Load(context.Background(), path)
	require.NoError(t, err)
	return kb
}

// Run stops soon after its context ends also before the embedding (which
// watches it): splitting 300,000 cards into chunks, fitting the embedder and
// building the lexical index took over 3 s with no look at the context, and
// retrieve heeded SIGINT and SIGTERM only after them.
func TestRunStopsWithItsContextBeforeEmbedding(t *testing.T) {
	if testing.Short() {
		t.Skip("splits 300,000 cards")
	}
	cards := make([]kbfile.Card, 300_000)
	for i := range cards {
		cards[i] = kbfile.Card{ID: fmt.Sprintf("card-%07d", i), Locale: "en", Title: "Card",
			Text: fmt.Sprintf("retrieval gate signal test filler text alpha beta gamma delta %d epsilon", i), File: "kb.jsonl", Line: i + 1}
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	var out bytes.Buffer
	_, err := retrieve.Run(ctx, retrieve.In{KB: &kbfile.KB{Path: "kb.jsonl", Cards: cards}, Cases: strings.NewReader(""), CasesName: "c", Out: &out, OutName: "o"},
		retrieve.RunOptions{Strategy: retrieve.Hybrid, K: 1, Store: "memory", Embedder: "hash"})
	require.ErrorIs(t, err, context.Canceled)
	assert.Less(t, time.Since(start), 500*time.Millisecond, "stopped within moments of the context's end (50 ms)")
}

// A case id twice is check's input error, at the later case's line, whichever
// way the stream ends: a duplicate before a later malformed line is the error
// (as check reports it), and a malformed line before any duplicate is.
func TestRunRefusesDuplicateCaseIDs(t *testing.T) {
	dir := t.TempDir()
	kb := filepath.Join(dir, "kb.jsonl")
	require.NoError(t, os.WriteFile(kb, []byte(`{"id": "a", "text": "reset your password in settings"}`+"\n"), 0o644))
	for _, tc := range []struct{ name, cases, want string }{
		{"twice", `{"id": "q1", "query": "a"}` + "\n" + `{"id": "q2", "query": "b"}` + "\n" + `{"id": "q1", "query": "c"}` + "\n",
			`cases.jsonl:3: duplicate case id "q1" (first at line 1)`},
		{"the earliest of two", `{"id": "q1", "query": "a"}` + "\n" + `{"id": "q2", "query": "b"}` + "\n" + `{"id": "q2", "query": "c"}` + "\n" + `{"id": "q1", "query": "d"}` + "\n",
			`cases.jsonl:3: duplicate case id "q2" (first at line 2)`},
		{"before a malformed line", `{"id": "q1", "query": "a"}` + "\n" + `{"id": "q1", "query": "b"}` + "\n" + `{"id": "q3", "query": ` + "\n",
			`cases.jsonl:2: duplicate case id "q1" (first at line 1)`},
		{"after a malformed line", `{"id": "q1", "query": "a"}` + "\n" + `{"id": "q3", "query": ` + "\n" + `{"id": "q1", "query": "b"}` + "\n",
			`cases.jsonl:2: `},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			_, err := retrieve.Run(context.Background(), retrieve.In{KB: loadKB(t, kb), Cases: strings.NewReader(tc.cases), CasesName: "cases.jsonl", Out: &out, OutName: "out.jsonl"},
				retrieve.RunOptions{Strategy: retrieve.Lexical, K: 1})
			var ie *input.Error
			require.ErrorAs(t, err, &ie)
			assert.True(t, strings.HasPrefix(err.Error(), tc.want), err.Error())
		})
	}
}

// A reranker's failure names the case whose query it was reranking, by id and
// line: the run reranks a window of cases at once, and the failing answer
// (here a repeated index, to the second case's query only) is otherwise one of
// hundreds.
func TestRunNamesTheCaseOfARerankFailure(t *testing.T) {
	dir := t.TempDir()
	kb := filepath.Join(dir, "kb.jsonl")
	require.NoError(t, os.WriteFile(kb, []byte(`{"id": "a", "text": "reset your password in settings"}`+"\n"+`{"id": "b", "text": "invoices arrive by email"}`+"\n"), 0o644))
	tei := reranktest.Handler(rerank.MaxBatch, func(string, string) float64 { return 1 })
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		assert.NoError(t, err)
		if bytes.Contains(body, []byte(`"query":"invoices"`)) {
			_, _ = w.Write([]byte(`[{"index":0,"score":1},{"index":0,"score":2}]`))
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		tei(w, r)
	}))
	defer srv.Close()
	cases := `{"id": "q1", "query": "password"}` + "\n\n" + `{"id": "q2", "query": "invoices"}` + "\n"
	var out bytes.Buffer
	_, err := retrieve.Run(context.Background(), retrieve.In{KB: loadKB(t, kb), Cases: strings.NewReader(cases), CasesName: "cases.jsonl", Out: &out, OutName: "out.jsonl"},
		retrieve.RunOptions{Strategy: retrieve.Lexical, K: 2, RerankURL: srv.URL})
	require.EqualError(t, err, `case "q2" (cases.jsonl:3): reranker `+srv.URL+`/rerank: malformed response to the one text sent: items 0 and 1 both have index 0`)
	assert.Empty(t, out.String())
}
