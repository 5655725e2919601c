package gitread

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Every file of a repository is opened by openIn: the reader never blocks in
// open(2) on a FIFO someone left under .git (packed-refs, a ref, HEAD, config,
// an object), never reads a device, and never follows a symbolic link out of
// the repository's own directories (its git directory, the common directory
// and the object directories its alternates name). Nothing a file holds is
// ever printed in an error: an error names the file and what is wrong with it.

// errNotRegular is a file that is neither a regular file nor a directory (a
// FIFO, a device, a socket): never opened for reading, never waited on.
var errNotRegular = errors.New("not a regular file")

// errIsDir is a directory where a file was expected (a ref name that is a
// directory of refs is read as absent, as git does).
var errIsDir = errors.New("is a directory")

// errOutside is a symbolic link that leads out of the repository.
var errOutside = errors.New("a symbolic link that leads out of the repository's git directory: not followed")

// realRoot is dir with its symbolic links resolved (dir itself when it cannot
// be resolved: a path that does not exist holds no file to open).
func realRoot(dir string) string {
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		return r
	}
	return filepath.Clean(dir)
}

// within reports whether the resolved path p lies in one of the resolved roots.
func within(p string, roots []string) bool {
	for _, r := range roots {
		if p == r || strings.HasPrefix(p, r+string(filepath.Separator)) || r == string(filepath.Separator) {
			return true
		}
	}
	return false
}

// openIn opens the regular file at p for reading. A symbolic link (p's or a
// directory's on the way) is followed only when the file it leads to lies in
// one of roots (resolved paths; nil: anywhere, for the work tree's .git file);
// the file's kind is checked without waiting (openNoWait: a FIFO is never
// waited on) before anything is read. The errors wrap fs.ErrNotExist,
// errIsDir, errNotRegular or errOutside in a *fs.PathError naming p.
func openIn(p string, roots []string) (*os.File, error) {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return nil, err
	}
	if roots != nil && !within(real, roots) {
		return nil, &fs.PathError{Op: "open", Path: p, Err: errOutside}
	}
	f, err := openNoWait(real)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: p, Err: unwrapPath(err)}
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	switch {
	case fi.IsDir():
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: p, Err: errIsDir}
	case !fi.Mode().IsRegular():
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: p, Err: fmt.Errorf("%w: %s", errNotRegular, kindOf(fi.Mode()))}
	}
	return f, nil
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// kindOf names a file's kind for a message.
func kindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}
