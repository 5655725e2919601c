package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// git runs git in dir with no global or system configuration and a fixed
// identity; gitOut is its trimmed standard output, "" when it fails (as the
// provenance read git's answers before gitread replaced it).
func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	_, err := gitCmd(dir, args...)
	require.NoError(t, err, "git %v", args)
}

func gitOut(dir string, args ...string) string {
	out, err := gitCmd(dir, args...)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(out)
}

func gitCmd(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil {
		return out.String(), err
	}
	return out.String(), nil
}

// TestProvenanceAgainstGit reads the commit and branch of real repositories,
// made with git, through gitread and compares them with what `git rev-parse
// HEAD` and `git rev-parse --abbrev-ref HEAD` answer there (the provenance ran
// them before): a branch, a branch with a slash, a detached HEAD, packed refs,
// a linked worktree (its own HEAD, a gitdir file and commondir), a separate
// git directory (a gitdir file), a branch name a tag or a remote also has
// (git then writes heads/NAME), a symbolic ref to a symbolic ref, an unborn
// branch, a subdirectory, and no repository.
func TestProvenanceAgainstGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	root := t.TempDir()
	commit := func(dir, msg string) {
		t.Helper()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "f.txt"), []byte(msg), 0o600))
		git(t, dir, "add", "-A")
		git(t, dir, "commit", "-q", "-m", msg)
	}
	newRepo := func(name string) string {
		t.Helper()
		dir := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(dir, 0o755))
		git(t, dir, "init", "-q", "-b", "main")
		commit(dir, "one")
		commit(dir, "two")
		return dir
	}
	type setup struct {
		name string
		dir  func(t *testing.T) string // the working directory of the run
	}
	setups := []setup{
		{"branch", func(*testing.T) string { return newRepo("branch") }},
		{"branch with a slash, from a subdirectory", func(t *testing.T) string {
			d := newRepo("slash")
			git(t, d, "checkout", "-q", "-b", "feature/x-1")
			sub := filepath.Join(d, "a", "b")
			require.NoError(t, os.MkdirAll(sub, 0o755))
			return sub
		}},
		{"detached HEAD", func(t *testing.T) string {
			d := newRepo("detached")
			git(t, d, "checkout", "-q", "--detach", "HEAD~1")
			return d
		}},
		{"packed refs", func(t *testing.T) string {
			d := newRepo("packed")
			git(t, d, "checkout", "-q", "-b", "topic")
			commit(d, "three")
			git(t, d, "pack-refs", "--all", "--prune")
			_, err := os.Stat(filepath.Join(d, ".git", "refs", "heads", "topic"))
			require.ErrorIs(t, err, os.ErrNotExist, "the branch is only in packed-refs")
			return d
		}},
		{"linked worktree", func(t *testing.T) string {
			d := newRepo("main-tree")
			wt := filepath.Join(root, "linked")
			git(t, d, "worktree", "add", "-q", "-b", "wt-branch", wt, "HEAD~1")
			commit(wt, "in the worktree")
			return wt
		}},
		{"linked worktree, detached, packed", func(t *testing.T) string {
			d := newRepo("main-tree2")
			wt := filepath.Join(root, "linked2")
			git(t, d, "worktree", "add", "-q", "--detach", wt, "HEAD~1")
			git(t, d, "pack-refs", "--all", "--prune")
			return wt
		}},
		{"separate git directory", func(t *testing.T) string {
			d := filepath.Join(root, "separate")
			require.NoError(t, os.MkdirAll(d, 0o755))
			git(t, d, "init", "-q", "-b", "trunk", "--separate-git-dir", filepath.Join(root, "separate.git"))
			commit(d, "one")
			b, err := os.ReadFile(filepath.Join(d, ".git"))
			require.NoError(t, err)
			require.True(t, strings.HasPrefix(string(b), "gitdir: "), "a gitdir file")
			return d
		}},
		{"branch and tag of one name", func(t *testing.T) string {
			d := newRepo("ambiguous-tag")
			git(t, d, "checkout", "-q", "-b", "v1")
			git(t, d, "tag", "v1", "HEAD~1")
			return d
		}},
		{"branch named like a remote-tracking one", func(t *testing.T) string {
			d := newRepo("ambiguous-remote")
			git(t, d, "update-ref", "refs/remotes/origin/x", "HEAD~1")
			git(t, d, "checkout", "-q", "-b", "origin/x")
			return d
		}},
		{"symbolic ref to a symbolic ref", func(t *testing.T) string {
			d := newRepo("symref")
			git(t, d, "symbolic-ref", "refs/heads/alias", "refs/heads/main")
			git(t, d, "symbolic-ref", "HEAD", "refs/heads/alias")
			return d
		}},
		{"unborn branch", func(t *testing.T) string {
			d := filepath.Join(root, "unborn")
			require.NoError(t, os.MkdirAll(d, 0o755))
			git(t, d, "init", "-q", "-b", "main")
			return d
		}},
		{"no repository", func(t *testing.T) string {
			d := filepath.Join(root, "plain")
			require.NoError(t, os.MkdirAll(d, 0o755))
			return d
		}},
	}
	clock := time.Unix(1767225600, 0)
	for _, s := range setups {
		t.Run(s.name, func(t *testing.T) {
			dir := s.dir(t)
			p, err := readProvenance(func(string) string { return "" }, dir, func() time.Time { return clock })
			require.NoError(t, err)
			assert.Equal(t, gitOut(dir, "rev-parse", "HEAD"), p.Commit, "the commit")
			assert.Equal(t, gitOut(dir, "rev-parse", "--abbrev-ref", "HEAD"), p.Branch, "the branch")
			assert.Equal(t, p.Branch, p.Base, "outside a pull request the base is the run's branch")
			assert.Equal(t, clock, p.Time)
		})
	}
	// The answers above are not all alike (a test that cannot fail compares
	// nothing): these are git's own.
	assert.Equal(t, "heads/v1", gitOut(filepath.Join(root, "ambiguous-tag"), "rev-parse", "--abbrev-ref", "HEAD"))
	assert.Equal(t, "HEAD", gitOut(filepath.Join(root, "detached"), "rev-parse", "--abbrev-ref", "HEAD"))
	assert.Equal(t, "feature/x-1", gitOut(filepath.Join(root, "slash"), "rev-parse", "--abbrev-ref", "HEAD"))
	assert.Equal(t, "main", gitOut(filepath.Join(root, "symref"), "rev-parse", "--abbrev-ref", "HEAD"))
	assert.Empty(t, gitOut(filepath.Join(root, "unborn"), "rev-parse", "HEAD"))
}

// TestProvenanceFromActions: the Actions variables win over the repository,
// $SOURCE_DATE_EPOCH over the clock, and a malformed one is an error.
func TestProvenanceFromActions(t *testing.T) {
	clock := time.Unix(1767225600, 0)
	now := func() time.Time { return clock }
	dir := t.TempDir() // no repository: what the variables leave is ""
	tests := []struct {
		name string
		env  map[string]string
		want [4]string // commit, branch, base, time
	}{
		{"pull request", map[string]string{"GITHUB_SHA": "abc", "GITHUB_HEAD_REF": "feature", "GITHUB_REF_NAME": "1/merge", "GITHUB_BASE_REF": "main", "SOURCE_DATE_EPOCH": "86400"},
			[4]string{"abc", "feature", "main", "1970-01-02T00:00:00Z"}},
		{"push", map[string]string{"GITHUB_SHA": " def \n", "GITHUB_REF_NAME": "main"},
			[4]string{"def", "main", "main", "2026-01-01T00:00:00Z"}},
		{"outside Actions, no repository", map[string]string{"SOURCE_DATE_EPOCH": " 1767312000 "},
			[4]string{"", "", "", "2026-01-02T00:00:00Z"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := readProvenance(func(k string) string { return tt.env[k] }, dir, now)
			require.NoError(t, err)
			assert.Equal(t, tt.want, [4]string{p.Commit, p.Branch, p.Base, p.TimeText()})
		})
	}
	for _, bad := range []string{"yesterday", "12abc", "0x10", "1.5", "+1700000000", "-1", " ", "253402300800", "99999999999999999999"} {
		_, err := readProvenance(func(k string) string {
			if k == "SOURCE_DATE_EPOCH" {
				return bad
			}
			return ""
		}, dir, now)
		require.EqualError(t, err, `SOURCE_DATE_EPOCH="`+bad+`" is not a number of seconds (0 to 253402300799, 9999-12-31T23:59:59Z)`)
	}
	// The last second with four digits of year is taken.
	p, err := readProvenance(func(k string) string { return map[string]string{"SOURCE_DATE_EPOCH": "253402300799"}[k] }, dir, now)
	require.NoError(t, err)
	assert.Equal(t, "9999-12-31T23:59:59Z", p.TimeText())
}
