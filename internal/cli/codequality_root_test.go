package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/gitread"
)

// --codequality's root: $CI_PROJECT_DIR, else the top of the git work tree
// around the working directory, else the working directory.
func TestCodeQualityRoot(t *testing.T) {
	tmp, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	repo, plain := filepath.Join(tmp, "repo"), filepath.Join(tmp, "plain")
	for _, d := range []string{".git/objects", ".git/refs", "eval/sub"} {
		require.NoError(t, os.MkdirAll(filepath.Join(repo, d), 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(repo, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644))
	require.NoError(t, os.MkdirAll(plain, 0o755))
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}

	t.Chdir(filepath.Join(repo, "eval", "sub"))
	assert.Equal(t, repo, codeQualityRoot(env()))
	assert.Equal(t, "/builds/g/p", codeQualityRoot(env("CI_PROJECT_DIR", "/builds/g/p")))
	t.Chdir(plain)
	if _, err := gitread.Discover("."); err == nil {
		t.Skip("the temporary directory is in a git work tree")
	}
	assert.Equal(t, plain, codeQualityRoot(env()))
}
