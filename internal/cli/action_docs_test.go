package cli

import (
	"fmt"
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

// flagTableSections are where each command's flag tables are (the tables headed
// `| flag | default | …`): its page, from the line start to the line end ("" is
// the page's start or end).
var flagTableSections = map[string]struct{ page, start, end string }{
	"check":     {"check.md", "", ""},
	"compare":   {"compare.md", "", ""},
	"calibrate": {"calibrate.md", "", ""},
	"import":    {"import.md", "", ""},
	"retrieve":  {"retrieve.md", "", ""},
	"judge":     {"judge.md", "## `retrieval-gate judge`", "## `retrieval-gate generate`"},
	"generate":  {"judge.md", "## `retrieval-gate generate`", "## `retrieval-gate evaluate`"},
	"evaluate":  {"judge.md", "## `retrieval-gate evaluate`", "## Calibrating the judge"},
	"report":    {"history.md", "## `retrieval-gate report`", ""},
}

// flagRow is a row of a flag table: the flags its first cell names, in order,
// and its default cell.
type flagRow struct {
	line     int
	flags    []string
	defaults string
}

// flagRows are the rows of the flag tables of text (a table headed
// `| flag | default | …`, to its last row).
func flagRows(text string) []flagRow {
	var rows []flagRow
	inTable := false
	for i, l := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(l, "| flag | default |"):
			inTable = true
		case !strings.HasPrefix(l, "|"):
			inTable = false
		case inTable && !strings.HasPrefix(l, "|---"):
			// Cells are split at | (an escaped \| stays in its cell).
			cells := strings.Split(strings.Trim(strings.ReplaceAll(l, `\|`, "\x00"), "|"), "|")
			if len(cells) < 3 {
				continue
			}
			var flags []string
			for _, m := range regexp.MustCompile("`--([a-z0-9-]+)[` =\\[]").FindAllStringSubmatch(cells[0], -1) {
				flags = append(flags, m[1])
			}
			rows = append(rows, flagRow{line: i + 1, flags: flags, defaults: strings.ReplaceAll(cells[1], "\x00", "|")})
		}
	}
	return rows
}

// helpFlag is a flag as --help shows it.
type helpFlag struct {
	name     string
	boolean  bool   // shown without a value
	def      string // the literal default --help appends, "" when none
	required bool   // also: required with another flag, (--history; required)
}

// helpFlagsOf are command's flags as its --help lists them.
func helpFlagsOf(t *testing.T, command string) []helpFlag {
	t.Helper()
	code, help, stderr := runIn(t, map[string]string{}, command, "--help")
	require.Equal(t, 0, code, stderr)
	var out []helpFlag
	for _, m := range regexp.MustCompile(`(?m)^  --([a-z0-9-]+)( [^\n]+)?\n    \t(.*)$`).FindAllStringSubmatch(help, -1) {
		f := helpFlag{name: m[1], boolean: m[2] == "", required: regexp.MustCompile(`\((?:--[a-z-]+; )?required[;)]`).MatchString(m[3])}
		// The default --help appends: a quoted text, or a value without spaces
		// (a default described in words, $CHROMA_URL when …, is the usage's own).
		if d := regexp.MustCompile(`\(default ("[^"]*"|[^ ()]+)\)$`).FindStringSubmatch(m[3]); d != nil {
			f.def = strings.Trim(d[1], `"`)
		}
		out = append(out, f)
	}
	require.NotEmpty(t, out, "%s --help lists its flags", command)
	return out
}

// defaultFor is the part of a row's default cell that is flag's: the cell
// split at ", " when it has one part per flag of the row, else the whole cell;
// code spans' backticks removed.
func (r flagRow) defaultFor(flag string) string {
	cell := strings.TrimSpace(strings.ReplaceAll(r.defaults, "`", ""))
	parts := strings.Split(cell, ", ")
	if len(parts) == len(r.flags) && len(parts) > 1 {
		for i, f := range r.flags {
			if f == flag {
				return parts[i]
			}
		}
	}
	return cell
}

// Each command's flag tables (its page's, or its section's of a shared page)
// agree with its --help: every flag of --help has a row, every flag a row
// names is one of the command's, and a row gives the flag's default as --help
// does (the value --help appends; `required` for a required flag; `off` for a
// boolean).
func TestFlagTablesAgreeWithHelp(t *testing.T) {
	for _, c := range commands(nil) {
		sec, ok := flagTableSections[c.Name]
		require.True(t, ok, "%s has a section of flag tables", c.Name)
		data, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", sec.page))
		require.NoError(t, err)
		text := string(data)
		offset := 0
		if sec.start != "" {
			i := strings.Index(text, "\n"+sec.start+"\n")
			require.GreaterOrEqual(t, i, 0, "docs/%s has %q", sec.page, sec.start)
			offset = strings.Count(text[:i+1], "\n")
			text = text[i+1:]
		}
		if sec.end != "" {
			i := strings.Index(text, "\n"+sec.end+"\n")
			require.GreaterOrEqual(t, i, 0, "docs/%s has %q", sec.page, sec.end)
			text = text[:i+1]
		}
		rows := flagRows(text)
		require.NotEmpty(t, rows, "docs/%s: the flag tables of %s", sec.page, c.Name)
		help := helpFlagsOf(t, c.Name)
		known := map[string]bool{}
		for _, f := range help {
			known[f.name] = true
		}
		for _, r := range rows {
			assert.NotEmpty(t, r.flags, "docs/%s:%d: a row names its flags as `--flag`", sec.page, offset+r.line)
			for _, f := range r.flags {
				assert.True(t, known[f], "docs/%s:%d: %s has no flag --%s", sec.page, offset+r.line, c.Name, f)
			}
		}
		for _, f := range help {
			var mine []flagRow
			for _, r := range rows {
				if slices.Contains(r.flags, f.name) {
					mine = append(mine, r)
				}
			}
			if !assert.NotEmpty(t, mine, "docs/%s: %s's flag tables have no row for --%s", sec.page, c.Name, f.name) {
				continue
			}
			saysRequired := false
			for _, r := range mine {
				where := fmt.Sprintf("docs/%s:%d: %s --%s", sec.page, offset+r.line, c.Name, f.name)
				d := r.defaultFor(f.name)
				saysRequired = saysRequired || strings.HasPrefix(d, "required")
				switch {
				case f.def != "":
					assert.Contains(t, d, f.def, "%s: --help says the default is %q", where, f.def)
				case f.boolean && !strings.HasPrefix(d, "as for "):
					assert.Equal(t, "off", d, "%s: a boolean is off unless given", where)
				}
				if strings.HasPrefix(d, "required") {
					assert.True(t, f.required, "%s: the page says required, --help does not", where)
				}
			}
			if f.required {
				assert.True(t, saysRequired, "docs/%s: %s --%s: --help says it is required, no row does", sec.page, c.Name, f.name)
			}
		}
	}
}

// An input a command gives a default of its own inside the Action (json:
// retrieval-gate-judge.json for judge) has that default in docs/action.md's
// inputs table, in the row that names the input.
func TestActionDefaultsDocumented(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "action.md"))
	require.NoError(t, err)
	rows := map[string]string{} // input -> its row's default cell
	for _, m := range regexp.MustCompile("(?m)^\\| (`[a-z0-9-]+`(?:, `[a-z0-9-]+`)*) \\| ([^|]*) \\|").FindAllStringSubmatch(string(data), -1) {
		for _, in := range regexp.MustCompile("`([a-z0-9-]+)`").FindAllStringSubmatch(m[1], -1) {
			if _, dup := rows[in[1]]; !dup {
				rows[in[1]] = m[2]
			}
		}
	}
	inputs := map[string]actionInputs{"check": checkInputs, "compare": compareInputs, "calibrate": calibrateInputs, "retrieve": retrieveInputs,
		"import": importInputs, "judge": judgeInputs, "generate": generateInputs, "evaluate": evaluateInputs, "report": reportInputs}
	n := 0
	for cmd, in := range inputs {
		for name, def := range in {
			if def == "" {
				continue
			}
			n++
			row, ok := rows[name]
			if assert.True(t, ok, "docs/action.md's inputs table has a row for %s", name) {
				assert.Contains(t, row, "`"+def+"`", "docs/action.md: the default of %s for %s", name, cmd)
			}
		}
	}
	assert.Positive(t, n, "some inputs have an Action default")
}
