package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// docs/action.md's inputs table names every command as a value of `command`, as
// action.yml's description does (TestActionYML).
func TestActionDocsNameEveryCommand(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "action.md"))
	require.NoError(t, err)
	row := regexp.MustCompile("(?m)^\\| `command` \\| `check` \\|(.*)$").FindStringSubmatch(string(data))
	require.NotNil(t, row, "the inputs table has the `command` row")
	for _, c := range commands(nil) {
		assert.Contains(t, row[1], "`"+c.Name+"`", "docs/action.md: the `command` input lists %s", c.Name)
	}
}
