package codequality_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/gate"
	"github.com/retrieval-gate/retrieval-gate/internal/input/casefile"
	"github.com/retrieval-gate/retrieval-gate/internal/report/codequality"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

type cardSet map[string]bool

func (s cardSet) Has(id string) bool { return s[id] }

// result scores cases (each one gold id) against a KB of card "a", the first
// at line first, keeping at most maxProblems problems.
func result(t *testing.T, first, maxProblems int, gold ...string) *gate.Result {
	t.Helper()
	s := &gate.Scorer{KB: cardSet{"a": true}, K: 3}
	a := gate.NewAccumulator()
	a.MaxProblems = maxProblems
	for i, g := range gold {
		c := casefile.Case{ID: "c" + string(rune('1'+i)), Locale: "en", Gold: []string{g}, Retrieved: []casefile.Retrieved{{ID: "a"}}, File: "./eval/cases.jsonl", Line: first + i}
		var r gate.CaseResult
		require.NoError(t, s.ScoreInto(&c, &r))
		require.NoError(t, a.Add(&r))
	}
	return gateResult(a, gate.Config{K: 3, ReferenceLocale: "en", KBCards: 1, Resamples: 100})
}

func render(t *testing.T, issues []codequality.Issue) []byte {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, codequality.Write(&b, issues))
	return b.Bytes()
}

func TestGolden(t *testing.T) {
	got := render(t, codequality.Issues(result(t, 1, 0, "a", "gone", "", "x\"<y>\x1b"), "eval/cases.jsonl", ""))
	path := filepath.Join("testdata", "codequality.json")
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got))
}

// Each issue has every field GitLab's Code Quality report needs, and its
// fingerprint does not change when the case moves to another line.
func TestFields(t *testing.T) {
	var issues []map[string]any
	require.NoError(t, json.Unmarshal(render(t, codequality.Issues(result(t, 1, 0, "gone", "lost"), "eval/cases.jsonl", "")), &issues))
	require.Len(t, issues, 2)
	for _, is := range issues {
		for _, k := range []string{"description", "check_name", "fingerprint", "severity"} {
			assert.NotEmpty(t, is[k], k)
		}
		loc := is["location"].(map[string]any)
		assert.Equal(t, "eval/cases.jsonl", loc["path"])
		assert.GreaterOrEqual(t, loc["lines"].(map[string]any)["begin"], float64(1))
		assert.Contains(t, []any{"info", "minor", "major", "critical", "blocker"}, is["severity"])
	}
	moved := codequality.Issues(result(t, 40, 0, "gone", "lost"), "eval/cases.jsonl", "")
	assert.Equal(t, issues[0]["fingerprint"], moved[0].Fingerprint)
	assert.Equal(t, 40, moved[0].Location.Lines.Begin)
	assert.NotEqual(t, moved[0].Fingerprint, moved[1].Fingerprint)
}

func TestMoreProblemsAndNone(t *testing.T) {
	issues := codequality.Issues(result(t, 1, 1, "gone", "lost", "missing"), "eval/cases.jsonl", "")
	require.Len(t, issues, 2)
	assert.Equal(t, "retrieval-gate: 2 more integrity problems not listed (the first 1 are)", issues[1].Description)
	assert.Equal(t, "[]\n", string(render(t, codequality.Issues(result(t, 1, 0, "a"), "eval/cases.jsonl", ""))))
}

// resultAt is result with the cases read from file.
func resultAt(t *testing.T, file string, gold ...string) *gate.Result {
	t.Helper()
	r := result(t, 3, 0, gold...)
	for i := range r.Integrity.Problems {
		r.Integrity.Problems[i].File = file
	}
	return r
}

// The path is relative to the repository's root, however the cases were
// named, and so the fingerprint is the same on two runners whose build
// directories differ; a path outside the root stays as given.
func TestRelativeToRoot(t *testing.T) {
	wd, err := os.Getwd()
	require.NoError(t, err)
	parent := filepath.Dir(wd)
	for _, tc := range []struct{ name, root, file, want string }{
		{"absolute under the root", "/builds/a/repo", "/builds/a/repo/eval/cases.jsonl", "eval/cases.jsonl"},
		{"absolute, unclean", "/builds/a/repo", "/builds/a/repo/eval/../eval/./cases.jsonl", "eval/cases.jsonl"},
		{"relative to the working directory", parent, "eval/cases.jsonl", filepath.Base(wd) + "/eval/cases.jsonl"},
		{"dot-dot from the working directory", parent, "../x/cases.jsonl", "x/cases.jsonl"},
		{"outside the root, absolute", "/builds/a/repo", "/data/cases.jsonl", "/data/cases.jsonl"},
		{"outside the root, relative", wd, "../x/cases.jsonl", "../x/cases.jsonl"},
		{"the root's sibling with its name as prefix", "/builds/a/repo", "/builds/a/repo2/cases.jsonl", "/builds/a/repo2/cases.jsonl"},
		{"no root", "", "./eval/cases.jsonl", "eval/cases.jsonl"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := codequality.Issues(resultAt(t, tc.file, "gone"), tc.file, tc.root)
			require.Len(t, is, 1)
			assert.Equal(t, tc.want, is[0].Location.Path)
		})
	}
	a := codequality.Issues(resultAt(t, "/builds/a/repo/eval/cases.jsonl", "gone"), "", "/builds/a/repo")
	b := codequality.Issues(resultAt(t, "/home/runner/work/repo/eval/cases.jsonl", "gone"), "", "/home/runner/work/repo")
	c := codequality.Issues(resultAt(t, "eval/cases.jsonl", "gone"), "", "")
	assert.Equal(t, a[0].Fingerprint, b[0].Fingerprint)
	assert.Equal(t, a[0].Fingerprint, c[0].Fingerprint)
	more := func(root, casesPath string) codequality.Issue {
		r := result(t, 1, 1, "gone", "lost")
		is := codequality.Issues(r, casesPath, root)
		require.Len(t, is, 2)
		return is[1]
	}
	m1, m2 := more("/builds/a/repo", "/builds/a/repo/eval/cases.jsonl"), more("/srv/x", "/srv/x/eval/cases.jsonl")
	assert.Equal(t, "eval/cases.jsonl", m1.Location.Path)
	assert.Equal(t, m1.Fingerprint, m2.Fingerprint)
}

// A long gold id is cut in the description (a report of thousands of
// problems stays a few MiB) but not in the fingerprint: two ids that share
// their first MaxIDBytes bytes are still two issues.
func TestLongIDsCut(t *testing.T) {
	long := strings.Repeat("é", 3000) // 6,000 bytes: a cut inside a character would break it
	is := codequality.Issues(result(t, 1, 0, long+"1", long+"2"), "eval/cases.jsonl", "")
	require.Len(t, is, 2)
	for _, i := range is {
		assert.Less(t, len(i.Description), codequality.MaxIDBytes+200, "description of %d bytes", len(i.Description))
		assert.True(t, utf8.ValidString(i.Description))
		assert.Contains(t, i.Description, "…")
	}
	assert.NotEqual(t, is[0].Fingerprint, is[1].Fingerprint)
}

// gateResult is a.ResultContext with a context that does not end.
func gateResult(a *gate.Accumulator, cfg gate.Config) *gate.Result {
	res, err := a.ResultContext(context.Background(), cfg)
	if err != nil {
		panic(err) // a context that does not end ends nothing
	}
	return res
}
