//go:build !unix

package gitread

import (
	"io/fs"
	"os"
)

// openNoWait opens p read-only once its kind is known to be a regular file
// (this system has no O_NONBLOCK open: the check comes first).
func openNoWait(p string) (*os.File, error) {
	fi, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() && !fi.IsDir() {
		return nil, &fs.PathError{Op: "open", Path: p, Err: errNotRegular}
	}
	return os.Open(p)
}
