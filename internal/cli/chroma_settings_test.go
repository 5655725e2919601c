package cli

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/e2e/e2etest"
	"github.com/retrieval-gate/retrieval-gate/internal/judge"
	"github.com/retrieval-gate/retrieval-gate/internal/llm/llmtest"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store/chroma/chromatest"
)

const chromaTestKey = "ck-cli-SECRET-24680"

// Every Chroma flag (and Action input) of retrieve and of evaluate reaches the
// store's Config of each retrieve run; a flag left unset is read from its
// variable, and a flag wins over its variable.
func TestChromaSettingsReachTheStore(t *testing.T) {
	kind, err := store.Lookup("chroma")
	require.NoError(t, err)
	base := store.Config{URL: "http://c:8000"}
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want store.Config
	}{
		{"tenant", nil, []string{"--chroma-tenant", "team-a"}, store.Config{Tenant: "team-a"}},
		{"database", nil, []string{"--chroma-database", "rag"}, store.Config{Database: "rag"}},
		{"api-key", nil, []string{"--chroma-api-key", chromaTestKey}, store.Config{APIKey: chromaTestKey}},
		{"token-header", nil, []string{"--chroma-token-header", "X-Chroma-Token"}, store.Config{TokenHeader: "X-Chroma-Token"}},
		{"create-database", nil, []string{"--chroma-create-database"}, store.Config{CreateDatabase: true}},
		{"environment", map[string]string{"CHROMA_TENANT": "t-env", "CHROMA_DATABASE": "d-env", "CHROMA_API_KEY": "env-key-1234", "CHROMA_AUTH_TOKEN_TRANSPORT_HEADER": "X_CHROMA_TOKEN"}, nil,
			store.Config{Tenant: "t-env", Database: "d-env", APIKey: "env-key-1234", TokenHeader: "X_CHROMA_TOKEN"}},
		{"flags win", map[string]string{"CHROMA_TENANT": "t-env", "CHROMA_DATABASE": "d-env", "CHROMA_API_KEY": "env-key-1234", "CHROMA_AUTH_TOKEN_TRANSPORT_HEADER": "X_CHROMA_TOKEN"},
			[]string{"--chroma-tenant", "t", "--chroma-database", "ddd", "--chroma-api-key", chromaTestKey, "--chroma-token-header", "authorization"},
			store.Config{Tenant: "t", Database: "ddd", APIKey: chromaTestKey, TokenHeader: "authorization"}},
		{"action inputs", map[string]string{"GITHUB_ACTIONS": "true", "INPUT_CHROMA-TENANT": "t-in", "INPUT_CHROMA-DATABASE": "d-in", "INPUT_CHROMA-API-KEY": chromaTestKey,
			"INPUT_CHROMA-TOKEN-HEADER": "X-Chroma-Token", "INPUT_CHROMA-CREATE-DATABASE": "true"}, nil,
			store.Config{Tenant: "t-in", Database: "d-in", APIKey: chromaTestKey, TokenHeader: "X-Chroma-Token", CreateDatabase: true}},
	} {
		want := tc.want
		want.URL = base.URL
		getenv := func(k string) string { return tc.env[k] }
		t.Run("retrieve/"+tc.name, func(t *testing.T) {
			args := append([]string{"--kb", "kb", "--cases", "c.jsonl", "--out", "o.jsonl", "--chroma-url", base.URL}, tc.args...)
			o, err := parseRetrieve(&Env{Getenv: getenv}, args)
			require.NoError(t, err)
			assert.Equal(t, want, o.run.StoreConfig(kind))
		})
		t.Run("evaluate/"+tc.name, func(t *testing.T) {
			_, p := planFor(t, tc.env, append([]string{"--chroma-url", base.URL}, tc.args...)...)
			require.Len(t, p.retrieves, 3)
			for _, r := range p.retrieves {
				assert.Equal(t, want, r.run.StoreConfig(kind))
			}
		})
	}
}

// The refusals of the Chroma settings: exit 2 before any request, naming the
// flag, input or variable, never showing the key.
func TestChromaSettingsRefused(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{nil, []string{"--chroma-tenant", "t"}, "retrieve: --chroma-tenant needs --store chroma"},
		{nil, []string{"--chroma-api-key", chromaTestKey}, "retrieve: --chroma-api-key needs --store chroma"},
		{nil, []string{"--chroma-url", "https://api.trychroma.com", "--chroma-tenant", "t", "--chroma-database", "ddd"},
			"retrieve: --chroma-api-key: an API key is required by Chroma Cloud (--chroma-api-key or $CHROMA_API_KEY)"},
		{map[string]string{"CHROMA_API_KEY": chromaTestKey}, []string{"--chroma-url", "https://api.trychroma.com", "--chroma-database", "ddd"},
			"retrieve: --chroma-tenant: a tenant is required by Chroma Cloud"},
		{map[string]string{"CHROMA_API_KEY": chromaTestKey, "CHROMA_TENANT": "t"}, []string{"--chroma-url", "https://api.trychroma.com"},
			"retrieve: --chroma-database: a database is required by Chroma Cloud"},
		{map[string]string{"CHROMA_AUTH_TOKEN_TRANSPORT_HEADER": "Cookie"}, []string{"--chroma-url", "http://c:8000"},
			`retrieve: $CHROMA_AUTH_TOKEN_TRANSPORT_HEADER: must be Authorization or X-Chroma-Token, got "Cookie"`},
		{nil, []string{"--chroma-url", "http://c:8000", "--chroma-token-header", "Cookie", "--chroma-api-key", chromaTestKey},
			`retrieve: --chroma-token-header: must be Authorization or X-Chroma-Token, got "Cookie"`},
		{map[string]string{"GITHUB_ACTIONS": "true", "INPUT_CHROMA-API-KEY": chromaTestKey, "INPUT_CHROMA-URL": "https://api.trychroma.com"}, nil,
			"retrieve: --chroma-tenant: a tenant is required by Chroma Cloud"},
	} {
		args := append([]string{"--kb", "kb", "--cases", "c.jsonl", "--out", "o.jsonl"}, tc.args...)
		_, err := parseRetrieve(&Env{Getenv: func(k string) string { return tc.env[k] }}, args)
		require.Error(t, err, "%v", tc.args)
		assert.Equal(t, ExitInput, ExitCode(err))
		assert.Contains(t, err.Error(), tc.want)
		assert.NotContains(t, err.Error(), chromaTestKey)
	}
}

// The key never reaches evaluate's stages.txt nor its history fingerprint; the
// other settings are in the stage lines, which parse back to the options the
// stages ran with (the key read again from $CHROMA_API_KEY).
func TestEvaluateStagesKeepTheKeyOut(t *testing.T) {
	args := []string{"--cases", "c.jsonl", "--chroma-url", "http://chroma:8000", "--chroma-tenant", "team-a", "--chroma-database", "rag",
		"--chroma-api-key", chromaTestKey, "--chroma-token-header", "X-Chroma-Token", "--chroma-create-database"}
	o, p := planFor(t, nil, args...)
	lines := p.plan.Args(&o.Options, o.comment.args()...)
	for _, l := range lines {
		assert.NotContains(t, strings.Join(l, " "), chromaTestKey)
	}
	_, params := o.Fingerprint(p.plan.Names(), &judge.Result{Prompt: judge.DefaultPrompt()})
	for k, v := range params {
		assert.NotContains(t, k+v, chromaTestKey)
	}
	env := &Env{Getenv: func(k string) string { return map[string]string{"CHROMA_API_KEY": chromaTestKey}[k] }}
	kind, _ := store.Lookup("chroma")
	for i, want := range p.retrieves {
		r, err := parseRetrieve(env, lines[i])
		require.NoError(t, err)
		assert.Equal(t, want.run.StoreConfig(kind), r.run.StoreConfig(kind), lines[i])
		assert.Equal(t, "CHROMA_API_KEY", r.run.FromEnv["chroma-api-key"], "the key is not on the stage line: its variable gave it")
	}
}

// End to end: retrieve with a key against a stand-in Chroma that requires it;
// with a wrong key the run fails naming what to check, and neither the log, the
// error nor --help shows the key.
func TestRetrieveWithTokenAgainstStandIn(t *testing.T) {
	srv := chromatest.NewStandIn("X-Chroma-Token", chromaTestKey)
	srv.Tenants["team-a"], srv.DBs["team-a/rag"] = true, true
	ts := httptest.NewServer(srv)
	defer ts.Close()
	dir := t.TempDir()
	kb, cases := writeBigKB(t, dir, 3)
	out := filepath.Join(dir, "out.jsonl")
	for _, key := range []string{chromaTestKey, "wrong-key-13579"} {
		var stderr e2etest.LockedBuffer
		env := retrieveEnv(&stderr, map[string]string{"CHROMA_API_KEY": key, "CHROMA_TENANT": "team-a", "CHROMA_DATABASE": "rag"})
		code := Run(context.Background(), env, []string{"retrieve", "--kb", kb, "--cases", cases, "--out", out, "--chroma-url", ts.URL,
			"--chroma-token-header", "x-chroma-token", "--strategy", "dense"})
		assert.NotContains(t, stderr.String(), key)
		if key == chromaTestKey {
			require.Equal(t, ExitOK, code, stderr.String())
			assert.Contains(t, stderr.String(), "(tenant team-a, database rag): temporary collection")
			_, err := os.Stat(out)
			require.NoError(t, err)
			continue
		}
		assert.Equal(t, ExitInput, code, stderr.String())
		assert.Contains(t, stderr.String(), "HTTP 401: Unauthorized (the server refused the token sent as X-Chroma-Token")
	}
	var help bytes.Buffer
	Run(context.Background(), &Env{Stdout: &help, Stderr: &help, Getenv: func(k string) string { return map[string]string{"CHROMA_API_KEY": chromaTestKey}[k] }}, []string{"retrieve", "--help"})
	assert.Contains(t, help.String(), "-chroma-api-key")
	assert.NotContains(t, help.String(), chromaTestKey)
}

// Inside Actions the Chroma key given as an input is masked before anything runs.
func TestChromaKeyMaskedInActions(t *testing.T) {
	var stdout, stderr bytes.Buffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Getenv: func(k string) string {
		return map[string]string{"GITHUB_ACTIONS": "true", "INPUT_CHROMA-API-KEY": chromaTestKey, "INPUT_CHROMA-URL": "http://127.0.0.1:1"}[k]
	}}
	dir := t.TempDir()
	kb, cases := writeBigKB(t, dir, 2)
	code := Run(context.Background(), env, []string{"retrieve", "--kb", kb, "--cases", cases, "--out", filepath.Join(dir, "o.jsonl"), "--strategy", "dense"})
	assert.Equal(t, ExitInput, code, "no server there")
	assert.Contains(t, stdout.String(), "::add-mask::"+chromaTestKey+"\n")
	assert.Equal(t, 1, strings.Count(stdout.String()+stderr.String(), chromaTestKey), "only the mask command holds the key:\n%s\n%s", stdout.String(), stderr.String())
}

// evaluate on a Chroma that requires a token, in a tenant and database of its
// own: every retrieve stage gets the key (through the typed options), stages.txt
// has the tenant and database on each retrieve line but not the key, and says
// where the key comes from on a rerun.
func TestEvaluateWithTokenAgainstStandIn(t *testing.T) {
	srv := chromatest.NewStandIn("Authorization", chromaTestKey)
	srv.Tenants["team-a"], srv.DBs["team-a/rag"] = true, true
	ts := httptest.NewServer(srv)
	defer ts.Close()
	llm := llmtest.New(llmtest.Options{})
	defer llm.Close()
	dir := t.TempDir()
	kb := filepath.Join(dir, "kb.jsonl")
	require.NoError(t, os.WriteFile(kb, []byte(evaluateKB), 0o644))
	out := filepath.Join(dir, "out")
	var stderr e2etest.LockedBuffer
	err := NewCmdEvaluate(NewFactory(retrieveEnv(&stderr, nil)), nil).Run(context.Background(), []string{
		"--kb", kb, "--out", out, "--judge-url", llm.URL, "--judge-model", "fake", "--per-locale", "2", "--k", "3", "--bootstrap", "200",
		"--chroma-url", ts.URL, "--chroma-tenant", "team-a", "--chroma-database", "rag", "--chroma-api-key", chromaTestKey})
	require.NoError(t, err, stderr.String())
	stages, err := os.ReadFile(filepath.Join(out, "stages.txt"))
	require.NoError(t, err)
	assert.NotContains(t, string(stages), chromaTestKey)
	assert.NotContains(t, stderr.String(), chromaTestKey)
	assert.Contains(t, string(stages), "# The Chroma API key is not written here: set CHROMA_API_KEY to rerun a retrieve stage.\n")
	assert.Equal(t, 3, strings.Count(string(stages), "--chroma-tenant team-a --chroma-database rag"), "%s", stages)
	srv.Lock()
	defer srv.Unlock()
	assert.Equal(t, 2, strings.Count(strings.Join(srv.Requests, "\n"), "POST /api/v2/tenants/team-a/databases/rag/collections\n"), "dense and hybrid each built a collection there: %v", srv.Requests)
}
