package gitread

import (
	"bufio"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// UnknownRevisionError is a revision that names no commit.
type UnknownRevisionError struct {
	Rev    string
	Reason string
}

func (e *UnknownRevisionError) Error() string {
	if e.Reason == "" {
		return fmt.Sprintf("unknown revision %q", e.Rev)
	}
	return fmt.Sprintf("unknown revision %q: %s", e.Rev, e.Reason)
}

// ResolveCommit is `git rev-parse --verify REV^{commit}` for the revisions this
// reader knows: a full or abbreviated (4 or more digits) hex id, a ref by its full
// name or a short one looked up in git's order (NAME, refs/NAME, refs/tags/NAME,
// refs/heads/NAME, refs/remotes/NAME, refs/remotes/NAME/HEAD; loose refs before
// packed-refs; symbolic refs followed), HEAD and other root refs (FETCH_HEAD …),
// followed by any of ~N, ^N, ^{} and ^{commit}. Annotated tags are peeled.
func (r *Repo) ResolveCommit(rev string) (ID, error) {
	base, ops := rev, ""
	if i := strings.IndexAny(rev, "~^"); i >= 0 {
		base, ops = rev[:i], rev[i:]
	}
	if base == "@" {
		base = "HEAD"
	}
	id, err := r.resolveBase(rev, base)
	if err != nil {
		return ID{}, err
	}
	if id, err = r.peelToCommit(rev, id); err != nil {
		return ID{}, err
	}
	for ops != "" {
		op := ops[0]
		ops = ops[1:]
		if op == '^' && strings.HasPrefix(ops, "{") {
			end := strings.IndexByte(ops, '}')
			if end < 0 {
				return ID{}, &UnknownRevisionError{Rev: rev}
			}
			if what := ops[1:end]; what != "" && what != "commit" {
				return ID{}, &UnknownRevisionError{Rev: rev, Reason: "only ^{} and ^{commit} are read"}
			}
			ops = ops[end+1:]
			continue
		}
		j := 0
		for j < len(ops) && ops[j] >= '0' && ops[j] <= '9' {
			j++
		}
		n := 1
		if j > 0 {
			v, err := strconv.Atoi(ops[:j])
			if err != nil || v > 1<<20 {
				return ID{}, &UnknownRevisionError{Rev: rev}
			}
			n = v
		}
		ops = ops[j:]
		if op == '~' {
			for range n {
				c, err := r.Commit(id)
				if err != nil {
					return ID{}, err
				}
				if len(c.Parents) == 0 {
					return ID{}, &UnknownRevisionError{Rev: rev, Reason: "history ends before it" + r.shallowNote(id)}
				}
				id = c.Parents[0]
			}
			continue
		}
		if n == 0 {
			continue
		}
		c, err := r.Commit(id)
		if err != nil {
			return ID{}, err
		}
		if n > len(c.Parents) {
			return ID{}, &UnknownRevisionError{Rev: rev, Reason: "no such parent" + r.shallowNote(id)}
		}
		id = c.Parents[n-1]
	}
	return id, nil
}

func (r *Repo) shallowNote(id ID) string {
	if r.shallow[id] {
		return fmt.Sprintf(" (%s is a shallow clone's boundary: its parents were not fetched)", id)
	}
	return ""
}

func (r *Repo) peelToCommit(rev string, id ID) (ID, error) {
	for range 100 {
		t, data, err := r.Read(id)
		var me *MissingError
		if errors.As(err, &me) {
			return ID{}, &UnknownRevisionError{Rev: rev, Reason: me.Error()}
		}
		if err != nil {
			return ID{}, err
		}
		switch t {
		case TypeCommit:
			return id, nil
		case TypeTag:
			target, _, err := parseTag(data)
			if err != nil {
				return ID{}, &CorruptError{What: id.String(), Msg: err.Error()}
			}
			id = target
		default:
			return ID{}, &UnknownRevisionError{Rev: rev, Reason: fmt.Sprintf("it names a %s, not a commit", t)}
		}
	}
	return ID{}, &UnknownRevisionError{Rev: rev, Reason: "too many nested tags"}
}

func (r *Repo) resolveBase(rev, name string) (ID, error) {
	if id, ok := ParseID(name); ok {
		return id, nil
	}
	if validRefName(name) {
		rules := []string{"refs/%s", "refs/tags/%s", "refs/heads/%s", "refs/remotes/%s", "refs/remotes/%s/HEAD"}
		if strings.HasPrefix(name, "refs/") || isRootRef(name) {
			rules = append([]string{"%s"}, rules...)
		}
		for _, rule := range rules {
			id, ok, err := r.ref(fmt.Sprintf(rule, name), 0)
			if err != nil {
				return ID{}, err
			}
			if ok {
				return id, nil
			}
		}
	}
	if len(name) >= 4 && len(name) < 40 && isHex(name) {
		return r.byPrefix(rev, strings.ToLower(name))
	}
	return ID{}, &UnknownRevisionError{Rev: rev}
}

// isRootRef: HEAD, FETCH_HEAD, ORIG_HEAD …, as git reads them from the git
// directory's top.
func isRootRef(name string) bool {
	if !strings.HasSuffix(name, "HEAD") {
		return false
	}
	for _, c := range name {
		if (c < 'A' || c > 'Z') && c != '_' {
			return false
		}
	}
	return true
}

// validRefName is git's check_refname_format, so that no name reaches a path
// outside the git directory.
func validRefName(name string) bool {
	if name == "" || name == "@" || strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/") ||
		strings.HasSuffix(name, ".") || strings.Contains(name, "..") || strings.Contains(name, "//") ||
		strings.Contains(name, "@{") {
		return false
	}
	for _, c := range name {
		if c < 0x20 || c == 0x7f || strings.ContainsRune(" ~^:?*[\\", c) {
			return false
		}
	}
	for _, comp := range strings.Split(name, "/") {
		if strings.HasPrefix(comp, ".") || strings.HasSuffix(comp, ".lock") {
			return false
		}
	}
	return true
}

func isHex(s string) bool {
	for _, c := range s {
		if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
			return false
		}
	}
	return true
}

// perWorktree: refs a linked worktree keeps in its own git directory.
func perWorktree(name string) bool {
	return !strings.Contains(name, "/") || strings.HasPrefix(name, "refs/bisect/") ||
		strings.HasPrefix(name, "refs/worktree/") || strings.HasPrefix(name, "refs/rewritten/")
}

// ref reads a ref: the loose file, else packed-refs; symbolic refs are followed
// (up to 5 levels, as git). A loose ref that is a symbolic link whose target
// is a ref name ("refs/…", git's old form of a symbolic ref) is that symbolic
// ref; any other link is followed only within the repository (openIn). No
// error shows what a ref file holds.
func (r *Repo) ref(name string, depth int) (ID, bool, error) {
	if depth > 5 {
		return ID{}, false, fmt.Errorf("symbolic ref %s: too many levels", name)
	}
	dir := r.CommonDir
	if perWorktree(name) {
		dir = r.GitDir
	}
	p := filepath.Join(dir, filepath.FromSlash(name))
	if target, ok := linkRef(p); ok {
		return r.ref(target, depth+1)
	}
	b, err := readSmall(p, r.roots)
	switch {
	case err == nil:
		line := strings.TrimSpace(firstLine(b))
		if target, ok := strings.CutPrefix(line, "ref:"); ok {
			target = strings.TrimSpace(target)
			if !validRefName(target) {
				return ID{}, false, fmt.Errorf("symbolic ref %s does not point to a valid ref name", name)
			}
			return r.ref(target, depth+1)
		}
		if len(line) >= 40 {
			if id, ok := ParseID(line[:40]); ok {
				return id, true, nil
			}
		}
		return ID{}, false, fmt.Errorf("ref %s: its first line is neither an object id nor \"ref: NAME\"", name)
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, errIsDir), errors.Is(err, syscall.ENOTDIR):
	default:
		return ID{}, false, fmt.Errorf("ref %s: %w", name, err)
	}
	if perWorktree(name) {
		return ID{}, false, nil
	}
	return r.packedRef(name)
}

// linkRef is the ref name a loose ref that is a symbolic link names: git's
// old form of a symbolic ref, a link whose target is a ref name ("refs/…").
func linkRef(p string) (string, bool) {
	fi, err := os.Lstat(p)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return "", false
	}
	target, err := os.Readlink(p)
	if err != nil || !strings.HasPrefix(target, "refs/") || !validRefName(target) {
		return "", false
	}
	return target, true
}

func (r *Repo) packedRef(name string) (ID, bool, error) {
	p := filepath.Join(r.CommonDir, "packed-refs")
	f, err := openIn(p, r.roots)
	if errors.Is(err, fs.ErrNotExist) {
		return ID{}, false, nil
	}
	if err != nil {
		return ID{}, false, err
	}
	defer f.Close()
	id, ok, err := findPackedRef(bufio.NewReader(f), name)
	if err != nil {
		return ID{}, false, fmt.Errorf("%s: %w", p, err)
	}
	return id, ok, nil
}

// findPackedRef scans packed-refs ("ID NAME" lines, "^ID" peeled lines, "#"
// header) for name; each line is capped.
func findPackedRef(br *bufio.Reader, name string) (ID, bool, error) {
	sc := bufio.NewScanner(br)
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	line := 0
	for sc.Scan() {
		line++
		l := strings.TrimSuffix(sc.Text(), "\r")
		if l == "" || l[0] == '#' || l[0] == '^' {
			continue
		}
		hx, ref, ok := strings.Cut(l, " ")
		id, okID := ParseID(hx)
		if !ok || !okID {
			return ID{}, false, fmt.Errorf("line %d: malformed", line)
		}
		if ref == name {
			return id, true, nil
		}
	}
	if err := sc.Err(); err != nil {
		return ID{}, false, fmt.Errorf("line %d: %w", line+1, err)
	}
	return ID{}, false, nil
}

type hexPrefix struct {
	s string
}

func (p hexPrefix) first() byte {
	b, _ := hex.DecodeString(p.s[:2])
	return b[0]
}

func (p hexPrefix) match(id ID) bool { return strings.HasPrefix(id.String(), p.s) }

// byPrefix finds the one object whose id starts with the hex prefix; an
// ambiguous prefix is narrowed to commits and tags (as REV^{commit} does).
func (r *Repo) byPrefix(rev, pre string) (ID, error) {
	p := hexPrefix{s: pre}
	seen := map[ID]bool{}
	var ids []ID
	add := func(id ID) {
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	for _, od := range r.objDirs {
		ents, err := os.ReadDir(filepath.Join(od, pre[:2]))
		if err != nil {
			continue
		}
		for _, e := range ents {
			if id, ok := ParseID(pre[:2] + e.Name()); ok && p.match(id) {
				add(id)
			}
		}
	}
	if err := r.loadPacks(); err != nil {
		return ID{}, err
	}
	for _, pk := range r.packs {
		found, err := pk.idx.withPrefix(p, 100)
		if err != nil {
			return ID{}, err
		}
		for _, id := range found {
			add(id)
		}
	}
	if len(ids) > 1 {
		var commitish []ID
		for _, id := range ids {
			if t, _, err := r.Read(id); err == nil && (t == TypeCommit || t == TypeTag) {
				commitish = append(commitish, id)
			}
		}
		ids = commitish
	}
	switch len(ids) {
	case 0:
		return ID{}, &UnknownRevisionError{Rev: rev}
	case 1:
		return ids[0], nil
	}
	return ID{}, &UnknownRevisionError{Rev: rev, Reason: "the short id is ambiguous"}
}

// Head is the commit HEAD points to; false when the branch has no commit yet.
func (r *Repo) Head() (ID, bool, error) {
	return r.ref("HEAD", 0)
}
