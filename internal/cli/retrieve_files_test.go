package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/retrieve"
)

// retrieveFiles reads the cases from a file or standard input and writes the output
// whole or not at all.
func TestRetrieveFiles(t *testing.T) {
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
			res, err := retrieveFiles(context.Background(), kb, tt.cases, out, strings.NewReader(tt.stdin), opt)
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
	_, err := retrieveFiles(context.Background(), filepath.Join(dir, "no-kb"), casesFile, filepath.Join(notDir, "out"), nil, opt)
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "no-kb")
}
