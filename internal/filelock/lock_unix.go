//go:build unix

// Package filelock takes an exclusive advisory lock on an open file: the
// history's appends and the end-to-end tests' shared binary wait on it.
package filelock

import (
	"os"
	"syscall"
)

// Lock takes an exclusive advisory lock on f (flock), waiting for it, and
// returns the func that releases it.
func Lock(f *os.File) (unlock func(), err error) {
	fd := int(f.Fd())
	for {
		err := syscall.Flock(fd, syscall.LOCK_EX)
		if err != syscall.EINTR {
			if err != nil {
				return nil, err
			}
			break
		}
	}
	return func() { _ = syscall.Flock(fd, syscall.LOCK_UN) }, nil
}
