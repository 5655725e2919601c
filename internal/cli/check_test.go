package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testEnv is an Env with empty standard input, an empty environment and its
// outputs kept (checkEnv's).
func testEnv() *Env {
	env, _, _ := checkEnv("")
	return env
}

func checkEnv(stdin string) (*Env, *bytes.Buffer, *bytes.Buffer) {
	var out, errb bytes.Buffer
	return &Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}, &out, &errb
}

// writeCheckFixture writes a KB of 30 cards and n cases (every 7th without gold,
// every 11th with an unknown retrieved id).
func writeCheckFixture(t *testing.T, dir string, n int) (cases, kb string) {
	t.Helper()
	var k strings.Builder
	for i := range 30 {
		fmt.Fprintf(&k, `{"id": "card-%d", "locale": "en", "title": "t", "text": "x"}`+"\n", i)
	}
	kb = filepath.Join(dir, "kb.jsonl")
	require.NoError(t, os.WriteFile(kb, []byte(k.String()), 0o644))
	var c strings.Builder
	locales := []string{"en", "es-419", "pt-BR"}
	for i := range n {
		gold := ""
		if i%7 != 0 {
			gold = fmt.Sprintf(`, "must_cite_one_of": ["card-%d"]`, i%30)
		}
		extra := ""
		if i%11 == 0 {
			extra = `, "stale-card"`
		}
		fmt.Fprintf(&c, `{"id": "c%d", "locale": %q, "query": "q %d"%s, "retrieved": [{"id": "card-%d#c1", "parent_id": "card-%d"}, "card-%d", "card-%d"%s]}`+"\n",
			i, locales[i%3], i, gold, (i*7)%30, (i*7)%30, (i*3)%30, i%30, extra)
	}
	cases = filepath.Join(dir, "cases.jsonl")
	require.NoError(t, os.WriteFile(cases, []byte(c.String()), 0o644))
	return cases, kb
}

func TestCheckRunInProcess(t *testing.T) {
	dir := t.TempDir()
	cases, kb := writeCheckFixture(t, dir, 5000)
	js, md, per := filepath.Join(dir, "a.json"), filepath.Join(dir, "a.md"), filepath.Join(dir, "per.jsonl")
	env, out, errb := checkEnv("")
	err := NewCmdCheck(NewFactory(env), nil).Run(context.Background(), []string{"--cases", cases, "--kb", kb, "--k", "2",
		"--json", js, "--markdown", md, "--cases-out", per, "--comment-key", "ci"})
	require.NoError(t, err)
	assert.Contains(t, out.String(), "cases: 5000 total, 4285 with gold (scored), 715 without gold (not scored)")
	assert.Contains(t, out.String(), "455 retrieved entries in 455 cases are not cards", "the stale-index warning, in the report")
	assert.NotContains(t, errb.String(), "stale index", "said once")
	perb, err := os.ReadFile(per)
	require.NoError(t, err)
	assert.Equal(t, 5000, bytes.Count(perb, []byte("\n")))
	mdb, err := os.ReadFile(md)
	require.NoError(t, err)
	assert.True(t, bytes.HasPrefix(mdb, []byte("<!-- retrieval-gate:ci -->\n")))

	// The per-case file read back through stdin gives the same group figures.
	env2, out2, _ := checkEnv(string(perb))
	js2 := filepath.Join(dir, "b.json")
	require.NoError(t, NewCmdCheck(NewFactory(env2), nil).Run(context.Background(), []string{"--cases", "-", "--kb", kb, "--k", "2", "--json", js2}))
	assert.Contains(t, out2.String(), "5000 with precomputed scores")
	table := func(s string) string { // the group table: from "group" to the CI note
		i := strings.Index(s, "\ngroup")
		j := strings.Index(s, "mean [95%")
		return s[i:j]
	}
	assert.Equal(t, table(out.String()), table(out2.String()))
}

func TestCheckGateErrorAndNoOutputOnInputError(t *testing.T) {
	dir := t.TempDir()
	cases, kb := writeCheckFixture(t, dir, 50)
	js := filepath.Join(dir, "a.json")
	env, _, _ := checkEnv("")
	err := NewCmdCheck(NewFactory(env), nil).Run(context.Background(), []string{"--cases", cases, "--kb", kb, "--k", "1", "--min-hit", "1", "--json", js})
	var ge *GateError
	require.ErrorAs(t, err, &ge)
	assert.Equal(t, []string{"min_hit"}, ge.Failed)
	assert.Equal(t, ExitGateFailed, ExitCode(err))
	assert.FileExists(t, js)

	bad := filepath.Join(dir, "bad.jsonl")
	data, err := os.ReadFile(cases)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(bad, append(data, []byte("{\"id\": \"x\", \"retrieved\": 3}\n")...), 0o644))
	js2, per := filepath.Join(dir, "b.json"), filepath.Join(dir, "per.jsonl")
	err = NewCmdCheck(NewFactory(env), nil).Run(context.Background(), []string{"--cases", bad, "--kb", kb, "--json", js2, "--cases-out", per})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "bad.jsonl:51:")
	assert.Equal(t, ExitInput, ExitCode(err))
	assert.NoFileExists(t, js2)
	assert.NoFileExists(t, per)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		assert.NotContains(t, e.Name(), ".tmp-", "no temp file left")
	}
}
