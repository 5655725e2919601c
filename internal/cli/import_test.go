package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/publish/runnertest"
)

// readCounter counts the reads of standard input.
type readCounter struct{ reads int }

func (r *readCounter) Read([]byte) (int, error) { r.reads++; return 0, nil }

// import's front end creates the output before it reads the input: an
// unwritable output fails with standard input unread; a bad input leaves no
// output, and standard output gets nothing.
func TestImportOutputFirstAndWhole(t *testing.T) {
	dir := t.TempDir()
	notDir := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(notDir, nil, 0o644))
	env, _, _ := checkEnv("")
	stdin := &readCounter{}
	env.Stdin = stdin
	code := Run(context.Background(), env, []string{"import", "--in", "-", "--out", filepath.Join(notDir, "out.txt")})
	assert.Equal(t, 2, code)
	assert.Zero(t, stdin.reads)

	bad := filepath.Join(dir, "bad.trec")
	require.NoError(t, os.WriteFile(bad, []byte("q1 0 d1 1\nq1 0 d2\n"), 0o644))
	for _, out := range []string{filepath.Join(dir, "out.qrels"), "-"} {
		env, stdout, stderr := checkEnv("")
		code = Run(context.Background(), env, []string{"import", "--in", bad, "--out", out})
		assert.Equal(t, 2, code)
		assert.Contains(t, stderr.String(), "bad.trec:2: want 4 fields")
		assert.Empty(t, stdout.String())
		assert.NoFileExists(t, filepath.Join(dir, "out.qrels"))
	}
	env, stdout, _ := checkEnv("q1 0 d1 1\n")
	require.Equal(t, 0, Run(context.Background(), env, []string{"import", "--in", "-", "--out", "-"}))
	assert.Equal(t, "q1 0 d1 1\n", stdout.String())
}

// import --out - writes JSON lines whose data the stream's guard would
// otherwise break ("##\[" is no JSON escape: check refused the lines) with
// JSON's own escapes: the lines are valid, decode to what --out FILE holds,
// and the runner finds no command in them. TREC text, which has no escape,
// keeps the guard's backslash.
func TestImportStdoutJSONStaysJSON(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "in.csv")
	require.NoError(t, os.WriteFile(csv, []byte("id,query,must_cite_one_of,retrieved\n"+
		"q##[x]y,\"how #\u200b#[error]x\",a##[b,\"[\"\"c\"\",\"\"##[stop-commands]t\"\"]\"\n"), 0o644))
	file := filepath.Join(dir, "out.jsonl")
	env, _, _ := checkEnv("")
	require.Equal(t, 0, Run(context.Background(), env, []string{"import", "--format", "csv", "--in", csv, "--out", file}))
	env, stdout, _ := checkEnv("")
	require.Equal(t, 0, Run(context.Background(), env, []string{"import", "--format", "csv", "--in", csv, "--out", "-"}))
	want, err := os.ReadFile(file)
	require.NoError(t, err)
	require.Contains(t, string(want), "##[stop-commands]t", "the data reached the output")
	var fromFile, fromStdout map[string]any
	require.NoError(t, json.Unmarshal(want, &fromFile))
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &fromStdout), "%s", stdout)
	assert.Equal(t, fromFile, fromStdout)
	assert.Empty(t, runnertest.Commands(stdout.String(), nil))

	trec := filepath.Join(dir, "in.qrels")
	require.NoError(t, os.WriteFile(trec, []byte("q##[x 0 d1 1\n"), 0o644))
	env, stdout, _ = checkEnv("")
	require.Equal(t, 0, Run(context.Background(), env, []string{"import", "--in", trec, "--out", "-"}))
	assert.Equal(t, "q##\\[x 0 d1 1\n", stdout.String())
}
