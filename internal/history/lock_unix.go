//go:build unix

package history

import (
	"os"
	"syscall"
)

// lock takes an exclusive advisory lock on f (flock), released by the returned func.
func lock(f *os.File) (func(), error) {
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
