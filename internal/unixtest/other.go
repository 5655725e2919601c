//go:build !unix

package unixtest

import (
	"errors"
	"os"
	"testing"
)

// Mkfifo skips t: named pipes made by path are a unix feature.
func Mkfifo(t testing.TB, path string, _ uint32) {
	t.Helper()
	t.Skipf("named pipes (%s) are a unix feature", path)
}

// Signal0 skips t: signal 0 is a unix feature.
func Signal0(t testing.TB, _ int) error {
	t.Helper()
	t.Skip("signal 0 is a unix feature")
	return nil
}

// NoProcess is the error Signal0 gives for a process that does not exist
// (never, here: Signal0 skips).
var NoProcess = errors.New("no such process")

// BlockingPipe is os.Pipe: its reads block a thread here too.
func BlockingPipe(t testing.TB) (r, w *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatalf("pipe: %v", err)
	}
	return r, w
}

// MaxRSSKiB reports false: the platform gives no peak RSS through os.ProcessState.
func MaxRSSKiB(*os.ProcessState) (int64, bool) { return 0, false }
