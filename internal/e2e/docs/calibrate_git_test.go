package docs

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// calibrateGitBlock is docs/calibrate.md's ```text block of the line with the
// guards that read git, and the paragraph after it, which says what that line
// does on the demo's files.
var calibrateGitBlock = regexp.MustCompile("(?s)```text\n(retrieval-gate calibrate [^`]*?--git-anchoring[^`]*?)```\n\n(.*?)\n\n")

// TestCalibrateGitGuardsExample runs docs/calibrate.md's line with the guards
// that read git (--lock-base, --git-anchoring) as the page describes it: the
// demo's labels, judge scores and lock committed together in one commit, at
// the paths of the line. The page names every guard that fails besides the
// unpaired labels (it named git anchoring and left out the blind labels, which
// fail too), and its variant without --git-anchoring passes.
func TestCalibrateGitGuardsExample(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	bin := docBinary(t)
	root, err := os.Getwd()
	require.NoError(t, err)
	page, err := os.ReadFile("docs/calibrate.md")
	require.NoError(t, err)
	m := calibrateGitBlock.FindSubmatch(page)
	require.NotNil(t, m, "docs/calibrate.md has the line with --git-anchoring in a text block")
	line := strings.Join(strings.Fields(strings.ReplaceAll(string(m[1]), "\\\n", " ")), " ")
	prose := strings.Join(strings.Fields(string(m[2])), " ")

	dir := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	git("init", "-q", "-b", "main")
	files := regexp.MustCompile(`--(?:human|judge|lock) (\S+)`).FindAllStringSubmatch(line, -1)
	require.Len(t, files, 3, "the line names the labels, the judge scores and the lock: %s", line)
	for i, demo := range []string{"human.jsonl", "judge.jsonl", "lock.json"} {
		data, err := os.ReadFile(filepath.Join(root, "testdata", "calibrate", demo))
		require.NoError(t, err)
		p := filepath.Join(dir, files[i][1])
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, data, 0o644))
	}
	git("add", ".")
	git("commit", "-q", "-m", "labels, judge scores and lock together")
	base := regexp.MustCompile(`--lock-base (\S+)`).FindStringSubmatch(line)
	require.NotNil(t, base, line)
	git("update-ref", "refs/remotes/"+base[1], "HEAD") // the base branch fetched

	run := func(cmdline string) (string, int) {
		cmd := exec.Command("sh", "-c", strings.Replace(cmdline, "retrieval-gate", bin, 1))
		cmd.Dir = dir
		out, err := cmd.Output()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return string(out), ee.ExitCode()
		}
		require.NoError(t, err)
		return string(out), 0
	}

	out, code := run(line)
	require.Equal(t, 1, code, "%s\n%s", line, out)
	failed := regexp.MustCompile(`(?m)^([a-z][a-z ]*): FAILED`).FindAllStringSubmatch(out, -1)
	require.NotEmpty(t, failed, out)
	for _, f := range failed {
		assert.Contains(t, prose, "`"+f[0]+"`", "docs/calibrate.md says what the line fails on the demo, and leaves out %q", f[0])
	}

	// "on the demo, `--max-unpaired 3 --lock-base HEAD` without `--git-anchoring` is the variant that passes"
	variant := regexp.MustCompile("`(--max-unpaired \\S+ --lock-base \\S+)` without `--git-anchoring` is the variant that passes").FindStringSubmatch(prose)
	require.NotNil(t, variant, "docs/calibrate.md names the variant that passes")
	passing := regexp.MustCompile(`--max-unpaired \S+`).ReplaceAllString(line, "")
	passing = regexp.MustCompile(`--lock-base \S+`).ReplaceAllString(passing, "")
	passing = strings.Replace(passing, "--git-anchoring", variant[1], 1)
	out, code = run(passing)
	assert.Equal(t, 0, code, "%s\n%s", passing, out)
}
