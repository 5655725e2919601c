//go:build unix

package signals

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestUnreadStreamSignals: a command writing more than any pipe's buffer to
// standard output (import --out -, 2.4 MB) or to standard error (check's
// warnings about a KB's skipped cards, 1,000 of them, 132 KB: twice the
// 64 KiB buffer of the test's pipe; 3,000 cost seconds of unlink(2) under
// load in the directory's removal) into a pipe whose reader never reads is blocked in write(2) once the pipe is full;
// SIGTERM or SIGINT still stops it within a second, exit 2, nothing written.
// The signal comes once the pipe holds the start of the output: the command
// is then waiting on its reader.
func TestUnreadStreamSignals(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	streams := []struct {
		name   string
		launch func(t *testing.T, dir, out string) launch
	}{
		{"import/out-stdout-unread-pipe", func(t *testing.T, dir, _ string) launch {
			in := filepath.Join(dir, "qrels.jsonl")
			generate(t, in, 120_000, func(i int) string {
				return fmt.Sprintf(`{"query_id":"q%06d","doc_id":"d%06d","relevance":1}`, i/4, i)
			})
			stdout, ready := unreadPipe(t)
			return launch{args: []string{"import", "--in", in, "--format", "irds-qrels", "--out", "-"}, stdout: stdout, ready: ready}
		}},
		{"check/kb-warnings-unread-stderr", func(t *testing.T, dir, out string) launch {
			kb, cases := skippingKB(t, dir, 1000)
			stderr, ready := unreadPipe(t)
			return launch{args: []string{"check", "--cases", cases, "--kb", kb, "--comment", "never", "--json", filepath.Join(out, "agg.json")},
				stderr: stderr, ready: ready}
		}},
	}
	for _, st := range streams {
		for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
			t.Run(st.name+"/"+unix.SignalName(sig), func(t *testing.T) {
				signalLaunch(t, st.launch, sig, 200*time.Millisecond, true)
			})
		}
	}
}

// unreadPipe returns the write end of a pipe nobody reads (its read end stays
// open until the test ends, so a writer blocks rather than getting EPIPE) and
// a channel closed once the pipe holds data: its writer has started, and one
// with more to write than the pipe's buffer takes is then blocked.
func unreadPipe(t *testing.T) (*os.File, <-chan struct{}) {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	fd := int(r.Fd())
	ready, stop := make(chan struct{}), make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			if n, err := unix.Poll(pfd, 0); err == nil && n > 0 && pfd[0].Revents&unix.POLLIN != 0 {
				close(ready)
				return
			}
		}
	}()
	t.Cleanup(func() {
		close(stop)
		<-finished
		_ = r.Close()
		_ = w.Close()
	})
	return w, ready
}
