package atomicfile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/retrieval-gate/retrieval-gate/internal/unixtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tree returns every file under dir (relative path -> content), directories as "<dir>".
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	got := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		require.NoError(t, err)
		rel, _ := filepath.Rel(dir, p)
		if rel == "." {
			return nil
		}
		if d.IsDir() {
			got[rel] = "<dir>"
			return nil
		}
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		got[rel] = string(b)
		return nil
	}))
	return got
}

func write(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
}

func TestSetCommitPublishesEveryOutput(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "old.json"), "old")
	s := NewSet()
	defer s.Abort()
	paths := []string{"old.json", "new.md", "reports/gate/cases.jsonl"}
	for i, p := range paths {
		w, err := s.Add(filepath.Join(dir, p))
		require.NoError(t, err)
		_, err = fmt.Fprintf(w, "content %d", i)
		require.NoError(t, err)
	}
	// Nothing is visible before Commit: the old file still holds its content.
	b, err := os.ReadFile(filepath.Join(dir, "old.json"))
	require.NoError(t, err)
	assert.Equal(t, "old", string(b))
	require.NoFileExists(t, filepath.Join(dir, "new.md"))

	require.NoError(t, s.Commit(context.Background()))
	assert.Equal(t, map[string]string{
		"old.json": "content 0", "new.md": "content 1",
		"reports": "<dir>", "reports/gate": "<dir>", "reports/gate/cases.jsonl": "content 2",
	}, tree(t, dir), "the outputs and nothing else (no temp file, no backup)")
	for _, p := range paths {
		fi, err := os.Stat(filepath.Join(dir, p))
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o644), fi.Mode().Perm(), p)
	}

	s.Abort() // after Commit: does nothing
	assert.FileExists(t, filepath.Join(dir, "new.md"))
	require.Error(t, s.Commit(context.Background()), "a set commits once")
	_, err = s.Add(filepath.Join(dir, "late"))
	require.Error(t, err, "no Add after Commit")
}

func TestSetLargeOutput(t *testing.T) {
	dir := t.TempDir()
	want := strings.Repeat("0123456789abcdef", 1<<16) // 1 MiB, many buffer flushes
	s := NewSet()
	w, err := s.Add(filepath.Join(dir, "big"))
	require.NoError(t, err)
	_, err = io.WriteString(w, want)
	require.NoError(t, err)
	require.NoError(t, s.Commit(context.Background()))
	b, err := os.ReadFile(filepath.Join(dir, "big"))
	require.NoError(t, err)
	assert.Equal(t, want, string(b))
}

// A failing output (its parent is a regular file) fails at Add, before any work; the
// caller aborts; no output appears, older files keep their content, no temp file and no
// directory created by the set remains.
func TestSetAddFailureLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "agg.json"), "older report")
	write(t, filepath.Join(dir, "plain"), "a file, not a directory")
	before := tree(t, dir)

	s := NewSet()
	w, err := s.Add(filepath.Join(dir, "agg.json"))
	require.NoError(t, err)
	_, err = io.WriteString(w, "new report")
	require.NoError(t, err)
	_, err = s.Add(filepath.Join(dir, "new/dirs/x.md"))
	require.NoError(t, err)
	_, err = s.Add(filepath.Join(dir, "plain", "cases.jsonl"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), filepath.Join(dir, "plain", "cases.jsonl"))
	s.Abort()

	assert.Equal(t, before, tree(t, dir))
}

func TestSetAddUnwritableDirectory(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root ignores directory permissions; TestSetAddFailureLeavesNothing covers the failure path")
	}
	dir := t.TempDir()
	ro := filepath.Join(dir, "ro")
	require.NoError(t, os.Mkdir(ro, 0o555))
	t.Cleanup(func() { _ = os.Chmod(ro, 0o755) })
	s := NewSet()
	defer s.Abort()
	_, err := s.Add(filepath.Join(dir, "ok.json"))
	require.NoError(t, err)
	_, err = s.Add(filepath.Join(ro, "out.json"))
	require.ErrorIs(t, err, os.ErrPermission)
	_, err = s.Add(filepath.Join(ro, "sub", "out.json"))
	require.ErrorIs(t, err, os.ErrPermission)
	s.Abort()
	assert.Equal(t, map[string]string{"ro": "<dir>"}, tree(t, dir))
}

func TestSetAddRefuses(t *testing.T) {
	dir := t.TempDir()
	s := NewSet()
	defer s.Abort()
	_, err := s.Add(filepath.Join(dir, "a.json"))
	require.NoError(t, err)
	_, err = s.Add(filepath.Join(dir, ".", "a.json"))
	require.ErrorContains(t, err, "named twice")
	_, err = s.Add(dir)
	require.ErrorContains(t, err, "is a directory")
}

// An error while producing the content: the caller aborts and nothing changes.
func TestSetAbortAfterPartialWrite(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a"), "A")
	before := tree(t, dir)
	s := NewSet()
	for _, p := range []string{"a", "b", "c/d"} {
		w, err := s.Add(filepath.Join(dir, p))
		require.NoError(t, err)
		_, err = io.WriteString(w, strings.Repeat("x", 100_000))
		require.NoError(t, err)
	}
	s.Abort()
	s.Abort()
	assert.Equal(t, before, tree(t, dir))
	require.Error(t, s.Commit(context.Background()), "an aborted set cannot commit")
}

// Commit fails before any rename (a temp file cannot be flushed): nothing is published.
func TestSetCommitFlushFailurePublishesNothing(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a"), "A")
	before := tree(t, dir)
	s := NewSet()
	for _, p := range []string{"a", "b"} {
		w, err := s.Add(filepath.Join(dir, p))
		require.NoError(t, err)
		_, err = io.WriteString(w, "new")
		require.NoError(t, err)
	}
	require.NoError(t, s.files[1].tmp.Close()) // the second output's flush will fail
	err := s.Commit(context.Background())
	require.Error(t, err)
	assert.Contains(t, err.Error(), filepath.Join(dir, "b"))
	assert.Equal(t, before, tree(t, dir))
}

// A rename fails after another output was already renamed: the earlier target is
// restored (an older file gets its content back, a new one is removed).
func TestSetCommitRenameFailureRollsBack(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "old"), "old content")
	s := NewSet()
	for _, p := range []string{"old", "fresh", "blocked"} {
		w, err := s.Add(filepath.Join(dir, p))
		require.NoError(t, err)
		_, err = io.WriteString(w, "new "+p)
		require.NoError(t, err)
	}
	// After Add checked it, something makes the last target a non-empty directory.
	write(t, filepath.Join(dir, "blocked", "inside"), "x")

	err := s.Commit(context.Background())
	require.Error(t, err)
	assert.Contains(t, err.Error(), filepath.Join(dir, "blocked"))
	assert.Equal(t, map[string]string{"old": "old content", "blocked": "<dir>", "blocked/inside": "x"},
		tree(t, dir), "old restored, fresh removed, no temp or backup left")
}

func TestSetCreatesParentsAndRemovesThemOnAbort(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "reports"), 0o755))
	s := NewSet()
	_, err := s.Add(filepath.Join(dir, "reports/gate/deep/agg.json"))
	require.NoError(t, err)
	fi, err := os.Stat(filepath.Join(dir, "reports/gate/deep"))
	require.NoError(t, err, "parents exist as soon as Add returns")
	assert.True(t, fi.IsDir())
	s.Abort()
	assert.Equal(t, map[string]string{"reports": "<dir>"}, tree(t, dir), "created dirs removed, existing kept")

	// A created directory that gained other content is kept.
	s = NewSet()
	_, err = s.Add(filepath.Join(dir, "reports/new/agg.json"))
	require.NoError(t, err)
	write(t, filepath.Join(dir, "reports/new/someone-else"), "x")
	s.Abort()
	assert.Equal(t, map[string]string{"reports": "<dir>", "reports/new": "<dir>", "reports/new/someone-else": "x"}, tree(t, dir))
}

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "sub", "out.json")
	require.NoError(t, WriteBytes(p, []byte("v1")))
	boom := errors.New("boom")
	err := Write(p, func(w io.Writer) error {
		_, _ = io.WriteString(w, "half of v2")
		return boom
	})
	require.ErrorIs(t, err, boom)
	assert.Equal(t, map[string]string{"sub": "<dir>", "sub/out.json": "v1"}, tree(t, dir))
	require.NoError(t, Write(p, func(w io.Writer) error { _, err := io.WriteString(w, "v2"); return err }))
	assert.Equal(t, map[string]string{"sub": "<dir>", "sub/out.json": "v2"}, tree(t, dir))
}

// deadPID returns the PID of a process that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	require.NoError(t, cmd.Run())
	pid := cmd.Process.Pid
	require.ErrorIs(t, unixtest.Signal0(t, pid), unixtest.NoProcess)
	return pid
}

func TestAddRemovesStaleTempFiles(t *testing.T) {
	dir := t.TempDir()
	dead := strconv.Itoa(deadPID(t))
	own := strconv.Itoa(os.Getpid())
	old := time.Now().Add(-StaleAge - time.Hour)
	files := map[string]bool{ // name -> removed by Add("out.json")
		".out.json.tmp-p" + dead + "-123":      true,  // its process is gone
		".out.json.tmp-p" + dead + "-old1x":    true,  // a backup of a killed Commit
		".out.json.tmp-p" + own + "-456":       false, // a live process (this one)
		".out.json.tmp-p1-789":                 false, // PID 1 is always alive
		".out.json.tmp-1234567":                true,  // legacy naming, older than StaleAge
		".out.json.tmp-7654321":                false, // legacy naming, recent
		".out.json.tmp-pabc-1":                 false, // not our naming
		".out.json.tmp-notdigits":              false, // not our naming
		".other.json.tmp-p" + dead + "-1":      false, // another target's
		"out.json":                             false, // the target itself
		".out.json.tmp-p" + dead + "-dir-keep": false, // a directory (created below)
	}
	for name := range files {
		p := filepath.Join(dir, name)
		if strings.HasSuffix(name, "dir-keep") {
			require.NoError(t, os.Mkdir(p, 0o755))
			continue
		}
		write(t, p, "x")
		if name == ".out.json.tmp-1234567" {
			require.NoError(t, os.Chtimes(p, old, old))
		}
	}
	s := NewSet()
	defer s.Abort()
	_, err := s.Add(filepath.Join(dir, "out.json"))
	require.NoError(t, err)

	var want, got []string
	for name, removed := range files {
		if !removed {
			want = append(want, name)
		}
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".out.json.tmp-p"+own+"-") && e.Name() != ".out.json.tmp-p"+own+"-456" {
			continue // the temp file of this Add
		}
		got = append(got, e.Name())
	}
	sort.Strings(want)
	sort.Strings(got)
	assert.Equal(t, want, got)
}

// TestKilledWriterLeftoversRemoved kills a real writer with SIGKILL between Add and
// Commit, then checks the next run removes what it left.
func TestKilledWriterLeftoversRemoved(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	dir := t.TempDir()
	target := filepath.Join(dir, "agg.json")
	write(t, target, "older")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperWriter$")
	cmd.Env = append(os.Environ(), "ATOMICFILE_HELPER_TARGET="+target)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	buf := make([]byte, 5)
	_, err = io.ReadFull(out, buf) // "ready": the temp file exists and holds data
	require.NoError(t, err)
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()

	leftover, err := filepath.Glob(filepath.Join(dir, ".agg.json.tmp-p"+strconv.Itoa(cmd.Process.Pid)+"-*"))
	require.NoError(t, err)
	require.Len(t, leftover, 1, "SIGKILL leaves the temp file")
	b, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Equal(t, "older", string(b), "the target is untouched")

	require.NoError(t, WriteBytes(target, []byte("newer")))
	assert.Equal(t, map[string]string{"agg.json": "newer"}, tree(t, dir))
}

// TestHelperWriter is the process TestKilledWriterLeftoversRemoved kills.
func TestHelperWriter(t *testing.T) {
	target := os.Getenv("ATOMICFILE_HELPER_TARGET")
	if target == "" {
		t.Skip("helper process only")
	}
	s := NewSet()
	w, err := s.Add(target)
	require.NoError(t, err)
	_, err = io.WriteString(w, strings.Repeat("partial ", 20_000)) // past the buffer: on disk
	require.NoError(t, err)
	fmt.Print("ready")
	time.Sleep(time.Minute)
	t.Error("not killed")
}

// TestAddRefusesDevicesAndPipes: an output that names a device or a FIFO is
// refused before any work, so a rename never replaces /dev/null (as root) or a
// pipe with a regular file.
func TestAddRefusesDevicesAndPipes(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	unixtest.Mkfifo(t, fifo, 0o600)
	for _, p := range []string{os.DevNull, fifo} {
		s := NewSet()
		_, err := s.Add(p)
		require.Error(t, err, p)
		assert.Contains(t, err.Error(), "not a regular file")
		s.Abort()
	}
	fi, err := os.Stat(os.DevNull)
	require.NoError(t, err)
	assert.NotZero(t, fi.Mode()&os.ModeDevice, "/dev/null is still a device")
}

// Write and WriteBytes (test helpers): a Set of one file; every command
// adds all its outputs to one Set instead.
//
// Write creates path by calling fn with a buffered writer: a Set of one file.
// The file appears only when fn and every flush succeed; on any error no file (and
// no temp file) is left and an older file at path is untouched.
func Write(path string, fn func(w io.Writer) error) error {
	s := NewSet()
	defer s.Abort()
	w, err := s.Add(path)
	if err != nil {
		return err
	}
	if err := fn(w); err != nil {
		return err
	}
	return s.Commit(context.Background())
}

// WriteBytes writes data to path atomically.
func WriteBytes(path string, data []byte) error {
	return Write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// The appends (a history's record) are made once every output is written, and
// taken back when an output cannot be published: a target made a directory
// after Add (found by Commit's check, before any append), a rename failing
// after the appends (the targets restored, the appends undone, the last
// first), a failed append (the earlier ones undone, nothing published).
func TestSetCommitAppendsAllOrNothing(t *testing.T) {
	var log []string
	step := func(name string, err error, then func()) Append {
		return func() (func() error, error) {
			if then != nil {
				then()
			}
			if err != nil {
				log = append(log, name+" failed")
				return nil, err
			}
			log = append(log, name)
			return func() error { log = append(log, "undo "+name); return nil }, nil
		}
	}
	setUp := func(t *testing.T) (string, *Set) {
		dir := t.TempDir()
		write(t, filepath.Join(dir, "old"), "old content")
		s := NewSet()
		for _, p := range []string{"old", "fresh", "last"} {
			w, err := s.Add(filepath.Join(dir, p))
			require.NoError(t, err)
			_, err = io.WriteString(w, "new "+p)
			require.NoError(t, err)
		}
		log = nil
		return dir, s
	}
	want := map[string]string{"old": "old content"}

	t.Run("target made a directory", func(t *testing.T) {
		dir, s := setUp(t)
		s.Append(step("history", nil, nil))
		require.NoError(t, os.Mkdir(filepath.Join(dir, "last"), 0o755))
		err := s.Commit(context.Background())
		require.ErrorContains(t, err, "failed to write "+filepath.Join(dir, "last")+": is a directory")
		assert.Empty(t, log, "no append made")
		assert.Equal(t, map[string]string{"old": "old content", "last": "<dir>"}, tree(t, dir))
	})
	t.Run("rename fails after the appends", func(t *testing.T) {
		dir, s := setUp(t)
		s.Append(step("first", nil, nil))
		// The second append's side effect: the last target becomes a directory
		// after Commit's check, so its rename fails.
		s.Append(step("second", nil, func() { write(t, filepath.Join(dir, "last", "inside"), "x") }))
		err := s.Commit(context.Background())
		require.ErrorContains(t, err, "failed to write "+filepath.Join(dir, "last"))
		assert.Equal(t, []string{"first", "second", "undo second", "undo first"}, log)
		assert.Equal(t, map[string]string{"old": "old content", "last": "<dir>", "last/inside": "x"}, tree(t, dir), "old restored, fresh removed")
	})
	t.Run("an append fails", func(t *testing.T) {
		dir, s := setUp(t)
		s.Append(step("first", nil, nil))
		s.Append(step("second", errors.New("disk full"), nil))
		s.Append(step("third", nil, nil))
		err := s.Commit(context.Background())
		require.ErrorContains(t, err, "disk full")
		assert.Equal(t, []string{"first", "second failed", "undo first"}, log)
		assert.Equal(t, want, tree(t, dir), "nothing published, no temporary file left")
	})
	t.Run("published", func(t *testing.T) {
		dir, s := setUp(t)
		s.Append(step("first", nil, nil))
		require.NoError(t, s.Commit(context.Background()))
		assert.Equal(t, []string{"first"}, log)
		assert.Equal(t, map[string]string{"old": "new old", "fresh": "new fresh", "last": "new last"}, tree(t, dir))
	})
}

// AddAppended checks a file the set appends to as Add checks an output, and
// writes nothing: an existing file keeps its bytes, a new one is not created,
// the parents it created are removed by Abort.
func TestSetAddAppended(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "blocked"), "a regular file")
	write(t, filepath.Join(dir, "history.jsonl"), "a record\n")
	require.NoError(t, os.Mkdir(filepath.Join(dir, "adir"), 0o755))
	fifo := filepath.Join(t.TempDir(), "fifo") // apart: tree would wait on it
	unixtest.Mkfifo(t, fifo, 0o644)
	before := tree(t, dir)
	s := NewSet()
	for path, want := range map[string]string{
		"blocked/history.jsonl": "not a directory",
		"adir":                  "is a directory",
		fifo:                    "not a regular file",
	} {
		if !filepath.IsAbs(path) {
			path = filepath.Join(dir, path)
		}
		err := s.AddAppended(path)
		require.ErrorContains(t, err, "failed to create "+path+": ")
		require.ErrorContains(t, err, want)
	}
	require.NoError(t, s.AddAppended(filepath.Join(dir, "history.jsonl")))
	require.NoError(t, s.AddAppended(filepath.Join(dir, "new", "sub", "history.jsonl")))
	require.ErrorContains(t, s.AddAppended(filepath.Join(dir, "history.jsonl")), "named twice")
	_, err := s.Add(filepath.Join(dir, "history.jsonl"))
	require.ErrorContains(t, err, "named twice")
	assert.DirExists(t, filepath.Join(dir, "new", "sub"))
	s.Abort()
	assert.Equal(t, before, tree(t, dir), "nothing written, the directories created removed")
	if os.Geteuid() != 0 { // root writes to a read-only file
		require.NoError(t, os.Chmod(filepath.Join(dir, "history.jsonl"), 0o444))
		require.ErrorContains(t, NewSet().AddAppended(filepath.Join(dir, "history.jsonl")), "permission denied")
	}
}

// A set whose run's context ended before Commit publishes nothing: no output,
// no temporary file, no append made; an older output stays as it was.
func TestSetCommitWithEndedContextPublishesNothing(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "old.json")
	require.NoError(t, os.WriteFile(old, []byte("older\n"), 0o644))
	s := NewSet()
	ws, err := s.AddAll(filepath.Join(dir, "a.json"), old)
	require.NoError(t, err)
	for _, w := range ws {
		_, err := io.WriteString(w, "new\n")
		require.NoError(t, err)
	}
	appended := false
	s.Append(func() (func() error, error) { appended = true; return func() error { return nil }, nil })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, s.Commit(ctx), context.Canceled)
	assert.False(t, appended, "no append made")
	assert.NoFileExists(t, filepath.Join(dir, "a.json"))
	got, err := os.ReadFile(old)
	require.NoError(t, err)
	assert.Equal(t, "older\n", string(got))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file left")
}

// recorder is a stream (standard output) that notes, at each write, what the
// directory held and which appends had been made.
type recorder struct {
	t    *testing.T
	dir  string
	log  *[]string
	err  error
	data strings.Builder
	seen []map[string]string
}

func (r *recorder) Write(p []byte) (int, error) {
	r.seen = append(r.seen, tree(r.t, r.dir))
	*r.log = append(*r.log, "print")
	if r.err != nil {
		return 0, r.err
	}
	return r.data.Write(p)
}

// A stream's data (Print) is written at Commit once the files are written and
// synced, before the appends and the renames: a write that fails publishes
// nothing, and a set that fails before it, or whose context has ended, or
// that is aborted prints nothing.
func TestSetCommitPrints(t *testing.T) {
	for _, tt := range []struct {
		name    string
		failing error                          // the stream's write fails
		before  func(t *testing.T, dir string) // after the files are written, before Commit
		ctx     func() context.Context         // nil: Background
		end     func(s *Set) error             // nil: Commit
		wantErr string                         // "" none
		log     []string                       // the prints and appends made
		after   map[string]string              // the directory after Commit
	}{
		{name: "printed before the appends and the renames", log: []string{"print", "append"},
			after: map[string]string{"old": "new old", "fresh": "new fresh"}},
		{name: "a failed write publishes nothing", failing: errors.New("no space left on device"),
			wantErr: "failed to write standard output: no space left on device", log: []string{"print"},
			after: map[string]string{"old": "older"}},
		{name: "a target that cannot be published: nothing printed", wantErr: "is a directory",
			before: func(t *testing.T, dir string) { require.NoError(t, os.Mkdir(filepath.Join(dir, "fresh"), 0o755)) },
			after:  map[string]string{"old": "older", "fresh": "<dir>"}},
		{name: "an ended context: nothing printed", wantErr: context.Canceled.Error(),
			ctx:   func() context.Context { ctx, cancel := context.WithCancel(context.Background()); cancel(); return ctx },
			after: map[string]string{"old": "older"}},
		{name: "aborted: nothing printed", end: func(s *Set) error { s.Abort(); return nil },
			after: map[string]string{"old": "older"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, filepath.Join(dir, "old"), "older")
			var log []string
			out := &recorder{t: t, dir: dir, log: &log, err: tt.failing}
			s := NewSet()
			defer s.Abort()
			ws, err := s.AddAll(filepath.Join(dir, "old"), filepath.Join(dir, "fresh"))
			require.NoError(t, err)
			require.NoError(t, Render(ws,
				func(w io.Writer) error { _, err := io.WriteString(w, "new old"); return err },
				func(w io.Writer) error { _, err := io.WriteString(w, "new fresh"); return err }))
			s.Append(func() (func() error, error) {
				log = append(log, "append")
				return func() error { log = append(log, "undo append"); return nil }, nil
			})
			s.Print("standard output", out, []byte("the report\n"))
			if tt.before != nil {
				tt.before(t, dir)
			}
			ctx := context.Background()
			if tt.ctx != nil {
				ctx = tt.ctx()
			}
			if tt.end != nil {
				err = tt.end(s)
			} else {
				err = s.Commit(ctx)
			}
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tt.log, log)
			for _, seen := range out.seen {
				assert.Equal(t, "older", seen["old"], "printed before any rename")
				assert.NotContains(t, seen, "fresh")
			}
			if tt.failing == nil && len(tt.log) > 0 {
				assert.Equal(t, "the report\n", out.data.String())
			}
			assert.Equal(t, tt.after, tree(t, dir), "and no temporary file left")
		})
	}
}
