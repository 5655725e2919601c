//go:build unix

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
)

// TestStderrSignals: a standard error that is read still gets the message
// of the interruption, written after the signal (TestUnreadStreamSignals:
// one that is never read).
func TestStderrSignals(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
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
