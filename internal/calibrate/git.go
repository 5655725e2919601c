package calibrate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/input/labelfile"
)

// LockCheck is the frozen-constants guard: the lock compared with its copy at a git ref.
type LockCheck struct {
	Base    string   // the git ref
	Changed []string // what changed; empty when the constants are identical
}

// LockChanges lists every difference of the frozen constants between base and cur:
// bins, kappa_weighting, min_kappa, min_n, dimensions added or removed, and each
// dimension's construct and gated flag. Formatting (whitespace, key order, JSON or
// YAML) is not a change, nor is writing out min_n's default (the value in force is
// compared). Sorted, so reports are deterministic.
func LockChanges(base, cur *labelfile.Lock) []string {
	var ch []string
	if !slices.Equal(base.Bins, cur.Bins) {
		ch = append(ch, fmt.Sprintf("bins: %s -> %s", floats(base.Bins), floats(cur.Bins)))
	}
	if base.KappaWeighting != cur.KappaWeighting {
		ch = append(ch, fmt.Sprintf("kappa_weighting: %s -> %s", base.KappaWeighting, cur.KappaWeighting))
	}
	if base.MinKappa != cur.MinKappa {
		ch = append(ch, fmt.Sprintf("min_kappa: %s -> %s", num(base.MinKappa), num(cur.MinKappa)))
	}
	if base.MinN != cur.MinN {
		ch = append(ch, fmt.Sprintf("min_n: %s -> %s", minN(base), minN(cur)))
	}
	var dims []string
	for _, n := range base.DimensionNames() {
		b := base.Dimensions[n]
		c, ok := cur.Dimensions[n]
		if !ok {
			dims = append(dims, fmt.Sprintf("dimensions.%s: removed", n))
			continue
		}
		if b.Construct != c.Construct {
			dims = append(dims, fmt.Sprintf("dimensions.%s.construct: %s -> %s", n, b.Construct, c.Construct))
		}
		if b.Gated != c.Gated {
			dims = append(dims, fmt.Sprintf("dimensions.%s.gated: %t -> %t", n, b.Gated, c.Gated))
		}
	}
	for _, n := range cur.DimensionNames() {
		if _, ok := base.Dimensions[n]; !ok {
			c := cur.Dimensions[n]
			dims = append(dims, fmt.Sprintf("dimensions.%s: added (construct %s, gated %t)", n, c.Construct, c.Gated))
		}
	}
	slices.Sort(dims)
	return append(ch, dims...)
}

// minN is the lock's min_n as a report shows it: "30 (default)" when not set.
func minN(l *labelfile.Lock) string {
	if !l.MinNSet {
		return strconv.Itoa(l.MinN) + " (default)"
	}
	return strconv.Itoa(l.MinN)
}

func num(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

func floats(fs []float64) string {
	s := make([]string, len(fs))
	for i, f := range fs {
		s[i] = num(f)
	}
	return "[" + strings.Join(s, ", ") + "]"
}

// InputError is a problem with the command line or the repository the lock lives
// in (unknown ref, not a git repository): exit code 2.
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

// CheckLock compares the lock at lockPath (already parsed as cur) with its copy at
// git ref base, in the repository that contains lockPath. A lock absent at the ref
// is a change ("new file"); a copy that is not a valid lock is a change too. An
// unknown ref or a lock outside any git repository is an *InputError.
func CheckLock(ctx context.Context, lockPath, base string, cur *labelfile.Lock) (*LockCheck, error) {
	if base == "" || strings.HasPrefix(base, "-") {
		return nil, &InputError{Msg: fmt.Sprintf("--lock-base %q is not a git ref", base)}
	}
	top, rel, err := repoPath(ctx, lockPath)
	if err != nil {
		return nil, err
	}
	if _, err := git(ctx, top, "rev-parse", "--verify", "--quiet", "--end-of-options", base+"^{commit}"); err != nil {
		return nil, &InputError{Msg: fmt.Sprintf("--lock-base: unknown git ref %q in %s", base, top)}
	}
	lc := &LockCheck{Base: base}
	obj := base + ":" + rel
	if _, err := git(ctx, top, "cat-file", "-e", obj); err != nil {
		lc.Changed = []string{fmt.Sprintf("new file: %s does not exist at %s", rel, base)}
		return lc, nil //nolint:nilerr // a lock absent at the base is a reported change (the gate fails), not an error
	}
	data, err := git(ctx, top, "show", obj)
	if err != nil {
		return nil, fmt.Errorf("failed to read %s: %w", obj, err)
	}
	old, err := labelfile.ReadLock(data, base+":"+rel)
	if err != nil {
		lc.Changed = []string{fmt.Sprintf("the copy at %s is not a valid lock (%v)", base, err)}
		return lc, nil
	}
	lc.Changed = LockChanges(old, cur)
	return lc, nil
}

// GitAnchoring is the optional git check of label anchoring: the commit that last
// changed the human labels must be a strict ancestor of the commit that last changed
// the judge scores, and neither file may have uncommitted changes.
type GitAnchoring struct {
	HumanCommit string
	JudgeCommit string
	OK          bool
	Reasons     []string
}

// CheckGitAnchoring runs the git anchoring check in the repository containing the
// human labels file. Files outside a git repository, or in different repositories,
// are an *InputError; untracked, modified or same-commit files fail the check.
func CheckGitAnchoring(ctx context.Context, humanPath, judgePath string) (*GitAnchoring, error) {
	htop, hrel, err := repoPath(ctx, humanPath)
	if err != nil {
		return nil, err
	}
	jtop, jrel, err := repoPath(ctx, judgePath)
	if err != nil {
		return nil, err
	}
	if htop != jtop {
		return nil, &InputError{Msg: fmt.Sprintf("--git-anchoring: %s and %s are in different git repositories", humanPath, judgePath)}
	}
	ga := &GitAnchoring{}
	last := func(rel, what string) string {
		out, err := git(ctx, htop, "log", "-1", "--format=%H", "--", rel)
		c := strings.TrimSpace(string(out))
		if err != nil || c == "" {
			ga.Reasons = append(ga.Reasons, fmt.Sprintf("the %s file %s has no commit", what, rel))
			return ""
		}
		if st, _ := git(ctx, htop, "status", "--porcelain", "--", rel); len(bytes.TrimSpace(st)) > 0 {
			ga.Reasons = append(ga.Reasons, fmt.Sprintf("the %s file %s has uncommitted changes", what, rel))
		}
		return c
	}
	ga.HumanCommit = last(hrel, "human labels")
	ga.JudgeCommit = last(jrel, "judge scores")
	if ga.HumanCommit != "" && ga.JudgeCommit != "" {
		switch {
		case ga.HumanCommit == ga.JudgeCommit:
			ga.Reasons = append(ga.Reasons, fmt.Sprintf("the human labels and the judge scores were last changed in the same commit %s: the labels are not provably older", short(ga.HumanCommit)))
		default:
			_, err := git(ctx, htop, "merge-base", "--is-ancestor", ga.HumanCommit, ga.JudgeCommit)
			var ee *exec.ExitError
			switch {
			case err == nil:
			case errors.As(err, &ee) && ee.ExitCode() == 1:
				ga.Reasons = append(ga.Reasons, fmt.Sprintf("the commit that last changed the human labels (%s) is not an ancestor of the one that last changed the judge scores (%s)", short(ga.HumanCommit), short(ga.JudgeCommit)))
			default:
				return nil, fmt.Errorf("failed to run git merge-base: %w", err)
			}
		}
	}
	ga.OK = len(ga.Reasons) == 0
	return ga, nil
}

func short(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}

// repoPath returns the top level of the git repository containing path and path
// relative to it, with forward slashes.
func repoPath(ctx context.Context, path string) (top, rel string, err error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", "", err
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	out, err := git(ctx, filepath.Dir(abs), "rev-parse", "--show-toplevel")
	var ie *InputError
	if errors.As(err, &ie) {
		return "", "", err
	}
	if err != nil {
		return "", "", &InputError{Msg: fmt.Sprintf("%s is not inside a git repository (%v)", path, err)}
	}
	top = strings.TrimSpace(string(out))
	if r, err := filepath.EvalSymlinks(top); err == nil {
		top = r
	}
	rel, err = filepath.Rel(top, abs)
	if err != nil || strings.HasPrefix(rel, "..") {
		return "", "", &InputError{Msg: fmt.Sprintf("%s is outside the git repository %s", path, top)}
	}
	return top, filepath.ToSlash(rel), nil
}

// git runs git in dir and returns its standard output; on failure the error
// carries git's standard error.
func git(ctx context.Context, dir string, args ...string) ([]byte, error) {
	if _, err := exec.LookPath("git"); err != nil {
		// The Action's image (distroless/static) has no git (issue 20 item 9).
		return nil, &InputError{Msg: "--lock-base and --git-anchoring read the repository with git, and no git is on PATH " +
			"(the Action's Docker image has none): run calibrate with these flags in a step where git is installed " +
			"(the released binary in a run: step, or actions/checkout's runner image)"}
	}
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "LC_ALL=C")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return out, fmt.Errorf("git %s: %w: %s", args[0], err, msg)
		}
		return out, fmt.Errorf("git %s: %w", args[0], err)
	}
	return out, nil
}
