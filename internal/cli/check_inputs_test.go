package cli

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gunzipFile is the decompressed content of a gzip file.
func gunzipFile(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	require.NoError(t, err)
	b, err := io.ReadAll(zr)
	require.NoError(t, err)
	return string(b)
}

// gzipText is text compressed.
func gzipText(t *testing.T, text string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	_, err := zw.Write([]byte(text))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return b.Bytes()
}

// requireRefused runs check with args and every output flag, and requires exit
// 2 with want on stderr, no output written and the inputs unchanged.
func requireRefused(t *testing.T, dir string, inputs []string, want string, args ...string) {
	t.Helper()
	before := map[string][]byte{}
	for _, p := range inputs {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		before[p] = b
	}
	out := filepath.Join(dir, "out")
	require.NoError(t, os.RemoveAll(out))
	require.NoError(t, os.Mkdir(out, 0o755))
	args = append(append([]string{"check"}, args...), "--json", filepath.Join(out, "r.json"), "--markdown", filepath.Join(out, "r.md"),
		"--cases-out", filepath.Join(out, "per.jsonl"), "--write-baseline", filepath.Join(out, "b.jsonl.gz"))
	code, stdout, stderr := runIn(t, nil, args...)
	assert.Equal(t, ExitInput, code, "%s%s", stdout, stderr)
	assert.Contains(t, stderr, want)
	entries, err := os.ReadDir(out)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing written")
	for p, b := range before {
		after, err := os.ReadFile(p)
		require.NoError(t, err)
		assert.True(t, bytes.Equal(b, after), "%s unchanged", p)
	}
}

// The baseline's header is checked as it is read: a created_at, k, cases or
// aggregates the writer would not write, and a case count the file does not
// hold, are input errors at the header's line (they were dropped or taken as
// they were: no created date, "k is -1", a file cut at a line boundary unseen).
func TestCheckBaselineHeaderRefused(t *testing.T) {
	demo := filepath.Join(repoRoot(t), "testdata", "demo")
	text := gunzipFile(t, filepath.Join(demo, "baseline.jsonl.gz"))
	header, body, ok := strings.Cut(text, "\n")
	require.True(t, ok)
	// The header's own keys follow its aggregates (the check document, which
	// has a "k" and "cases" of its own): edit the last occurrence.
	edit := func(re, repl string) string {
		r := regexp.MustCompile(re)
		locs := r.FindAllStringIndex(header, -1)
		require.NotEmpty(t, locs, re)
		last := locs[len(locs)-1]
		return header[:last[0]] + r.ReplaceAllString(header[last[0]:last[1]], repl) + header[last[1]:] + "\n" + body
	}
	lines := strings.SplitAfter(body, "\n")
	require.Len(t, lines, 157) // 156 cases and the empty rest
	dir := t.TempDir()
	for _, tc := range []struct {
		name, text, want string
	}{
		{"created_at a date", edit(`"created_at":"[^"]*"`, `"created_at":"2020-01-01"`), `base.jsonl.gz:1: created_at "2020-01-01" is not an RFC 3339 time`},
		{"created_at a word", edit(`"created_at":"[^"]*"`, `"created_at":"yesterday"`), `base.jsonl.gz:1: created_at "yesterday" is not an RFC 3339 time`},
		{"created_at empty", edit(`"created_at":"[^"]*"`, `"created_at":""`), `base.jsonl.gz:1: created_at "" is not an RFC 3339 time`},
		{"k negative", edit(`"k":5,`, `"k":-1,`), `base.jsonl.gz:1: k must be an integer of at least 1 (as check --k takes), got -1`},
		{"k zero", edit(`"k":5,`, `"k":0,`), `base.jsonl.gz:1: k must be an integer of at least 1 (as check --k takes), got 0`},
		{"aggregates a number", strings.Replace(text, `{"aggregates":{`, `{"aggregates":5,"was":{`, 1), `base.jsonl.gz:1: aggregates must be an object (the run's check --json document), got 5`},
		{"more cases stated", edit(`"cases":156,`, `"cases":999,`), `base.jsonl.gz:1: the header states 999 cases, the file has 156 case lines (up to line 157)`},
		{"cut at a line", header + "\n" + strings.Join(lines[:100], ""), `base.jsonl.gz:1: the header states 156 cases, the file has 100 case lines (up to line 101)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := filepath.Join(dir, "base.jsonl.gz")
			require.NoError(t, os.WriteFile(base, gzipText(t, tc.text), 0o644))
			cases := filepath.Join(demo, "cases.jsonl")
			requireRefused(t, dir, []string{base, cases}, tc.want,
				"--cases", cases, "--kb", filepath.Join(demo, "kb"), "--baseline", base)
		})
	}
	// Keys absent are accepted: a header with its schema only.
	base := filepath.Join(dir, "base.jsonl.gz")
	require.NoError(t, os.WriteFile(base, gzipText(t, `{"schema":"retrieval-gate/baseline@1"}`+"\n"+body), 0o644))
	code, stdout, stderr := runIn(t, nil, "check", "--cases", filepath.Join(demo, "cases.jsonl"), "--kb", filepath.Join(demo, "kb"), "--baseline", base)
	assert.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "vs base: ")
}

// A case's retrieval.k that is not an integer of at least 1, or a
// "retrieval" that is not an object, is an input error on every line check
// reads (it was ignored: on line 1 check took its k from elsewhere without a
// word, on later lines any value passed). A valid k keeps its warning.
func TestCheckRetrievalKRefused(t *testing.T) {
	demo := filepath.Join(repoRoot(t), "testdata", "demo")
	run, err := os.ReadFile(filepath.Join(demo, "regressed.jsonl")) // retrieve's output: "retrieval": {…, "k": 2} on every case
	require.NoError(t, err)
	lines := strings.SplitAfter(string(run), "\n")
	require.Contains(t, lines[0], `"k": 2}`)
	dir := t.TempDir()
	cases := filepath.Join(dir, "run.jsonl")
	with := func(n int, from, to string) string {
		edited := append([]string(nil), lines...)
		require.Contains(t, edited[n-1], from)
		edited[n-1] = strings.Replace(edited[n-1], from, to, 1)
		return strings.Join(edited, "")
	}
	const msg = "retrieval.k must be an integer of at least 1 (the k the run was retrieved at), got "
	for _, tc := range []struct {
		name, text, want string
	}{
		{"line 1 a string", with(1, `"k": 2}`, `"k": "10"}`), "run.jsonl:1: " + msg + `"10"`},
		{"line 1 zero", with(1, `"k": 2}`, `"k": 0}`), "run.jsonl:1: " + msg + "0"},
		{"line 1 negative", with(1, `"k": 2}`, `"k": -3}`), "run.jsonl:1: " + msg + "-3"},
		{"line 1 a fraction", with(1, `"k": 2}`, `"k": 2.5}`), "run.jsonl:1: " + msg + "2.5"},
		{"line 40 a string", with(40, `"k": 2}`, `"k": "2"}`), "run.jsonl:40: " + msg + `"2"`},
		{"line 40 zero", with(40, `"k": 2}`, `"k": 0}`), "run.jsonl:40: " + msg + "0"},
		{"line 40 not an object", with(40, `"retrieval": {`, `"retrieval": 5, "was": {`), `run.jsonl:40: retrieval.k cannot be read: field "retrieval" must be an object, got number`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.NoError(t, os.WriteFile(cases, []byte(tc.text), 0o644))
			requireRefused(t, dir, []string{cases}, tc.want, "--cases", cases, "--kb", filepath.Join(demo, "kb"))
		})
	}
	// Valid: the run's k, and the warning when --k differs, as before.
	require.NoError(t, os.WriteFile(cases, run, 0o644))
	code, stdout, stderr := runIn(t, nil, "check", "--cases", cases, "--kb", filepath.Join(demo, "kb"))
	assert.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "(k=2)")
	code, _, stderr = runIn(t, nil, "check", "--cases", cases, "--kb", filepath.Join(demo, "kb"), "--k", "5")
	assert.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "--k 5 differs from the run's k (retrieval.k = 2 at "+cases+":1)")
}
