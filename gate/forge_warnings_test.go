package gate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/gate"
	"github.com/retrieval-gate/retrieval-gate/internal/publish/runnertest"
)

// KB.Skipped and Report.Warnings (42fc068c) hold data: the names of a
// knowledge base's entries, the cases file's name (the k's warning) and the
// cases' unknown top-level keys. Named with a workflow command after a tab,
// U+2028, U+3000, U+0085 or a line end, or in the legacy syntax, each reaches
// its entry, and no entry forges a command in either syntax where a caller
// prints it: alone on a line, as a test's log indents it, or all of them
// joined by line ends.
func TestWarningsForgeNoCommand(t *testing.T) {
	payloads := []string{
		"\t::error title=FORGED::x",
		"\u2028::error title=FORGED::x",
		"\u3000::error title=FORGED::x",
		"\u0085::warning title=FORGED::x",
		"\n::error title=FORGED::x",
		"\r::notice title=FORGED::x",
		" ##[error title=FORGED]x",
		"x#\u00ad#[warning title=FORGED]y",
	}
	ctx := context.Background()
	root := t.TempDir()
	kbDir := filepath.Join(root, "kb")
	require.NoError(t, os.MkdirAll(kbDir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(kbDir, "a.md"), []byte("---\nid: a\nlocale: en\n---\nalpha reset password\n"), 0o600))
	var keys strings.Builder
	for i, p := range payloads {
		require.NoError(t, os.Symlink("nowhere.md", filepath.Join(kbDir, fmt.Sprintf("d%d%s.md", i, p))))
		k, err := json.Marshal(p)
		require.NoError(t, err)
		fmt.Fprintf(&keys, `,%s:%d`, k, i)
	}
	cases := filepath.Join(root, "cases"+payloads[2]+".jsonl")
	require.NoError(t, os.WriteFile(cases, []byte(
		`{"id":"1","locale":"en","query":"reset password","must_cite_one_of":["a"],"retrieved":["a"],"retrieval":{"k":5}`+keys.String()+"}\n"), 0o600))

	kb, err := gate.LoadKB(ctx, kbDir)
	require.NoError(t, err)
	f, err := os.Open(cases)
	require.NoError(t, err)
	defer f.Close()
	rep, err := gate.Check(ctx, f, kb, gate.Options{K: 3})
	require.NoError(t, err)

	skipped, warnings := kb.Skipped(), rep.Warnings()
	require.Len(t, skipped, len(payloads))
	require.Len(t, warnings, len(payloads)+2, "the skipped entries, the k's and the unknown keys'")
	for _, w := range append(skipped, warnings...) {
		assert.Contains(t, w, "FORGED", "the hostile name reached the entry")
	}
	assert.Contains(t, warnings[len(payloads)], "Options.K = 3 differs from the run's k")
	assert.Contains(t, warnings[len(payloads)+1], "top-level keys the cases format does not know")
	for _, w := range append(skipped, warnings...) {
		for _, printed := range []string{w + "\n", "    warnings_test.go:12: " + w + "\n", strings.Join(warnings, "\n")} {
			assert.Empty(t, runnertest.Commands(printed, nil), "%q", printed)
			for _, l := range runnertest.Lines(printed) {
				assert.NotContains(t, l, "##[", "%q", printed)
			}
		}
	}
}
