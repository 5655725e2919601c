package gate_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/gate"
	"github.com/retrieval-gate/retrieval-gate/internal/cli"
	"github.com/retrieval-gate/retrieval-gate/internal/publish/runnertest"
)

// cliWarnings runs `retrieval-gate args...` in process and returns its exit
// code and the warnings it printed on standard error, each without its
// prefix ("retrieval-gate: warning: ", retrieve's "retrieve: warning: ").
func cliWarnings(t *testing.T, args ...string) (int, []string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
	code := cli.Run(context.Background(), env, args)
	t.Logf("retrieval-gate %s: exit %d\n%s", strings.Join(args, " "), code, errb.String())
	var ws []string
	for line := range strings.Lines(errb.String()) {
		line = strings.TrimSuffix(line, "\n")
		for _, prefix := range []string{"retrieval-gate: warning: ", "retrieve: warning: "} {
			if w, ok := strings.CutPrefix(line, prefix); ok {
				ws = append(ws, w)
			}
		}
	}
	return code, ws
}

// skippingKB is a knowledge-base directory of two cards and four entries
// named *.md that are not read: a symbolic link out of the directory, a
// dangling one, one to a directory, and a dangling one whose name holds a
// workflow command. A file without the .md extension and hidden ones are no
// cards either, and no entry is named for them.
func skippingKB(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	kb := filepath.Join(root, "kb")
	for path, body := range map[string]string{
		"kb/en/a.md":          "---\nid: a\nlocale: en\ntitle: Alpha\n---\nalpha reset password\n",
		"kb/en/b.md":          "---\nid: b\nlocale: en\ntitle: Beta\n---\nbeta billing invoice\n",
		"kb/notes.txt":        "not a card",
		"kb/.hidden.md":       "---\nid: hidden\n---\nnot a card\n",
		"kb/.git/config.md":   "not a card",
		"outside.md":          "---\nid: outside\n---\nout of the knowledge base\n",
		"kb/sub/placeholder":  "",
		"kb/sub/deeper/x.txt": "",
	} {
		p := filepath.Join(root, path)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
	}
	require.NoError(t, os.Symlink("../outside.md", filepath.Join(kb, "out.md")))
	require.NoError(t, os.Symlink("nowhere.md", filepath.Join(kb, "dangling.md")))
	require.NoError(t, os.Symlink("sub", filepath.Join(kb, "dir.md")))
	require.NoError(t, os.Symlink("nowhere.md", filepath.Join(kb, "##[error]forged.md")))
	return kb
}

// TestKBSkippedAndWarningsEqualCLI: what LoadKB does not read of a directory
// is no error, as for check and retrieve, and it is not dropped either (it
// was): KB.Skipped lists what both commands name in their warnings, and the
// Report's Warnings of Check and Live are the warnings check prints for the
// same inputs and options (the skipped entries, a k other than the run's,
// keys the cases format does not know), guarded as the command's standard
// error is.
func TestKBSkippedAndWarningsEqualCLI(t *testing.T) {
	ctx := context.Background()
	kbDir := skippingKB(t)
	dir := t.TempDir()
	cases := filepath.Join(dir, "cases.jsonl")
	require.NoError(t, os.WriteFile(cases, []byte(
		`{"id": "1", "locale": "en", "query": "reset password", "must_cite_one_of": ["a"], "retrieved": ["a", "b"], "retrieval": {"k": 5}, "contexts": ["x"]}`+"\n"+
			`{"id": "2", "locale": "en", "query": "billing invoice", "must_cite_one_of": ["b"], "retrieved": ["b"]}`+"\n"), 0o600))

	kb, err := gate.LoadKB(ctx, kbDir)
	require.NoError(t, err, "entries not read are no error")
	skipped := []string{
		kbDir + `/##\[error]forged.md: a symbolic link that cannot be resolved`,
		kbDir + "/dangling.md: a symbolic link that cannot be resolved",
		kbDir + "/dir.md: a symbolic link to something that is not a regular file (directory)",
		kbDir + "/out.md: a symbolic link out of the knowledge-base directory (not followed)",
	}
	assert.Equal(t, skipped, kb.Skipped())
	kbWarnings := make([]string, len(skipped))
	for i, s := range skipped {
		kbWarnings[i] = "knowledge base: skipped " + s
	}

	// retrieve names the same entries.
	run := filepath.Join(dir, "run.jsonl")
	code, ws := cliWarnings(t, "retrieve", "--kb", kbDir, "--cases", cases, "--out", run)
	require.Equal(t, 0, code)
	assert.Equal(t, kbWarnings, ws, "retrieve's warnings")

	// check: its warnings, Check's Warnings; --k 3 is Options.K = 3.
	for _, tc := range []struct {
		name  string
		flags []string
		o     gate.Options
	}{
		{"the run's k", nil, gate.Options{}},
		{"another k", []string{"--k", "3"}, gate.Options{K: 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, want := cliWarnings(t, append([]string{"check", "--cases", cases, "--kb", kbDir}, tc.flags...)...)
			require.Equal(t, 0, code)
			require.Equal(t, kbWarnings, want[:len(kbWarnings)], "check names the skipped entries first")
			require.Contains(t, want[len(want)-1], `"contexts" (1 case)`, "and the unknown key last")
			for i, w := range want {
				want[i] = strings.Replace(w, "--k 3 differs", "Options.K = 3 differs", 1)
			}
			f, err := os.Open(cases)
			require.NoError(t, err)
			defer f.Close()
			rep, err := gate.Check(ctx, f, kb, tc.o)
			require.NoError(t, err)
			assert.Equal(t, want, rep.Warnings())
			if tc.o.K != 0 {
				assert.Contains(t, rep.Warnings(), "Options.K = 3 differs from the run's k (retrieval.k = 5 at "+cases+":1): the measures are at k = 3")
			}
		})
	}

	// Live: the warnings of check on retrieve's output.
	code, want := cliWarnings(t, "check", "--cases", run, "--kb", kbDir)
	require.Equal(t, 0, code)
	f, err := os.Open(cases)
	require.NoError(t, err)
	defer f.Close()
	rep, err := gate.Live(ctx, gate.LiveOptions{KB: kbDir, Cases: renamed{f, run}, Strategy: gate.StrategyLexical})
	require.NoError(t, err)
	assert.Equal(t, want, rep.Warnings())
	assert.Equal(t, kbWarnings, rep.Warnings()[:len(kbWarnings)])

	for _, w := range rep.Warnings() {
		assert.Empty(t, runnertest.Commands(w+"\n", nil), w)
	}

	// A clean run has none, and a KB of a JSONL file skips nothing.
	demoKB := loadKB(t, demo+"/kb")
	assert.Empty(t, demoKB.Skipped())
	demoCases, err := os.Open(demo + "/cases.jsonl")
	require.NoError(t, err)
	defer demoCases.Close()
	rep, err = gate.Check(ctx, demoCases, demoKB, gate.Options{})
	require.NoError(t, err)
	assert.Empty(t, rep.Warnings())
}
