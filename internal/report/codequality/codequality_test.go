package codequality_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

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
	return a.Result(gate.Config{K: 3, ReferenceLocale: "en", KBCards: 1, Resamples: 100})
}

func render(t *testing.T, issues []codequality.Issue) []byte {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, codequality.Write(&b, issues))
	return b.Bytes()
}

func TestGolden(t *testing.T) {
	got := render(t, codequality.Issues(result(t, 1, 0, "a", "gone", "", "x\"<y>\x1b"), "eval/cases.jsonl"))
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
	require.NoError(t, json.Unmarshal(render(t, codequality.Issues(result(t, 1, 0, "gone", "lost"), "eval/cases.jsonl")), &issues))
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
	moved := codequality.Issues(result(t, 40, 0, "gone", "lost"), "eval/cases.jsonl")
	assert.Equal(t, issues[0]["fingerprint"], moved[0].Fingerprint)
	assert.Equal(t, 40, moved[0].Location.Lines.Begin)
	assert.NotEqual(t, moved[0].Fingerprint, moved[1].Fingerprint)
}

func TestMoreProblemsAndNone(t *testing.T) {
	issues := codequality.Issues(result(t, 1, 1, "gone", "lost", "missing"), "eval/cases.jsonl")
	require.Len(t, issues, 2)
	assert.Equal(t, "retrieval-gate: 2 more integrity problems not listed (the first 1 are)", issues[1].Description)
	assert.Equal(t, "[]\n", string(render(t, codequality.Issues(result(t, 1, 0, "a"), "eval/cases.jsonl"))))
}
