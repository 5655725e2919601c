package cli

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The domain Runs of compare, judge, generate, calibrate, import and evaluate
// open no file and write nothing: the CLI, their front end, opens the inputs,
// makes the services and writes every output. So their packages import neither
// internal/atomicfile (the writer of outputs) nor os/exec, and "os" only in the
// file of a service the front end opens and hands in: judge's cache
// (cache.go: OpenCache) and batch state (batchrun.go: StateFile), calibrate's
// repositories (git.go: GitRepos). Parsed from every GOOS's files (no build
// constraint is applied).
func TestDomainRunsOpenNothing(t *testing.T) {
	osAllowed := map[string]bool{"judge/cache.go": true, "judge/batchrun.go": true, "calibrate/git.go": true}
	for _, pkg := range []string{"compare", "judge", "generate", "calibrate", "importer", "evaluate"} {
		dir := filepath.Join("..", pkg)
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		files := 0
		for _, e := range entries {
			name := e.Name()
			if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
				continue
			}
			files++
			f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, name), nil, parser.ImportsOnly)
			require.NoError(t, err)
			var imports []string
			for _, s := range f.Imports {
				p, err := strconv.Unquote(s.Path.Value)
				require.NoError(t, err)
				imports = append(imports, p)
			}
			rel := pkg + "/" + name
			assert.NotContains(t, imports, "github.com/retrieval-gate/retrieval-gate/internal/atomicfile", rel)
			assert.NotContains(t, imports, "os/exec", rel)
			if slices.Contains(imports, "os") {
				assert.True(t, osAllowed[rel], "%s imports os: a domain Run opens no file (the front end opens it and hands in a reader or a service)", rel)
			}
		}
		require.Positive(t, files, pkg)
	}
}
