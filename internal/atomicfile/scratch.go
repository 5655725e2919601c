package atomicfile

import (
	"os"
	"strconv"
	"time"
)

// CreateTemp creates a scratch file of this process in dir for a file the
// caller removes once used (a batch's requests and results), named as the
// package's own temporary files (".NAME.tmp-pPID-RANDOM"), after removing the
// leftovers of killed runs (their PID no longer runs on this host) of NAME
// and of each of also (the other scratch files of the same owner).
func CreateTemp(dir, name string, also ...string) (*os.File, error) {
	now := time.Now()
	for _, n := range append([]string{name}, also...) {
		removeStale(dir, n, now)
	}
	return os.CreateTemp(dir, tempPrefix(name)+"p"+strconv.Itoa(os.Getpid())+"-*")
}
