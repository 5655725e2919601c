package cli

// A run's provenance (history.Provenance: commit, branch, base branch, time),
// which its history record and a --write-baseline header keep. This is the one
// place it is read: from the GitHub Actions variables, and outside Actions from
// the repository of the working directory through internal/gitread, the pure-Go
// reader calibrate's guards use (no git executable is run). The domain
// (history, trend, check) receives the value.

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/retrieval-gate/retrieval-gate/internal/gitread"
	"github.com/retrieval-gate/retrieval-gate/internal/history"
)

// provenanceOnce holds the run's provenance once read: every record and header
// of one process (evaluate's stages included) carries the same commit, branch
// and time.
type provenanceOnce struct {
	read bool
	p    history.Provenance
	err  error
}

// provenance is the run's provenance, read at its first use (readProvenance in
// the working directory, at the clock's time then).
func (f *Factory) provenance() (history.Provenance, error) {
	if f.prov == nil {
		f.prov = new(provenanceOnce)
	}
	if !f.prov.read {
		f.prov.p, f.prov.err = readProvenance(f.Env.Getenv, ".", time.Now)
		f.prov.read = true
	}
	return f.prov.p, f.prov.err
}

// maxEpoch is 9999-12-31T23:59:59Z, the last second RFC 3339 writes with four
// digits of year.
const maxEpoch = 253402300799

// runTime is the time of a run: $SOURCE_DATE_EPOCH, digits of seconds up to
// maxEpoch, when set (as reproducible builds set it; anything else is an
// error), else now(). The provenance's time, and the clock a baseline's age is
// measured on, so that the same inputs and the same $SOURCE_DATE_EPOCH give
// the same reports on any day.
func runTime(getenv func(string) string, now func() time.Time) (time.Time, error) {
	s := getenv("SOURCE_DATE_EPOCH")
	if s == "" {
		return now(), nil
	}
	// Digits alone (as `date +%s` writes them), up to the last second an RFC 3339
	// time has four digits of year for: a later one was written into a baseline
	// or a history that no reader then took.
	t := strings.TrimSpace(s)
	sec, err := strconv.ParseInt(t, 10, 64)
	if err != nil || t[0] == '+' || t[0] == '-' || sec > maxEpoch {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH=%q is not a number of seconds (0 to %d, %s)", s, int64(maxEpoch), time.Unix(maxEpoch, 0).UTC().Format(time.RFC3339))
	}
	return time.Unix(sec, 0), nil
}

// readProvenance is the provenance of a run in the work tree around dir:
//   - the commit: $GITHUB_SHA (trimmed), else the commit HEAD resolves to
//     (`git rev-parse HEAD`), else "";
//   - the branch: $GITHUB_HEAD_REF (a pull request's branch), else
//     $GITHUB_REF_NAME, else HEAD's branch as `git rev-parse --abbrev-ref HEAD`
//     names it ("HEAD" when detached), else "";
//   - the base branch: $GITHUB_BASE_REF (a pull request's), else the branch;
//   - the time: $SOURCE_DATE_EPOCH, a decimal number of seconds, when set (as
//     reproducible builds set it; anything else is an error), else now().
//
// The repository is read only when a variable leaves something to it; one
// that cannot be read (none, a format gitread refuses) leaves the value "", as
// a failing git did.
func readProvenance(getenv func(string) string, dir string, now func() time.Time) (history.Provenance, error) {
	var p history.Provenance
	var err error
	if p.Time, err = runTime(getenv, now); err != nil {
		return p, err
	}
	var repo *gitread.Repo
	repoRead := false
	openRepo := func() *gitread.Repo {
		if !repoRead {
			repoRead = true
			if r, err := gitread.Discover(dir); err == nil {
				repo = r
			}
		}
		return repo
	}
	if p.Commit = strings.TrimSpace(getenv("GITHUB_SHA")); p.Commit == "" {
		if r := openRepo(); r != nil {
			if id, ok, err := r.Head(); err == nil && ok {
				p.Commit = id.String()
			}
		}
	}
	if p.Branch = getenv("GITHUB_HEAD_REF"); p.Branch == "" {
		p.Branch = getenv("GITHUB_REF_NAME")
	}
	if p.Branch == "" {
		if r := openRepo(); r != nil {
			p.Branch = headBranch(r)
		}
	}
	if p.Base = getenv("GITHUB_BASE_REF"); p.Base == "" {
		p.Base = p.Branch
	}
	return p, nil
}

// headBranch is `git rev-parse --abbrev-ref HEAD`: the branch's short name,
// "HEAD" when detached, "" on an unborn branch (git fails there) or when HEAD
// cannot be read.
func headBranch(r *gitread.Repo) string {
	if _, ok, err := r.Head(); err != nil || !ok {
		return ""
	}
	ref, err := r.HeadRef()
	switch {
	case err != nil:
		return ""
	case ref == "":
		return "HEAD"
	}
	return r.ShortRef(ref)
}

// codeQualityRoot is the repository's root that --codequality's paths are written
// relative to: $CI_PROJECT_DIR (GitLab's checkout) when set, else the top of
// the git work tree around the working directory (gitread.Discover, as the
// provenance finds it), else the working directory.
func codeQualityRoot(getenv func(string) string) string {
	if d := getenv("CI_PROJECT_DIR"); d != "" {
		if abs, err := filepath.Abs(d); err == nil {
			return abs
		}
	}
	if r, err := gitread.Discover("."); err == nil && r.Top != "" {
		return r.Top
	}
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	return wd
}
