// Package registrytest proves that a store is one package plus one registration
// line: the store below is registered by the init of this test (its own test
// binary, so no other test sees it), and retrieve offers it, opens it and
// names it, with no change to the CLI.
package registrytest

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/cli"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store/memory"
)

// opened counts the test store's opens.
var opened int

func init() {
	store.Register(store.Kind{Name: "teststore", Description: "a test-only store", Open: func(context.Context, store.Config) (*store.Opened, error) {
		opened++
		return &store.Opened{Store: memory.New(1), Notice: "teststore: opened"}, nil
	}})
}

func run(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errw bytes.Buffer
	env := &cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errw, Getenv: func(string) string { return "" }}
	code = cli.Run(context.Background(), env, args)
	return out.String(), errw.String(), code
}

func TestARegisteredStoreIsOfferedOpenedAndNamed(t *testing.T) {
	help, _, code := run(t, "retrieve", "--help") // the help asked for is on stdout
	require.Equal(t, 0, code)
	assert.Contains(t, help, "vector store: chroma (a Chroma server), memory (in-process exact search) or teststore (a test-only store)")
	help, _, _ = run(t, "evaluate", "--help")
	assert.Contains(t, help, "vector store of retrieve: chroma, memory or teststore")

	dir := t.TempDir()
	kb, cases, out := filepath.Join(dir, "kb.jsonl"), filepath.Join(dir, "cases.jsonl"), filepath.Join(dir, "out.jsonl")
	require.NoError(t, os.WriteFile(kb, []byte(`{"id": "a", "text": "reset your password in settings"}`+"\n"+`{"id": "b", "text": "invoices arrive by email"}`+"\n"), 0o644))
	require.NoError(t, os.WriteFile(cases, []byte(`{"id": "q1", "query": "password reset"}`+"\n"), 0o644))

	_, stderr, code := run(t, "retrieve", "--kb", kb, "--cases", cases, "--out", filepath.Join(dir, "x.jsonl"), "--store", "redis")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `retrieve: --store must be chroma, memory or teststore, got "redis"`, "the registered names, sorted")

	_, stderr, code = run(t, "retrieve", "--kb", kb, "--cases", cases, "--out", out, "--store", "teststore", "--strategy", "dense", "--k", "1")
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, 1, opened)
	assert.Contains(t, stderr, "retrieve: teststore: opened")
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"retrieved": [{"id": "a#c1", "parent_id": "a", "score": `)
	assert.Contains(t, string(b), `"retrieval": {"strategy": "dense", "store": "teststore", "embedder": "hash", "k": 1}`)
}
