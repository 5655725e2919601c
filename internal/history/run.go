package history

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// NewRecord is a run's history record: the time (Now), the commit and branch
// (GitHub's GITHUB_SHA and GITHUB_HEAD_REF or GITHUB_REF_NAME, else git in the
// working directory, else empty), the fingerprint of the inputs and parameters,
// and the command's JSON document.
func NewRecord(ctx context.Context, getenv func(string) string, command string, inputs, params map[string]string, doc []byte) (Record, error) {
	fp, err := NewFingerprint(inputs, params)
	if err != nil {
		return Record{}, fmt.Errorf("--history: %w", err)
	}
	now, err := Now(getenv)
	if err != nil {
		return Record{}, fmt.Errorf("--history: %w", err)
	}
	commit := getenv("GITHUB_SHA")
	if commit == "" {
		commit = git(ctx, "rev-parse", "HEAD")
	}
	return Record{Command: command, Commit: commit, Branch: RunBranch(ctx, getenv), Time: now.Format(time.RFC3339),
		Fingerprint: fp, Document: doc}, nil
}

// HeadCommit is the commit the run measured: GITHUB_SHA (trimmed), else `git rev-parse
// HEAD` in the working directory, else "".
func HeadCommit(ctx context.Context, getenv func(string) string) string {
	if s := strings.TrimSpace(getenv("GITHUB_SHA")); s != "" {
		return s
	}
	return git(ctx, "rev-parse", "HEAD")
}

// RunBranch is the branch a history record names: GITHUB_HEAD_REF (pull
// requests) or GITHUB_REF_NAME inside Actions, else git's current branch, else "".
func RunBranch(ctx context.Context, getenv func(string) string) string {
	branch := getenv("GITHUB_HEAD_REF")
	if branch == "" {
		branch = getenv("GITHUB_REF_NAME")
	}
	if branch == "" {
		branch = git(ctx, "rev-parse", "--abbrev-ref", "HEAD")
	}
	return branch
}

// BaseBranch is the branch a trend is of: the pull request's base branch
// (GITHUB_BASE_REF), else this run's branch as the history records it.
func BaseBranch(ctx context.Context, getenv func(string) string) string {
	if b := getenv("GITHUB_BASE_REF"); b != "" {
		return b
	}
	return RunBranch(ctx, getenv)
}

// git returns the trimmed output of a git command, or "" when it fails.
func git(ctx context.Context, args ...string) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "git", args...).Output() //nolint:gosec // G204: git with an argument vector, never a shell
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
