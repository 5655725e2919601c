//go:build unix

package gitread

import (
	"os"
	"syscall"
)

// openNoWait opens p read-only without waiting: O_NONBLOCK makes open(2) of a
// FIFO return at once (openIn then refuses it by its kind; a regular file reads
// as usual), and O_NOFOLLOW refuses a symbolic link put in p's place after it
// was resolved.
func openNoWait(p string) (*os.File, error) {
	return os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
}
