//go:build unix

package unixtest

import (
	"os"
	"runtime"
	"syscall"
	"testing"
)

// Mkfifo makes a named pipe at path with the given permission bits.
func Mkfifo(t testing.TB, path string, mode uint32) {
	t.Helper()
	if err := syscall.Mkfifo(path, mode); err != nil {
		t.Fatalf("mkfifo %s: %v", path, err)
	}
}

// Signal0 sends signal 0 to pid: nil when the process exists, syscall.ESRCH
// when it does not.
func Signal0(t testing.TB, pid int) error {
	t.Helper()
	return syscall.Kill(pid, 0)
}

// NoProcess is the error Signal0 gives for a process that does not exist.
var NoProcess error = syscall.ESRCH

// BlockingPipe is a pipe whose reading end is in blocking mode (made by
// pipe(2) and wrapped by os.NewFile, so the runtime's poller does not
// manage it): a read on it blocks a thread, as a read of a terminal or of
// an inherited pipe does.
func BlockingPipe(t testing.TB) (r, w *os.File) {
	t.Helper()
	var fds [2]int
	if err := syscall.Pipe(fds[:]); err != nil {
		t.Fatalf("pipe: %v", err)
	}
	return os.NewFile(uintptr(fds[0]), "r"), os.NewFile(uintptr(fds[1]), "w")
}

// MaxRSSKiB is the peak resident set size of an exited child in KiB; false
// when the platform does not report it.
func MaxRSSKiB(ps *os.ProcessState) (int64, bool) {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, false
	}
	kib := int64(ru.Maxrss) //nolint:unconvert // int32 on some platforms
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		kib /= 1024 // bytes there
	}
	return kib, true
}
