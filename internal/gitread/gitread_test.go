package gitread

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gitEnv is a git with no global or system configuration and a fixed identity.
func gitEnv(extra ...string) []string {
	return append(append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com"), extra...)
}

func runGit(t *testing.T, dir string, env []string, stdin string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv(env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil {
		return out.String(), fmt.Errorf("git %v: %w: %s", args, err, errb.String())
	}
	return out.String(), nil
}

func mustGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := runGit(t, dir, nil, "", args...)
	require.NoError(t, err)
	return strings.TrimSpace(out)
}

// paths the comparison looks at in every commit.
var testPaths = []string{"a.txt", "big.txt", "dir/b.txt", "dir/sub/c.txt", "dir", "gone.txt", "side.txt", "missing", "dir/missing", "a.txt/x"}

// makeHistory builds a repository with linear history, a branch merged back
// (a merge TREESAME to its second parent, one to its first, one changing files),
// equal committer dates, annotated and lightweight tags, a remote-tracking ref
// and a symbolic remote HEAD. Every object is loose.
//
// The history is built once per test process (about 35 git commands) and each
// caller gets a copy of it: the same objects, refs and commit ids, since the
// dates and the identity are fixed.
func makeHistory(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	historyOnce.Do(func() {
		dir, err := os.MkdirTemp("", "gitread-history-")
		if err != nil {
			historyErr = err
			return
		}
		historyDir = dir
		historyErr = buildHistory(t, dir)
	})
	require.NoError(t, historyErr, "building the test history")
	dir := t.TempDir()
	require.NoError(t, os.CopyFS(dir, os.DirFS(historyDir)))
	return dir
}

var (
	historyOnce sync.Once
	historyDir  string // removed by TestMain
	historyErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if historyDir != "" {
		_ = os.RemoveAll(historyDir)
	}
	os.Exit(code)
}

// buildHistory makes makeHistory's repository in dir. It returns the first
// failure rather than failing a test: the first test to need the history
// builds it for every test, and each of them must fail on it.
func buildHistory(t *testing.T, dir string) error {
	var first error
	git := func(env []string, args ...string) {
		if first == nil {
			_, first = runGit(t, dir, env, "", args...)
		}
	}
	date := 1_700_000_000
	at := func(date int) []string {
		d := fmt.Sprintf("%d +0000", date)
		return []string{"GIT_COMMITTER_DATE=" + d, "GIT_AUTHOR_DATE=" + d}
	}
	commit := func(msg string, sameDate bool, files map[string]string) {
		for name, content := range files {
			if first != nil {
				return
			}
			p := filepath.Join(dir, name)
			if content == "" {
				first = os.Remove(p)
				continue
			}
			if first = os.MkdirAll(filepath.Dir(p), 0o755); first == nil {
				first = os.WriteFile(p, []byte(content), 0o644)
			}
		}
		git(nil, "add", "-A")
		if !sameDate {
			date += 100
		}
		git(at(date), "commit", "-q", "--allow-empty", "-m", msg)
	}
	git(nil, "init", "-q", "-b", "main")
	var big strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&big, "line %d of a file long enough for git to store deltas of it\n", i)
	}
	b := big.String()
	commit("root", false, map[string]string{"a.txt": "a1\n", "big.txt": b, "gone.txt": "g\n"})
	commit("b", false, map[string]string{"dir/b.txt": "b1\n", "big.txt": b + "more 1\n"})
	commit("same date", true, map[string]string{"dir/sub/c.txt": "c1\n", "big.txt": b + "more 2\n"})
	git(nil, "tag", "-a", "-m", "annotated", "v1")
	git(nil, "tag", "v1-light", "HEAD~1")
	git(nil, "checkout", "-q", "-b", "side")
	commit("side 1", false, map[string]string{"side.txt": "s1\n", "a.txt": "a-side\n"})
	commit("side 2", true, map[string]string{"big.txt": "changed on the side\n" + b})
	git(nil, "checkout", "-q", "main")
	commit("main after branch", false, map[string]string{"dir/b.txt": "b2\n", "gone.txt": ""})
	git(at(date+100), "merge", "-q", "--no-edit", "side")
	date += 100
	commit("after merge", false, map[string]string{"dir/sub/c.txt": "c2\n"})
	// A merge that takes the side's a.txt and keeps main's big.txt: not TREESAME to either.
	git(nil, "checkout", "-q", "-b", "side2", "HEAD~2")
	commit("side2", false, map[string]string{"a.txt": "a-side2\n"})
	git(nil, "checkout", "-q", "main")
	git(at(date+100), "merge", "-q", "--no-edit", "-s", "ours", "side2")
	date += 100
	commit("last", false, map[string]string{"big.txt": b + "last\n"})
	git(nil, "update-ref", "refs/remotes/origin/main", "HEAD~1")
	git(nil, "symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main")
	return first
}

// compareWithGit checks every read the guards make against git's own answers in
// the work tree dir.
func compareWithGit(t *testing.T, dir string) {
	t.Helper()
	r, err := Discover(filepath.Join(dir, "dir"))
	require.NoError(t, err)
	defer r.Close()
	top := mustGit(t, dir, "rev-parse", "--show-toplevel")
	assert.Equal(t, top, r.Top)

	all := strings.Fields(mustGit(t, dir, "rev-list", "--all"))
	require.NotEmpty(t, all)
	revs := []string{"HEAD", "@", "main", "origin/main", "origin", "remotes/origin/main", "refs/remotes/origin/main",
		"v1", "v1-light", "tags/v1", "refs/tags/v1", "heads/main", "side", "side2", "HEAD~1", "HEAD~2", "HEAD^2", "HEAD^", "HEAD~1^2",
		"v1^{commit}", "v1^{}", "main~3", "HEAD~100", "HEAD^3", "nope", "origin/nope", "../../etc/passwd", "refs/../HEAD",
		"deadbeef", "0000000000000000000000000000000000000000", "HEAD:a.txt", "v1^{tree}", "ORIG_HEAD"}
	for _, c := range all {
		revs = append(revs, c, c[:7], c[:4], strings.ToUpper(c[:10]))
	}
	// git cat-file --batch-check reads REV^{commit} as rev-parse --verify does.
	var rin strings.Builder
	for _, rev := range revs {
		fmt.Fprintf(&rin, "%s^{commit}\n", rev)
	}
	rout, err := runGit(t, dir, nil, rin.String(), "cat-file", "--batch-check=%(objectname)")
	require.NoError(t, err)
	rlines := strings.Split(strings.TrimSpace(rout), "\n")
	require.Len(t, rlines, len(revs))
	for i, rev := range revs {
		want, gok := ParseID(rlines[i])
		got, err := r.ResolveCommit(rev)
		if !gok {
			require.Error(t, err, "%s: git says %q, gitread gives %s", rev, rlines[i], got)
			continue
		}
		if assert.NoError(t, err, rev) {
			assert.Equal(t, want, got, rev)
		}
	}

	// Lookup and blobs: git cat-file --batch-check for every commit and path.
	var in strings.Builder
	for _, c := range all {
		for _, p := range testPaths {
			fmt.Fprintf(&in, "%s:%s\n", c, p)
		}
	}
	out, err := runGit(t, dir, nil, in.String(), "cat-file", "--batch-check=%(objectname) %(objecttype)")
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	k := 0
	// Every blob gitread reads, checked after the walk against one git cat-file --batch.
	type blobRead struct {
		id, where string
		data      []byte
	}
	var blobs []blobRead
	for _, c := range all {
		id, _ := ParseID(c)
		cm, err := r.Commit(id)
		require.NoError(t, err)
		for _, p := range testPaths {
			e, ok, err := r.Lookup(cm.Tree, p)
			require.NoError(t, err)
			line := lines[k]
			k++
			if strings.HasSuffix(line, "missing") {
				assert.False(t, ok, "%s:%s", c, p)
				continue
			}
			if assert.True(t, ok, "%s:%s", c, p) {
				assert.Equal(t, strings.Fields(line)[0], e.ID.String(), "%s:%s", c, p)
				typ, data, err := r.Read(e.ID)
				require.NoError(t, err)
				assert.Equal(t, strings.Fields(line)[1], typ.String())
				if typ == TypeBlob {
					blobs = append(blobs, blobRead{e.ID.String(), c + ":" + p, data})
				}
			}
		}
	}
	require.NotEmpty(t, blobs)
	var bin strings.Builder
	for _, b := range blobs {
		fmt.Fprintln(&bin, b.id)
	}
	bout, err := runGit(t, dir, nil, bin.String(), "cat-file", "--batch")
	require.NoError(t, err)
	for _, b := range blobs {
		// Each object: "<id> blob <size>\n", its bytes, "\n".
		header, rest, ok := strings.Cut(bout, "\n")
		require.True(t, ok, "git cat-file --batch ended before %s", b.where)
		f := strings.Fields(header)
		require.Len(t, f, 3, "git cat-file --batch: %q for %s", header, b.where)
		require.Equal(t, []string{b.id, "blob"}, f[:2], b.where)
		size, err := strconv.Atoi(f[2])
		require.NoError(t, err)
		require.Greater(t, len(rest), size, b.where)
		assert.Equal(t, rest[:size], string(b.data), "%s", b.where)
		bout = rest[size+1:]
	}
	assert.Empty(t, bout, "git cat-file --batch printed more objects than asked")

	head, ok, err := r.Head()
	require.NoError(t, err)
	require.True(t, ok)
	for _, p := range testPaths {
		want := mustGit(t, dir, "log", "-1", "--format=%H", "--", p)
		got, ok, err := r.LastChange(head, p)
		require.NoError(t, err)
		if want == "" {
			assert.False(t, ok, "git log -1 -- %s is empty, gitread gives %s", p, got)
			continue
		}
		assert.Equal(t, want, got.String(), "git log -1 -- %s", p)
	}

	for _, b := range all {
		ancestors := map[string]bool{}
		for _, a := range strings.Fields(mustGit(t, dir, "rev-list", b)) {
			ancestors[a] = true
		}
		for _, a := range all {
			ia, _ := ParseID(a)
			ib, _ := ParseID(b)
			got, err := r.IsAncestor(ia, ib)
			require.NoError(t, err)
			assert.Equal(t, ancestors[a], got, "%s is an ancestor of %s", a[:7], b[:7])
		}
		// merge-base --is-ancestor itself agrees with rev-list.
		_, gerr := runGit(t, dir, nil, "", "merge-base", "--is-ancestor", all[len(all)-1], b)
		assert.Equal(t, ancestors[all[len(all)-1]], gerr == nil)
	}
}

func packTypes(t *testing.T, dir string) string {
	t.Helper()
	idx, err := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.idx"))
	require.NoError(t, err)
	require.NotEmpty(t, idx)
	return mustGit(t, dir, "verify-pack", "-v", idx[0])
}

func TestAgainstGit(t *testing.T) {
	if testing.Short() {
		t.Skip("runs git")
	}
	// The subtests run side by side: each works on its own copy of the
	// history, and their time is mostly git processes starting.
	t.Run("loose objects", func(t *testing.T) {
		t.Parallel()
		dir := makeHistory(t)
		_, err := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.pack"))
		require.NoError(t, err)
		compareWithGit(t, dir)
	})
	t.Run("packed with offset deltas and packed-refs", func(t *testing.T) {
		t.Parallel()
		dir := makeHistory(t)
		mustGit(t, dir, "gc", "-q", "--aggressive", "--prune=now")
		vp := packTypes(t, dir)
		require.Contains(t, vp, "chain length", "the pack has deltas")
		_, err := os.Stat(filepath.Join(dir, ".git", "packed-refs"))
		require.NoError(t, err)
		compareWithGit(t, dir)
	})
	t.Run("packed with ref deltas", func(t *testing.T) {
		t.Parallel()
		dir := makeHistory(t)
		mustGit(t, dir, "-c", "repack.useDeltaBaseOffset=false", "repack", "-q", "-a", "-d", "-f")
		compareWithGit(t, dir)
		// half loose, half packed
		mustGit(t, dir, "commit", "-q", "--allow-empty", "-m", "loose on top")
		compareWithGit(t, dir)
	})
	t.Run("linked worktree", func(t *testing.T) {
		t.Parallel()
		dir := makeHistory(t)
		mustGit(t, dir, "gc", "-q")
		wt := filepath.Join(t.TempDir(), "wt")
		mustGit(t, dir, "worktree", "add", "-q", "-b", "wtbranch", wt, "side")
		fi, err := os.Stat(filepath.Join(wt, ".git"))
		require.NoError(t, err)
		require.True(t, fi.Mode().IsRegular(), ".git is a file in a worktree")
		compareWithGit(t, wt)
		r, err := Discover(wt)
		require.NoError(t, err)
		h, _, err := r.Head()
		require.NoError(t, err)
		assert.Equal(t, mustGit(t, dir, "rev-parse", "side"), h.String(), "HEAD is the worktree's own")
	})
	t.Run("shallow clone", func(t *testing.T) {
		t.Parallel()
		src := makeHistory(t)
		dst := filepath.Join(t.TempDir(), "clone")
		mustGit(t, src, "clone", "-q", "--depth", "1", "--no-single-branch", "file://"+src, dst)
		r, err := Discover(dst)
		require.NoError(t, err)
		assert.True(t, r.IsShallow())
		head, _, err := r.Head()
		require.NoError(t, err)
		assert.True(t, r.IsShallowCommit(head))
		compareWithGit(t, dst)
		// Only the boundary is there: every file's last change is HEAD, as git says.
		got, ok, err := r.LastChange(head, "dir/b.txt")
		require.NoError(t, err)
		require.True(t, ok)
		assert.Equal(t, head, got)
		_, err = r.ResolveCommit("HEAD~1")
		var ue *UnknownRevisionError
		require.ErrorAs(t, err, &ue)
		assert.Contains(t, ue.Error(), "shallow clone's boundary")
	})
}

func TestDiscoverNotRepository(t *testing.T) {
	_, err := Discover(t.TempDir())
	if err == nil {
		t.Skip("the temporary directory is inside a repository")
	}
	assert.ErrorIs(t, err, ErrNotRepository)
}

func TestFormatRefused(t *testing.T) {
	for _, tt := range []struct{ config, msg string }{
		{"[extensions]\n\tobjectFormat = sha256\n", "only SHA-1"},
		{"[extensions]\n\trefStorage = reftable\n", "only the files backend"},
		{"[extensions]\n\tfrobnicate = yes\n", `unknown repository extension "frobnicate"`},
		{"[core]\n\trepositoryformatversion = 2\n", "format version 2"},
	} {
		dir := t.TempDir()
		g := filepath.Join(dir, ".git")
		for _, d := range []string{"objects", "refs"} {
			require.NoError(t, os.MkdirAll(filepath.Join(g, d), 0o755))
		}
		require.NoError(t, os.WriteFile(filepath.Join(g, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(g, "config"), []byte(tt.config), 0o644))
		_, err := Discover(dir)
		require.Error(t, err)
		assert.Contains(t, err.Error(), tt.msg)
	}
}

func TestCorruptAndOversized(t *testing.T) {
	if testing.Short() {
		t.Skip("runs git")
	}
	dir := makeHistory(t)
	blob := mustGit(t, dir, "rev-parse", "HEAD:big.txt")
	id, _ := ParseID(blob)
	p := filepath.Join(dir, ".git", "objects", blob[:2], blob[2:])

	r, err := Discover(dir)
	require.NoError(t, err)
	r.MaxObjectSize = 1000
	_, _, err = r.Read(id)
	var tl *TooLargeError
	require.ErrorAs(t, err, &tl, "%v", err)
	assert.Contains(t, err.Error(), "over the cap of 1000 bytes")

	// Another object's bytes under this id: the hash check catches it.
	other := mustGit(t, dir, "rev-parse", "HEAD:a.txt")
	data, err := os.ReadFile(filepath.Join(dir, ".git", "objects", other[:2], other[2:]))
	require.NoError(t, err)
	require.NoError(t, os.Chmod(p, 0o644))
	require.NoError(t, os.WriteFile(p, data, 0o644))
	r, err = Discover(dir)
	require.NoError(t, err)
	_, _, err = r.Read(id)
	var ce *CorruptError
	require.ErrorAs(t, err, &ce)
	assert.Contains(t, err.Error(), "does not hash to its id")

	// Not zlib at all.
	require.NoError(t, os.WriteFile(p, []byte("garbage"), 0o644))
	_, _, err = r.Read(id)
	require.ErrorAs(t, err, &ce)
	assert.Contains(t, err.Error(), blob)

	// A loose object whose stream stops short of its end (the last four
	// bytes, zlib's checksum, cut off; the content is whole): git refuses it,
	// and so does Read (it was read as whole before).
	q := filepath.Join(dir, ".git", "objects", other[:2], other[2:])
	require.NoError(t, os.Chmod(q, 0o644))
	require.NoError(t, os.WriteFile(q, data[:len(data)-4], 0o644))
	out, gerr := exec.Command("git", "-C", dir, "cat-file", "-p", other).CombinedOutput()
	require.Error(t, gerr, "git read the cut object: %s", out)
	oid, _ := ParseID(other)
	_, _, err = r.Read(oid)
	require.ErrorAs(t, err, &ce)
	assert.Contains(t, err.Error(), "zlib: unexpected EOF")

	// A truncated pack.
	dir = makeHistory(t)
	mustGit(t, dir, "gc", "-q", "--prune=now")
	packs, err := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.pack"))
	require.NoError(t, err)
	st, err := os.Stat(packs[0])
	require.NoError(t, err)
	require.NoError(t, os.Chmod(packs[0], 0o644))
	require.NoError(t, os.Truncate(packs[0], st.Size()/3))
	r, err = Discover(dir)
	require.NoError(t, err)
	head, _, err := r.Head()
	require.NoError(t, err)
	var failed error
	for _, p := range testPaths {
		if _, _, err := r.LastChange(head, p); err != nil {
			failed = err
			break
		}
	}
	if failed == nil {
		_, _, failed = r.Read(id)
	}
	require.Error(t, failed)
	assert.True(t, errors.As(failed, &ce) || errors.Is(failed, os.ErrNotExist) || strings.Contains(failed.Error(), "EOF"), "%v", failed)
}

func TestMissingObject(t *testing.T) {
	if testing.Short() {
		t.Skip("runs git")
	}
	dir := makeHistory(t)
	r, err := Discover(dir)
	require.NoError(t, err)
	var id ID
	id[0] = 0xab
	_, _, err = r.Read(id)
	var me *MissingError
	require.ErrorAs(t, err, &me)
	_, err = r.ResolveCommit(id.String())
	var ue *UnknownRevisionError
	require.ErrorAs(t, err, &ue)
}
