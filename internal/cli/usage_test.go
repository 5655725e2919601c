package cli

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 32 item 10: a mistake on the command line is one line that names the
// flag as it is written and what it wants (the nearest flag for a misspelled
// one), then the command's two-line usage: never the flag package's dump of
// every flag with a single dash.
func TestFlagMistakes(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string // the message line
	}{
		{[]string{"check", "--case", "c.jsonl", "--kb", "kb"}, "check: unknown flag --case; did you mean --cases?"},
		{[]string{"check", "-case", "c.jsonl"}, "check: unknown flag --case; did you mean --cases?"},
		{[]string{"check", "--cases=c.jsonl", "--min-hti", "0.5"}, "check: unknown flag --min-hti; did you mean --min-hit?"},
		{[]string{"check", "--kbb", "kb"}, "check: unknown flag --kbb; did you mean --kb?"},
		{[]string{"check", "--markdwon=x.md"}, "check: unknown flag --markdwon; did you mean --markdown?"},
		{[]string{"check", "--zzzzzz"}, "check: unknown flag --zzzzzz"},
		{[]string{"retrieve", "--top-k", "3"}, "retrieve: unknown flag --top-k; did you mean --k?"},
		{[]string{"compare", "--qrel", "q"}, "compare: unknown flag --qrel; did you mean --qrels?"},
		{[]string{"judge", "--judge-ur", "u"}, "judge: unknown flag --judge-ur; did you mean --judge-url?"},
		{[]string{"report", "--histroy", "h"}, "report: unknown flag --histroy; did you mean --history?"},
		{[]string{"import", "--input", "x"}, "import: unknown flag --input; did you mean --in?"},
		{[]string{"check", "--k", "five"}, `check: --k "five" is not an integer (--k N: the retrieval top-k (≥ 1); default: the baseline's k when comparing, else the k the run records (retrieval.k of its first case), else 5)`},
		{[]string{"check", "--k", "99999999999999999999"}, `check: --k "99999999999999999999" is out of range (--k N: the retrieval top-k`},
		{[]string{"check", "--k"}, "check: --k needs a value (--k N: the retrieval top-k"},
		{[]string{"check", "--min-hit", "1.5"}, `check: --min-hit "1.5" is outside [0,1] (--min-hit VALUE: floor on the overall mean hit@k, in [0,1]; none or empty is off)`},
		{[]string{"check", "--comment", "sometimes"}, `check: --comment "sometimes" is not one of auto, always, never (--comment VALUE: whether to comment on the PR`},
		{[]string{"check", "--allow-empty=maybe"}, `check: --allow-empty takes no value, or =true or =false: "maybe" is not a boolean`},
		{[]string{"check", "--floor", "hit=0.5"}, `check: --floor: "hit=0.5": unknown measure "hit"`},
		{[]string{"judge", "--batch-poll", "soon"}, `judge: --batch-poll "soon" is not a duration (such as 30s, 5m or 1h)`},
		{[]string{"compare", "--bootstrap", "many"}, `compare: --bootstrap "many" is not an integer (--bootstrap N: resamples`},
		{[]string{"check", "--cases", "c.jsonl", "--kb", "kb", "extra"}, `check: unexpected argument "extra" (every argument is a flag)`},
		{[]string{"check", "--kb", "kb"}, "check: --cases is required"},
		{[]string{"retrieve", "--kb", "kb", "--cases", "c.jsonl"}, "retrieve: --out is required"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, stdout, stderr := runIn(t, map[string]string{}, tt.args...)
			assert.Equal(t, ExitInput, code)
			assert.Empty(t, stdout)
			lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
			require.Len(t, lines, 3, stderr)
			assert.True(t, strings.HasPrefix(lines[0], "retrieval-gate: "+tt.want), "got  %s\nwant %s", lines[0], tt.want)
			assert.Equal(t, "usage: retrieval-gate "+tt.args[0]+" "+commandArgs[tt.args[0]], lines[1])
			assert.Equal(t, "       'retrieval-gate "+tt.args[0]+" --help' lists every flag", lines[2])
			assert.NotContains(t, stderr, "Usage of")
			assert.NotRegexp(t, `(?m)^\s+-[a-z]`, stderr, "no flag with a single dash")
		})
	}
}

// Inside Actions the message is the annotation, with no usage under it (the
// Action's inputs, not flags, are what the user wrote).
func TestFlagMistakeInActions(t *testing.T) {
	code, stdout, stderr := runIn(t, map[string]string{"GITHUB_ACTIONS": "true"}, "check", "--case", "c.jsonl")
	assert.Equal(t, ExitInput, code)
	assert.Contains(t, stdout, "::error title=retrieval-gate check%3A input error::check: unknown flag --case; did you mean --cases?\n")
	assert.NotContains(t, stderr, "usage:")
}

// Every command's help, asked with --help, -h or `help COMMAND`, is on stdout
// with exit 0: its usage line, its synopsis and every flag with a double dash.
func TestHelp(t *testing.T) {
	for _, c := range commands(nil) {
		t.Run(c.Name, func(t *testing.T) {
			require.Contains(t, commandArgs, c.Name, "every command has its usage line")
			code, help, stderr := runIn(t, map[string]string{}, c.Name, "--help")
			require.Equal(t, ExitOK, code)
			assert.Empty(t, stderr)
			assert.True(t, strings.HasPrefix(help, "usage: retrieval-gate "+c.Name+" "+commandArgs[c.Name]+"\n\n"+c.Synopsis+"\n\nflags:\n"), help)
			assert.NotRegexp(t, `(?m)^  -[^-]`, help, "every flag with its double dash")
			assert.Regexp(t, `(?m)^  --[a-z]`, help)
			assert.Contains(t, help, "Exit codes: 0 every active gate passed, 1 a gate failed, 2 a usage or input error.")
			for _, args := range [][]string{{c.Name, "-h"}, {"help", c.Name}} {
				code, again, _ := runIn(t, map[string]string{}, args...)
				assert.Equal(t, ExitOK, code)
				assert.Equal(t, help, again, "%v", args)
			}
		})
	}
	code, _, stderr := runIn(t, map[string]string{}, "help", "chekc")
	assert.Equal(t, ExitInput, code)
	assert.Contains(t, stderr, `retrieval-gate: help: unknown command "chekc"`)
	_, help, _ := runIn(t, map[string]string{}, "check", "--help")
	assert.Contains(t, help, "  --k N\n    \tthe retrieval top-k")
	assert.Contains(t, help, "  --comment-key TEXT\n    \tkey of the PR comment, so several gates keep one comment each (default \"default\")\n")
	assert.Contains(t, help, "  --comment VALUE\n    \twhether to comment on the PR: auto (on a pull request inside Actions, with a token; on a merge request in GitLab CI, with GITLAB_TOKEN), always (also with --pr elsewhere) or never (default auto)\n")
	// --pr is the merge request's iid in GitLab CI, whose default is CI_MERGE_REQUEST_IID
	// (docs/ci.md); before, the help named the GitHub event alone.
	assert.Contains(t, help, "  --pr N\n    \tpull request number for the comment, the merge request's iid in GitLab CI (default: from the GitHub event; in GitLab CI, CI_MERGE_REQUEST_IID)\n")
	assert.Contains(t, help, "  --allow-empty\n    \tpass when no gold-carrying case was scored (by default that fails the non_empty gate)\n")
}

func TestNearestFlag(t *testing.T) {
	for _, tt := range []struct{ a, b string }{{"cases", "cases"}, {"kitten", "sitting"}, {"ab", "ba"}, {"", "abc"}} {
		assert.Equal(t, editDistance(tt.a, tt.b), editDistance(tt.b, tt.a))
	}
	assert.Equal(t, 0, editDistance("cases", "cases"))
	assert.Equal(t, 3, editDistance("kitten", "sitting"))
	assert.Equal(t, 1, editDistance("ab", "ba"), "a transposition is one edit")
	assert.Equal(t, 3, editDistance("", "abc"))
}

// report's --help names every source of the history page that its parser
// accepts: --history, --history-branch or --from.
func TestReportHelpNamesEverySource(t *testing.T) {
	code, _, stderr := runIn(t, map[string]string{}, "report", "--html", filepath.Join(t.TempDir(), "h.html"))
	require.Equal(t, 2, code)
	assert.Contains(t, stderr, "report: --history, --history-branch or --from is required")
	code, help, _ := runIn(t, map[string]string{}, "report", "--help")
	require.Equal(t, 0, code)
	line := regexp.MustCompile(`(?m)^  --history DIR\n.*$`).FindString(help)
	assert.Contains(t, line, "(this, --history-branch or --from is required)")
}
