package cli

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCalibrateExitCodes runs the command in process on the demo labels and checks
// the contract's exit codes: 0 pass, 1 gate failed (reports written), 2 usage or
// input error (no report).
func TestCalibrateExitCodes(t *testing.T) {
	demo := filepath.Join("..", "..", "testdata", "calibrate")
	human, judge, lock := filepath.Join(demo, "human.jsonl"), filepath.Join(demo, "judge.jsonl"), filepath.Join(demo, "lock.json")
	dir := t.TempDir()
	badHuman := filepath.Join(dir, "bad.jsonl")
	humanData, err := os.ReadFile(human)
	require.NoError(t, err)
	copyHuman := filepath.Join(dir, "human.jsonl")
	require.NoError(t, os.WriteFile(copyHuman, humanData, 0o644))
	require.NoError(t, os.WriteFile(badHuman, []byte(`{"case_id": "a", "dimension": "groundedness", "score": 1.5, "construct": "support", "labeled_at": "2026-01-01T00:00:00Z"}`+"\n"), 0o644))
	tests := []struct {
		name    string
		args    []string
		code    int
		reports bool
		stderr  string // in the error
	}{
		{"pass", nil, ExitOK, true, ""},
		{"pass with a generous --max-unpaired", []string{"--max-unpaired", "3"}, ExitOK, true, ""},
		{"unpaired labels over --max-unpaired fail the gate", []string{"--max-unpaired", "2"}, ExitGateFailed, true, ""},
		{"a percentage too", []string{"--max-unpaired", "2%"}, ExitGateFailed, true, ""},
		{"bad --max-unpaired", []string{"--max-unpaired", "-1"}, ExitInput, false, "--max-unpaired"},
		{"bad --bootstrap", []string{"--bootstrap", "-1"}, ExitInput, false, "--bootstrap"},
		{"--bootstrap above its maximum", []string{"--bootstrap", "100001"}, ExitInput, false, "calibrate: --bootstrap must be between 0 and 100000, got 100001"},
		{"--bootstrap at its maximum", []string{"--bootstrap", "100000"}, ExitOK, true, ""},
		{"malformed labels", []string{"--human", badHuman}, ExitInput, false, "bad.jsonl:1:"},
		{"a report never overwrites an input", []string{"--human", copyHuman, "--markdown", copyHuman}, ExitInput, false, "--markdown " + copyHuman + " would overwrite the input"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			js, md := filepath.Join(dir, "r.json"+string(rune('a'+i))), filepath.Join(dir, "r.md"+string(rune('a'+i)))
			args := []string{"--human", human, "--judge", judge, "--lock", lock, "--bootstrap", "200", "--json", js, "--markdown", md}
			defer func() {
				after, err := os.ReadFile(copyHuman)
				require.NoError(t, err)
				assert.Equal(t, humanData, after, "inputs are never modified")
			}()
			env, out, _ := checkEnv("")
			err := NewCmdCalibrate(NewFactory(env), nil).Run(context.Background(), append(args, tt.args...))
			assert.Equal(t, tt.code, ExitCode(err), "%v", err)
			if tt.stderr != "" {
				require.ErrorContains(t, err, tt.stderr)
			}
			if tt.reports {
				assert.FileExists(t, js)
				assert.FileExists(t, md)
				assert.Contains(t, out.String(), "verdict:")
			} else {
				assert.NoFileExists(t, js)
				assert.NoFileExists(t, md)
			}
		})
	}
}

// TestCalibrateInterrupted: a cancelled context (SIGINT, SIGTERM) is exit 2, says
// so, and writes no report.
func TestCalibrateInterrupted(t *testing.T) {
	root := filepath.Join("..", "..", "testdata", "calibrate")
	dir := t.TempDir()
	js, md := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.md")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	env, out, _ := checkEnv("")
	err := NewCmdCalibrate(NewFactory(env), nil).Run(ctx, []string{"--human", filepath.Join(root, "human.jsonl"), "--judge", filepath.Join(root, "judge.jsonl"),
		"--lock", filepath.Join(root, "lock.json"), "--json", js, "--markdown", md})
	assert.Equal(t, ExitInput, ExitCode(err))
	require.EqualError(t, err, "calibrate: interrupted, nothing written: context canceled")
	assert.NoFileExists(t, js)
	assert.NoFileExists(t, md)
	assert.Empty(t, out.String())
}
