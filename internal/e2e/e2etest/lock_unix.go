//go:build unix

package e2etest

import (
	"os"
	"path/filepath"
	"syscall"
)

// lockDir holds an exclusive lock on dir's lock file until unlock is called:
// another test process (another end-to-end package of the same go test) waits.
func lockDir(dir string) (unlock func(), err error) {
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
