package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/e2e/e2etest"
)

// Issue 20 item 9: calibrate's git guards where no git is on PATH (the Action's
// distroless image) read the repository themselves. The repository is made by
// the real git (loose objects, then packed by gc with deltas, then a linked
// worktree, then a depth-1 clone as actions/checkout makes); the binary runs with
// a PATH that holds it alone, and its answers are git's.
func TestCalibrateGitGuardsWithoutGit(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is needed to make the repository")
	}
	root, err := os.Getwd()
	require.NoError(t, err)
	self, err := os.Executable()
	require.NoError(t, err)
	bin := t.TempDir()
	// PATH holds the command alone (this test binary in its testscript role).
	require.NoError(t, os.Symlink(self, filepath.Join(bin, "retrieval-gate")))
	_, err = exec.LookPath(filepath.Join(bin, "git"))
	require.Error(t, err)

	git := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
		return strings.TrimSpace(string(out))
	}
	repo := t.TempDir()
	git(repo, "init", "-q", "-b", "main")
	for _, f := range []string{"lock.json", "human.jsonl", "judge.jsonl"} {
		b, err := os.ReadFile(filepath.Join(root, "testdata", "calibrate", f))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(repo, f), b, 0o644))
	}
	git(repo, "add", "lock.json", "human.jsonl")
	git(repo, "commit", "-q", "-m", "freeze constants, add labels")
	git(repo, "add", "judge.jsonl")
	git(repo, "commit", "-q", "-m", "judge run")
	git(repo, "update-ref", "refs/remotes/origin/main", "HEAD")

	type result struct {
		Lock struct {
			Base    *string  `json:"base"`
			Changed []string `json:"changed"`
		} `json:"lock"`
		GitAnchoring *struct {
			HumanCommit string   `json:"human_commit"`
			JudgeCommit string   `json:"judge_commit"`
			OK          bool     `json:"ok"`
			Reasons     []string `json:"reasons"`
		} `json:"git_anchoring"`
	}
	run := func(dir, base string) (int, result, string) {
		t.Helper()
		out := filepath.Join(t.TempDir(), "cal.json")
		cmd := exec.Command(filepath.Join(bin, "retrieval-gate"), "calibrate", "--human", "human.jsonl", "--judge", "judge.jsonl",
			"--lock", "lock.json", "--json", out, "--comment", "never", "--lock-base", base, "--git-anchoring")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "PATH="+bin, "GITHUB_ACTIONS=", "CI=")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		code := e2etest.ExitCode(cmd.Run())
		var res result
		if code != 2 {
			b, err := os.ReadFile(out)
			require.NoError(t, err, "%s", stderr.String())
			require.NoError(t, json.Unmarshal(b, &res))
		}
		return code, res, stdout.String() + stderr.String()
	}
	check := func(name, dir, base string, wantChanged bool) {
		t.Helper()
		code, res, out := run(dir, base)
		require.NotEqual(t, 2, code, "%s: %s", name, out)
		assert.NotContains(t, out, "no git is on PATH", name)
		assert.NotContains(t, out, "executable file not found", name)
		require.NotNil(t, res.Lock.Base, name)
		assert.Equal(t, base, *res.Lock.Base, name)
		assert.Equal(t, wantChanged, len(res.Lock.Changed) > 0, "%s: %v", name, res.Lock.Changed)
		require.NotNil(t, res.GitAnchoring, name)
		assert.Equal(t, git(dir, "log", "-1", "--format=%H", "--", "human.jsonl"), res.GitAnchoring.HumanCommit, name)
		assert.Equal(t, git(dir, "log", "-1", "--format=%H", "--", "judge.jsonl"), res.GitAnchoring.JudgeCommit, name)
	}
	isAnc := func(dir string, a, b string) bool {
		cmd := exec.Command("git", "merge-base", "--is-ancestor", a, b)
		cmd.Dir = dir
		return cmd.Run() == nil
	}

	// Loose objects.
	check("loose", repo, "origin/main", false)
	// Packed, with deltas and packed-refs.
	git(repo, "gc", "-q", "--aggressive", "--prune=now")
	check("packed", repo, "origin/main", false)
	code, res, _ := run(repo, "origin/main")
	assert.Equal(t, 0, code)
	assert.True(t, res.GitAnchoring.OK, "%v", res.GitAnchoring.Reasons)
	assert.True(t, isAnc(repo, res.GitAnchoring.HumanCommit, res.GitAnchoring.JudgeCommit))

	// A linked worktree whose lock was relaxed: the lock changed against main.
	wt := filepath.Join(t.TempDir(), "wt")
	git(repo, "worktree", "add", "-q", "-b", "pr", wt)
	lock, err := os.ReadFile(filepath.Join(wt, "lock.json"))
	require.NoError(t, err)
	relaxed := bytes.Replace(lock, []byte(`"min_kappa": 0.6`), []byte(`"min_kappa": 0.2`), 1)
	require.NotEqual(t, lock, relaxed)
	require.NoError(t, os.WriteFile(filepath.Join(wt, "lock.json"), relaxed, 0o644))
	git(wt, "commit", "-q", "-am", "relax")
	check("worktree", wt, "main", true)

	// A depth-1 clone: origin/main is there, history is not (the boundary is both
	// files' last change, as git says), and a ref that was not fetched is unknown.
	clone := filepath.Join(t.TempDir(), "clone")
	git(repo, "clone", "-q", "--depth", "1", "file://"+repo, clone)
	check("shallow", clone, "origin/main", false)
	code, res, _ = run(clone, "origin/main")
	assert.Equal(t, 1, code)
	assert.Contains(t, strings.Join(res.GitAnchoring.Reasons, "\n"), "shallow clone")
	code, _, out := run(clone, "origin/pr")
	assert.Equal(t, 2, code)
	assert.Contains(t, out, `unknown git ref "origin/pr"`)
	assert.Contains(t, out, "fetch-depth: 0")
}
