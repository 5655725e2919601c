package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 20 item 3: judge's cache is an output, checked against every input: a
// cache naming the run (one line, no trailing newline: the opener used to take it
// for a torn write and truncate it), the KB, the queries or the prompt is refused
// before anything is opened, and the input is left as it was.
func TestJudgeCacheNeverAnInput(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	files := map[string]string{
		"run.jsonl":     `{"id":"c1","query":"q","must_cite_one_of":["a"],"retrieved":["a"]}`,
		"kb.jsonl":      `{"id":"a","text":"alpha"}`,
		"queries.tsv":   "q1\tq",
		"prompt.txt":    "{{query}} {{document}}",
		"run.trec":      "q1 Q0 a 1 0.5 t",
		"kbdir/a.md":    "---\nid: a\n---\nalpha",
		"other.jsonl":   `{"id":"x"}`,
		"cases.out.txt": "",
	}
	for name, text := range files {
		require.NoError(t, os.MkdirAll(filepath.Dir(name), 0o755))
		require.NoError(t, os.WriteFile(name, []byte(text), 0o644))
	}
	base := []string{"judge", "--judge-url", "http://127.0.0.1:1/v1", "--judge-model", "m", "--qrels", "q.txt"}
	for _, tt := range []struct {
		args  []string
		cache string
	}{
		{[]string{"--run", "a=run.jsonl", "--kb", "kb.jsonl"}, "run.jsonl"},  // the case
		{[]string{"--run", "a=run.jsonl", "--kb", "kb.jsonl"}, "./kb.jsonl"}, // the KB, another spelling
		{[]string{"--run", "a=run.trec", "--queries", "queries.tsv", "--kb", "kb.jsonl"}, "queries.tsv"},
		{[]string{"--run", "a=run.jsonl", "--kb", "kb.jsonl", "--prompt", "prompt.txt"}, "prompt.txt"},
		{[]string{"--run", "a=run.jsonl", "--kb", "kbdir"}, "kbdir/cache.jsonl"}, // inside the KB directory
		{[]string{"--run", "a=run.jsonl", "--kb", "kb.jsonl"}, filepath.Join(dir, "run.jsonl")},
		{[]string{"--run", "a=run.jsonl", "--kb", "kb.jsonl", "--judgments", "j.jsonl"}, "j.jsonl"}, // an output
	} {
		args := append(append(append([]string{}, base...), tt.args...), "--cache", tt.cache)
		code, _, stderr := runIn(t, map[string]string{"RETRIEVAL_GATE_LLM_API_KEY": "k"}, args...)
		assert.Equal(t, ExitInput, code, "%v: %s", args, stderr)
		assert.Contains(t, stderr, "--cache", "%v", args)
		for name, text := range files {
			b, err := os.ReadFile(name)
			require.NoError(t, err)
			require.Equal(t, text, string(b), "%v changed %s", args, name)
		}
		assert.NoFileExists(t, "q.txt")
	}
}

// Issue 20 item 11: two outputs where one is a directory the other needs are
// refused before anything is written: --write-baseline X --history X (history in
// X/history.jsonl), and the same shape across other commands and flags.
func TestConflictingOutputsRefusedFirst(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	require.NoError(t, os.WriteFile("cases.jsonl", []byte(`{"id":"c1","must_cite_one_of":["a"],"retrieved":["a"]}`+"\n"), 0o644))
	require.NoError(t, os.WriteFile("kb.jsonl", []byte(`{"id":"a","text":"alpha"}`+"\n"), 0o644))
	require.NoError(t, os.WriteFile("qrels.jsonl", []byte(`{"query_id":"q1","doc_id":"a","relevance":1}`+"\n"), 0o644))
	require.NoError(t, os.WriteFile("a.trec", []byte("q1 Q0 a 1 0.5 a\n"), 0o644))
	for _, args := range [][]string{
		{"check", "--cases", "cases.jsonl", "--kb", "kb.jsonl", "--write-baseline", "X", "--history", "X"},
		{"check", "--cases", "cases.jsonl", "--kb", "kb.jsonl", "--history", "X", "--json", "X"},
		{"check", "--cases", "cases.jsonl", "--kb", "kb.jsonl", "--json", "X", "--markdown", "X/report.md"},
		{"check", "--cases", "cases.jsonl", "--kb", "kb.jsonl", "--html", "./X", "--cases-out", "X/sub/cases.jsonl"},
		{"compare", "--qrels", "qrels.jsonl", "--run", "a=a.trec", "--json", "X", "--history", "X"},
		{"compare", "--qrels", "qrels.jsonl", "--run", "a=a.trec", "--markdown", "X/y.md", "--html", "X"},
		{"calibrate", "--human", "cases.jsonl", "--judge", "cases.jsonl", "--lock", "kb.jsonl", "--json", "X", "--markdown", "X/c.md"},
	} {
		code, _, stderr := runIn(t, nil, args...)
		assert.Equal(t, ExitInput, code, "%v: %s", args, stderr)
		assert.Contains(t, stderr, "needs it as a directory", "%v", args)
		assert.NoFileExists(t, "X", "%v wrote X", args)
		assert.NoDirExists(t, "X", "%v wrote X", args)
	}
}

// Issue 20 item 6, end to end: a history whose last line is torn (a full disk
// mid-append) no longer fails every later check --history and report --history
// with exit 2: the line is skipped and then dropped, each time with a warning.
func TestTornHistoryDoesNotBrick(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	require.NoError(t, os.WriteFile("cases.jsonl", []byte(`{"id":"c1","must_cite_one_of":["a"],"retrieved":["a"]}`+"\n"), 0o644))
	require.NoError(t, os.WriteFile("kb.jsonl", []byte(`{"id":"a","text":"alpha"}`+"\n"), 0o644))
	check := []string{"check", "--cases", "cases.jsonl", "--kb", "kb.jsonl", "--history", "h"}
	code, _, stderr := runIn(t, nil, check...)
	require.Equal(t, 0, code, stderr)
	b, err := os.ReadFile("h/history.jsonl")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile("h/history.jsonl", append(b, b[:len(b)/3]...), 0o644))

	code, _, stderr = runIn(t, nil, "report", "--history", "h", "--html", "h.html")
	assert.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "history.jsonl:2: skipped a torn last line")
	code, _, stderr = runIn(t, nil, check...)
	assert.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "history.jsonl:2: dropped a torn last line")
	after, err := os.ReadFile("h/history.jsonl")
	require.NoError(t, err)
	assert.Equal(t, 2, bytes.Count(after, []byte("\n")))
	assert.True(t, bytes.HasPrefix(after, b))
}

// Issue 20 item 8: --baseline given the wrong kind of file is refused with what it
// looks like; a regression gate that is set and cannot be evaluated because
// nothing pairs fails with its reason, never "off".
func TestBaselineWrongKindAndNothingPaired(t *testing.T) {
	root := repoRoot(t)
	dir := t.TempDir()
	t.Chdir(dir)
	demo := filepath.Join(root, "testdata", "demo")
	code, stdout, stderr := runIn(t, nil, "check", "--cases", filepath.Join(demo, "cases.jsonl"), "--kb", filepath.Join(demo, "kb"),
		"--baseline", filepath.Join(demo, "regressed.jsonl"), "--max-drop-hit", "0.01")
	assert.Equal(t, ExitInput, code, stdout)
	assert.Contains(t, stderr, "regressed.jsonl:1: ")
	assert.Contains(t, stderr, "it looks like a cases file")

	// A KB file as the baseline (a fresh variant).
	require.NoError(t, os.WriteFile("kb.jsonl", []byte(`{"id":"a","text":"alpha"}`+"\n"), 0o644))
	require.NoError(t, os.WriteFile("cases.jsonl", []byte(`{"id":"c1","must_cite_one_of":["a"],"retrieved":["a"]}`+"\n"+`{"id":"c2","must_cite_one_of":["a"],"retrieved":["b"]}`+"\n"), 0o644))
	code, _, stderr = runIn(t, nil, "check", "--cases", "cases.jsonl", "--kb", "kb.jsonl", "--baseline", "kb.jsonl")
	assert.Equal(t, ExitInput, code)
	assert.Contains(t, stderr, "it looks like a knowledge-base file")

	// A --cases-out file of other cases (no id pairs), and one whose every gold
	// changed: the gate fails and says why.
	for name, base := range map[string]string{
		"other ids":    `{"id":"x1","must_cite_one_of":["a"],"scores":{"retrieval_hit_at_k":1}}` + "\n",
		"gold changed": `{"id":"c1","must_cite_one_of":["z"],"scores":{"retrieval_hit_at_k":1}}` + "\n" + `{"id":"c2","must_cite_one_of":["z"],"scores":{"retrieval_hit_at_k":1}}` + "\n",
	} {
		require.NoError(t, os.WriteFile("base.jsonl", []byte(base), 0o644))
		code, stdout, stderr = runIn(t, nil, "check", "--cases", "cases.jsonl", "--kb", "kb.jsonl", "--baseline", "base.jsonl", "--max-drop-hit", "0.01", "--json", "r.json")
		assert.Equal(t, ExitGateFailed, code, "%s: %s%s", name, stdout, stderr)
		assert.Contains(t, stdout, "nothing pairs with the baseline", name)
		b, err := os.ReadFile("r.json")
		require.NoError(t, err)
		assert.Contains(t, string(b), "nothing pairs with the baseline", name)
	}
}

// Issue 20 item 15: every base image of the Dockerfile is pinned by digest; one
// that is not must say why on the line above (an "UNPINNED:" comment), so an
// unpinned base is a decision someone wrote down, never an oversight.
func TestDockerfileBaseImagesPinned(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "Dockerfile"))
	require.NoError(t, err)
	lines := strings.Split(string(b), "\n")
	froms := 0
	for i, l := range lines {
		f := strings.Fields(l)
		if len(f) < 2 || f[0] != "FROM" {
			continue
		}
		froms++
		image := f[1]
		if strings.HasPrefix(image, "--platform=") {
			image = f[2]
		}
		if image == "scratch" || regexp.MustCompile(`@sha256:[0-9a-f]{64}$`).MatchString(image) {
			continue
		}
		declared := false
		for j := i - 1; j >= 0 && strings.HasPrefix(lines[j], "#"); j-- {
			declared = declared || strings.HasPrefix(lines[j], "# UNPINNED: ")
		}
		assert.True(t, declared, "Dockerfile:%d: %s is not pinned by digest", i+1, image)
	}
	assert.Equal(t, 2, froms)
}
