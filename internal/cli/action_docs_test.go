package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
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

// docs/action.md's table "Flags with no input" names, for each command, exactly
// the flags of its --help that are not Action inputs: a flag added without an
// input, or an input added for a listed flag, changes the table.
func TestFlagsWithoutInputDocumented(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "action.md"))
	require.NoError(t, err)
	doc := string(data)
	start := strings.Index(doc, "### Flags with no input\n")
	require.GreaterOrEqual(t, start, 0, "docs/action.md has the section")
	section := doc[start+len("### Flags with no input\n"):]
	section = section[:strings.Index(section, "\n### ")]
	documented := map[string][]string{}
	for _, m := range regexp.MustCompile("(?m)^\\| (`[a-z]+`(?:, `[a-z]+`)*) \\| (.*) \\|$").FindAllStringSubmatch(section, -1) {
		var flags []string
		for _, f := range regexp.MustCompile("`--([a-z0-9-]+)`").FindAllStringSubmatch(m[2], -1) {
			flags = append(flags, f[1])
		}
		slices.Sort(flags)
		for _, c := range regexp.MustCompile("`([a-z]+)`").FindAllStringSubmatch(m[1], -1) {
			documented[c[1]] = flags
		}
	}
	inputs := map[string]actionInputs{"check": checkInputs, "compare": compareInputs, "calibrate": calibrateInputs, "retrieve": retrieveInputs,
		"import": importInputs, "judge": judgeInputs, "generate": generateInputs, "evaluate": evaluateInputs, "report": reportInputs}
	flagLine := regexp.MustCompile(`(?m)^  --([a-z0-9-]+)`)
	for _, c := range commands(nil) {
		code, help, stderr := runIn(t, map[string]string{}, c.Name, "--help")
		require.Equal(t, 0, code, stderr)
		var without []string
		for _, m := range flagLine.FindAllStringSubmatch(help, -1) {
			if _, ok := inputs[c.Name][m[1]]; !ok {
				without = append(without, m[1])
			}
		}
		require.NotEmpty(t, flagLine.FindAllString(help, -1), "%s --help lists its flags", c.Name)
		slices.Sort(without)
		without = slices.Compact(without)
		doc, ok := documented[c.Name]
		if assert.True(t, ok, "the table has a row for %s", c.Name) {
			assert.Equal(t, without, doc, "%s: the flags without an input", c.Name)
		}
	}
}

// Every flag of a command's --help is in its documentation page, written as
// `--flag` (a flag table's row, or the text).
func TestEveryFlagOnItsPage(t *testing.T) {
	pages := map[string]string{"check": "check.md", "compare": "compare.md", "calibrate": "calibrate.md", "judge": "judge.md",
		"generate": "judge.md", "evaluate": "judge.md", "import": "import.md", "retrieve": "retrieve.md", "report": "history.md"}
	flagLine := regexp.MustCompile(`(?m)^  --([a-z0-9-]+)`)
	for _, c := range commands(nil) {
		page, ok := pages[c.Name]
		require.True(t, ok, "%s has a page", c.Name)
		data, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", page))
		require.NoError(t, err)
		code, help, stderr := runIn(t, map[string]string{}, c.Name, "--help")
		require.Equal(t, 0, code, stderr)
		flags := flagLine.FindAllStringSubmatch(help, -1)
		require.NotEmpty(t, flags, "%s --help lists its flags", c.Name)
		for _, m := range flags {
			named := regexp.MustCompile("`--" + regexp.QuoteMeta(m[1]) + "[` =\\[]").Match(data)
			assert.True(t, named, "docs/%s names %s's --%s", page, c.Name, m[1])
		}
	}
}
