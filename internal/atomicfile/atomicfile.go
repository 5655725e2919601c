// Package atomicfile writes output files all-or-nothing. Each output is written to a
// temporary file in its target's directory; only when every output of a Set has been
// written, flushed and synced is each renamed over its target. A failed or aborted Set
// leaves no output and no temporary file, and every older file in place. A change to a
// file outside the set that belongs with it (a history's record: Append, its file
// checked by AddAppended) is made just before the renames and taken back when one fails.
// What goes to a stream rather than a file (standard output: Print) is written before
// the appends and the renames, so that a write that fails publishes nothing.
//
// Temporary files are named ".NAME.tmp-pPID-RANDOM" (NAME the target's base name, PID
// the writing process). A process killed with SIGKILL cannot remove its own; the next
// Add for the same target removes such leftovers: those whose PID is no longer running
// on this host, and, from versions that did not embed the PID (".NAME.tmp-DIGITS"),
// those older than StaleAge.
package atomicfile

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// StaleAge is how old a leftover temporary file without an embedded PID must be
// before Add removes it.
const StaleAge = 24 * time.Hour

// Set is a group of output files published together: all of them or none.
// The zero value is not usable; call NewSet. A Set is not safe for concurrent use,
// but the writers it returns may each be used by a different goroutine.
type Set struct {
	files   []*file
	appends []Append
	prints  []printed
	targets map[string]bool
	dirs    []string // directories Add created, deepest last
	done    bool
}

// An Append is a change to a file outside the set that is published with it (a
// run's line in a history, appended to whatever it holds): it makes the change
// and returns how to take it back.
type Append func() (undo func() error, err error)

// Append registers a to be made by Commit once every output is written and
// synced, before any is renamed over its target: a failed append publishes no
// output, and an output that cannot be published takes the append back.
func (s *Set) Append(a Append) {
	if !s.done {
		s.appends = append(s.appends, a)
	}
}

// Print registers data for Commit to write to w, a stream that cannot be
// renamed into place: standard output, with a report's text or an output
// named "-". Commit writes it once every output file is written and synced
// and the context has not ended, before the appends and the renames, so that
// a write that fails (or that a signal cuts short) publishes nothing. A stream
// cannot be taken back: an append or a rename that fails after it leaves data
// written and no file published. name is what an error calls w ("standard
// output").
func (s *Set) Print(name string, w io.Writer, data []byte) {
	if !s.done {
		s.prints = append(s.prints, printed{name, w, data})
	}
}

// printed is a stream's data that Commit writes (Print).
type printed struct {
	name string
	w    io.Writer
	data []byte
}

type file struct {
	path string
	tmp  *os.File
	bw   *bufio.Writer
}

// NewSet returns an empty Set. Callers should `defer s.Abort()`: after a Commit
// it does nothing.
func NewSet() *Set { return &Set{targets: map[string]bool{}} }

// Add registers path as an output of the set and returns the writer for its
// content. It creates path's missing parent directories (mode 0755; removed again
// by Abort when they are left empty) and the temporary file, so an unwritable
// destination is reported here, before the caller does any work. Naming a
// directory, or the same path twice, is an error.
func (s *Set) Add(path string) (io.Writer, error) {
	if s.done {
		return nil, fmt.Errorf("failed to create %s: output set already committed or aborted", path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("failed to create %s: %w", path, err)
	}
	if s.targets[abs] {
		return nil, fmt.Errorf("failed to create %s: named twice as an output", path)
	}
	if err := checkTarget(path); err != nil {
		return nil, fmt.Errorf("failed to create %s: %w", path, err)
	}
	dir := filepath.Dir(path)
	if err := s.mkdirAll(dir); err != nil {
		return nil, fmt.Errorf("failed to create %s: %w", path, err)
	}
	base := filepath.Base(path)
	removeStale(dir, base, time.Now())
	tmp, err := os.CreateTemp(dir, tempPrefix(base)+"p"+strconv.Itoa(os.Getpid())+"-*")
	if err != nil {
		return nil, fmt.Errorf("failed to create %s: %w", path, err)
	}
	f := &file{path: path, tmp: tmp, bw: bufio.NewWriterSize(tmp, 1<<16)}
	s.files = append(s.files, f)
	s.targets[abs] = true
	return f.bw, nil
}

// AddAppended registers path as a file the set's appends (Append) write to: a
// history, appended to at Commit. It is checked now as Add checks an output, so
// that one that cannot be appended to fails before the caller does any work:
// not a directory, a device or a pipe; its missing parent directories created
// (removed again by Abort when they are left empty); an existing file opened
// for writing (and closed), a new one's directory written to (a temporary file,
// removed at once). Nothing is written to path. Naming it twice, or as an
// output of the set too, is an error.
func (s *Set) AddAppended(path string) error {
	if s.done {
		return fmt.Errorf("failed to create %s: output set already committed or aborted", path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("failed to create %s: %w", path, err)
	}
	if s.targets[abs] {
		return fmt.Errorf("failed to create %s: named twice as an output", path)
	}
	if err := checkTarget(path); err != nil {
		return fmt.Errorf("failed to create %s: %w", path, err)
	}
	dir := filepath.Dir(path)
	if err := s.mkdirAll(dir); err != nil {
		return fmt.Errorf("failed to create %s: %w", path, err)
	}
	// O_NONBLOCK: a pipe put there since the check is not waited on.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|syscall.O_NONBLOCK, 0)
	switch {
	case err == nil:
		_ = f.Close()
	case errors.Is(err, os.ErrNotExist):
		probe, err := os.CreateTemp(dir, tempPrefix(filepath.Base(path))+"p"+strconv.Itoa(os.Getpid())+"-*")
		if err != nil {
			return fmt.Errorf("failed to create %s: %w", path, err)
		}
		_ = probe.Close()
		_ = os.Remove(probe.Name())
	default:
		return fmt.Errorf("failed to create %s: %w", path, err)
	}
	s.targets[abs] = true
	return nil
}

// checkTarget refuses a target that a rename cannot replace with a file, or
// should not: a directory, a device or a pipe.
func checkTarget(path string) error {
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return nil //nolint:nilerr // a target that does not exist (or cannot be seen) is the create's to refuse
	case fi.IsDir():
		return errors.New("is a directory")
	case !fi.Mode().IsRegular():
		// A device or a pipe (/dev/null, /dev/stdout, a FIFO): the rename would
		// replace it with a regular file (as root, /dev/null itself).
		return errors.New("not a regular file (a device or a pipe); outputs are files, written whole by a rename")
	}
	return nil
}

// mkdirAll creates dir and its missing parents, remembering each one it created.
func (s *Set) mkdirAll(dir string) error {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			break
		} else if !errors.Is(err, os.ErrNotExist) {
			return err
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := os.Mkdir(missing[i], 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return err
		}
		s.dirs = append(s.dirs, missing[i])
	}
	return nil
}

// Commit publishes every output. It first flushes, syncs and closes every
// temporary file and checks each target again (one made a directory since Add);
// if any of that fails, nothing is published. Then it writes the streams' data
// (Print), in order; a failed write publishes nothing. Then it makes the appends
// (Append), in order; a failed one takes back those before it and publishes
// nothing. Then it
// renames each temporary file over its target. Should a rename fail (which the
// checks make unlikely), the targets already replaced are restored from hard links
// taken beforehand, so the older files are back in place, and the appends are
// taken back. A run whose context has ended by the time the files are synced
// (a signal during a step that does not watch it) publishes nothing, prints
// nothing and gets the context's error: the last point where a run can still
// be stopped whole.
// After Commit (successful or not) the set is done.
func (s *Set) Commit(ctx context.Context) (err error) {
	if s.done {
		return errors.New("output set already committed or aborted")
	}
	defer func() {
		if err != nil {
			s.Abort()
		}
		s.done = true
	}()
	for _, f := range s.files {
		if err := f.finish(); err != nil {
			return fmt.Errorf("failed to write %s: %w", f.path, err)
		}
	}
	for _, f := range s.files {
		if err := checkTarget(f.path); err != nil {
			return fmt.Errorf("failed to write %s: %w", f.path, err)
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, p := range s.prints {
		if _, err := p.w.Write(p.data); err != nil {
			return fmt.Errorf("failed to write %s: %w", p.name, err)
		}
	}
	var undos []func() error
	for _, a := range s.appends {
		undo, err := a()
		if err != nil {
			return errors.Join(err, undoAll(undos))
		}
		undos = append(undos, undo)
	}
	// Keep each existing target reachable under a backup name until every rename
	// has succeeded.
	backups := make([]backupFile, len(s.files))
	defer func() {
		for _, b := range backups {
			if b.name != "" {
				_ = os.Remove(b.name)
			}
		}
	}()
	for i, f := range s.files {
		backups[i] = backup(f)
	}
	for i, f := range s.files {
		if rerr := os.Rename(f.tmp.Name(), f.path); rerr != nil {
			s.rollback(i, backups)
			return errors.Join(fmt.Errorf("failed to write %s: %w", f.path, rerr), undoAll(undos))
		}
	}
	for _, dir := range s.syncDirs() {
		syncDir(dir)
	}
	s.files = nil
	return nil
}

// undoAll takes back the appends made, the last first, and returns their errors.
func undoAll(undos []func() error) error {
	var errs []error
	for i := len(undos) - 1; i >= 0; i-- {
		if undos[i] != nil {
			errs = append(errs, undos[i]())
		}
	}
	return errors.Join(errs...)
}

// finish flushes, fixes the mode of, syncs and closes f's temporary file.
func (f *file) finish() error {
	if err := f.bw.Flush(); err != nil {
		return err
	}
	if err := f.tmp.Chmod(0o644); err != nil {
		return err
	}
	if err := f.tmp.Sync(); err != nil {
		return err
	}
	return f.tmp.Close()
}

// backupFile is the state of one target before Commit renamed over it.
type backupFile struct {
	existed bool   // the target existed
	name    string // a hard link to it, "" when none could be made
}

// backup hard-links f's existing target to a temporary name. Without hard links (some
// file systems) a failed later rename cannot restore this target.
func backup(f *file) backupFile {
	if _, err := os.Lstat(f.path); err != nil {
		return backupFile{}
	}
	dir, base := filepath.Split(f.path)
	for try := range 10 {
		name := filepath.Join(dir, tempPrefix(base)+"p"+strconv.Itoa(os.Getpid())+"-old"+strconv.FormatInt(time.Now().UnixNano(), 36)+strconv.Itoa(try))
		err := os.Link(f.path, name)
		if err == nil {
			return backupFile{existed: true, name: name}
		}
		if !errors.Is(err, os.ErrExist) {
			break
		}
	}
	return backupFile{existed: true}
}

// rollback undoes the renames of files[0:failed]: a target that existed is put back
// from its backup, one that did not is removed. A target that existed but has no
// backup keeps the new content (removing it would lose both); a backup that cannot be
// renamed back is left in place for the user (and is then removed as stale by a
// later run, see the package comment).
func (s *Set) rollback(failed int, backups []backupFile) {
	for i := range failed {
		f, b := s.files[i], &backups[i]
		switch {
		case !b.existed:
			_ = os.Remove(f.path)
		case b.name != "":
			_ = os.Rename(b.name, f.path)
			b.name = ""
		}
	}
}

func (s *Set) syncDirs() []string {
	seen := map[string]bool{}
	var dirs []string
	for _, f := range s.files {
		d := filepath.Dir(f.path)
		if !seen[d] {
			seen[d] = true
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// syncDir makes a rename in dir durable. Best effort: some file systems cannot
// sync a directory, and the rename itself has already succeeded.
func syncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	_ = d.Sync()
	_ = d.Close()
}

// Abort removes every temporary file of the set and the directories Add created
// that are still empty. No target is touched. Calling it again, or after Commit,
// does nothing.
func (s *Set) Abort() {
	if s.done {
		return
	}
	s.done = true
	s.appends, s.prints = nil, nil
	for _, f := range s.files {
		_ = f.tmp.Close()
		_ = os.Remove(f.tmp.Name())
	}
	s.files = nil
	for i := len(s.dirs) - 1; i >= 0; i-- {
		_ = os.Remove(s.dirs[i]) // fails, and keeps the directory, unless it is empty
	}
}

func tempPrefix(base string) string { return "." + base + ".tmp-" }

// removeStale deletes leftovers of killed runs writing dir/base (see the package
// comment for the rule). Errors are ignored: a leftover that cannot be removed
// harms nothing but disk space.
func removeStale(dir, base string, now time.Time) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	prefix := tempPrefix(base)
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || !e.Type().IsRegular() {
			continue
		}
		if stale(rest, e, now) {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// stale reports whether a temporary file whose name ends in rest (after
// ".NAME.tmp-") was left by a run that is gone.
func stale(rest string, e os.DirEntry, now time.Time) bool {
	if p, ok := strings.CutPrefix(rest, "p"); ok {
		pidText, _, ok := strings.Cut(p, "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 {
			return false // not our naming
		}
		return !processAlive(pid)
	}
	if rest == "" || strings.Trim(rest, "0123456789") != "" {
		return false // not our naming
	}
	info, err := e.Info()
	return err == nil && now.Sub(info.ModTime()) > StaleAge
}
