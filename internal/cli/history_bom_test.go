package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHistoryBOMAndMistypedMeasure: check and compare read a --history that
// starts with a UTF-8 BOM (they refused it as malformed JSON) and append after
// it, its first bytes left as they were, and report --history charts it; a
// record whose mean is a string (it was skipped: a run missing from the chart)
// is refused by all three: exit 2 naming the file, the line and the value, no
// output written, the history as it was.
func TestHistoryBOMAndMistypedMeasure(t *testing.T) {
	dir := t.TempDir()
	cases, kb := writeCheckFixture(t, dir, 20)
	qrels := filepath.Join(dir, "qrels.trec")
	require.NoError(t, os.WriteFile(qrels, []byte("q1 0 d1 3\nq2 0 d2 2\n"), 0o644))
	run := filepath.Join(dir, "a.trec")
	require.NoError(t, os.WriteFile(run, []byte("q1 Q0 d1 1 2.0 t\nq2 Q0 d9 1 2.0 t\n"), 0o644))
	commands := map[string][]string{
		"check":   {"check", "--cases", cases, "--kb", kb, "--comment", "never"},
		"compare": {"compare", "--qrels", qrels, "--run", "a=" + run, "--bootstrap", "100", "--comment", "never"},
	}
	exec := func(args ...string) (string, error) {
		var stderr bytes.Buffer
		env := &Env{Stdin: strings.NewReader(""), Stdout: &bytes.Buffer{}, Stderr: &stderr,
			Getenv: func(k string) string { return map[string]string{"SOURCE_DATE_EPOCH": "1700000000"}[k] }}
		f := NewFactory(env)
		c := map[string]func() *Command{
			"check":   func() *Command { return NewCmdCheck(f, nil) },
			"compare": func() *Command { return NewCmdCompare(f, nil) },
			"report":  func() *Command { return NewCmdReport(f, nil) },
		}[args[0]]()
		return stderr.String(), c.Run(context.Background(), args[1:])
	}
	mean := regexp.MustCompile(`"mean":([0-9.e-]+)`)
	for _, command := range []string{"check", "compare"} {
		for _, tc := range []struct {
			name   string
			change func(string) string // the history after its first record
			err    string              // after the file's name; "": read and appended to
		}{
			{"BOM", func(s string) string { return "\xef\xbb\xbf" + s }, ""},
			{"mean a string", func(s string) string { return mean.ReplaceAllString(s, `"mean":"$1"`) }, ":1: document."},
		} {
			t.Run(command+"/"+tc.name, func(t *testing.T) {
				out := t.TempDir()
				hist := filepath.Join(out, "history.jsonl")
				stderr, err := exec(append(commands[command], "--history", hist)...)
				require.NoError(t, err, stderr)
				first, err := os.ReadFile(hist)
				require.NoError(t, err)
				changed := tc.change(string(first))
				require.NotEqual(t, string(first), changed)
				require.NoError(t, os.WriteFile(hist, []byte(changed), 0o644))

				jsonOut, html := filepath.Join(out, "o", "a.json"), filepath.Join(out, "o", "h.html")
				_, err = exec(append(commands[command], "--history", hist, "--json", jsonOut)...)
				_, rerr := exec("report", "--history", hist, "--html", html)
				got, ferr := os.ReadFile(hist)
				require.NoError(t, ferr)
				if tc.err == "" {
					require.NoError(t, err)
					require.NoError(t, rerr)
					assert.True(t, strings.HasPrefix(string(got), changed), "the history's first bytes changed")
					assert.Equal(t, 2, strings.Count(string(got), "\n"), "one record appended")
					assert.FileExists(t, html)
					return
				}
				for _, e := range []error{err, rerr} {
					require.Error(t, e)
					assert.Equal(t, ExitInput, ExitCode(e))
					assert.Contains(t, e.Error(), hist+tc.err)
					assert.Contains(t, e.Error(), ".mean is a string, not a number")
				}
				assert.Equal(t, changed, string(got), "the history as it was")
				assert.NoDirExists(t, filepath.Join(out, "o"), "no output written")
			})
		}
	}
}
