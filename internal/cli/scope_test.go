package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/retrieval-gate/retrieval-gate/internal/github/githubtest"
	"github.com/retrieval-gate/retrieval-gate/internal/publish"
)

// actionDefaults are the INPUT_* variables the runner sets from action.yml's
// defaults for a step that gives only with.
func actionDefaults(t *testing.T, root string, with map[string]string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "action.yml"))
	require.NoError(t, err)
	var action struct {
		Inputs map[string]struct {
			Default string `yaml:"default"`
		} `yaml:"inputs"`
	}
	require.NoError(t, yaml.Unmarshal(data, &action))
	env := map[string]string{}
	for name, in := range action.Inputs {
		env["INPUT_"+strings.ToUpper(name)] = in.Default
	}
	for k, v := range with {
		env["INPUT_"+strings.ToUpper(k)] = v
	}
	return env
}

func runIn(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return env[k] }}
	code = Run(context.Background(), e, args)
	return code, out.String(), errb.String()
}

// Issue 9: an Action input reaches a command only as that command's input, and
// action.yml's defaults are no command's: compare keeps k = 10 and calibrate its
// own comment key, whatever check's defaults are.
func TestActionInputsScopedPerCommand(t *testing.T) {
	root := repoRoot(t)
	dir := t.TempDir()
	t.Chdir(dir)

	// compare through the Action: its own k, its own JSON path.
	qrels := filepath.Join(dir, "qrels.jsonl")
	require.NoError(t, os.WriteFile(qrels, []byte(`{"query_id":"q1","doc_id":"d1","relevance":3}`+"\n"+`{"query_id":"q2","doc_id":"d2","relevance":2}`+"\n"), 0o644))
	run := filepath.Join(dir, "a.trec")
	require.NoError(t, os.WriteFile(run, []byte("q1 Q0 d1 1 0.9 a\nq2 Q0 d2 1 0.9 a\n"), 0o644))
	env, _, summary := actionsEnv(t, actionDefaults(t, root, map[string]string{"command": "compare", "qrels": qrels, "run": "a=" + run, "bootstrap": "50"}))
	code, _, stderr := runIn(t, env, "compare")
	require.Equal(t, 0, code, stderr)
	data, err := os.ReadFile(filepath.Join(dir, "retrieval-gate-compare.json"))
	require.NoError(t, err, "compare's own default JSON path")
	var doc struct {
		K int `json:"k"`
	}
	require.NoError(t, json.Unmarshal(data, &doc))
	assert.Equal(t, 10, doc.K, "compare's default k, not check's 5")
	sum, err := os.ReadFile(summary)
	require.NoError(t, err)
	assert.NotEmpty(t, sum)

	// calibrate: its own key, so it never overwrites check's comment.
	srv := githubtest.New("octo", "repo", "", 7)
	defer srv.Close()
	env, _, _ = actionsEnv(t, actionDefaults(t, root, map[string]string{"command": "calibrate", "pr": "7", "github-token": "ghs_x1234",
		"human": filepath.Join(root, "testdata/calibrate/human.jsonl"), "judge": filepath.Join(root, "testdata/calibrate/judge.jsonl"),
		"lock": filepath.Join(root, "testdata/calibrate/lock.json")}))
	env["GITHUB_API_URL"] = srv.APIURL()
	code, _, stderr = runIn(t, env, "calibrate")
	require.Contains(t, []int{0, 1}, code, stderr)
	cs := srv.Comments(7)
	require.Len(t, cs, 1, stderr)
	assert.True(t, strings.HasPrefix(cs[0].Body, publish.Marker(calibrateCommentKey)+"\n"), cs[0].Body[:60])
	_, err = os.Stat(filepath.Join(dir, "retrieval-gate-calibrate.json"))
	require.NoError(t, err)

	// A bad input value names the input and the value (TestActionInputErrors has
	// every kind).
	env, _, _ = actionsEnv(t, actionDefaults(t, root, map[string]string{"qrels": qrels, "run": "a=" + run, "k": "five"}))
	code, stdout, _ := runIn(t, env, "compare")
	assert.Equal(t, ExitInput, code)
	assert.Contains(t, stdout, `action input "k": "five" is not an integer`)
}

// workflowCommand matches a line the runner would parse as a workflow command.
var workflowCommand = regexp.MustCompile(`(?m)^[ \t]*::`)

// Issue 10 item 6: no data can forge a workflow command on stdout or stderr: a KB
// file name, a score key, a lock dimension, a case type carrying
// "\n::error title=x::" are printed quoted or escaped.
func TestNoForgedWorkflowCommands(t *testing.T) {
	const evil = "\n::error title=x::forged"
	dir := t.TempDir()
	t.Chdir(dir)
	write := fileWriter(t, dir)
	kbFile := write("kb.jsonl", `{"id":"a","text":"alpha"}`+"\n")
	// A KB directory whose file name carries the payload, with bad front matter.
	kbDir := filepath.Join(dir, "kbdir")
	write(filepath.Join("kbdir", "card"+evil+".md"), "---\nid: [\n---\nx\n")
	caseType, _ := json.Marshal("golden" + evil)
	scoreKey, _ := json.Marshal("retrieval_hit_at_k" + evil)
	cases := write("cases.jsonl", fmt.Sprintf(`{"id":"c1","type":%s,"must_cite_one_of":["a"],"retrieved":["a"]}`+"\n", caseType))
	badScores := write("scores.jsonl", fmt.Sprintf(`{"id":"c1","must_cite_one_of":["a"],"scores":{%s:1}}`+"\n", scoreKey))
	dim, _ := json.Marshal("relevance" + evil)
	lock := write("lock.json", fmt.Sprintf(`{"dimensions":{%s:{"scale":[0,1,2]}}}`, dim))
	human := write("human.jsonl", `{"case_id":"c1","dimension":"relevance","label":1}`+"\n")

	runs := [][]string{
		{"check", "--cases", cases, "--kb", kbDir},
		{"check", "--cases", cases, "--kb", kbFile},
		{"check", "--cases", badScores, "--kb", kbFile},
		{"check", "--cases", cases, "--kb", kbFile, "--comment-key", "k" + evil},
		{"calibrate", "--human", human, "--judge", human, "--lock", lock},
		{"retrieve", "--cases", cases, "--kb", kbDir, "--out", filepath.Join(dir, "out.jsonl")},
		{"nope" + evil},
	}
	for _, args := range runs {
		for _, inActions := range []bool{false, true} {
			env := map[string]string{}
			if inActions {
				env, _, _ = actionsEnv(t, nil)
			}
			_, stdout, stderr := runIn(t, env, args...)
			for name, text := range map[string]string{"stdout": stdout, "stderr": stderr} {
				for _, l := range strings.Split(text, "\n") {
					if workflowCommand.MatchString(l) {
						// Our own commands (an ::error:: about the input error) may
						// quote the data in an escaped property value or the message;
						// a forged one would have the data's own title property.
						props := commandProperties(t, l)
						assert.NotEqual(t, "x", props["title"], "%v (actions %v): %s forged a command: %q", args[0], inActions, name, l)
					}
				}
				if !inActions {
					assert.False(t, workflowCommand.MatchString(text), "%v: %s has a workflow command line:\n%s", args, name, text)
				}
			}
		}
	}
}

// commandProperties parses a workflow command line "::NAME k=v,k=v::message" as
// the runner does (property values are escaped, so they hold no ":" or ",").
func commandProperties(t *testing.T, line string) map[string]string {
	t.Helper()
	head, _, ok := strings.Cut(strings.TrimLeft(line, " \t")[2:], "::")
	require.True(t, ok, "a command line: %q", line)
	props := map[string]string{}
	if _, list, ok := strings.Cut(head, " "); ok {
		for _, kv := range strings.Split(list, ",") {
			k, v, _ := strings.Cut(kv, "=")
			props[k] = v
		}
	}
	return props
}

// Issue 10 items 8 and 12: with 3,000 distinct case types only the 50 largest
// groups are computed and shown (the rest counted), and the comment keeps the
// verdict, the gates with their reasons and the integrity summary.
func TestCommentWithThousandsOfTypesKeepsGates(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	var cases strings.Builder
	for i := 0; i < 3000; i++ {
		gold := "a"
		if i%7 == 0 {
			gold = "missing-card"
		}
		fmt.Fprintf(&cases, `{"id":"c%d","type":"type-%04d-with-a-rather-long-name","must_cite_one_of":[%q],"retrieved":["a"]}`+"\n", i, i, gold)
	}
	require.NoError(t, os.WriteFile("cases.jsonl", []byte(cases.String()), 0o644))
	require.NoError(t, os.WriteFile("kb.jsonl", []byte(`{"id":"a","text":"alpha"}`+"\n"), 0o644))
	srv := githubtest.New("octo", "repo", "", 7)
	defer srv.Close()
	env, _, _ := actionsEnv(t, map[string]string{"INPUT_GITHUB-TOKEN": "ghs_x1234", "INPUT_PR": "7", "GITHUB_API_URL": srv.APIURL()})
	code, _, stderr := runIn(t, env, "check", "--cases", "cases.jsonl", "--kb", "kb.jsonl", "--min-hit", "0.99")
	require.Equal(t, ExitGateFailed, code, stderr)
	cs := srv.Comments(7)
	require.Len(t, cs, 1, stderr)
	body := cs[0].Body
	assert.LessOrEqual(t, len(body), githubtest.MaxBody)
	for _, want := range []string{"**Verdict: fail**", "### Gates", "| integrity | ❌ fail [1] |", "| min\\_hit<br><sub>overall · retrieval\\_hit\\_at\\_k</sub> | ❌ fail [2] |",
		"### Integrity problems (429)", "only the 50 largest type and locale groups are computed and shown: 2950 more types (2950 cases) are not"} {
		assert.Contains(t, body, want)
	}
}

// The Action's defaults (a JSON report's path) are the Action's: the binary
// run in a workflow's run: step (GITHUB_ACTIONS=true, no INPUT_COMMAND) keeps
// its flags' own, and writes no retrieval-gate.json unasked. As the Action,
// judge's batch-out (the requests alone) is not refused for the json its
// default gives, but a json asked for beside it still is.
func TestActionDefaultsOnlyAsTheAction(t *testing.T) {
	root := repoRoot(t)
	demo := filepath.Join(root, "testdata/demo")
	dir := t.TempDir()
	t.Chdir(dir)

	env, _, _ := actionsEnv(t, nil) // a run: step
	code, _, stderr := runIn(t, env, "check", "--cases", filepath.Join(demo, "cases.jsonl"), "--kb", filepath.Join(demo, "kb"), "--comment", "never")
	require.Equal(t, 0, code, stderr)
	assert.NoFileExists(t, filepath.Join(dir, "retrieval-gate.json"), "no --json given: none written")

	env, _, _ = actionsEnv(t, actionDefaults(t, root, map[string]string{"cases": filepath.Join(demo, "cases.jsonl"), "kb": filepath.Join(demo, "kb"), "comment": "never"}))
	code, _, stderr = runIn(t, env, "check")
	require.Equal(t, 0, code, stderr)
	assert.FileExists(t, filepath.Join(dir, "retrieval-gate.json"), "the Action's default json")

	run := filepath.Join(dir, "run.jsonl")
	require.NoError(t, os.WriteFile(run, []byte(`{"id":"q1","locale":"en","query":"How do I reset my password?","retrieved":[{"id":"en-reset-password#c0","parent_id":"en-reset-password"}]}`+"\n"), 0o644))
	with := map[string]string{"command": "judge", "kb": filepath.Join(demo, "kb"), "run": "dense=" + run,
		"batch-out": "requests.jsonl", "judge-model": "m", "cache": "none"}
	env, _, _ = actionsEnv(t, actionDefaults(t, root, with))
	code, stdout, stderr := runIn(t, env, "judge")
	require.Equal(t, 0, code, stdout+stderr)
	assert.FileExists(t, filepath.Join(dir, "requests.jsonl"))
	assert.NoFileExists(t, filepath.Join(dir, "retrieval-gate-judge.json"))

	with["json"] = "judge.json"
	env, _, _ = actionsEnv(t, actionDefaults(t, root, with))
	code, stdout, _ = runIn(t, env, "judge")
	assert.Equal(t, ExitInput, code)
	assert.Contains(t, stdout, "batch-out writes only the requests")
}
