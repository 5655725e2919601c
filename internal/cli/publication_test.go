package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/retrieval-gate/retrieval-gate/internal/gate"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
	"github.com/retrieval-gate/retrieval-gate/internal/publish"
	"github.com/retrieval-gate/retrieval-gate/internal/report/checkreport"
)

func prEvent(n int, head string) string {
	return fmt.Sprintf(`{"number":%d,"pull_request":{"number":%d,"head":{"repo":{"full_name":%q}},"base":{"repo":{"full_name":"octo/repo"}}}}`, n, n, head)
}

// actionsEnv is a runner's environment for a step: files in a temporary
// directory, workspace dir, extra variables.
func actionsEnv(t *testing.T, vars map[string]string) (env map[string]string, outputFile, summary string) {
	t.Helper()
	dir := t.TempDir()
	outputFile, summary = filepath.Join(dir, "output"), filepath.Join(dir, "summary")
	event := filepath.Join(dir, "event.json")
	require.NoError(t, os.WriteFile(outputFile, nil, 0o644))
	require.NoError(t, os.WriteFile(summary, nil, 0o644))
	require.NoError(t, os.WriteFile(event, []byte(`{}`), 0o644))
	env = map[string]string{
		"GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": "octo/repo", "GITHUB_EVENT_NAME": "push", "GITHUB_EVENT_PATH": event,
		"GITHUB_WORKSPACE": dir, "GITHUB_OUTPUT": outputFile, "GITHUB_STEP_SUMMARY": summary,
	}
	for k, v := range vars {
		env[k] = v
	}
	// Whatever the test ran, every step output it left is one action.yml
	// declares (a workflow reads only those: an undeclared one is lost).
	t.Cleanup(func() { assertOutputsDeclared(t, outputFile) })
	return env, outputFile, summary
}

// actionYML is action.yml's path, made absolute as the tests start (some
// change directory).
var actionYML, _ = filepath.Abs(filepath.Join("..", "..", "action.yml"))

// actionOutputs are the names of action.yml's outputs.
var actionOutputs = sync.OnceValues(func() (map[string]bool, error) {
	data, err := os.ReadFile(actionYML)
	if err != nil {
		return nil, err
	}
	var action struct {
		Outputs map[string]any `yaml:"outputs"`
	}
	if err := yaml.Unmarshal(data, &action); err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for k := range action.Outputs {
		names[k] = true
	}
	return names, nil
})

// outputName is a name in a GITHUB_OUTPUT file (NAME<<DELIMITER, then the value).
var outputName = regexp.MustCompile(`(?m)^([^\s<=]+)<<\S+$`)

// assertOutputsDeclared fails when the GITHUB_OUTPUT file at path names an
// output that action.yml does not declare.
func assertOutputsDeclared(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	require.NoError(t, err)
	declared, err := actionOutputs()
	require.NoError(t, err)
	for _, m := range outputName.FindAllStringSubmatch(string(data), -1) {
		assert.True(t, declared[m[1]], "step output %q is not declared in action.yml's outputs", m[1])
	}
}

func TestCheckPublicationAnnotations(t *testing.T) {
	env, outputFile, summary := actionsEnv(t, nil)
	ws := env["GITHUB_WORKSPACE"]
	var probs []gate.Problem
	for i := 0; i < 60; i++ {
		probs = append(probs, gate.Problem{File: filepath.Join(ws, "eval", "cases.jsonl"), Line: i + 1, CaseID: fmt.Sprintf("c%d", i), GoldID: "en-nope", Kind: gate.UnknownCard})
	}
	res := &gate.Result{
		K: 5, Total: 3, WithGold: 3,
		Overall: gate.Group{Name: "overall", N: 3, Metrics: []gate.Metric{
			{Key: metrics.KeyHit, Summary: metrics.Summary{N: 3, Mean: 2.0 / 3}},
			{Key: metrics.KeyRecall, Summary: metrics.Summary{N: 3, Mean: 0.5}},
			{Key: metrics.KeyNDCG, Summary: metrics.Summary{N: 3, Mean: 0.25}},
		}},
		ReferenceLocale: "en",
		Integrity:       gate.Integrity{OK: false, KBCards: 38, Problems: probs, ProblemsTotal: 75},
		Gates:           outcome.Gates{outcome.New("integrity", outcome.Fail)},
	}
	var stdout, stderr bytes.Buffer
	pub := &publish.Publisher{Getenv: func(k string) string { return env[k] }, Stdout: &stdout, Stderr: &stderr}
	p := checkPublication(res, checkreport.New(res), commentFlags{mode: publish.ModeAuto, key: "default"}, filepath.Join(ws, "out", "agg.json"))
	require.Empty(t, pub.Publish(context.Background(), p))
	out := stdout.String()
	assert.Equal(t, 50, strings.Count(out, "::error "))
	assert.Contains(t, out, "::error file=eval/cases.jsonl,line=1,title=retrieval-gate%3A dataset integrity::case c0: gold id \"en-nope\": unknown card\n")
	assert.Contains(t, out, "::notice::25 more problems not annotated (at most 50 are); the job summary lists them\n")
	data, err := os.ReadFile(outputFile)
	require.NoError(t, err)
	d := "_GitHubActionsFileCommandDelimeter_"
	for _, kv := range [][2]string{{"verdict", "fail"}, {"n", "3"}, {"hit", "0.6666666666666666"}, {"recall", "0.5"}, {"ndcg", "0.25"}, {"json", "out/agg.json"}} {
		assert.Contains(t, string(data), kv[0]+"<<"+d+"\n"+kv[1]+"\n"+d+"\n")
	}
	sum, err := os.ReadFile(summary)
	require.NoError(t, err)
	assert.Contains(t, string(sum), "<!-- retrieval-gate:default -->")
}

// retrieve and import, as Action steps, set their outputs (paths relative to the
// workspace) and write one line to the job summary, with the file names escaped;
// as evaluate's stages they leave the summary to evaluate.
func TestRetrieveAndImportInActions(t *testing.T) {
	env, outputFile, summary := actionsEnv(t, nil)
	ws := env["GITHUB_WORKSPACE"]
	kb, cases := writeBigKB(t, ws, 20)
	d := "_GitHubActionsFileCommandDelimeter_"
	run := func(cmd func(*Factory) *Command, args ...string) (outputs, sum string) {
		t.Helper()
		require.NoError(t, os.WriteFile(outputFile, nil, 0o644))
		require.NoError(t, os.WriteFile(summary, nil, 0o644))
		var stdout, stderr bytes.Buffer
		e := &Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Getenv: func(k string) string { return env[k] }}
		require.NoError(t, cmd(NewFactory(e)).Run(context.Background(), args), stderr.String())
		o, err := os.ReadFile(outputFile)
		require.NoError(t, err)
		s, err := os.ReadFile(summary)
		require.NoError(t, err)
		return string(o), string(s)
	}

	out := filepath.Join(ws, "runs", "a_<b>.jsonl")
	outputs, sum := run(func(f *Factory) *Command { return NewCmdRetrieve(f, nil) }, "--kb", kb, "--cases", cases, "--out", out, "--k", "3", "--strategy", "lexical")
	for _, kv := range [][2]string{{"out", "runs/a_<b>.jsonl"}, {"cases", "1"}, {"strategy", "lexical"}} {
		assert.Contains(t, outputs, kv[0]+"<<"+d+"\n"+kv[1]+"\n"+d+"\n")
	}
	assert.Equal(t, "**retrieval-gate retrieve**: 1 cases retrieved from 20 chunks of 20 cards (strategy lexical, store none, embedder none, k = 3), written to "+
		strings.ReplaceAll(filepath.Join(ws, "runs"), "_", `\_`)+`/a\_&lt;b&gt;.jsonl.`+"\n\n", sum)

	qrels := filepath.Join(ws, "q.tsv")
	require.NoError(t, os.WriteFile(qrels, []byte("query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\td2\t0\n"), 0o644))
	outputs, sum = run(func(f *Factory) *Command { return NewCmdImport(f, nil) }, "--in", qrels, "--out", filepath.Join(ws, "q.qrels"))
	for _, kv := range [][2]string{{"out", "q.qrels"}, {"format", "beir-qrels"}, {"records", "2"}} {
		assert.Contains(t, outputs, kv[0]+"<<"+d+"\n"+kv[1]+"\n"+d+"\n")
	}
	assert.Contains(t, sum, "**retrieval-gate import**: read ")
	assert.Contains(t, sum, " as beir-qrels (detected), wrote 2 judgments (TREC qrels, for compare --qrels) to ")

	// A stage of evaluate (runRetrieve, the call evaluate makes): no output and
	// no summary line of its own.
	var stderr bytes.Buffer
	e := &Env{Stdin: strings.NewReader(""), Stdout: &bytes.Buffer{}, Stderr: &stderr, Getenv: func(k string) string { return env[k] }}
	require.NoError(t, os.WriteFile(summary, nil, 0o644))
	require.NoError(t, os.WriteFile(outputFile, nil, 0o644))
	o, err := parseRetrieve(e, []string{"--kb", kb, "--cases", cases, "--out", out, "--k", "3"})
	require.NoError(t, err)
	_, err = runRetrieve(context.Background(), NewFactory(e).stage(), o)
	require.NoError(t, err, stderr.String())
	for _, file := range []string{summary, outputFile} {
		s, err := os.ReadFile(file)
		require.NoError(t, err)
		assert.Empty(t, string(s), file)
	}
}
