package cli

import (
	"context"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/retrieval-gate/retrieval-gate/internal/e2e/e2etest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dashOutputs are every output flag of every command but import's --out, each
// with arguments that parse (the inputs are named, never read: the refusal
// comes first) and the flag given "-".
var dashOutputs = []struct {
	cmd, flag string
	args      []string
}{
	{"calibrate", "json", []string{"--human", "h.jsonl", "--judge", "j.jsonl", "--lock", "lock.json"}},
	{"calibrate", "markdown", []string{"--human", "h.jsonl", "--judge", "j.jsonl", "--lock", "lock.json"}},
	{"check", "json", []string{"--cases", "c.jsonl", "--kb", "kb"}},
	{"check", "markdown", []string{"--cases", "c.jsonl", "--kb", "kb"}},
	{"check", "cases-out", []string{"--cases", "c.jsonl", "--kb", "kb"}},
	{"check", "html", []string{"--cases", "c.jsonl", "--kb", "kb"}},
	{"check", "junit", []string{"--cases", "c.jsonl", "--kb", "kb"}},
	{"check", "codequality", []string{"--cases", "c.jsonl", "--kb", "kb"}},
	{"check", "history", []string{"--cases", "c.jsonl", "--kb", "kb"}},
	{"check", "write-baseline", []string{"--cases", "c.jsonl", "--kb", "kb"}},
	{"compare", "json", []string{"--qrels", "q.txt", "--run", "a=a.trec"}},
	{"compare", "markdown", []string{"--qrels", "q.txt", "--run", "a=a.trec"}},
	{"compare", "per-query", []string{"--qrels", "q.txt", "--run", "a=a.trec"}},
	{"compare", "html", []string{"--qrels", "q.txt", "--run", "a=a.trec"}},
	{"compare", "junit", []string{"--qrels", "q.txt", "--run", "a=a.trec"}},
	{"compare", "history", []string{"--qrels", "q.txt", "--run", "a=a.trec"}},
	{"evaluate", "out", []string{"--kb", "kb", "--judge-url", "http://127.0.0.1:1/v1"}},
	{"evaluate", "html", []string{"--kb", "kb", "--out", "eval", "--judge-url", "http://127.0.0.1:1/v1"}},
	{"evaluate", "history", []string{"--kb", "kb", "--out", "eval", "--judge-url", "http://127.0.0.1:1/v1"}},
	{"generate", "out", []string{"--kb", "kb", "--generator-url", "http://127.0.0.1:1/v1"}},
	{"generate", "batch-out", []string{"--kb", "kb"}},
	{"judge", "cache", []string{"--kb", "kb", "--run", "a=run.jsonl", "--judge-url", "http://127.0.0.1:1/v1", "--qrels", "q.txt"}},
	{"judge", "qrels", []string{"--kb", "kb", "--run", "a=run.jsonl", "--judge-url", "http://127.0.0.1:1/v1"}},
	{"judge", "judgments", []string{"--kb", "kb", "--run", "a=run.jsonl", "--judge-url", "http://127.0.0.1:1/v1"}},
	{"judge", "json", []string{"--kb", "kb", "--run", "a=run.jsonl", "--judge-url", "http://127.0.0.1:1/v1", "--qrels", "q.txt"}},
	{"judge", "batch-out", []string{"--kb", "kb", "--run", "a=run.jsonl"}},
	{"judge", "human-sheet", []string{"--kb", "kb", "--run", "a=run.jsonl", "--judge-url", "http://127.0.0.1:1/v1", "--qrels", "q.txt", "--human-sample", "5"}},
	{"report", "html", []string{"--history", "h.jsonl"}},
	{"report", "html", []string{"--from", "r.json"}},
	{"report", "markdown", []string{"--from", "r.json"}},
	{"retrieve", "out", []string{"--kb", "kb", "--cases", "c.jsonl"}},
}

// TestOutputDashRefused: an output flag given "-" is a usage error naming the
// flag (exit 2, the command's usage, nothing written, nothing run), not a
// file named "-" in the working directory; only import's --out writes to
// standard output. An Action input "-" is refused the same way, and ./- still
// names a file "-".
func TestOutputDashRefused(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	env := map[string]string{"RETRIEVAL_GATE_LLM_API_KEY": "k"}
	for _, tt := range dashOutputs {
		args := append(append([]string{tt.cmd}, tt.args...), "--"+tt.flag, "-")
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, stdout, stderr := runIn(t, env, args...)
			assert.Equal(t, ExitInput, code, stderr)
			assert.Equal(t, "retrieval-gate: "+tt.cmd+": --"+tt.flag+" -: only import's --out writes to standard output; give a path (./- for a file named \"-\")\n"+shortUsage(tt.cmd), stderr)
			assert.Empty(t, stdout)
			assert.Empty(t, e2etest.Entries(t, dir), "nothing written")
		})
	}
	t.Run("an Action input", func(t *testing.T) {
		env := map[string]string{"GITHUB_ACTIONS": "true", "INPUT_JSON": "-"}
		code, stdout, stderr := runIn(t, env, "check", "--cases", "c.jsonl", "--kb", "kb", "--comment", "never")
		assert.Equal(t, ExitInput, code, stderr)
		// Inside Actions the error is an annotation.
		assert.Contains(t, stdout, `::error title=retrieval-gate check%3A input error::check: action input "json": "-": only import's --out writes to standard output`)
		assert.Empty(t, e2etest.Entries(t, dir), "nothing written")
	})
	t.Run("./- is a file named -", func(t *testing.T) {
		var co *checkOptions
		err := NewCmdCheck(NewFactory(testEnv()),
			func(_ context.Context, o *checkOptions) error { co = o; return nil }).Run(context.Background(), []string{"--cases", "c.jsonl", "--kb", "kb", "--json", "./-"})
		require.NoError(t, err)
		assert.Equal(t, "./-", co.jsonOut)
	})
	t.Run("import --out - writes standard output", func(t *testing.T) {
		var io *importOptions
		err := NewCmdImport(NewFactory(testEnv()),
			func(_ context.Context, o *importOptions) error { io = o; return nil }).Run(context.Background(), []string{"--in", "in.csv", "--out", "-"})
		require.NoError(t, err)
		assert.Equal(t, "-", io.files.Out)
	})
}

// TestOutputDashCoversEveryOutput: dashOutputs lists every flag whose help
// says it writes or appends (the help of every command, --help), so an output
// flag added later is in the table, and refused, or is import's --out.
func TestOutputDashCoversEveryOutput(t *testing.T) {
	writes := regexp.MustCompile(`^(--from: )?(also )?(write|append)|^output `)
	var got, want []string
	for _, c := range commands(nil) {
		code, help, stderr := runIn(t, nil, c.Name, "--help")
		require.Equal(t, ExitOK, code, stderr)
		name := ""
		for _, line := range strings.Split(help, "\n") {
			if rest, ok := strings.CutPrefix(line, "  --"); ok {
				name, _, _ = strings.Cut(rest, " ")
			} else if usage, ok := strings.CutPrefix(line, "    \t"); ok && name != "" && writes.MatchString(usage) {
				if stdoutOutputs[c.Name] != name {
					got = append(got, c.Name+" --"+name)
				}
				name = ""
			}
		}
	}
	seen := map[string]bool{}
	for _, tt := range dashOutputs {
		if k := tt.cmd + " --" + tt.flag; !seen[k] {
			seen[k] = true
			want = append(want, k)
		}
	}
	sort.Strings(got)
	sort.Strings(want)
	assert.Equal(t, want, got)
}

// import --out - writes the converted file to standard output: inside
// Actions the workflow commands (the token's ::add-mask::, the warnings of
// a missing GITHUB_OUTPUT or GITHUB_STEP_SUMMARY) go to standard error, which
// the runner reads for them too, so the file is the same bytes as outside
// Actions and never holds the token.
func TestImportToStdoutKeepsWorkflowCommandsOut(t *testing.T) {
	in := filepath.Join(repoRoot(t), "testdata/formats/msmarco-run.tsv")
	code, plain, stderr := runIn(t, map[string]string{}, "import", "--in", in, "--out", "-")
	require.Equal(t, 0, code, stderr)
	require.NotEmpty(t, plain)
	const token = "ghs_FAKEtoken0123456789abcdefXYZ"
	for _, env := range []map[string]string{
		{"GITHUB_ACTIONS": "true", "GITHUB_TOKEN": token}, // no output or summary file: two warnings
		func() map[string]string {
			env, _, _ := actionsEnv(t, map[string]string{"GITHUB_TOKEN": token})
			return env
		}(),
	} {
		code, stdout, stderr := runIn(t, env, "import", "--in", in, "--out", "-")
		require.Equal(t, 0, code, stderr)
		assert.Equal(t, plain, stdout, "the converted file, and nothing else")
		assert.NotContains(t, stdout, token)
		assert.Contains(t, stderr, "::add-mask::"+token+"\n", "the mask, where the runner reads it")
	}
	// A usage error before the run: its ::error is on stderr too, stdout empty.
	for _, args := range [][]string{{"--format", "bogus", "--in", in, "--out", "-"}, {"--out=-", "--in", in, "--format", "bogus"}} {
		code, stdout, stderr := runIn(t, map[string]string{"GITHUB_ACTIONS": "true"}, append([]string{"import"}, args...)...)
		assert.Equal(t, ExitInput, code)
		assert.Empty(t, stdout, "%v", args)
		assert.Contains(t, stderr, "::error ", "%v", args)
	}
}
