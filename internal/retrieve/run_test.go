package retrieve_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/retrieve"
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
		res, err := retrieve.Run(context.Background(), retrieve.In{KB: kb, Cases: strings.NewReader(cases), CasesName: "cases.jsonl", Out: &out, OutName: "out.jsonl"}, o)
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

	var oe *retrieve.OptionError
	_, _, err = run(retrieve.RunOptions{Strategy: retrieve.Dense, K: 1, Store: "memory", Embedder: "openai", EmbedderURL: "ftp://x"})
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, "embedder-url", oe.Option)
	_, _, err = run(retrieve.RunOptions{Strategy: retrieve.Dense, K: 1, Store: "memory", Embedder: "hash", RerankURL: "ftp://x"})
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, "rerank-url", oe.Option)
}

// RunFiles reads the cases from a file or standard input and writes the output
// whole or not at all.
func TestRunFiles(t *testing.T) {
	dir := t.TempDir()
	kb := filepath.Join(dir, "kb.jsonl")
	require.NoError(t, os.WriteFile(kb, []byte(`{"id": "a", "text": "reset your password in settings"}`+"\n"), 0o644))
	casesFile := filepath.Join(dir, "cases.jsonl")
	require.NoError(t, os.WriteFile(casesFile, []byte(`{"id": "q1", "query": "password reset"}`+"\n"), 0o644))
	opt := retrieve.RunOptions{Strategy: retrieve.Lexical, K: 1}
	for _, tt := range []struct {
		name, cases, stdin, wantErr string
	}{
		{name: "file", cases: casesFile},
		{name: "stdin", cases: "-", stdin: `{"id": "q1", "query": "password reset"}` + "\n"},
		{name: "missing cases", cases: filepath.Join(dir, "nope.jsonl"), wantErr: "failed to read cases"},
		{name: "bad case", cases: "-", stdin: "{oops\n", wantErr: "stdin:1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.jsonl")
			res, err := retrieve.RunFiles(context.Background(), retrieve.Files{KB: kb, Cases: tt.cases, Out: out, Stdin: strings.NewReader(tt.stdin)}, opt)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				assert.NoFileExists(t, out, "nothing written")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, 1, res.Cases)
			b, err := os.ReadFile(out)
			require.NoError(t, err)
			assert.True(t, strings.HasPrefix(string(b), `{"id": "q1", "query": "password reset", "retrieved": [{"id": "a#c1"`), string(b))
		})
	}
	// An unwritable output fails before the KB is read.
	notDir := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(notDir, nil, 0o644))
	_, err := retrieve.RunFiles(context.Background(), retrieve.Files{KB: filepath.Join(dir, "no-kb"), Cases: casesFile, Out: filepath.Join(notDir, "out")}, opt)
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "no-kb")
}
