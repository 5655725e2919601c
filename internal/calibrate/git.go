package calibrate

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
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
	Base    string       // the git ref
	Changed []LockChange // what changed and is not declared; empty when the constants are identical
	// Adoption is the lock's declared panel adoption when it is new since Base
	// and Base is single-rater (the one-time move ADR-0028 describes): the
	// changes it covers are in Adoption.Covered, not in Changed. Nil otherwise.
	Adoption *AdoptionCheck
}

// AdoptionCheck is a declared panel adoption accepted against the base ref: its
// reason, the dimensions it carries over and the lock changes it covers.
type AdoptionCheck struct {
	Reason      string
	CarriedOver []string
	Covered     []LockChange
}

// LockChangeCode names what changed in the lock since the git ref. A change is
// data; its words are the report layer's (calibratereport.LockChangeText).
type LockChangeCode string

// The lock changes, with the LockChange fields each one uses.
const (
	// LockNewFile: the lock, at Path in the repository, does not exist at Ref.
	LockNewFile LockChangeCode = "new_file"
	// LockNotAFile: Path is not a file at Ref.
	LockNotAFile LockChangeCode = "not_a_file"
	// LockInvalid: the copy at Ref is not a valid lock; Detail is the reader's
	// error, as given.
	LockInvalid LockChangeCode = "invalid"
	// LockSetting: the constant Key ("bins", "min_kappa", "dimensions.NAME.gated",
	// …) changed From -> To; FromDefault and ToDefault: that side's value is the
	// default (the lock does not set it).
	LockSetting LockChangeCode = "setting"
	// LockDimensionRemoved: the dimension Key ("dimensions.NAME") was removed.
	LockDimensionRemoved LockChangeCode = "dimension_removed"
	// LockDimensionAdded: the dimension Key ("dimensions.NAME") was added, with
	// its Construct, Gated and CarriedOver.
	LockDimensionAdded LockChangeCode = "dimension_added"
	// LockAdoptionDeclared: the lock declares a panel adoption (Key
	// "panel_adoption", its Reason and Dimensions carried over) that the base
	// does not. Covered by the adoption itself when the base is single-rater;
	// else (From: the base's raters, already a panel) a change that fails: the
	// adoption is one-time, from the single-rater framing.
	LockAdoptionDeclared LockChangeCode = "adoption_declared"
	// LockAdoptionRemoved: the base's lock records a panel adoption (Reason,
	// Dimensions) that the lock no longer does.
	LockAdoptionRemoved LockChangeCode = "adoption_removed"
)

// LockChangeCodes are every LockChangeCode.
var LockChangeCodes = []LockChangeCode{LockNewFile, LockNotAFile, LockInvalid, LockSetting, LockDimensionRemoved, LockDimensionAdded,
	LockAdoptionDeclared, LockAdoptionRemoved}

// LockChange is one change of the lock since a git ref: a code and its values
// (see each code for the fields it uses).
type LockChange struct {
	Code LockChangeCode
	// Key is the constant or the dimension, as the lock's keys name it.
	Key string
	// From and To are the constant's two values as the lock writes them (a
	// number in its shortest form, a list as [a, b], a flag as true or false);
	// Text: they are free text (a definition, a reason, the owner's id), to be
	// quoted. FromDefault and ToDefault: that side does not set the constant
	// (its default, or none for a text).
	From, To               string
	FromDefault, ToDefault bool
	Text                   bool
	// Reason and Dimensions are a panel adoption's (LockAdoptionDeclared,
	// LockAdoptionRemoved).
	Reason     string
	Dimensions []string
	// Construct, Gated and CarriedOver are an added dimension's.
	Construct          string
	Gated, CarriedOver bool
	// Ref and Path are the git ref and the lock's path in the repository;
	// Detail is the reader's error on the ref's copy.
	Ref, Path, Detail string
}

// LockChanges lists every difference of the frozen constants between base and cur:
// bins, kappa_weighting, min_kappa, min_n, raters, owner, the panel adoption
// (declared, removed, its reason or its dimensions), dimensions added or removed,
// and each dimension's construct, definition, gated and carried_over flags.
// Formatting (whitespace, key order, JSON or YAML) is not a change, nor is writing
// out a default (the value in force is compared). The lock's own constants first,
// then the dimensions' by Key, so reports are deterministic. CheckLock then takes
// out what a panel adoption declared since base covers (adopt).
func LockChanges(base, cur *labelfile.Lock) []LockChange {
	var ch []LockChange
	setting := func(key, from, to string) LockChange {
		return LockChange{Code: LockSetting, Key: key, From: from, To: to}
	}
	if !slices.Equal(base.Bins, cur.Bins) {
		ch = append(ch, setting("bins", floats(base.Bins), floats(cur.Bins)))
	}
	if base.KappaWeighting != cur.KappaWeighting {
		ch = append(ch, setting("kappa_weighting", base.KappaWeighting, cur.KappaWeighting))
	}
	if base.MinKappa != cur.MinKappa {
		ch = append(ch, setting("min_kappa", num(base.MinKappa), num(cur.MinKappa)))
	}
	if base.MinN != cur.MinN {
		c := setting("min_n", strconv.Itoa(base.MinN), strconv.Itoa(cur.MinN))
		c.FromDefault, c.ToDefault = !base.MinNSet, !cur.MinNSet
		ch = append(ch, c)
	}
	if base.Raters != cur.Raters {
		c := setting("raters", base.Raters, cur.Raters)
		c.FromDefault, c.ToDefault = !base.RatersSet, !cur.RatersSet
		ch = append(ch, c)
	}
	if base.Owner != cur.Owner {
		ch = append(ch, text("owner", base.Owner, cur.Owner))
	}
	ch = append(ch, adoptionChanges(base, cur)...)
	var dims []LockChange
	for _, n := range base.DimensionNames() {
		b := base.Dimensions[n]
		c, ok := cur.Dimensions[n]
		if !ok {
			dims = append(dims, LockChange{Code: LockDimensionRemoved, Key: "dimensions." + n})
			continue
		}
		if b.Construct != c.Construct {
			dims = append(dims, setting("dimensions."+n+".construct", b.Construct, c.Construct))
		}
		if b.Gated != c.Gated {
			dims = append(dims, setting("dimensions."+n+".gated", strconv.FormatBool(b.Gated), strconv.FormatBool(c.Gated)))
		}
		if b.CarriedOver != c.CarriedOver {
			dims = append(dims, setting("dimensions."+n+".carried_over", strconv.FormatBool(b.CarriedOver), strconv.FormatBool(c.CarriedOver)))
		}
		if b.Definition != c.Definition {
			dims = append(dims, text("dimensions."+n+".definition", b.Definition, c.Definition))
		}
	}
	for _, n := range cur.DimensionNames() {
		if _, ok := base.Dimensions[n]; !ok {
			c := cur.Dimensions[n]
			dims = append(dims, LockChange{Code: LockDimensionAdded, Key: "dimensions." + n, Construct: c.Construct, Gated: c.Gated, CarriedOver: c.CarriedOver})
		}
	}
	// By Key and then ":", the order of the lines "KEY: …" the reports write.
	slices.SortFunc(dims, func(a, b LockChange) int { return strings.Compare(a.Key+":", b.Key+":") })
	return append(ch, dims...)
}

// text is the change of a text constant (absent: "").
func text(key, from, to string) LockChange {
	return LockChange{Code: LockSetting, Key: key, From: from, To: to, Text: true, FromDefault: from == "", ToDefault: to == ""}
}

// adoptionChanges compares the panel adoptions: declared, removed, or its
// reason or carried-over dimensions changed.
func adoptionChanges(base, cur *labelfile.Lock) []LockChange {
	b, c := base.Adoption, cur.Adoption
	switch {
	case b == nil && c == nil:
		return nil
	case b == nil:
		return []LockChange{{Code: LockAdoptionDeclared, Key: "panel_adoption", From: base.Raters, FromDefault: !base.RatersSet,
			Reason: c.Reason, Dimensions: c.CarriedOver}}
	case c == nil:
		return []LockChange{{Code: LockAdoptionRemoved, Key: "panel_adoption", Reason: b.Reason, Dimensions: b.CarriedOver}}
	}
	var ch []LockChange
	if b.Reason != c.Reason {
		ch = append(ch, text("panel_adoption.reason", b.Reason, c.Reason))
	}
	if !slices.Equal(b.CarriedOver, c.CarriedOver) {
		ch = append(ch, LockChange{Code: LockSetting, Key: "panel_adoption.carried_over", From: "[" + strings.Join(b.CarriedOver, ", ") + "]",
			To: "[" + strings.Join(c.CarriedOver, ", ") + "]"})
	}
	return ch
}

// adopt splits the changes since base into those a panel adoption declared
// since base covers and the rest. The adoption covers them only from a
// single-rater base (it is the one-time move from that framing): raters single
// -> panel, the owner named, its declaration, and carried_over false -> true
// on the dimensions it lists. Anything else stays a change.
func adopt(base, cur *labelfile.Lock, changes []LockChange) ([]LockChange, *AdoptionCheck) {
	if cur.Adoption == nil || base.Adoption != nil || base.Raters != labelfile.RatersSingle {
		return changes, nil
	}
	a := &AdoptionCheck{Reason: cur.Adoption.Reason, CarriedOver: cur.Adoption.CarriedOver}
	rest := []LockChange{}
	for _, c := range changes {
		covered := false
		switch {
		case c.Code == LockAdoptionDeclared:
			continue // the adoption itself
		case c.Code != LockSetting:
		case c.Key == "raters":
			covered = c.To == labelfile.RatersPanel
		case c.Key == "owner":
			covered = c.FromDefault
		default:
			name, dim := strings.CutPrefix(c.Key, "dimensions.")
			name, flag := strings.CutSuffix(name, ".carried_over")
			covered = dim && flag && c.From == "false" && c.To == "true" && slices.Contains(cur.Adoption.CarriedOver, name)
		}
		if covered {
			a.Covered = append(a.Covered, c)
		} else {
			rest = append(rest, c)
		}
	}
	return rest, a
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
// git ref base, in the repository that contains lockPath (opened by repos). A
// lock absent at the ref is a change ("new file"); a copy that is not a valid
// lock is a change too. An unknown ref or a lock outside any git repository is
// an *InputError.
func CheckLock(ctx context.Context, repos Repos, lockPath, base string, cur *labelfile.Lock) (*LockCheck, error) {
	if base == "" || strings.HasPrefix(base, "-") {
		return nil, &InputError{Msg: fmt.Sprintf("--lock-base %q is not a git ref", base)}
	}
	repo, rel, err := repos.Repo(ctx, lockPath)
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
		lc.Changed = []LockChange{{Code: LockNewFile, Ref: base, Path: rel}}
		return lc, nil
	}
	if e.Mode&0o170000 != 0o100000 {
		lc.Changed = []LockChange{{Code: LockNotAFile, Ref: base, Path: rel}}
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
		lc.Changed = []LockChange{{Code: LockInvalid, Ref: base, Path: rel, Detail: err.Error()}}
		return lc, nil
	}
	lc.Changed, lc.Adoption = adopt(old, cur, LockChanges(old, cur))
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
func CheckGitAnchoring(ctx context.Context, repos Repos, humanPath, judgePath string) (*GitAnchoring, error) {
	repo, hrel, err := repos.Repo(ctx, humanPath)
	if err != nil {
		return nil, err
	}
	defer repo.Close()
	jrepo, jrel, err := repos.Repo(ctx, judgePath)
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
		dirty, err := uncommitted(repos, repo, headTree, path, rel)
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
func uncommitted(repos Repos, repo *gitread.Repo, headTree gitread.ID, path, rel string) (bool, error) {
	e, ok, err := repo.Lookup(headTree, rel)
	if err != nil {
		return false, repoErr(repo, err)
	}
	if !ok || e.Mode&0o170000 != 0o100000 {
		return true, nil
	}
	f, err := repos.Working(path)
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

// Repos is the git guards' access to the repositories that hold the
// calibration's files (--lock-base, --git-anchoring), read-only through
// gitread: the repository holding a path with the path relative to its top
// level (forward slashes), and the working copy of a path (its bytes and mode
// against HEAD's). The front end gives it: GitRepos.
type Repos interface {
	Repo(ctx context.Context, path string) (*gitread.Repo, string, error)
	Working(path string) (fs.File, error)
}

// GitRepos is Repos on the file system: the repository found from the file's
// directory up (a .git directory or gitdir file), symbolic links resolved.
type GitRepos struct{}

// Working opens the working copy of path. Its kind comes first: a file that is
// not regular (a FIFO: the labels read from a pipe) is not opened, where no
// writer would be left to end the wait; what is returned only gives its Stat.
func (GitRepos) Working(path string) (fs.File, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return statOnly{st}, nil
	}
	return os.Open(path)
}

// statOnly is a file that is not opened: its Stat, and no content.
type statOnly struct{ fi fs.FileInfo }

func (s statOnly) Stat() (fs.FileInfo, error) { return s.fi, nil }
func (s statOnly) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: s.fi.Name(), Err: fs.ErrInvalid}
}
func (statOnly) Close() error { return nil }

// Repo opens the git repository containing path and returns path relative to
// its top level, with forward slashes. A path outside any repository is an
// *InputError.
func (GitRepos) Repo(ctx context.Context, path string) (*gitread.Repo, string, error) {
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
