package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLibraryDocsNameEveryFlag: docs/library.md says, for each flag of check
// and retrieve, what the library has for it (a field of Options or
// LiveOptions, a method of the report) or that it is the CLI's alone, so a
// flag the library cannot reach is documented as such (it omitted retrieve's
// --rerank-url, --all-locales and --exact-check, and most of check's).
func TestLibraryDocsNameEveryFlag(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "library.md"))
	require.NoError(t, err)
	// Flags are written `--name` or `--name VALUE`; reflowed text may join
	// lines, so the page is read with its newlines as spaces.
	page := strings.ReplaceAll(string(data), "\n", " ")
	for _, command := range []string{"check", "retrieve"} {
		for _, f := range helpFlagsOf(t, command) {
			named := strings.Contains(page, "`--"+f.name+"`") || strings.Contains(page, "`--"+f.name+" ")
			assert.True(t, named, "docs/library.md does not name %s's --%s (its library counterpart, or that it is the CLI's)", command, f.name)
		}
	}
}
