package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/e2e/e2etest"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/rerank/reranktest"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store/chroma/chromatest"
)

func retrieveEnv(stderr *e2etest.LockedBuffer, vars map[string]string) *Env {
	return &Env{Stdin: strings.NewReader(""), Stdout: &bytes.Buffer{}, Stderr: stderr, Getenv: func(k string) string { return vars[k] }}
}

// writeBigKB writes a JSONL KB of n cards (one chunk each) and one case.
func writeBigKB(t *testing.T, dir string, n int) (kb, cases string) {
	t.Helper()
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `{"id": "card-%d", "locale": "en", "title": "Card %d", "text": "word%d alpha beta gamma %d"}`+"\n", i, i, i%97, i)
	}
	kb = filepath.Join(dir, "kb.jsonl")
	require.NoError(t, os.WriteFile(kb, []byte(b.String()), 0o644))
	cases = filepath.Join(dir, "cases.jsonl")
	require.NoError(t, os.WriteFile(cases, []byte(`{"id": "q", "locale": "en", "query": "word5 alpha", "must_cite_one_of": ["card-5"]}`+"\n"), 0o644))
	return kb, cases
}

var tmpName = regexp.MustCompile(`retrieval-gate-tmp-[a-z0-9-]+`)

// Ctrl-C during a Chroma ingest: the command stops, leaves no output and deletes
// its temporary collection.
func TestRetrieveCancelDeletesTemporaryCollection(t *testing.T) {
	url := chromatest.URL(t)
	dir := t.TempDir()
	kb, cases := writeBigKB(t, dir, 30000)
	out := filepath.Join(dir, "out.jsonl")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr e2etest.LockedBuffer
	done := make(chan error, 1)
	go func() {
		done <- NewCmdRetrieve(NewFactory(retrieveEnv(&stderr, nil)), nil).Run(ctx, []string{
			"--kb", kb, "--cases", cases, "--out", out, "--chroma-url", url, "--strategy", "dense"})
	}()
	// Wait until the collection exists and the ingest is under way, then cancel.
	deadline := time.Now().Add(60 * time.Second)
	var name string
	for time.Now().Before(deadline) && name == "" {
		name = tmpName.FindString(stderr.String())
		time.Sleep(20 * time.Millisecond)
	}
	require.NotEmpty(t, name, "stderr: %s", stderr.String())
	require.Contains(t, chromatest.Collections(t, url), name)
	time.Sleep(300 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		require.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, ExitInput, ExitCode(err))
	case <-time.After(30 * time.Second):
		t.Fatal("retrieve did not stop after cancellation")
	}
	assert.NotContains(t, chromatest.Collections(t, url), name, "temporary collection deleted after Ctrl-C")
	assert.NoFileExists(t, out)
}

// A named collection is built once, then reused by the next run.
func TestRetrieveNamedCollectionReused(t *testing.T) {
	url := chromatest.URL(t)
	dir := t.TempDir()
	kb, cases := writeBigKB(t, dir, 200)
	name := fmt.Sprintf("retrieval-gate-cli-test-%d", time.Now().UnixNano())
	run := func() string {
		var stderr e2etest.LockedBuffer
		err := NewCmdRetrieve(NewFactory(retrieveEnv(&stderr, map[string]string{"CHROMA_URL": url})), nil).Run(context.Background(), []string{
			"--kb", kb, "--cases", cases, "--out", filepath.Join(dir, "out.jsonl"), "--store", "chroma", "--collection", name, "--k", "3"})
		require.NoError(t, err, stderr.String())
		return stderr.String()
	}
	assert.Contains(t, run(), "(re)building collection "+name)
	assert.Contains(t, run(), "reusing collection "+name)
	out, err := os.ReadFile(filepath.Join(dir, "out.jsonl"))
	require.NoError(t, err)
	// Cards 5, 102 and 199 all hold "word5 alpha" and tie: they come in chunk id order.
	assert.Contains(t, string(out), `"retrieved": [{"id": "card-102#c1", "parent_id": "card-102", "score": 0.0327869}, {"id": "card-199#c1", "parent_id": "card-199", "score": 0.0322581}, {"id": "card-5#c1", "parent_id": "card-5", "score": 0.031746}]`)
	assert.Contains(t, string(out), `"retrieval": {"strategy": "hybrid", "store": "chroma", "embedder": "hash", "k": 3}`)
	chromatest.DeleteCollection(t, url, name)
}

// The openai embedder and the reranker through the command, against servers
// speaking their protocols; the API key never appears in the output.
func TestRetrieveOpenAIEmbedderAndReranker(t *testing.T) {
	var embedReqs, rerankReqs int
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		switch r.URL.Path {
		case "/v1/embeddings":
			embedReqs++
			if r.Header.Get("Authorization") != "Bearer sk-secret-123" {
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
			var req struct {
				Model string   `json:"model"`
				Input []string `json:"input"`
			}
			if !assert.NoError(t, json.NewDecoder(r.Body).Decode(&req)) {
				http.Error(w, "bad request body", http.StatusBadRequest)
				return
			}
			assert.Equal(t, "BAAI/bge-small-en-v1.5", req.Model)
			type item struct {
				Index     int       `json:"index"`
				Embedding []float32 `json:"embedding"`
			}
			var data []item
			for i, s := range req.Input {
				// A toy 2-d "semantic" space: refunds vs passwords.
				v := []float32{0.1, 0.1}
				if strings.Contains(strings.ToLower(s), "refund") || strings.Contains(s, "money back") {
					v[0] = 1
				}
				if strings.Contains(strings.ToLower(s), "password") {
					v[1] = 1
				}
				data = append(data, item{i, v})
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data})
		case "/rerank":
			rerankReqs++
			reranktest.Handler(0, func(_, text string) float64 { return float64(len(text)) / 1000 })(w, r)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	dir := t.TempDir()
	kb := filepath.Join(dir, "kb.jsonl")
	require.NoError(t, os.WriteFile(kb, []byte(`{"id": "refunds", "locale": "en", "text": "Refund policy: 14 days."}
{"id": "password", "locale": "en", "text": "Reset your password from the sign-in page, it takes a minute."}
`), 0o644))
	cases := filepath.Join(dir, "cases.jsonl")
	require.NoError(t, os.WriteFile(cases, []byte(`{"id": "q", "locale": "en", "query": "I want my money back"}`+"\n"), 0o644))
	out := filepath.Join(dir, "out.jsonl")
	var stderr e2etest.LockedBuffer
	env := retrieveEnv(&stderr, map[string]string{"OPENAI_API_KEY": "sk-secret-123"})
	args := []string{"--kb", kb, "--cases", cases, "--out", out, "--embedder", "openai",
		"--embedder-url", srv.URL + "/v1", "--embedder-model", "BAAI/bge-small-en-v1.5", "--strategy", "dense", "--k", "2"}
	require.NoError(t, NewCmdRetrieve(NewFactory(env), nil).Run(context.Background(), args), stderr.String())
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Regexp(t, `"retrieved": \[\{"id": "refunds#c1", "parent_id": "refunds", "score": [0-9.]+\}, \{"id": "password#c1"`, string(b))
	assert.Contains(t, string(b), `"embedder": "openai"`)

	// With the reranker (longer texts score higher in this toy), the order flips.
	require.NoError(t, NewCmdRetrieve(NewFactory(env), nil).Run(context.Background(), append(args, "--rerank-url", srv.URL)), stderr.String())
	b, err = os.ReadFile(out)
	require.NoError(t, err)
	assert.Regexp(t, `"retrieved": \[\{"id": "password#c1", "parent_id": "password", "score": 0\.0[0-9]+\}, \{"id": "refunds#c1"`, string(b))
	assert.Equal(t, 1, rerankReqs)
	assert.GreaterOrEqual(t, embedReqs, 4)

	// A wrong key: a clear error, no key in it, no output.
	require.NoError(t, os.Remove(out))
	env = retrieveEnv(&stderr, map[string]string{"OPENAI_API_KEY": "sk-wrong-456"})
	err = NewCmdRetrieve(NewFactory(env), nil).Run(context.Background(), args)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "HTTP 401")
	assert.NotContains(t, err.Error()+stderr.String(), "sk-wrong-456")
	assert.NotContains(t, err.Error()+stderr.String(), "sk-secret-123")
	assert.NoFileExists(t, out)
}

// An ingest that fails (here: the embedding server rejects the request) still
// deletes the temporary collection, and writes nothing.
func TestRetrieveErrorDeletesTemporaryCollection(t *testing.T) {
	url := chromatest.URL(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error": {"message": "model not loaded"}}`, http.StatusBadRequest)
	}))
	defer srv.Close()
	dir := t.TempDir()
	kb, cases := writeBigKB(t, dir, 10)
	out := filepath.Join(dir, "out.jsonl")
	var stderr e2etest.LockedBuffer
	err := NewCmdRetrieve(NewFactory(retrieveEnv(&stderr, nil)), nil).Run(context.Background(), []string{
		"--kb", kb, "--cases", cases, "--out", out, "--chroma-url", url,
		"--embedder", "openai", "--embedder-url", srv.URL, "--embedder-model", "bge"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "HTTP 400")
	assert.Equal(t, ExitInput, ExitCode(err))
	name := tmpName.FindString(stderr.String())
	require.NotEmpty(t, name, "stderr: %s", stderr.String())
	assert.Contains(t, stderr.String(), "temporary collection "+name+" deleted")
	assert.NotContains(t, chromatest.Collections(t, url), name, "temporary collection deleted after an error")
	assert.NoFileExists(t, out)
}
