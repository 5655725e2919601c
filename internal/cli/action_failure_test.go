package cli

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/github/githubtest"
	"github.com/retrieval-gate/retrieval-gate/internal/input"
)

// demoInputs writes a small KB and cases into dir (the Action's workspace).
func demoInputs(t *testing.T, dir string) {
	t.Helper()
	for name, text := range map[string]string{
		"kb.jsonl":          `{"id":"a","locale":"en","text":"alpha"}` + "\n" + `{"id":"b","locale":"en","text":"beta"}` + "\n",
		"eval/cases.jsonl":  `{"id":"c1","locale":"en","must_cite_one_of":["a"],"retrieved":["a","b"]}` + "\n",
		"eval/broken.jsonl": `{"id":"c1","must_cite_one_of":["a"],"retrieved":["a"]}` + "\n" + `{"id":"c2","must_cite_one_of":["a"],` + "\n",
		"eval/stale.jsonl":  `{"id":"c1","locale":"en","must_cite_one_of":["a"],"retrieved":["a","gone-1"]}` + "\n" + `{"id":"c2","locale":"en","must_cite_one_of":["b"],"retrieved":["gone-2","b"]}` + "\n",
	} {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	}
}

// Issue 13: a bad Action input value names the input and the value, for every
// kind of flag, with an ::error:: annotation and a job-summary entry, exit 2 and
// nothing written.
func TestActionInputErrors(t *testing.T) {
	root := repoRoot(t)
	tests := []struct {
		command string
		with    map[string]string
		want    string
	}{
		{"check", map[string]string{"k": "five"}, `action input "k": "five" is not an integer`},
		{"check", map[string]string{"k": "99999999999999999999"}, `action input "k": "99999999999999999999" is out of range for an integer`},
		{"check", map[string]string{"min-hit": "high"}, `action input "min-hit": "high" is not a number in [0,1] (or none)`},
		{"check", map[string]string{"min-recall": "1.5"}, `action input "min-recall": "1.5" is outside [0,1]`},
		{"check", map[string]string{"comment": "sometimes"}, `action input "comment": "sometimes" is not one of auto, always, never`},
		{"check", map[string]string{"comment-mode": "daily"}, `action input "comment-mode": "daily" is not one of always, changes, failures, off`},
		{"check", map[string]string{"pr": "seven"}, `action input "pr": "seven" is not an integer`},
		{"compare", map[string]string{"gain": "cubic"}, `action input "gain": "cubic" is not one of exp, linear`},
		{"compare", map[string]string{"bootstrap": "1e3"}, `action input "bootstrap": "1e3" is not an integer`},
		{"calibrate", map[string]string{"git-anchoring": "yes please"}, `action input "git-anchoring": "yes please" is not a boolean (true or false)`},
		{"retrieve", map[string]string{"all-locales": "sure"}, `action input "all-locales": "sure" is not a boolean (true or false)`},
		{"generate", map[string]string{"dedup-jaccard": "lots"}, `action input "dedup-jaccard": "lots" is not a number`},
		{"judge", map[string]string{"max-requests": "-x"}, `action input "max-requests": "-x" is not an integer`},
	}
	for _, tc := range tests {
		t.Run(tc.command+" "+tc.want[len(`action input `):strings.Index(tc.want, ":")], func(t *testing.T) {
			dir := t.TempDir()
			t.Chdir(dir)
			demoInputs(t, dir)
			with := map[string]string{"command": tc.command, "cases": "eval/cases.jsonl", "kb": "kb.jsonl"}
			for k, v := range tc.with {
				with[k] = v
			}
			env, outputFile, summary := actionsEnv(t, actionDefaults(t, root, with))
			env["GITHUB_WORKSPACE"] = dir
			code, stdout, stderr := runIn(t, env, tc.command)
			require.Equal(t, ExitInput, code, stdout+stderr)
			assert.Contains(t, stdout, "::error title=retrieval-gate "+tc.command+"%3A input error::"+tc.want+"\n")
			assert.Equal(t, 1, strings.Count(stdout+stderr, tc.want), "said once, as the annotation")
			sum, err := os.ReadFile(summary)
			require.NoError(t, err)
			assert.Contains(t, string(sum), "## retrieval-gate "+tc.command+": input error")
			assert.Contains(t, string(sum), "```text\n"+tc.want+"\n```")
			out, err := os.ReadFile(outputFile)
			require.NoError(t, err)
			assert.Empty(t, out, "no step outputs")
			for _, f := range []string{"retrieval-gate.json", "retrieval-gate-compare.json", "retrieval-gate-calibrate.json"} {
				assert.NoFileExists(t, filepath.Join(dir, f))
			}
		})
	}

	// Outside Actions the same mistake on the command line is a usage error on
	// stderr, and no workflow command.
	code, stdout, stderr := runIn(t, map[string]string{}, "check", "--cases", "x", "--kb", "y", "--k", "five")
	assert.Equal(t, ExitInput, code)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, `check: --k "five" is not an integer (--k N: the retrieval top-k`)
	assert.Contains(t, stderr, "usage: retrieval-gate check --cases FILE --kb PATH [flags]\n", "the short usage under it")
}

// Issue 13: an input error that names a file and line is annotated there (the
// path relative to the workspace) and summarised; one without is annotated
// without a file.
func TestActionInputErrorAnnotatedAtFileLine(t *testing.T) {
	root := repoRoot(t)
	dir := t.TempDir()
	t.Chdir(dir)
	demoInputs(t, dir)
	env, outputFile, summary := actionsEnv(t, actionDefaults(t, root, map[string]string{"cases": filepath.Join(dir, "eval/broken.jsonl"), "kb": "kb.jsonl"}))
	env["GITHUB_WORKSPACE"] = dir
	code, stdout, stderr := runIn(t, env, "check")
	require.Equal(t, ExitInput, code, stdout+stderr)
	assert.Regexp(t, `(?m)^::error file=eval/broken.jsonl,line=2,title=retrieval-gate check%3A input error::.*eval/broken.jsonl:2: `, stdout)
	assert.Empty(t, stderr, "inside Actions the annotation is the error's one line")
	sum, err := os.ReadFile(summary)
	require.NoError(t, err)
	assert.Contains(t, string(sum), "In ` eval/broken.jsonl:2 `:")
	out, err := os.ReadFile(outputFile)
	require.NoError(t, err)
	assert.Empty(t, out)
	assert.NoFileExists(t, filepath.Join(dir, "retrieval-gate.json"), "nothing written")

	// A missing required input: an annotation without a file.
	env, _, summary = actionsEnv(t, actionDefaults(t, root, map[string]string{"kb": "kb.jsonl"}))
	code, stdout, _ = runIn(t, env, "check")
	require.Equal(t, ExitInput, code)
	assert.Contains(t, stdout, "::error title=retrieval-gate check%3A input error::check: --cases is required\n")
	sum, err = os.ReadFile(summary)
	require.NoError(t, err)
	assert.NotContains(t, string(sum), "In `")
}

func TestErrorLocation(t *testing.T) {
	tests := []struct {
		err  error
		file string
		line int
	}{
		{input.Errorf("eval/cases.jsonl", 3, "duplicate key %q", "id"), "eval/cases.jsonl", 3},
		{input.Errorf("kb", 0, "empty"), "kb", 0},
		{wrapf("failed to read qrels: %w", input.Errorf("q.txt", 9, "bad")), "q.txt", 9},
		{errString("failed to read run \"a\": runs/a.trec:12: want 6 columns"), "runs/a.trec", 12},
		{errString(`C:\data\cases.jsonl:4: bad`), `C:\data\cases.jsonl`, 4},
		{errString("check: --k must be at least 1, got 0"), "", 0},
		{errString("dial tcp 127.0.0.1:8000: connection refused"), "", 0},
		{errString("time 12:30: later"), "", 0},
	}
	for _, tc := range tests {
		file, line := input.Location(tc.err)
		assert.Equal(t, tc.file, file, tc.err.Error())
		assert.Equal(t, tc.line, line, tc.err.Error())
	}
}

type errString string

func (e errString) Error() string { return string(e) }

func wrapf(format string, err error) error {
	return &wrapped{msg: strings.Replace(format, "%w", err.Error(), 1), err: err}
}

type wrapped struct {
	msg string
	err error
}

func (w *wrapped) Error() string { return w.msg }
func (w *wrapped) Unwrap() error { return w.err }

// Issue 13: the stale-index warning is said once: as a ::warning:: inside
// Actions (the terminal report leaves it out), in the terminal report outside.
func TestStaleIndexWarningOnce(t *testing.T) {
	root := repoRoot(t)
	dir := t.TempDir()
	t.Chdir(dir)
	demoInputs(t, dir)
	env, _, summary := actionsEnv(t, actionDefaults(t, root, map[string]string{"cases": "eval/stale.jsonl", "kb": "kb.jsonl"}))
	env["GITHUB_WORKSPACE"] = dir
	code, stdout, stderr := runIn(t, env, "check")
	require.Equal(t, ExitOK, code, stdout+stderr)
	assert.Equal(t, 1, strings.Count(stdout+stderr, "stale index"), stdout+stderr)
	assert.Regexp(t, `(?m)^::warning::retrieval-gate: 2 retrieved entries in 2 cases are not cards of the knowledge base \(a stale index\?\), e.g. gone-1, gone-2\. This is a warning, not a failure\.$`, stdout)
	sum, err := os.ReadFile(summary)
	require.NoError(t, err)
	assert.Contains(t, string(sum), "stale index", "the job summary keeps the report's warning")

	code, stdout, stderr = runIn(t, map[string]string{}, "check", "--cases", "eval/stale.jsonl", "--kb", "kb.jsonl")
	require.Equal(t, ExitOK, code)
	assert.Equal(t, 1, strings.Count(stdout+stderr, "stale index"), stdout+stderr)
	assert.NotContains(t, stdout, "::")
}

// Issue 13: inside a Docker action the workspace is mounted at GITHUB_WORKSPACE
// (/github/workspace) and is the working directory; the next step sees the same
// files at its own workspace path. Path outputs are therefore relative to the
// workspace, however the input named the file (relative, absolute inside the
// workspace, through a symbolic link to it), and a path outside the workspace
// gets a warning.
func TestActionPathOutputsRelativeToWorkspace(t *testing.T) {
	root := repoRoot(t)
	base := t.TempDir()
	ws := filepath.Join(base, "github", "workspace")
	require.NoError(t, os.MkdirAll(ws, 0o755))
	demoInputs(t, ws)
	link := filepath.Join(base, "ws-link")
	require.NoError(t, os.Symlink(ws, link))
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "reports"), 0o755))
	outside := filepath.Join(base, "elsewhere")
	require.NoError(t, os.MkdirAll(outside, 0o755))

	tests := []struct {
		name, workspace, json, wantOutput, wantFile string
		wantWarning                                 bool
	}{
		{"relative", ws, "reports/agg.json", "reports/agg.json", "reports/agg.json", false},
		{"dot-relative", ws, "./reports/../reports/agg.json", "reports/agg.json", "reports/agg.json", false},
		{"absolute inside the workspace", ws, filepath.Join(ws, "reports", "abs.json"), "reports/abs.json", "reports/abs.json", false},
		{"workspace through a symlink", link, "reports/agg.json", "reports/agg.json", "reports/agg.json", false},
		{"absolute through the symlink", link, filepath.Join(link, "reports", "l.json"), "reports/l.json", "reports/l.json", false},
		{"resolved absolute path, workspace through a symlink", link, filepath.Join(ws, "reports", "r.json"), "reports/r.json", "reports/r.json", false},
		{"default", ws, "", "retrieval-gate.json", "retrieval-gate.json", false},
		{"outside the workspace", ws, filepath.Join(outside, "agg.json"), filepath.ToSlash(filepath.Join(outside, "agg.json")), "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Chdir(ws)
			with := map[string]string{"cases": "eval/cases.jsonl", "kb": "kb.jsonl", "json": tc.json}
			if tc.json == "" {
				delete(with, "json")
			}
			env, outputFile, _ := actionsEnv(t, actionDefaults(t, root, with))
			env["GITHUB_WORKSPACE"] = tc.workspace
			code, stdout, stderr := runIn(t, env, "check")
			require.Equal(t, ExitOK, code, stdout+stderr)
			out, err := os.ReadFile(outputFile)
			require.NoError(t, err)
			assert.Regexp(t, `(?m)^json<<_GitHubActionsFileCommandDelimeter_\n`+regexpQuote(tc.wantOutput)+`$`, string(out))
			if tc.wantFile != "" {
				// The next step, in its own working directory (the workspace),
				// finds the file at the output's path.
				assert.FileExists(t, filepath.Join(ws, filepath.FromSlash(tc.wantOutput)))
			}
			if tc.wantWarning {
				assert.Contains(t, stdout, "::warning::the `json` output "+tc.wantOutput+" is outside the workspace")
			} else {
				assert.NotContains(t, stdout, "::warning::")
			}
		})
	}
}

func regexpQuote(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`\.+*?()|[]{}^$`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Issue 13: compare keeps its own sticky comment (key compare) next to check's
// (key default), with its job summary and outputs; neither overwrites the other.
func TestCompareKeepsItsOwnComment(t *testing.T) {
	root := repoRoot(t)
	dir := t.TempDir()
	t.Chdir(dir)
	demoInputs(t, dir)
	require.NoError(t, os.WriteFile("qrels.txt", []byte("q1 0 a 3\nq2 0 b 2\n"), 0o644))
	require.NoError(t, os.WriteFile("a.trec", []byte("q1 Q0 a 1 0.9 a\nq2 Q0 b 1 0.9 a\n"), 0o644))
	srv := githubtestNew(t)
	event := filepath.Join(dir, "event.json")
	require.NoError(t, os.WriteFile(event, []byte(`{"number":7,"pull_request":{"number":7,"head":{"repo":{"full_name":"octo/repo"}},"base":{"repo":{"full_name":"octo/repo"}}}}`), 0o644))
	for _, step := range []map[string]string{
		{"command": "check", "cases": "eval/cases.jsonl", "kb": "kb.jsonl"},
		{"command": "compare", "qrels": "qrels.txt", "run": "a=a.trec", "bootstrap": "50"},
		{"command": "compare", "qrels": "qrels.txt", "run": "a=a.trec", "bootstrap": "50", "comment-mode": "changes"},
	} {
		step["github-token"] = "ghs_x1234"
		env, outputFile, summary := actionsEnv(t, actionDefaults(t, root, step))
		env["GITHUB_API_URL"], env["GITHUB_EVENT_NAME"], env["GITHUB_EVENT_PATH"], env["GITHUB_WORKSPACE"] = srv.APIURL(), "pull_request", event, dir
		code, stdout, stderr := runIn(t, env, step["command"])
		require.Equal(t, ExitOK, code, stdout+stderr)
		sum, err := os.ReadFile(summary)
		require.NoError(t, err)
		assert.NotEmpty(t, sum)
		if step["command"] == "compare" {
			out, err := os.ReadFile(outputFile)
			require.NoError(t, err)
			assert.Contains(t, string(out), "json<<_GitHubActionsFileCommandDelimeter_\nretrieval-gate-compare.json\n")
			assert.Contains(t, string(out), "recommended<<")
		}
		if step["comment-mode"] == "changes" {
			assert.Contains(t, stderr, "PR comment unchanged (--comment-mode changes)")
		}
	}
	cs := srv.Comments(7)
	require.Len(t, cs, 2)
	assert.True(t, strings.HasPrefix(cs[0].Body, "<!-- retrieval-gate:default -->\n"))
	assert.True(t, strings.HasPrefix(cs[1].Body, "<!-- retrieval-gate:compare -->\n"))
}

func githubtestNew(t *testing.T) *githubtest.Server {
	t.Helper()
	srv := githubtest.New("octo", "repo", "", 7)
	t.Cleanup(srv.Close)
	return srv
}

// Issue 13: a value refused after parsing (a range, a choice, a combination)
// is named where it came from: an Action input by the input and the value as
// given, the same value on the command line by its flag. Inside Actions it is
// the ::error:: annotation and the job summary's entry, exit 2 and nothing
// written; on the command line one line on stderr.
func TestActionInputValueChecks(t *testing.T) {
	root := repoRoot(t)
	base := map[string]map[string]string{
		"check":     {"cases": "eval/cases.jsonl", "kb": "kb.jsonl"},
		"compare":   {"qrels": "qrels.txt", "run": "a=a.trec"},
		"calibrate": {"human": "human.jsonl", "judge": "judge.jsonl", "lock": "lock.json"},
		"retrieve":  {"kb": "kb.jsonl", "cases": "eval/cases.jsonl", "out": "out.jsonl"},
		"import":    {"in": "in.tsv", "out": "out.jsonl"},
		"judge":     {"run": "a=eval/cases.jsonl", "kb": "kb.jsonl", "qrels": "q.txt", "judge-url": "http://127.0.0.1:9"},
		"generate":  {"kb": "kb.jsonl", "out": "gen.jsonl", "generator-url": "http://127.0.0.1:9"},
		"evaluate":  {"kb": "kb.jsonl", "out": "eval-out", "judge-url": "http://127.0.0.1:9"},
		"report":    {"from": "retrieval-gate.json"},
	}
	tests := []struct {
		command   string
		with      map[string]string
		input, cl string // the message for the Action input, and for the flag
	}{
		{"check", map[string]string{"k": "0"}, `check: action input "k": "0" must be at least 1`, `check: --k must be at least 1, got 0`},
		{"check", map[string]string{"rank-drop": "0"}, `check: action input "rank-drop": "0" must be at least 1`, `check: --rank-drop must be at least 1, got 0`},
		{"check", map[string]string{"regression-test": "maybe"}, `check: action input "regression-test": "maybe" must be significant or any`, `check: --regression-test must be significant or any, got "maybe"`},
		{"check", map[string]string{"max-drop-recall": "2"}, `check: action input "max-drop-recall": "2": 2 is outside [0,1]`, `check: --max-drop-recall: 2 is outside [0,1]`},
		{"check", map[string]string{"pr": "-3"}, `check: action input "pr": "-3" must be a pull request number`, `check: --pr must be a pull request number, got -3`},
		{"check", map[string]string{"comment-key": "a key"}, `check: action input "comment-key": "a key" must be 1-100 characters of A-Z a-z 0-9 . _ / -`, `check: --comment-key must be 1-100 characters of A-Z a-z 0-9 . _ / -, got "a key"`},
		{"check", map[string]string{"comment-author": "my app[bot]"}, `check: action input "comment-author": "my app[bot]" must be a GitHub login: up to 39 letters, digits and hyphens, not starting with a hyphen, then [bot] for an app's bot (my-app[bot]) or _SHORTCODE for an Enterprise Managed User`, `check: --comment-author must be a GitHub login: up to 39 letters, digits and hyphens, not starting with a hyphen, then [bot] for an app's bot (my-app[bot]) or _SHORTCODE for an Enterprise Managed User, got "my app[bot]"`},
		{"compare", map[string]string{"comment-author": "-bot"}, `compare: action input "comment-author": "-bot" must be a GitHub login: up to 39 letters, digits and hyphens, not starting with a hyphen, then [bot] for an app's bot (my-app[bot]) or _SHORTCODE for an Enterprise Managed User`, `compare: --comment-author must be a GitHub login: up to 39 letters, digits and hyphens, not starting with a hyphen, then [bot] for an app's bot (my-app[bot]) or _SHORTCODE for an Enterprise Managed User, got "-bot"`},
		{"calibrate", map[string]string{"comment-author": "app[bot]x"}, `calibrate: action input "comment-author": "app[bot]x" must be a GitHub login: up to 39 letters, digits and hyphens, not starting with a hyphen, then [bot] for an app's bot (my-app[bot]) or _SHORTCODE for an Enterprise Managed User`, `calibrate: --comment-author must be a GitHub login: up to 39 letters, digits and hyphens, not starting with a hyphen, then [bot] for an app's bot (my-app[bot]) or _SHORTCODE for an Enterprise Managed User, got "app[bot]x"`},
		{"evaluate", map[string]string{"comment-author": "a.b"}, `evaluate: action input "comment-author": "a.b" must be a GitHub login: up to 39 letters, digits and hyphens, not starting with a hyphen, then [bot] for an app's bot (my-app[bot]) or _SHORTCODE for an Enterprise Managed User`, `evaluate: --comment-author must be a GitHub login: up to 39 letters, digits and hyphens, not starting with a hyphen, then [bot] for an app's bot (my-app[bot]) or _SHORTCODE for an Enterprise Managed User, got "a.b"`},
		{"check", map[string]string{"json": "kb.jsonl"}, `check: action input "json": "kb.jsonl" would overwrite the input kb.jsonl (action input "kb")`, `check: --json kb.jsonl would overwrite the input kb.jsonl (--kb)`},
		{"check", map[string]string{"min-hit": "0.5", "floors": "retrieval_hit_at_k=0.6"}, `check: action input "min-hit" and action input "floors" retrieval_hit_at_k@overall=0.6 both set a floor on retrieval_hit_at_k@overall; give one`, `check: --min-hit and --floors retrieval_hit_at_k@overall=0.6 both set a floor on retrieval_hit_at_k@overall; give one`},
		{"check", map[string]string{"trend-runs": "31"}, `check: action input "trend-runs": "31" must be between 0 (no trend) and 30`, `check: --trend-runs must be between 0 (no trend) and 30, got 31`},
		{"compare", map[string]string{"trend-runs": "-1"}, `compare: action input "trend-runs": "-1" must be between 0 (no trend) and 30`, `compare: --trend-runs must be between 0 (no trend) and 30, got -1`},
		{"evaluate", map[string]string{"history": "kb.jsonl"}, `evaluate: action input "history": "kb.jsonl" would overwrite the input kb.jsonl (action input "kb")`, `evaluate: --history kb.jsonl would overwrite the input kb.jsonl (--kb)`},
		{"compare", map[string]string{"bootstrap": "100001"}, `compare: action input "bootstrap": "100001" must be between 1 and 100000`, `compare: --bootstrap must be between 1 and 100000, got 100001`},
		{"compare", map[string]string{"k": "0"}, `compare: action input "k": "0" must be between 1 and 100000`, `compare: --k must be between 1 and 100000, got 0`},
		{"compare", map[string]string{"relevant-level": "0"}, `compare: action input "relevant-level": "0" must be between 1 and 127`, `compare: --relevant-level must be between 1 and 127, got 0`},
		{"compare", map[string]string{"seed": "-1"}, `compare: action input "seed": "-1" must be a non-negative integer`, `compare: --seed must be a non-negative integer, got "-1"`},
		{"compare", map[string]string{"primary": "mrr"}, `compare: action input "primary": "mrr" must be one of`, `compare: --primary must be one of`},
		{"compare", map[string]string{"gate-strategy": "prod", "fail-if-beaten": "true"}, `compare: action input "gate-strategy": "prod" is not the name of a strategy of action input "run" (a)`, `compare: --gate-strategy "prod" is not the name of a --run (a)`},
		{"calibrate", map[string]string{"bootstrap": "-1"}, `calibrate: action input "bootstrap": "-1" must be between 0 and 100000`, `calibrate: --bootstrap must be between 0 and 100000, got -1`},
		{"calibrate", map[string]string{"max-unpaired": "lots"}, `calibrate: action input "max-unpaired": want a count N or a percentage P% (0-100%), got "lots"`, `calibrate: --max-unpaired: want a count N or a percentage P% (0-100%), got "lots"`},
		{"retrieve", map[string]string{"strategy": "semantic"}, `retrieve: action input "strategy": "semantic" must be dense, lexical or hybrid`, `retrieve: --strategy must be dense, lexical or hybrid, got "semantic"`},
		{"retrieve", map[string]string{"store": "redis"}, `retrieve: action input "store": "redis" must be chroma or memory`, `retrieve: --store must be chroma or memory, got "redis"`},
		{"retrieve", map[string]string{"embedder": "bert"}, `retrieve: action input "embedder": "bert" must be hash, ollama or openai`, `retrieve: --embedder must be hash, ollama or openai, got "bert"`},
		{"retrieve", map[string]string{"k": "0"}, `retrieve: action input "k": "0" must be at least 1`, `retrieve: --k must be at least 1, got 0`},
		{"import", map[string]string{"format": "xml"}, `import: action input "format": "xml" must be auto or one of`, `import: --format must be auto or one of`},
		{"import", map[string]string{"parent-from-id-regexp": "("}, `import: action input "parent-from-id-regexp": "(" is not a regular expression: missing closing )`, `import: --parent-from-id-regexp "(" is not a regular expression: missing closing )`},
		{"judge", map[string]string{"repeat": "11"}, `judge: action input "repeat": "11" must be between 1 and 10`, `judge: --repeat must be between 1 and 10, got 11`},
		{"judge", map[string]string{"answer-format": "yaml"}, `judge: action input "answer-format": "yaml" must be json or text`, `judge: --answer-format must be json or text, got "yaml"`},
		{"judge", map[string]string{"concurrency": "0"}, `judge: action input "concurrency": "0" must be between 1 and 256`, `judge: --concurrency must be between 1 and 256, got 0`},
		{"judge", map[string]string{"price-per-1k": "free"}, `judge: action input "price-per-1k": want PRICE or PROMPT_PRICE,COMPLETION_PRICE (per 1,000 tokens, ≥ 0), got "free"`, `judge: --price-per-1k: want PRICE or PROMPT_PRICE,COMPLETION_PRICE (per 1,000 tokens, ≥ 0), got "free"`},
		{"generate", map[string]string{"dedup-jaccard": "1.5"}, `generate: action input "dedup-jaccard": "1.5" must be in (0, 1]`, `generate: --dedup-jaccard must be in (0, 1], got 1.5`},
		{"generate", map[string]string{"per-locale": "0"}, `generate: action input "per-locale": "0" must be at least 1`, `generate: --per-locale must be at least 1, got 0`},
		{"generate", map[string]string{"answer-format": "xml"}, `generate: action input "answer-format": "xml" must be json or text`, `generate: --answer-format must be json or text, got "xml"`},
		{"evaluate", map[string]string{"history-branch": "bad..name"}, `evaluate: action input "history-branch": "bad..name" is not a branch name`, `evaluate: --history-branch: "bad..name" is not a branch name`},
		{"evaluate", map[string]string{"html": "kb.jsonl"}, `evaluate: action input "html": "kb.jsonl" would overwrite the input kb.jsonl (action input "kb")`, `evaluate: --html kb.jsonl would overwrite the input kb.jsonl (--kb)`},
		{"evaluate", map[string]string{"store": "redis"}, `evaluate: action input "store": "redis" must be chroma or memory`, `evaluate: --store must be chroma or memory, got "redis"`},
		{"evaluate", map[string]string{"embedder": "bert"}, `evaluate: action input "embedder": "bert" must be hash, ollama or openai`, `evaluate: --embedder must be hash, ollama or openai, got "bert"`},
		{"evaluate", map[string]string{"bootstrap": "0"}, `evaluate: action input "bootstrap": "0" must be between 1 and 100000`, `evaluate: --bootstrap must be between 1 and 100000, got 0`},
		{"evaluate", map[string]string{"comment-mode": "changes", "concurrency": "300"}, `evaluate: action input "concurrency": "300" must be between 1 and 256`, `evaluate: --concurrency must be between 1 and 256, got 300`},
		{"report", map[string]string{"comment-key": "no way"}, `report: action input "comment-key": "no way" must be 1 to 100 characters of A-Z a-z 0-9 . _ / -`, `report: --comment-key must be 1 to 100 characters of A-Z a-z 0-9 . _ / -, got "no way"`},
	}
	for _, tc := range tests {
		var names []string
		for k := range tc.with {
			names = append(names, k)
		}
		sort.Strings(names)
		t.Run(tc.command+" "+strings.Join(names, ","), func(t *testing.T) {
			dir := t.TempDir()
			t.Chdir(dir)
			demoInputs(t, dir)
			with := map[string]string{"command": tc.command}
			args := []string{tc.command}
			for k, v := range base[tc.command] {
				with[k] = v
				args = append(args, "--"+k, v)
			}
			for _, k := range names {
				with[k] = tc.with[k]
				args = append(args, "--"+k+"="+tc.with[k])
			}

			env, outputFile, summary := actionsEnv(t, actionDefaults(t, root, with))
			env["GITHUB_WORKSPACE"] = dir
			code, stdout, stderr := runIn(t, env, tc.command)
			require.Equal(t, ExitInput, code, stdout+stderr)
			assert.Contains(t, stdout, "::error title=retrieval-gate "+tc.command+"%3A input error::"+strings.ReplaceAll(tc.input, "%", "%25"), stdout+stderr)
			assert.NotContains(t, stdout+stderr, "--"+names[len(names)-1], "the input, never the flag, is named")
			sum, err := os.ReadFile(summary)
			require.NoError(t, err)
			assert.Contains(t, string(sum), "## retrieval-gate "+tc.command+": input error")
			assert.Contains(t, string(sum), "```text\n"+tc.input)
			out, err := os.ReadFile(outputFile)
			require.NoError(t, err)
			assert.Empty(t, out, "no step outputs")

			code, stdout, stderr = runIn(t, map[string]string{}, args...)
			require.Equal(t, ExitInput, code, stdout+stderr)
			assert.Empty(t, stdout)
			assert.Contains(t, stderr, "retrieval-gate: "+tc.cl)
			assert.NotContains(t, stderr, "action input")
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			for _, e := range entries {
				assert.Contains(t, []string{"eval", "kb.jsonl"}, e.Name(), "nothing written")
			}
		})
	}
}
