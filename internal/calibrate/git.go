package calibrate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/gitread"
	"github.com/retrieval-gate/retrieval-gate/internal/input/labelfile"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
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
	if base.Raters != cur.Raters {
		ch = append(ch, fmt.Sprintf("raters: %s -> %s", raters(base), raters(cur)))
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
		if b.CarriedOver != c.CarriedOver {
			dims = append(dims, fmt.Sprintf("dimensions.%s.carried_over: %t -> %t", n, b.CarriedOver, c.CarriedOver))
		}
	}
	for _, n := range cur.DimensionNames() {
		if _, ok := base.Dimensions[n]; !ok {
			c := cur.Dimensions[n]
			added := fmt.Sprintf("dimensions.%s: added (construct %s, gated %t)", n, c.Construct, c.Gated)
			if c.CarriedOver {
				added = fmt.Sprintf("dimensions.%s: added (construct %s, gated %t, carried over)", n, c.Construct, c.Gated)
			}
			dims = append(dims, added)
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

// raters is the lock's rater framing as a report shows it: "single (default)"
// when not set.
func raters(l *labelfile.Lock) string {
	if !l.RatersSet {
		return l.Raters + " (default)"
	}
	return l.Raters
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
// in (unknown ref, not a git repository, a corrupt object): exit code 2.
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

// The guards read the repository with internal/gitread, not with git: the
// Action's image (distroless/static) has no git, and nothing in the repository
// (hooks, filters, configuration) is run. They read what these git commands
// would: rev-parse --show-toplevel, rev-parse --verify REF^{commit}, cat-file -e
// and show REF:PATH, log -1 --format=%H -- PATH, status --porcelain -- PATH and
// merge-base --is-ancestor.

// CheckLock compares the lock at lockPath (already parsed as cur) with its copy at
// git ref base, in the repository that contains lockPath. A lock absent at the ref
// is a change ("new file"); a copy that is not a valid lock is a change too. An
// unknown ref or a lock outside any git repository is an *InputError.
func CheckLock(ctx context.Context, lockPath, base string, cur *labelfile.Lock) (*LockCheck, error) {
	if base == "" || strings.HasPrefix(base, "-") {
		return nil, &InputError{Msg: fmt.Sprintf("--lock-base %q is not a git ref", base)}
	}
	repo, rel, err := repoPath(ctx, lockPath)
	if err != nil {
		return nil, err
	}
	defer repo.Close()
	id, err := repo.ResolveCommit(base)
	if err != nil {
		var ue *gitread.UnknownRevisionError
		if errors.As(err, &ue) {
			return nil, &InputError{Msg: fmt.Sprintf("--lock-base: unknown git ref %q in %s%s", base, repo.Top, shallowHint(repo, ue))}
		}
		return nil, repoErr(repo, err)
	}
	c, err := repo.Commit(id)
	if err != nil {
		return nil, repoErr(repo, err)
	}
	lc := &LockCheck{Base: base}
	e, ok, err := repo.Lookup(c.Tree, rel)
	if err != nil {
		return nil, repoErr(repo, err)
	}
	if !ok {
		lc.Changed = []string{fmt.Sprintf("new file: %s does not exist at %s", rel, base)}
		return lc, nil
	}
	if e.Mode&0o170000 != 0o100000 {
		lc.Changed = []string{fmt.Sprintf("the copy at %s is not a valid lock (%s is not a file there)", base, rel)}
		return lc, nil
	}
	t, data, err := repo.Read(e.ID)
	if err != nil {
		return nil, repoErr(repo, err)
	}
	if t != gitread.TypeBlob {
		return nil, repoErr(repo, fmt.Errorf("%s:%s is a %s", base, rel, t))
	}
	old, err := labelfile.ReadLock(data, base+":"+rel)
	if err != nil {
		lc.Changed = []string{fmt.Sprintf("the copy at %s is not a valid lock (%v)", base, err)}
		return lc, nil
	}
	lc.Changed = LockChanges(old, cur)
	return lc, nil
}

// shallowHint says why a ref may be missing in a shallow clone.
func shallowHint(repo *gitread.Repo, ue *gitread.UnknownRevisionError) string {
	hint := ""
	if ue.Reason != "" {
		hint = " (" + ue.Reason + ")"
	}
	if repo.IsShallow() {
		hint += "; the repository is a shallow clone: fetch the ref (actions/checkout with fetch-depth: 0)"
	}
	return hint
}

// repoErr is a repository that cannot be read (a corrupt or missing object, an
// object over the cap): an input error naming the repository.
func repoErr(repo *gitread.Repo, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return &InputError{Msg: fmt.Sprintf("cannot read the git repository %s: %v", repo.Top, err)}
}

// GitAnchoring is the optional git check of label anchoring: the commit that last
// changed the human labels must be a strict ancestor of the commit that last changed
// the judge scores, and neither file may have uncommitted changes.
type GitAnchoring struct {
	HumanCommit string
	JudgeCommit string
	OK          bool
	// Findings say why the check failed, as data (outcome.AnchorNoCommit, ...);
	// they are the git-anchoring gate's reason.
	Findings []outcome.Clause
}

// CheckGitAnchoring runs the git anchoring check in the repository containing the
// human labels file. Files outside a git repository, or in different repositories,
// are an *InputError; untracked, modified or same-commit files fail the check.
// "Uncommitted changes" compares the file's bytes (and executable bit) with HEAD's
// copy, as `git status` would with no filters or line-ending conversion configured.
// In a shallow clone the walk stops at the boundary, as git's does: a file present
// there was "last changed" by the boundary commit, and a reason says so.
func CheckGitAnchoring(ctx context.Context, humanPath, judgePath string) (*GitAnchoring, error) {
	repo, hrel, err := repoPath(ctx, humanPath)
	if err != nil {
		return nil, err
	}
	defer repo.Close()
	jrepo, jrel, err := repoPath(ctx, judgePath)
	if err != nil {
		return nil, err
	}
	jrepo.Close()
	if repo.Top != jrepo.Top {
		return nil, &InputError{Msg: fmt.Sprintf("--git-anchoring: %s and %s are in different git repositories", humanPath, judgePath)}
	}
	ga := &GitAnchoring{}
	head, hasHead, err := repo.Head()
	if err != nil {
		return nil, repoErr(repo, err)
	}
	var headTree gitread.ID
	if hasHead {
		c, err := repo.Commit(head)
		if err != nil {
			return nil, repoErr(repo, err)
		}
		headTree = c.Tree
	}
	last := func(path, rel, side string) (string, error) {
		var c gitread.ID
		ok := false
		if hasHead {
			if c, ok, err = repo.LastChange(head, rel); err != nil {
				return "", repoErr(repo, err)
			}
		}
		if !ok {
			ga.Findings = append(ga.Findings, outcome.Clause{Code: outcome.AnchorNoCommit, Name: side, Text: rel})
			return "", nil
		}
		dirty, err := uncommitted(repo, headTree, path, rel)
		if err != nil {
			return "", err
		}
		if dirty {
			ga.Findings = append(ga.Findings, outcome.Clause{Code: outcome.AnchorUncommitted, Name: side, Text: rel})
		}
		return c.String(), nil
	}
	if ga.HumanCommit, err = last(humanPath, hrel, "human"); err != nil {
		return nil, err
	}
	if ga.JudgeCommit, err = last(judgePath, jrel, "judge"); err != nil {
		return nil, err
	}
	if ga.HumanCommit != "" && ga.JudgeCommit != "" {
		hc, _ := gitread.ParseID(ga.HumanCommit)
		jc, _ := gitread.ParseID(ga.JudgeCommit)
		switch {
		case ga.HumanCommit == ga.JudgeCommit:
			ga.Findings = append(ga.Findings, outcome.Clause{Code: outcome.AnchorSameCommit, Text: ga.HumanCommit})
		default:
			anc, err := repo.IsAncestor(hc, jc)
			if err != nil {
				return nil, repoErr(repo, err)
			}
			if !anc {
				ga.Findings = append(ga.Findings, outcome.Clause{Code: outcome.AnchorNotAncestor, Names: []string{ga.HumanCommit, ga.JudgeCommit}})
			}
		}
		if len(ga.Findings) > 0 {
			for _, c := range []gitread.ID{hc, jc} {
				if repo.IsShallowCommit(c) {
					ga.Findings = append(ga.Findings, outcome.Clause{Code: outcome.AnchorShallow, Text: c.String()})
					break
				}
			}
		}
	}
	ga.OK = len(ga.Findings) == 0
	return ga, ctx.Err()
}

// uncommitted reports whether the file at path differs from HEAD's copy of rel:
// its bytes (hashed as a blob, streaming) or its executable bit; a file HEAD does
// not have is uncommitted.
func uncommitted(repo *gitread.Repo, headTree gitread.ID, path, rel string) (bool, error) {
	e, ok, err := repo.Lookup(headTree, rel)
	if err != nil {
		return false, repoErr(repo, err)
	}
	if !ok || e.Mode&0o170000 != 0o100000 {
		return true, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return false, &InputError{Msg: err.Error()}
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false, &InputError{Msg: err.Error()}
	}
	if !fi.Mode().IsRegular() {
		return true, nil
	}
	if (fi.Mode()&0o100 != 0) != (e.Mode == 0o100755) {
		return true, nil
	}
	id, err := gitread.HashBlobReader(f, fi.Size())
	if err != nil {
		return false, &InputError{Msg: fmt.Sprintf("%s: %v", path, err)}
	}
	return id != e.ID, nil
}

// repoPath opens the git repository containing path and returns path relative to
// its top level, with forward slashes.
func repoPath(ctx context.Context, path string) (*gitread.Repo, string, error) {
	if err := ctx.Err(); err != nil {
		return nil, "", err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, "", err
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	repo, err := gitread.Discover(filepath.Dir(abs))
	if errors.Is(err, gitread.ErrNotRepository) {
		return nil, "", &InputError{Msg: fmt.Sprintf("%s is not inside a git repository", path)}
	}
	if err != nil {
		return nil, "", &InputError{Msg: fmt.Sprintf("%s: cannot read its git repository: %v", path, err)}
	}
	repo.Interrupted = ctx.Err
	top := repo.Top
	if r, err := filepath.EvalSymlinks(top); err == nil {
		top = r
	}
	rel, err := filepath.Rel(top, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") || rel == "." {
		repo.Close()
		return nil, "", &InputError{Msg: fmt.Sprintf("%s is outside the git repository %s", path, top)}
	}
	return repo, filepath.ToSlash(rel), nil
}
