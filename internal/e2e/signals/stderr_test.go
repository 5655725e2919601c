package signals

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestStderrSignals: a command writing much to standard error (check's
// warnings about a KB's skipped cards, 3,000 of them, about 500 KB, more than
// any pipe's buffer) into a pipe whose reader never reads is blocked in
// write(2) once the pipe is full; SIGTERM or SIGINT still stops it within a
// second, exit 2, nothing written. The signal comes once the pipe holds the
// first warnings. And a standard error that is read still gets the message
// of the interruption, written after the signal.
func TestStderrSignals(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run("check/kb-warnings-unread-stderr/"+unix.SignalName(sig), func(t *testing.T) {
			signalLaunch(t, func(t *testing.T, dir, out string) launch {
				kb, cases := skippingKB(t, dir, 3000)
				stderr, ready := unreadPipe(t)
				return launch{args: []string{"check", "--cases", cases, "--kb", kb, "--comment", "never", "--json", filepath.Join(out, "agg.json")},
					stderr: stderr, ready: ready}
			}, sig, 200*time.Millisecond, true)
		})
	}
	t.Run("check/cases-stdin-pipe/read-stderr/SIGTERM", func(t *testing.T) {
		for attempt, after := 1, 300*time.Millisecond; ; attempt, after = attempt+1, 2*after {
			killed := signalLaunch(t, func(t *testing.T, dir, out string) launch {
				kb, _ := skippingKB(t, dir, 0)
				return launch{args: []string{"check", "--cases", "-", "--kb", kb, "--comment", "never", "--json", filepath.Join(out, "agg.json")},
					stdin: openPipe(t, caseLine+"\n"), wantStderr: regexp.MustCompile(`(?m)^retrieval-gate: .*(interrupted|context canceled).*\n\z`)}
			}, syscall.SIGTERM, after, attempt == 4)
			if !killed {
				return
			}
		}
	})
}

// caseLine is the one case of skippingKB's KB.
const caseLine = `{"id":"c1","locale":"en","query":"q","must_cite_one_of":["a"],"retrieved":["a"]}`

// skippingKB writes a KB directory of one card and n symbolic links out of it
// (each skipped with a warning on standard error), and a cases file of one
// case.
func skippingKB(t *testing.T, dir string, n int) (kb, cases string) {
	t.Helper()
	kb = filepath.Join(dir, "kb")
	require.NoError(t, os.Mkdir(kb, 0o755))
	writeFile(t, filepath.Join(kb, "a.md"), "---\nid: a\n---\nalpha\n")
	outside := filepath.Join(dir, "outside.md")
	writeFile(t, outside, "---\nid: outside\n---\nbeta\n")
	for i := range n {
		require.NoError(t, os.Symlink(outside, filepath.Join(kb, fmt.Sprintf("link-%05d.md", i))))
	}
	cases = filepath.Join(dir, "cases.jsonl")
	writeFile(t, cases, caseLine+"\n")
	return kb, cases
}
