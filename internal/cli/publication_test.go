package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
	return env, outputFile, summary
}

func TestCheckPublicationAnnotations(t *testing.T) {
	env, outputFile, summary := actionsEnv(t, nil)
	ws := env["GITHUB_WORKSPACE"]
	var probs []gate.Problem
	for i := 0; i < 60; i++ {
		probs = append(probs, gate.Problem{File: filepath.Join(ws, "eval", "cases.jsonl"), Line: i + 1, CaseID: fmt.Sprintf("c%d", i), GoldID: "en-nope", Reason: "unknown card"})
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
