package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHistoryBOM: check and compare read a --history that starts with a UTF-8
// BOM (they refused it as malformed JSON) and append after it, its first bytes
// left as they were, and report --history charts it.
func TestHistoryBOM(t *testing.T) {
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
	for _, command := range []string{"check", "compare"} {
		t.Run(command, func(t *testing.T) {
			out := t.TempDir()
			hist := filepath.Join(out, "history.jsonl")
			stderr, err := exec(append(commands[command], "--history", hist)...)
			require.NoError(t, err, stderr)
			first, err := os.ReadFile(hist)
			require.NoError(t, err)
			changed := "\xef\xbb\xbf" + string(first)
			require.NoError(t, os.WriteFile(hist, []byte(changed), 0o644))

			jsonOut, html := filepath.Join(out, "o", "a.json"), filepath.Join(out, "o", "h.html")
			stderr, err = exec(append(commands[command], "--history", hist, "--json", jsonOut)...)
			require.NoError(t, err, stderr)
			stderr, err = exec("report", "--history", hist, "--html", html)
			require.NoError(t, err, stderr)
			got, err := os.ReadFile(hist)
			require.NoError(t, err)
			assert.True(t, strings.HasPrefix(string(got), changed), "the history's first bytes changed")
			assert.Equal(t, 2, strings.Count(string(got), "\n"), "one record appended")
			assert.FileExists(t, html)
		})
	}
}
