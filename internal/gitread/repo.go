package gitread

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// ErrNotRepository is a directory with no repository above it.
var ErrNotRepository = errors.New("not inside a git repository")

// maxMetaFile caps the small files read from a repository (HEAD, refs, .git,
// commondir, config, alternates, shallow, packed-refs lines).
const maxMetaFile = 1 << 20

// maxDeltaDepth bounds a delta chain (git itself writes at most 4095).
const maxDeltaDepth = 10000

// chainBytesPerObject bounds the deltas of one chain together: at most this
// many times MaxObjectSize (1 GiB at the default 64 MiB), their sizes as
// their entries declare them, summed before any is inflated. (A delta git
// writes is at most half its object, in chains of 50 by default, 4095 at
// most; a chain of 10,000 deltas of 64 MiB would inflate 640 GB.)
const chainBytesPerObject = 16

// Repo is an open repository. Not safe for concurrent use.
type Repo struct {
	Top       string // the work tree's top level
	GitDir    string // this work tree's git directory (HEAD, per-worktree refs)
	CommonDir string // objects, refs, packed-refs, shallow (= GitDir but in a linked worktree)

	// MaxObjectSize caps one object or delta in memory.
	MaxObjectSize int64
	// Interrupted, when set, is asked before each commit is read; an error ends a
	// history walk with it (a cancelled context's Err).
	Interrupted func() error

	objDirs []string
	// roots are the directories a file may be read from, symbolic links
	// resolved: the git directory, the common directory and the object
	// directories (openIn follows no link out of them).
	roots   []string
	packs   []*pack
	packErr error
	loaded  bool
	shallow map[ID]bool

	cache      map[ID]cached
	cacheBytes int64
}

type pack struct {
	idx  *packIndex
	pack *packFile
	f    []*os.File
	// bases caches resolved objects by offset: consecutive versions of a tree are
	// delta chains on one another, and a history walk would otherwise resolve the
	// same chain again for every commit. Up to 32 MiB, emptied when full.
	bases      map[int64]cached
	basesBytes int64
}

func (p *pack) remember(off int64, t Type, data []byte) {
	if p.bases == nil || p.basesBytes+int64(len(data)) > 32<<20 {
		p.bases, p.basesBytes = map[int64]cached{}, 0
	}
	p.bases[off] = cached{t, data}
	p.basesBytes += int64(len(data))
}

type cached struct {
	t    Type
	data []byte
}

// Discover finds the repository whose work tree contains dir, as `git rev-parse
// --show-toplevel` does: the nearest ancestor with a .git directory or a .git file
// ("gitdir: PATH", a linked worktree or a submodule). GIT_DIR and the other
// environment variables are not read.
func Discover(dir string) (*Repo, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	for {
		dotgit := filepath.Join(dir, ".git")
		fi, err := os.Stat(dotgit)
		switch {
		case err == nil && fi.IsDir():
			if isGitDir(dotgit) {
				return open(dir, dotgit)
			}
		case err == nil && fi.Mode().IsRegular():
			b, err := readSmall(dotgit, nil)
			if err != nil {
				return nil, err
			}
			line := strings.TrimRight(firstLine(b), "\r")
			p, ok := strings.CutPrefix(line, "gitdir: ")
			if !ok || p == "" {
				return nil, fmt.Errorf("%s: not a gitdir file (expected \"gitdir: PATH\")", dotgit)
			}
			if !filepath.IsAbs(p) {
				p = filepath.Join(dir, p)
			}
			if !isGitDir(p) {
				return nil, fmt.Errorf("%s: the directory its gitdir line names is not a git directory", dotgit)
			}
			return open(dir, p)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil, ErrNotRepository
		}
		dir = parent
	}
}

// isGitDir: HEAD, and objects and refs here or in the common directory.
func isGitDir(d string) bool {
	if fi, err := os.Stat(filepath.Join(d, "HEAD")); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	common := commonDir(d)
	for _, sub := range []string{"objects", "refs"} {
		if fi, err := os.Stat(filepath.Join(common, sub)); err != nil || !fi.IsDir() {
			return false
		}
	}
	return true
}

func commonDir(gitDir string) string {
	b, err := readSmall(filepath.Join(gitDir, "commondir"), []string{realRoot(gitDir)})
	if err != nil {
		return gitDir
	}
	p := strings.TrimSpace(firstLine(b))
	if p == "" {
		return gitDir
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(gitDir, p)
	}
	return filepath.Clean(p)
}

func open(top, gitDir string) (*Repo, error) {
	r := &Repo{Top: top, GitDir: filepath.Clean(gitDir), CommonDir: commonDir(gitDir), MaxObjectSize: DefaultMaxObjectSize}
	r.roots = []string{realRoot(r.GitDir), realRoot(r.CommonDir)}
	if err := r.checkFormat(); err != nil {
		return nil, err
	}
	r.objDirs = r.objectDirs(filepath.Join(r.CommonDir, "objects"))
	sh, err := readShallow(filepath.Join(r.CommonDir, "shallow"), r.roots)
	if err != nil {
		return nil, err
	}
	r.shallow = sh
	return r, nil
}

// checkFormat refuses what this reader cannot read: another hash than SHA-1,
// another ref storage than files, an extension it does not know.
func (r *Repo) checkFormat() error {
	b, err := readSmall(filepath.Join(r.CommonDir, "config"), r.roots)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	cfg := ParseConfig(b)
	if v := cfg["core.repositoryformatversion"]; v != "" && v != "0" && v != "1" {
		shown := token(v)
		if n, err := strconv.ParseUint(v, 10, 32); err == nil {
			shown = strconv.FormatUint(n, 10)
		}
		return fmt.Errorf("%s: repository format version %s is not supported", r.CommonDir, shown)
	}
	for k, v := range cfg {
		ext, ok := strings.CutPrefix(k, "extensions.")
		if !ok {
			continue
		}
		switch ext {
		case "objectformat":
			if !strings.EqualFold(v, "sha1") {
				return fmt.Errorf("%s: a %s repository (extensions.objectFormat): only SHA-1 repositories are read", r.CommonDir, token(v))
			}
		case "refstorage":
			if !strings.EqualFold(v, "files") {
				return fmt.Errorf("%s: refs stored as %s (extensions.refStorage): only the files backend is read", r.CommonDir, token(v))
			}
		case "noop", "noop-v1", "preciousobjects", "partialclone", "worktreeconfig":
		default:
			return fmt.Errorf("%s: unknown repository extension %s", r.CommonDir, token(ext))
		}
	}
	return nil
}

// ParseConfig reads the keys of a git config file as "section.key" (lower case;
// a subsection's keys as "section.sub.key") with their last value. Includes are
// not followed and nothing is interpreted: it is read for the repository format
// only.
func ParseConfig(b []byte) map[string]string {
	out := map[string]string{}
	section := ""
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(strings.TrimSuffix(line, "\r"))
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			end := strings.IndexByte(line, ']')
			if end < 0 {
				section = ""
				continue
			}
			h := line[1:end]
			name, sub, hasSub := strings.Cut(h, " ")
			section = strings.ToLower(name)
			if hasSub {
				section += "." + strings.Trim(strings.TrimSpace(sub), `"`)
			}
			continue
		}
		if section == "" {
			continue
		}
		k, v, _ := strings.Cut(line, "=")
		k = strings.ToLower(strings.TrimSpace(k))
		v = strings.TrimSpace(v)
		if i := strings.IndexAny(v, "#;"); i >= 0 && !strings.Contains(v[:i], `"`) {
			v = strings.TrimSpace(v[:i])
		}
		out[section+"."+k] = strings.Trim(v, `"`)
	}
	return out
}

// token is a value read from the config as an error may show it: a word of
// letters, digits, '-', '_' and '.' of at most 40 characters, quoted; anything
// else is not shown (an error never prints what a file holds beyond such a
// word of git's grammar).
func token(s string) string {
	if s == "" || len(s) > 40 || strings.IndexFunc(s, func(c rune) bool {
		return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.')
	}) >= 0 {
		return "(a value that is not a word)"
	}
	return strconv.Quote(s)
}

// objectDirs is the objects directory and its alternates (objects/info/alternates,
// followed up to 5 levels as git does); each joins r.roots.
func (r *Repo) objectDirs(objects string) []string {
	dirs := []string{objects}
	seen := map[string]bool{objects: true}
	var walk func(d string, depth int)
	walk = func(d string, depth int) {
		if depth > 5 {
			return
		}
		b, err := readSmall(filepath.Join(d, "info", "alternates"), r.roots)
		if err != nil {
			return
		}
		for _, l := range strings.Split(string(b), "\n") {
			l = strings.TrimSpace(l)
			if l == "" || l[0] == '#' {
				continue
			}
			if !filepath.IsAbs(l) {
				l = filepath.Join(d, l)
			}
			l = filepath.Clean(l)
			if !seen[l] {
				seen[l] = true
				dirs = append(dirs, l)
				r.roots = append(r.roots, realRoot(l))
				walk(l, depth+1)
			}
		}
	}
	r.roots = append(r.roots, realRoot(objects))
	walk(objects, 0)
	return dirs
}

func readShallow(p string, roots []string) (map[ID]bool, error) {
	b, err := readSmallCap(p, 64<<20, roots)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	m := map[ID]bool{}
	for i, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		id, ok := ParseID(l)
		if !ok {
			return nil, fmt.Errorf("%s:%d: not an object id", p, i+1)
		}
		m[id] = true
	}
	return m, nil
}

// IsShallow reports whether the repository is a shallow clone.
func (r *Repo) IsShallow() bool { return len(r.shallow) > 0 }

// IsShallowCommit reports whether id is a shallow clone's boundary: its parents
// were not fetched, and it is read as a commit with none (as git does).
func (r *Repo) IsShallowCommit(id ID) bool { return r.shallow[id] }

// Close releases the pack files.
func (r *Repo) Close() error {
	for _, p := range r.packs {
		for _, f := range p.f {
			f.Close()
		}
	}
	r.packs = nil
	r.loaded = false
	return nil
}

func (r *Repo) loadPacks() error {
	if r.loaded {
		return r.packErr
	}
	r.loaded = true
	for _, od := range r.objDirs {
		dir := filepath.Join(od, "pack")
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range ents {
			name, ok := strings.CutSuffix(e.Name(), ".idx")
			if !ok {
				continue
			}
			p, err := openPackPair(filepath.Join(dir, name), r.roots)
			if err != nil {
				r.packErr = err
				return err
			}
			r.packs = append(r.packs, p)
		}
	}
	return nil
}

func openPackPair(base string, roots []string) (*pack, error) {
	fi, err := openIn(base+".idx", roots)
	if err != nil {
		return nil, err
	}
	fp, err := openIn(base+".pack", roots)
	if err != nil {
		fi.Close()
		return nil, err
	}
	p := &pack{f: []*os.File{fi, fp}}
	si, err1 := fi.Stat()
	sp, err2 := fp.Stat()
	if err = errors.Join(err1, err2); err == nil {
		if p.idx, err = openIndex(fi, si.Size(), base+".idx"); err == nil {
			p.pack, err = openPack(fp, sp.Size(), base+".pack")
		}
	}
	if err != nil {
		fi.Close()
		fp.Close()
		return nil, err
	}
	return p, nil
}

// Read returns an object's type and content, checked against its id.
func (r *Repo) Read(id ID) (Type, []byte, error) {
	if c, ok := r.cache[id]; ok {
		return c.t, c.data, nil
	}
	t, data, err := r.read(id)
	if err != nil {
		return 0, nil, err
	}
	if HashObject(t, data) != id {
		return 0, nil, &CorruptError{What: id.String(), Msg: "its content does not hash to its id"}
	}
	if t != TypeBlob {
		r.remember(id, t, data)
	}
	return t, data, nil
}

// remember caches commits and trees (a history walk reads them again and again),
// up to 64 MiB, emptied when full.
func (r *Repo) remember(id ID, t Type, data []byte) {
	if r.cache == nil || r.cacheBytes+int64(len(data)) > 64<<20 {
		r.cache, r.cacheBytes = map[ID]cached{}, 0
	}
	r.cache[id] = cached{t, data}
	r.cacheBytes += int64(len(data))
}

// read finds id: a loose object in any of the object directories, else an
// entry of a pack.
func (r *Repo) read(id ID) (Type, []byte, error) {
	t, data, found, err := r.readLooseID(id)
	if found || err != nil {
		return t, data, err
	}
	p, off, ok, err := r.findPacked(id)
	if err != nil {
		return 0, nil, err
	}
	if !ok {
		return 0, nil, &MissingError{ID: id}
	}
	return r.readPacked(p, off)
}

// readLooseID reads the loose object id; found is false when no object
// directory has it.
func (r *Repo) readLooseID(id ID) (t Type, data []byte, found bool, err error) {
	hx := id.String()
	for _, od := range r.objDirs {
		f, err := openIn(filepath.Join(od, hx[:2], hx[2:]), r.roots)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			continue
		}
		if err != nil {
			return 0, nil, true, err
		}
		t, data, err := readLoose(f, r.MaxObjectSize, hx)
		f.Close()
		return t, data, true, err
	}
	return 0, nil, false, nil
}

// findPacked is the pack and offset of id's entry; false when no pack has it.
func (r *Repo) findPacked(id ID) (*pack, int64, bool, error) {
	if err := r.loadPacks(); err != nil {
		return nil, 0, false, err
	}
	for _, p := range r.packs {
		i, ok, err := p.idx.find(id)
		if err != nil {
			return nil, 0, false, err
		}
		if !ok {
			continue
		}
		off, err := p.idx.offset(i)
		if err != nil {
			return nil, 0, false, err
		}
		return p, off, true, nil
	}
	return nil, 0, false, nil
}

// readLoose reads a zlib-deflated loose object with the size cap.
func readLoose(rd io.Reader, max int64, what string) (Type, []byte, error) {
	bad := func(msg string) error { return &CorruptError{What: what, Msg: msg} }
	zr, err := zlib.NewReader(bufio.NewReader(rd))
	if err != nil {
		return 0, nil, bad("zlib: " + err.Error())
	}
	defer zr.Close()
	var hdr [40]byte
	n, err := io.ReadAtLeast(zr, hdr[:], 1)
	for err == nil && n < len(hdr) && bytes.IndexByte(hdr[:n], 0) < 0 {
		var m int
		m, err = zr.Read(hdr[n:])
		n += m
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return 0, nil, bad("zlib: " + err.Error())
	}
	t, size, start, err := parseLooseHeader(hdr[:n])
	if err != nil {
		return 0, nil, bad(err.Error())
	}
	if size > u64(max) {
		return 0, nil, &TooLargeError{What: what, Size: size, Max: max}
	}
	data := make([]byte, size)
	got := copy(data, hdr[start:n])
	if u64(int64(n-start)) > size {
		return 0, nil, bad("more content than its header declares")
	}
	if _, err := io.ReadFull(zr, data[got:]); err != nil {
		return 0, nil, bad(fmt.Sprintf("content shorter than the %d bytes its header declares", size))
	}
	// The stream must end here, its checksum checked: git refuses a loose
	// object whose stream does not end (a truncated file), and so does this.
	var one [1]byte
	for {
		m, err := zr.Read(one[:])
		if m > 0 {
			return 0, nil, bad("more content than its header declares")
		}
		if errors.Is(err, io.EOF) {
			return t, data, nil
		}
		if err != nil {
			return 0, nil, bad("zlib: " + err.Error())
		}
	}
}

// readPacked resolves the entry at off, delta chains included. The chain is
// walked first by its entries' headers alone, from the entry to its base
// (OFS_DELTA in the pack, REF_DELTA by id: a loose object or an entry of any
// pack), refused when it comes back to one of its entries, is deeper than
// maxDeltaDepth, or declares more than chainBytesPerObject × MaxObjectSize
// bytes of deltas; then each delta is inflated and applied in turn from the
// base up, so no more than the object being built, the one before it and one
// delta are held at once (besides the caches).
func (r *Repo) readPacked(p *pack, off int64) (Type, []byte, error) {
	type at struct {
		p   *pack
		off int64
	}
	type link struct {
		p *pack
		h entryHeader
	}
	var chain []link
	var seen map[at]bool // the chain's entries, from its first REF_DELTA on (an OFS_DELTA's base is always before it)
	var total uint64
	limit := u64(r.MaxObjectSize) * chainBytesPerObject
	var t Type
	var data []byte
	for {
		if len(chain) > maxDeltaDepth {
			return 0, nil, &CorruptError{What: fmt.Sprintf("at offset %d of %s", off, p.pack.name), Msg: errLoop.Error()}
		}
		if c, ok := p.bases[off]; ok {
			t, data = c.t, c.data
			break
		}
		h, err := p.pack.readHeader(off, r.MaxObjectSize)
		if err != nil {
			return 0, nil, err
		}
		if h.typ != objOfsDelta && h.typ != objRefDelta {
			if data, err = p.pack.inflate(h); err != nil {
				return 0, nil, err
			}
			t = Type(h.typ)
			if t != TypeBlob && len(chain) > 0 {
				p.remember(off, t, data)
			}
			break
		}
		if total += h.size; total > limit {
			return 0, nil, &TooLargeError{What: h.where(p.pack), Size: total, Max: int64(min(limit, 1<<62)), Chain: true}
		}
		chain = append(chain, link{p, h})
		if seen != nil {
			seen[at{p, off}] = true
		}
		if h.typ == objOfsDelta {
			off = h.baseOff
			continue
		}
		bt, bdata, found, err := r.readLooseID(h.baseID)
		if err != nil {
			return 0, nil, err
		}
		if found {
			t, data = bt, bdata
			break
		}
		bp, boff, ok, err := r.findPacked(h.baseID)
		if err != nil {
			return 0, nil, err
		}
		if !ok {
			return 0, nil, &MissingError{ID: h.baseID}
		}
		if seen == nil {
			seen = make(map[at]bool, len(chain))
			for _, l := range chain {
				seen[at{l.p, l.h.off}] = true
			}
		}
		if seen[at{bp, boff}] {
			return 0, nil, &CorruptError{What: h.where(p.pack), Msg: errCycle.Error()}
		}
		p, off = bp, boff
	}
	for i := len(chain) - 1; i >= 0; i-- {
		l := chain[i]
		delta, err := l.p.pack.inflate(l.h)
		if err != nil {
			return 0, nil, err
		}
		if data, err = applyDelta(data, delta, r.MaxObjectSize); err != nil {
			var tl *TooLargeError
			if errors.As(err, &tl) {
				return 0, nil, err
			}
			return 0, nil, &CorruptError{What: l.h.where(l.p.pack), Msg: err.Error()}
		}
		if t != TypeBlob {
			l.p.remember(l.h.off, t, data)
		}
	}
	return t, data, nil
}

// Commit reads a commit; a shallow boundary is read with no parents.
func (r *Repo) Commit(id ID) (*Commit, error) {
	if r.Interrupted != nil {
		if err := r.Interrupted(); err != nil {
			return nil, err
		}
	}
	t, data, err := r.Read(id)
	if err != nil {
		return nil, err
	}
	if t != TypeCommit {
		return nil, fmt.Errorf("git object %s is a %s, not a commit", id, t)
	}
	c, err := ParseCommit(data)
	if err != nil {
		return nil, &CorruptError{What: id.String(), Msg: err.Error()}
	}
	if r.shallow[id] {
		c.Parents = nil
	}
	return c, nil
}

// Tree reads a tree.
func (r *Repo) Tree(id ID) ([]TreeEntry, error) {
	t, data, err := r.Read(id)
	if err != nil {
		return nil, err
	}
	if t != TypeTree {
		return nil, fmt.Errorf("git object %s is a %s, not a tree", id, t)
	}
	es, err := ParseTree(data)
	if err != nil {
		return nil, &CorruptError{What: id.String(), Msg: err.Error()}
	}
	return es, nil
}

// Lookup finds the entry at path (slash-separated, relative to the top) in the
// tree; false when there is none (as `git cat-file -e TREE:PATH` fails).
func (r *Repo) Lookup(tree ID, path string) (TreeEntry, bool, error) {
	parts := strings.Split(path, "/")
	cur := tree
	for i, name := range parts {
		es, err := r.Tree(cur)
		if err != nil {
			return TreeEntry{}, false, err
		}
		k := slices.IndexFunc(es, func(e TreeEntry) bool { return e.Name == name })
		if k < 0 {
			return TreeEntry{}, false, nil
		}
		if i == len(parts)-1 {
			return es[k], true, nil
		}
		if !es[k].IsTree() {
			return TreeEntry{}, false, nil
		}
		cur = es[k].ID
	}
	return TreeEntry{}, false, nil
}

// pathAt is the entry at path in a commit's tree.
func (r *Repo) pathAt(c *Commit, path string) (TreeEntry, bool, error) {
	return r.Lookup(c.Tree, path)
}

// samePath reports whether path has the same entry (mode and id, or absent in
// both) in two trees; equal subtrees are not read, as git's diff-tree skips them.
func (r *Repo) samePath(a, b ID, path string) (bool, error) {
	parts := strings.Split(path, "/")
	for i, name := range parts {
		if a == b {
			return true, nil
		}
		ea, hasA, err := r.entry(a, name)
		if err != nil {
			return false, err
		}
		eb, hasB, err := r.entry(b, name)
		if err != nil {
			return false, err
		}
		switch {
		case !hasA && !hasB:
			return true, nil
		case hasA != hasB:
			// Only one side has this name: same only if the path is not below it.
			if i == len(parts)-1 {
				return false, nil
			}
			e := ea
			if hasB {
				e = eb
			}
			if !e.IsTree() {
				return true, nil
			}
			_, has, err := r.Lookup(e.ID, strings.Join(parts[i+1:], "/"))
			return !has, err
		case ea.Mode == eb.Mode && ea.ID == eb.ID:
			return true, nil
		case i == len(parts)-1:
			return false, nil
		}
		// Different entries on the way: the path below them decides.
		aTree, bTree := ea.IsTree(), eb.IsTree()
		switch {
		case !aTree && !bTree:
			return true, nil // neither has anything below a file
		case aTree != bTree:
			// Only one side can hold the path: same only if it does not.
			t := ea.ID
			if bTree {
				t = eb.ID
			}
			_, has, err := r.Lookup(t, strings.Join(parts[i+1:], "/"))
			return !has, err
		}
		a, b = ea.ID, eb.ID
	}
	return true, nil
}

func (r *Repo) entry(tree ID, name string) (TreeEntry, bool, error) {
	es, err := r.Tree(tree)
	if err != nil {
		return TreeEntry{}, false, err
	}
	k := slices.IndexFunc(es, func(e TreeEntry) bool { return e.Name == name })
	if k < 0 {
		return TreeEntry{}, false, nil
	}
	return es[k], true, nil
}

// LastChange is `git log -1 --format=%H -- PATH` from start: the first commit, in
// git's default order (newest committer date first) with its default history
// simplification, that is not TREESAME for path. A merge that is TREESAME to a
// parent follows that parent alone; a root commit (or a shallow boundary) changes
// path if it has it. False when no commit changed it.
func (r *Repo) LastChange(start ID, path string) (ID, bool, error) {
	type item struct {
		id   ID
		time int64
	}
	c0, err := r.Commit(start)
	if err != nil {
		return ID{}, false, err
	}
	queue := []item{{start, c0.Time}}
	seen := map[ID]bool{start: true}
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		c, err := r.Commit(it.id)
		if err != nil {
			return ID{}, false, err
		}
		parents := c.Parents
		same := false
		if len(parents) == 0 {
			_, has, err := r.pathAt(c, path)
			if err != nil {
				return ID{}, false, err
			}
			same = !has
		}
		for _, pid := range parents {
			pc, err := r.Commit(pid)
			if err != nil {
				return ID{}, false, err
			}
			eq, err := r.samePath(c.Tree, pc.Tree, path)
			if err != nil {
				return ID{}, false, err
			}
			if eq {
				parents, same = []ID{pid}, true
				break
			}
		}
		if !same {
			return it.id, true, nil
		}
		for _, pid := range parents {
			if seen[pid] {
				continue
			}
			seen[pid] = true
			pc, err := r.Commit(pid)
			if err != nil {
				return ID{}, false, err
			}
			// After every queued commit with the same or a newer date, as git's
			// commit_list_insert_by_date. (With -1 the queue holds one commit at a
			// time: a TREESAME commit passes on one parent, and the first commit
			// that is not TREESAME ends the walk; the order is kept all the same.)
			k := sort.Search(len(queue), func(k int) bool { return queue[k].time < pc.Time })
			queue = slices.Insert(queue, k, item{pid, pc.Time})
		}
	}
	return ID{}, false, nil
}

// IsAncestor is `git merge-base --is-ancestor a b`: a is reachable from b
// (following every parent; a shallow boundary has none).
func (r *Repo) IsAncestor(a, b ID) (bool, error) {
	stack := []ID{b}
	seen := map[ID]bool{b: true}
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if id == a {
			return true, nil
		}
		c, err := r.Commit(id)
		if err != nil {
			return false, err
		}
		for _, p := range c.Parents {
			if !seen[p] {
				seen[p] = true
				stack = append(stack, p)
			}
		}
	}
	return false, nil
}

func readSmall(p string, roots []string) ([]byte, error) { return readSmallCap(p, maxMetaFile, roots) }

// readSmallCap reads the whole file at p (openIn: a regular file within roots),
// at most max bytes; a longer file is an error that names it.
func readSmallCap(p string, max int64, roots []string) ([]byte, error) {
	f, err := openIn(p, roots)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s is over %d bytes", p, max)
	}
	return b, nil
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(string(b), "\n")
	return s
}
