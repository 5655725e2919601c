package cli

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
