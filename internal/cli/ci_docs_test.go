package cli

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// errParsed stops a command after its parsing: the test checks the flags alone.
var errParsed = errors.New("parsed")

// docs/ci.md's CI configurations are YAML that parses, and the GitLab job
// publishes its reports where GitLab reads them. (Every retrieval-gate command
// line in them, GitLab CI, Azure Pipelines, Buildkite, CircleCI and the
// Jenkinsfile's sh step, is parsed by TestDocCommandLinesParse.)
func TestCIDocsConfigurations(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "ci.md"))
	require.NoError(t, err)
	doc := string(data)
	blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(doc, -1)
	require.GreaterOrEqual(t, len(blocks), 6, "GitHub (two), GitLab (two), Azure Pipelines, Buildkite, CircleCI")
	var gitlab map[string]any
	for _, b := range blocks {
		var v any
		require.NoError(t, yaml.Unmarshal([]byte(b[1]), &v), "%s", b[1])
		if strings.Contains(b[1], "# .gitlab-ci.yml") {
			gitlab = v.(map[string]any)
		}
	}
	require.NotNil(t, gitlab, "the .gitlab-ci.yml example")
	mr := gitlab["retrieval-gate"].(map[string]any)
	reports := mr["artifacts"].(map[string]any)["reports"].(map[string]any)
	assert.Equal(t, "retrieval-gate.xml", reports["junit"])
	assert.Equal(t, "gl-code-quality.json", reports["codequality"])
	require.Contains(t, gitlab, "retrieval-gate-baseline-default", "the job --baseline auto looks for by default")
	// The default branch publishes the same reports: GitLab's Code Quality
	// widget compares a merge request's report with the target branch's.
	base := gitlab["retrieval-gate-baseline-default"].(map[string]any)
	baseReports := base["artifacts"].(map[string]any)["reports"].(map[string]any)
	assert.Equal(t, reports, baseReports)

	// Its command lines parse as every page's do (TestDocCommandLinesParse).
}
