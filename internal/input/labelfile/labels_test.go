package labelfile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos"
)

const testLockJSON = `{
  "dimensions": {
    "groundedness": {"construct": "support", "gated": true},
    "faithfulness": {"construct": "contradiction-only", "gated": false}
  },
  "bins": [0.34, 0.67],
  "kappa_weighting": "quadratic",
  "min_kappa": 0.6
}
`

func testLock(t testing.TB) *Lock {
	l, err := ReadLock([]byte(testLockJSON), "lock.json")
	require.NoError(t, err)
	return l
}

func TestReadLock(t *testing.T) {
	l := testLock(t)
	assert.Equal(t, []float64{0.34, 0.67}, l.Bins)
	assert.Equal(t, 3, l.NumBins())
	assert.Equal(t, "quadratic", l.KappaWeighting)
	assert.Equal(t, 0.6, l.MinKappa)
	assert.Equal(t, map[string]LockDimension{
		"groundedness": {Construct: "support", Gated: true},
		"faithfulness": {Construct: "contradiction-only", Gated: false},
	}, l.Dimensions)
	assert.Equal(t, []string{"faithfulness", "groundedness"}, l.DimensionNames())
	assert.Equal(t, DefaultLockMinN, l.MinN, "min_n defaults to 30")
	assert.Equal(t, RatersSingle, l.Raters, "raters defaults to single")
	assert.False(t, l.RatersSet)
	pl, err := ReadLock([]byte(strings.Replace(strings.Replace(testLockJSON, `"min_kappa": 0.6`, `"min_kappa": 0.6, "raters": "panel"`, 1), `"gated": true}`, `"gated": true, "carried_over": true}`, 1)), "lock.json")
	require.NoError(t, err)
	assert.Equal(t, RatersPanel, pl.Raters)
	assert.True(t, pl.RatersSet)
	assert.True(t, pl.Dimensions["groundedness"].CarriedOver)
	assert.False(t, pl.Dimensions["faithfulness"].CarriedOver)
	assert.False(t, l.MinNSet)
	assert.Empty(t, l.Owner)
	assert.Nil(t, l.Adoption)
	// The owner, the panel adoption and a construct's definition (ADR-0028).
	ad, err := ReadLock([]byte("dimensions:\n  g: {construct: support, gated: true, carried_over: true}\n  f:\n    construct: contradiction-only\n    gated: true\n    definition: fails only on a contradiction\n"+
		"bins: [0.5]\nkappa_weighting: none\nmin_kappa: 0\nraters: panel\nowner: pat\npanel_adoption: {reason: ADR-0028, carried_over: [g]}\n"), "lock.yaml")
	require.NoError(t, err)
	assert.Equal(t, "pat", ad.Owner)
	assert.Equal(t, &PanelAdoption{Reason: "ADR-0028", CarriedOver: []string{"g"}}, ad.Adoption)
	assert.Equal(t, "fails only on a contradiction", ad.Dimensions["f"].Definition)
	assert.Empty(t, ad.Dimensions["g"].Definition)
	m, err := ReadLock([]byte(strings.Replace(testLockJSON, `"min_kappa": 0.6`, `"min_kappa": 0.6, "min_n": 5`, 1)), "lock.json")
	require.NoError(t, err)
	assert.Equal(t, 5, m.MinN)
	assert.True(t, m.MinNSet)
	m, err = ReadLock([]byte("dimensions:\n  a: {construct: x, gated: true}\nbins: [0.5]\nkappa_weighting: none\nmin_kappa: 0\nmin_n: 12\n"), "lock.yaml")
	require.NoError(t, err)
	assert.Equal(t, 12, m.MinN)

	yml := "# frozen\ndimensions:\n  groundedness: {construct: support, gated: true}\n  faithfulness:\n    construct: contradiction-only\n    gated: false\nbins: [0.34, 0.67]\nkappa_weighting: quadratic\nmin_kappa: 0.6\n"
	y, err := ReadLock([]byte(yml), "lock.yaml")
	require.NoError(t, err)
	y.File = l.File
	assert.Equal(t, l, y, "YAML with the same keys is the same lock")

	b, err := ReadLock(append([]byte("\xef\xbb\xbf"), testLockJSON...), "lock.json")
	require.NoError(t, err, "a UTF-8 byte order mark is skipped")
	assert.Equal(t, l, b)
}

func TestLockBinOf(t *testing.T) {
	l := testLock(t)
	tests := []struct {
		s    float64
		want int
	}{{0, 0}, {0.3399, 0}, {0.34, 1}, {0.5, 1}, {0.67, 2}, {1, 2}}
	for _, tt := range tests {
		assert.Equal(t, tt.want, l.BinOf(tt.s), "score %v", tt.s)
	}
}

func TestReadLockErrors(t *testing.T) {
	tests := []struct {
		name, file, data, want string
	}{
		{"malformed JSON", "lock.json", "{\n  \"bins\": [0.3,\n}\n", "lock.json:3: malformed JSON: unexpected character '}' looking for a value at column 1 (a lock whose name ends in .json is read as JSON)"},
		{"truncated", "lock.json", "{\"bins\": [0.3", "lock.json:1: malformed JSON: unexpected end of file after array element at column 14 (a lock whose name ends in .json is read as JSON)"},
		// Issue 33 item 16: the format the lock is read as is said; YAML in a .json is not JSON.
		{"YAML in a .json", "lock.json", "dimensions:\n  a: {construct: x, gated: true}\nbins: [0.5]\n", `lock.json:1: not JSON: a lock whose name ends in .json is read as JSON, and it looks like YAML (KEY: value); a lock is JSON (an object {"dimensions": …}) or YAML with the same keys: name a YAML lock .yaml or .yml`},
		{"text in a .json", "lock.json", "\n\n# a comment\n", `lock.json:3: not JSON: a lock whose name ends in .json is read as JSON, and it does not start with '{'; a lock is JSON (an object {"dimensions": …}) or YAML with the same keys: name a YAML lock .yaml or .yml`},
		{"not an object", "lock.json", "[1]", "lock.json:1: the lock must be an object with dimensions, bins, kappa_weighting and min_kappa, got array"},
		{"unknown key", "lock.json", strings.Replace(testLockJSON, `"min_kappa"`, `"min_kapa"`, 1), `lock.json:8: unknown key "min_kapa" (allowed: dimensions, bins, kappa_weighting, min_kappa, min_n, raters, owner, panel_adoption)`},
		{"raters unknown", "lock.json", strings.Replace(testLockJSON, `"min_kappa": 0.6`, `"min_kappa": 0.6, "raters": "team"`, 1), `lock.json:8: "raters" must be "single" or "panel"`},
		{"raters a number", "lock.yaml", "dimensions:\n  a: {construct: x, gated: true}\nbins: [0.5]\nkappa_weighting: none\nmin_kappa: 0\nraters: 3\n", `lock.yaml:6: "raters" must be "single" or "panel"`},
		{"carried_over a string", "lock.json", strings.Replace(testLockJSON, `"gated": true`, `"gated": true, "carried_over": "yes"`, 1), `lock.json:3: dimension "groundedness": carried_over must be true or false, got string`},
		{"min_n zero", "lock.json", strings.Replace(testLockJSON, `"min_kappa": 0.6`, `"min_kappa": 0.6, "min_n": 0`, 1), "lock.json:8: min_n 0 is not an integer >= 1"},
		{"min_n fractional", "lock.json", strings.Replace(testLockJSON, `"min_kappa": 0.6`, `"min_kappa": 0.6,
  "min_n": 2.5`, 1), "lock.json:9: min_n 2.5 is not an integer >= 1"},
		{"min_n negative", "lock.json", strings.Replace(testLockJSON, `"min_kappa": 0.6`, `"min_kappa": 0.6, "min_n": -3`, 1), "lock.json:8: min_n -3 is not an integer >= 1"},
		{"min_n a string", "lock.json", strings.Replace(testLockJSON, `"min_kappa": 0.6`, `"min_kappa": 0.6, "min_n": "30"`, 1), `lock.json:8: "min_n" must be a number, got string`},
		{"YAML min_n a bool", "lock.yaml", "dimensions:\n  a: {construct: x, gated: true}\nbins: [0.5]\nkappa_weighting: none\nmin_kappa: 0\nmin_n: true\n", `lock.yaml:6: "min_n" must be a number, got bool`},
		{"duplicate key", "lock.json", strings.Replace(testLockJSON, `"min_kappa": 0.6`, `"min_kappa": 0.6, "min_kappa": 0.1`, 1), `lock.json:8: duplicate key "min_kappa" at column 21`},
		{"missing min_kappa", "lock.json", strings.Replace(testLockJSON, `,
  "min_kappa": 0.6`, "", 1), `lock.json:1: the lock has no "min_kappa"`},
		{"bins not ascending", "lock.json", strings.Replace(testLockJSON, `[0.34, 0.67]`, "[0.67,\n 0.34]", 1), "lock.json:7: bins must be strictly ascending: bins[1] = 0.34 follows 0.67"},
		{"bins equal", "lock.json", strings.Replace(testLockJSON, `[0.34, 0.67]`, "[0.5, 0.5]", 1), "lock.json:6: bins must be strictly ascending: bins[1] = 0.5 follows 0.5"},
		{"bin edge above 1", "lock.json", strings.Replace(testLockJSON, `0.67]`, "1.5]", 1), "lock.json:6: bins[1] = 1.5 is outside [0,1]"},
		{"no edges", "lock.json", strings.Replace(testLockJSON, `[0.34, 0.67]`, "[]", 1), `lock.json:6: "bins" needs at least one edge (two bins)`},
		{"bin edge a string", "lock.json", strings.Replace(testLockJSON, `0.34,`, `"0.34",`, 1), "lock.json:6: bins[0] must be a number, got string"},
		{"unknown weighting", "lock.json", strings.Replace(testLockJSON, `"quadratic"`, `"cubic"`, 1), `lock.json:7: kappa_weighting "cubic" is not one of none, linear, quadratic`},
		{"min_kappa out of range", "lock.json", strings.Replace(testLockJSON, `"min_kappa": 0.6`, `"min_kappa": 1.2`, 1), "lock.json:8: min_kappa 1.2 is outside [-1,1]"},
		{"min_kappa a string", "lock.json", strings.Replace(testLockJSON, `"min_kappa": 0.6`, `"min_kappa": "0.6"`, 1), `lock.json:8: "min_kappa" must be a number, got string`},
		{"gated missing", "lock.json", strings.Replace(testLockJSON, `, "gated": true`, ``, 1), `lock.json:3: dimension "groundedness" has no gated (true or false)`},
		{"gated a string", "lock.json", strings.Replace(testLockJSON, `"gated": true`, `"gated": "yes"`, 1), `lock.json:3: dimension "groundedness": gated must be true or false, got string`},
		{"empty construct", "lock.json", strings.Replace(testLockJSON, `"support"`, `""`, 1), `lock.json:3: dimension "groundedness": construct must be a non-empty string`},
		{"unknown dimension key", "lock.json", strings.Replace(testLockJSON, `"gated": true`, `"gated": true, "weight": 2`, 1), `lock.json:3: dimension "groundedness": unknown key "weight" (allowed: construct, gated, carried_over, definition)`},
		{"definition empty", "lock.json", strings.Replace(testLockJSON, `"gated": true`, `"gated": true, "definition": " "`, 1), `lock.json:3: dimension "groundedness": definition must be a non-empty string (the construct's definition, frozen with the lock)`},
		{"definition a list", "lock.json", strings.Replace(testLockJSON, `"gated": true`, `"gated": true, "definition": ["x"]`, 1), `lock.json:3: dimension "groundedness": definition must be a non-empty string (the construct's definition, frozen with the lock)`},
		// The owner and the panel adoption (ADR-0028).
		{"owner without a panel", "lock.json", strings.Replace(testLockJSON, `"min_kappa": 0.6`, `"min_kappa": 0.6, "owner": "pat"`, 1), `lock.json:8: "owner" names who adjudicates a rater panel: it needs "raters": "panel"`},
		{"owner empty", "lock.json", strings.Replace(testLockJSON, `"min_kappa": 0.6`, `"min_kappa": 0.6, "raters": "panel", "owner": ""`, 1), `lock.json:8: "owner" must be a non-empty string (the owner's rater id)`},
		{"adoption without a panel", "lock.json", strings.Replace(testLockJSON, `"min_kappa": 0.6`, `"min_kappa": 0.6, "panel_adoption": {"reason": "r"}`, 1), `lock.json:8: "panel_adoption" records the move to a rater panel: it needs "raters": "panel"`},
		{"adoption without an owner", "lock.json", strings.Replace(testLockJSON, `"min_kappa": 0.6`, `"min_kappa": 0.6, "raters": "panel", "panel_adoption": {"reason": "r"}`, 1), `lock.json:8: "panel_adoption" needs "owner": the rater id of the owner, whose single-rater labels the panel replaces`},
		{"adoption without a reason", "lock.json", strings.Replace(testLockJSON, `"min_kappa": 0.6`, `"min_kappa": 0.6, "raters": "panel", "owner": "pat",
  "panel_adoption": {"carried_over": []}`, 1), `lock.json:9: panel_adoption has no reason: the adoption is recorded with why it was made`},
		{"adoption a string", "lock.json", strings.Replace(testLockJSON, `"min_kappa": 0.6`, `"min_kappa": 0.6, "raters": "panel", "owner": "pat", "panel_adoption": "yes"`, 1), `lock.json:8: "panel_adoption" must be an object with reason and carried_over, got string`},
		{"adoption unknown key", "lock.json", strings.Replace(testLockJSON, `"min_kappa": 0.6`, `"min_kappa": 0.6, "raters": "panel", "owner": "pat", "panel_adoption": {"reason": "r", "date": "2026"}`, 1), `lock.json:8: panel_adoption: unknown key "date" (allowed: reason, carried_over)`},
		{"adoption carries over an unknown dimension", "lock.json", strings.Replace(testLockJSON, `"min_kappa": 0.6`, `"min_kappa": 0.6, "raters": "panel", "owner": "pat", "panel_adoption": {"reason": "r", "carried_over": ["relevance"]}`, 1), `lock.json:8: panel_adoption: carried_over names "relevance", which is not a dimension of the lock (faithfulness, groundedness)`},
		{"adoption carries over a dimension not carried over", "lock.json", strings.Replace(testLockJSON, `"min_kappa": 0.6`, `"min_kappa": 0.6, "raters": "panel", "owner": "pat", "panel_adoption": {"reason": "r", "carried_over": ["groundedness"]}`, 1), `lock.json:8: panel_adoption: carried_over names "groundedness", whose "carried_over" is not true`},
		{"adoption carries over twice", "lock.yaml", "dimensions:\n  a: {construct: x, gated: true, carried_over: true}\nbins: [0.5]\nkappa_weighting: none\nmin_kappa: 0\nraters: panel\nowner: pat\npanel_adoption:\n  reason: r\n  carried_over:\n    - a\n    - a\n", `lock.yaml:12: panel_adoption: carried_over names "a" twice`},
		{"adoption reason empty", "lock.json", strings.Replace(testLockJSON, `"min_kappa": 0.6`, `"min_kappa": 0.6, "raters": "panel", "owner": "pat", "panel_adoption": {"reason": ""}`, 1), `lock.json:8: panel_adoption: reason must be a non-empty string (why the panel was adopted)`},
		{"no dimensions", "lock.json", `{"dimensions": {}, "bins": [0.5], "kappa_weighting": "none", "min_kappa": 0}`, `lock.json:1: "dimensions" is empty`},
		{"trailing data", "lock.json", testLockJSON + "{}\n", "lock.json:10: malformed JSON: unexpected character '{' after top-level value at column 1 (a lock whose name ends in .json is read as JSON)"},
		// YAML syntax errors carry the line the YAML parser reports (for an unclosed
		// flow sequence, the line before its start).
		{"YAML syntax", "lock.yaml", "dimensions:\n  a: {construct: x, gated: true}\nbins: [0.5\n", "lock.yaml:2: malformed YAML: did not find expected ',' or ']'"},
		{"YAML bad edge", "lock.yml", "dimensions:\n  a: {construct: x, gated: true}\nbins:\n  - 0.5\n  - 0.2\nkappa_weighting: none\nmin_kappa: 0\n", "lock.yml:5: bins must be strictly ascending: bins[1] = 0.2 follows 0.5"},
		{"YAML duplicate key", "lock.yaml", "min_kappa: 0\nmin_kappa: 1\n", `lock.yaml:2: duplicate key "min_kappa" at column 1`},
		{"empty YAML", "lock.yaml", "", "lock.yaml: the lock is empty"},
		{"too many edges", "lock.json", strings.Replace(testLockJSON, `[0.34, 0.67]`, "["+strings.Repeat("0.5, ", 255)+"0.6]", 1), `lock.json:6: "bins" has 256 edges; at most 255 are allowed`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadLock([]byte(tt.data), tt.file)
			require.Error(t, err)
			var de *input.Error
			require.ErrorAs(t, err, &de)
			assert.Equal(t, tt.want, err.Error())
		})
	}
}

func TestReadLabels(t *testing.T) {
	lock := testLock(t)
	human := `{"case_id": "c1", "dimension": "groundedness", "bin": 2, "construct": "support", "labeled_at": "2026-09-01T09:00:00Z", "labeler": "ana"}

{"case_id": "c2", "dimension": "groundedness", "score": 0.34, "construct": "support", "labeled_at": "2026-09-01T11:00:00+02:00"}
{"case_id": "c1", "dimension": "faithfulness", "score": 0.1, "construct": "contradiction-only", "labeled_at": "2026-09-01T09:00:00.5Z"}
`
	read, err := ReadLabels(context.Background(), strings.NewReader("\xef\xbb\xbf"+human), "human.jsonl", HumanSide, lock)
	require.NoError(t, err)
	ls := read.All()
	require.Len(t, ls, 3)
	assert.Equal(t, Label{File: "human.jsonl", Line: 1, Side: HumanSide, CaseID: "c1", Dimension: "groundedness",
		Bin: 2, HasBin: true, Construct: "support", At: time.Date(2026, 9, 1, 9, 0, 0, 0, time.UTC)}, ls[0])
	assert.Equal(t, 3, ls[1].Line, "blank lines count")
	assert.Equal(t, 1, ls[1].Bin, "an edge belongs to the bin above it")
	assert.True(t, ls[1].At.Equal(time.Date(2026, 9, 1, 9, 0, 0, 0, time.UTC)), "offsets are honoured")
	assert.Equal(t, 0, ls[2].Bin)

	// A panel: rater ids, several raters per case, the owner's adjudication.
	panel := `{"case_id": "c1", "dimension": "groundedness", "bin": 2, "construct": "support", "labeled_at": "2026-09-01T09:00:00Z", "rater": "ana"}
{"case_id": "c1", "dimension": "groundedness", "bin": 1, "construct": "support", "labeled_at": "2026-09-01T09:00:00Z", "rater": "bo"}
{"case_id": "c1", "dimension": "groundedness", "bin": 1, "construct": "support", "labeled_at": "2026-09-02T09:00:00Z", "rater": "ana", "adjudication": true}
{"case_id": "c1", "dimension": "groundedness", "bin": 1, "construct": "support", "labeled_at": "2026-09-02T09:00:00Z", "rater": "cy", "adjudication": false}
`
	read, err = ReadLabels(context.Background(), strings.NewReader(panel), "human.jsonl", HumanSide, lock)
	require.NoError(t, err)
	ps := read.All()
	require.Len(t, ps, 4)
	assert.Equal(t, []string{"ana", "bo", "ana", "cy"}, []string{ps[0].Rater, ps[1].Rater, ps[2].Rater, ps[3].Rater})
	assert.Equal(t, []bool{false, false, true, false}, []bool{ps[0].Adjudication, ps[1].Adjudication, ps[2].Adjudication, ps[3].Adjudication})

	judge := `{"case_id": "c1", "dimension": "groundedness", "score": 1, "construct": "support", "judged_at": "2026-10-01T09:00:00Z"}`
	read, err = ReadLabels(context.Background(), strings.NewReader(judge), "judge.jsonl", JudgeSide, lock)
	require.NoError(t, err)
	js := read.All()
	require.Len(t, js, 1)
	assert.Equal(t, 2, js[0].Bin)
	assert.True(t, js[0].HasScore)

	// Without a lock, dimensions are not checked and bins are not computed.
	read, err = ReadLabels(context.Background(), strings.NewReader(strings.Replace(judge, "groundedness", "other", 1)), "judge.jsonl", JudgeSide, nil)
	require.NoError(t, err)
	js = read.All()
	assert.False(t, js[0].HasBin)
}

func TestReadLabelsErrors(t *testing.T) {
	const ok = `{"case_id": "c1", "dimension": "groundedness", "score": 0.5, "construct": "support", "labeled_at": "2026-09-01T09:00:00Z"}`
	const okJudge = `{"case_id": "c1", "dimension": "groundedness", "score": 0.5, "construct": "support", "judged_at": "2026-09-01T09:00:00Z"}`
	repl := func(old, new string) string { return ok + "\n" + strings.Replace(ok, old, new, 1) + "\n" }
	tests := []struct {
		name string
		side LabelSide
		data string
		want string
	}{
		{"malformed JSON", HumanSide, ok + "\n{\"case_id\": \n", "f.jsonl:2: malformed JSON: unexpected end of line looking for a value at column 13"},
		{"not an object", HumanSide, "[1]\n", "f.jsonl:1: a human label must be a JSON object, got array"},
		{"duplicate case and dimension", HumanSide, ok + "\n\n" + ok + "\n", `f.jsonl:3: duplicate label for case "c1", dimension "groundedness" (first on line 1)`},
		{"score above 1", HumanSide, repl(`0.5`, `1.5`), "f.jsonl:2: score 1.5 is outside [0,1]"},
		{"negative score", HumanSide, repl(`0.5`, `-0.1`), "f.jsonl:2: score -0.1 is outside [0,1]"},
		{"score a string", HumanSide, repl(`0.5`, `"0.5"`), `f.jsonl:2: field "score" must be a number in [0,1], got string`},
		{"score and bin", HumanSide, repl(`"score": 0.5`, `"score": 0.5, "bin": 1`), `f.jsonl:2: human label has both "score" and "bin"; give one`},
		{"neither score nor bin", HumanSide, repl(`"score": 0.5, `, ``), `f.jsonl:2: human label has neither "score" nor "bin"`},
		{"bin out of range", HumanSide, repl(`"score": 0.5`, `"bin": 3`), "f.jsonl:2: bin 3 is out of range: the lock has 3 bins (0..2)"},
		{"bin fractional", HumanSide, repl(`"score": 0.5`, `"bin": 1.5`), "f.jsonl:2: bin 1.5 is not a non-negative integer"},
		{"bin negative", HumanSide, repl(`"score": 0.5`, `"bin": -1`), "f.jsonl:2: bin -1 is not a non-negative integer"},
		{"unknown dimension", HumanSide, repl(`groundedness`, `relevance`), `f.jsonl:2: dimension "relevance" is not in the lock lock.json (lock dimensions: faithfulness, groundedness)`},
		{"missing construct", HumanSide, repl(`"construct": "support", `, ``), `f.jsonl:2: human label has no "construct"`},
		{"empty case id", HumanSide, repl(`"c1"`, `""`), `f.jsonl:2: field "case_id" is empty`},
		{"case id a number", HumanSide, repl(`"c1"`, `7`), `f.jsonl:2: field "case_id" must be a string, got number`},
		{"missing labeled_at", HumanSide, repl(`"labeled_at"`, `"judged_at"`), `f.jsonl:2: human label has no "labeled_at"`},
		{"bad timestamp", HumanSide, repl(`2026-09-01T09:00:00Z`, `2026-09-01 09:00`), `f.jsonl:2: labeled_at "2026-09-01 09:00" is not an RFC 3339 timestamp`},
		{"timestamp without zone", HumanSide, repl(`2026-09-01T09:00:00Z`, `2026-09-01T09:00:00`), `f.jsonl:2: labeled_at "2026-09-01T09:00:00" is not an RFC 3339 timestamp`},
		{"duplicate key", HumanSide, repl(`"score": 0.5`, `"score": 0.5, "score": 0.9`), `f.jsonl:2: duplicate key "score" at column 62`},
		{"judge gives a bin", JudgeSide, okJudge + "\n" + strings.Replace(okJudge, `"score": 0.5`, `"bin": 1`, 1), `f.jsonl:2: a judge score gives "score", not "bin"`},
		{"judge without score", JudgeSide, strings.Replace(okJudge, `"score": 0.5, `, ``, 1), `f.jsonl:1: judge label has no "score"`},
		{"judge without judged_at", JudgeSide, ok, `f.jsonl:1: judge label has no "judged_at"`},
		{"duplicate rater", HumanSide, repl(`"score": 0.5`, `"score": 0.5, "rater": "ana"`) + strings.Replace(ok, `"score": 0.5`, `"score": 0.9, "rater": "ana"`, 1), `f.jsonl:3: duplicate label for case "c1", dimension "groundedness", rater "ana" (first on line 2)`},
		{"duplicate adjudication", HumanSide, repl(`"score": 0.5`, `"score": 0.5, "rater": "o", "adjudication": true`) + strings.Replace(ok, `"score": 0.5`, `"score": 0.9, "adjudication": true, "rater": "o"`, 1), `f.jsonl:3: duplicate adjudication by rater "o" for case "c1", dimension "groundedness" (first on line 2)`},
		{"empty rater", HumanSide, repl(`"score": 0.5`, `"score": 0.5, "rater": " "`), `f.jsonl:2: field "rater" is empty`},
		// Issue 33 item 15: ids that look like "ana" but are other bytes are refused,
		// naming the normal form (they counted as raters other than "ana").
		{"rater with a leading space", HumanSide, repl(`"score": 0.5`, `"score": 0.5, "rater": " ana"`), `f.jsonl:2: rater id " ana" differs from its normal form "ana" only by white space at its ends, format or control characters (such as U+200B) or a decomposed accent: write "ana" (ids that look the same would count as different raters)`},
		{"rater with a zero-width space", HumanSide, repl(`"score": 0.5`, `"score": 0.5, "rater": "ana\u200b"`), `f.jsonl:2: rater id "ana\u200b" differs from its normal form "ana" only by white space at its ends, format or control characters (such as U+200B) or a decomposed accent: write "ana" (ids that look the same would count as different raters)`},
		{"rater with a raw zero-width joiner", HumanSide, repl(`"score": 0.5`, "\"score\": 0.5, \"rater\": \"a\u200dna\""), `f.jsonl:2: rater id "a\u200dna" differs from its normal form "ana" only by white space at its ends, format or control characters (such as U+200B) or a decomposed accent: write "ana" (ids that look the same would count as different raters)`},
		{"rater decomposed", HumanSide, repl(`"score": 0.5`, `"score": 0.5, "rater": "Jose\u0301"`), `f.jsonl:2: rater id "Jose\u0301" differs from its normal form "Jos\u00e9" only by white space at its ends, format or control characters (such as U+200B) or a decomposed accent: write "Jos\u00e9" (ids that look the same would count as different raters)`},
		{"rater with a tab inside", HumanSide, repl(`"score": 0.5`, `"score": 0.5, "rater": "a\tna"`), `f.jsonl:2: rater id "a\tna" differs from its normal form "ana" only by white space at its ends, format or control characters (such as U+200B) or a decomposed accent: write "ana" (ids that look the same would count as different raters)`},
		{"rater a number", HumanSide, repl(`"score": 0.5`, `"score": 0.5, "rater": 7`), `f.jsonl:2: field "rater" must be a string, got number`},
		{"misspelt rater", HumanSide, repl(`"score": 0.5`, `"score": 0.5, "rater_id": "ana"`), `f.jsonl:2: unknown field "rater_id": a human label's rater fields are "rater" (the rater id) and "adjudication" (true on the owner's adjudication)`},
		{"misspelt adjudication", HumanSide, repl(`"score": 0.5`, `"score": 0.5, "Adjudicated": true`), `f.jsonl:2: unknown field "Adjudicated": a human label's rater fields are "rater" (the rater id) and "adjudication" (true on the owner's adjudication)`},
		{"adjudication not a bool", HumanSide, repl(`"score": 0.5`, `"score": 0.5, "rater": "o", "adjudication": "yes"`), `f.jsonl:2: field "adjudication" must be true or false, got string`},
		{"adjudication without rater", HumanSide, repl(`"score": 0.5`, `"score": 0.5, "adjudication": true`), `f.jsonl:2: an adjudication names its rater: add "rater" (the owner who adjudicated)`},
		{"judge with a rater", JudgeSide, strings.Replace(okJudge, `"score": 0.5`, `"score": 0.5, "rater": "gpt"`, 1), `f.jsonl:1: a judge score has no "rater" (rater ids are for human labels)`},
		{"judge adjudication", JudgeSide, strings.Replace(okJudge, `"score": 0.5`, `"score": 0.5, "adjudication": false`, 1), `f.jsonl:1: a judge score has no "adjudication" (adjudications are human labels)`},
	}
	lock := testLock(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadLabels(context.Background(), strings.NewReader(tt.data), "f.jsonl", tt.side, lock)
			require.Error(t, err)
			var de *input.Error
			require.ErrorAs(t, err, &de)
			assert.Equal(t, tt.want, err.Error())
		})
	}
}

func FuzzReadLabels(f *testing.F) {
	f.Add([]byte(`{"case_id": "c1", "dimension": "groundedness", "score": 0.5, "construct": "support", "labeled_at": "2026-09-01T09:00:00Z"}`), false)
	f.Add([]byte(`{"case_id": "c1", "dimension": "faithfulness", "bin": 2, "construct": "x", "labeled_at": "2026-09-01T09:00:00Z"}`+"\n\n{}"), false)
	f.Add([]byte(`{"case_id": "c1", "dimension": "groundedness", "score": 1e400, "construct": "support", "judged_at": "2026-09-01T09:00:00+01:00"}`), true)
	f.Add([]byte("{\"case_id\": [1, {\"a\": null}]}\n\x00"), true)
	f.Add([]byte(`{"case_id": "c1", "dimension": "groundedness", "bin": 1, "construct": "support", "labeled_at": "2026-09-01T09:00:00Z", "rater": "ana"}`+"\n"+
		`{"case_id": "c1", "dimension": "groundedness", "bin": 2, "construct": "support", "labeled_at": "2026-09-01T09:00:00Z", "rater": "bo"}`+"\n"+
		`{"case_id": "c1", "dimension": "groundedness", "bin": 2, "construct": "support", "labeled_at": "2026-09-02T09:00:00Z", "rater": "owner", "adjudication": true}`), false)
	f.Add([]byte(`{"case_id": "c1", "dimension": "groundedness", "bin": 1, "construct": "support", "labeled_at": "2026-09-01T09:00:00Z", "rater_id": "ana"}`), false)
	// Escaped strings: the case id and timestamp are copied out of the
	// unquoting buffer before the next string overwrites it; the ids are one.
	f.Add([]byte(`{"case_id": "c\u0031", "labeled_at": "2026-09-01T09:00:00\u005a", "dimension": "groundedn\u0065ss", "score": 0.5, "construct": "supp\u006frt"}`+"\n"+
		`{"case_id": "c1", "dimension": "groundedness", "score": 0.5, "construct": "support", "labeled_at": "2026-09-01T09:00:00Z"}`), false)
	lock := testLock(f)
	f.Fuzz(func(t *testing.T, data []byte, judge bool) {
		side := HumanSide
		if judge {
			side = JudgeSide
		}
		read, err := ReadLabels(context.Background(), strings.NewReader(string(data)), "f.jsonl", side, lock)
		ls := read.All()
		sameAsReference(t, data, side, lock, ls, err)
		if err != nil {
			var de *input.Error
			if !errors.As(err, &de) {
				t.Fatalf("error is %T, not *dataset.Error: %v", err, err)
			}
			if !strings.HasPrefix(err.Error(), "f.jsonl:") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		seen := map[[4]string]bool{}
		for _, l := range ls {
			if l.CaseID == "" || l.Dimension == "" || l.Construct == "" || l.At.IsZero() {
				t.Fatalf("accepted an incomplete label: %+v", l)
			}
			if !l.HasBin || l.Bin < 0 || l.Bin >= lock.NumBins() {
				t.Fatalf("bin out of range: %+v", l)
			}
			if l.HasScore && (l.Score < 0 || l.Score > 1 || l.Bin != lock.BinOf(l.Score)) {
				t.Fatalf("bad score: %+v", l)
			}
			if _, ok := lock.Dimensions[l.Dimension]; !ok {
				t.Fatalf("unknown dimension accepted: %+v", l)
			}
			if l.Adjudication && l.Rater == "" || strings.TrimSpace(l.Rater) == "" && l.Rater != "" || side == JudgeSide && (l.Rater != "" || l.Adjudication) {
				t.Fatalf("bad rater fields accepted: %+v", l)
			}
			k := [4]string{l.CaseID, l.Dimension, l.Rater, fmt.Sprint(l.Adjudication)}
			if seen[k] {
				t.Fatalf("duplicate accepted: %+v", l)
			}
			seen[k] = true
		}
	})
}

func FuzzReadLock(f *testing.F) {
	f.Add([]byte(testLockJSON), false)
	f.Add([]byte("dimensions:\n  a: {construct: x, gated: true}\nbins: [0.5]\nkappa_weighting: none\nmin_kappa: 0\n"), true)
	f.Add([]byte(`{"bins": [0.1, 0.1], "dimensions": {"a": {}}}`), false)
	f.Add([]byte("a: &x [1]\nb: *x\n"), true)
	f.Add([]byte("dimensions:\n  a: {construct: x, gated: true, carried_over: true}\nbins: [0.5]\nkappa_weighting: none\nmin_kappa: 0\nraters: panel\n"), true)
	f.Add([]byte("dimensions:\n  a: {construct: x, gated: true, carried_over: true, definition: d}\nbins: [0.5]\nkappa_weighting: none\nmin_kappa: 0\nraters: panel\nowner: o\npanel_adoption: {reason: r, carried_over: [a]}\n"), true)
	f.Fuzz(func(t *testing.T, data []byte, yaml bool) {
		name := "lock.json"
		if yaml {
			name = "lock.yaml"
		}
		l, err := ReadLock(data, name)
		if err != nil {
			var de *input.Error
			if !errors.As(err, &de) {
				t.Fatalf("error is %T, not *dataset.Error: %v", err, err)
			}
			return
		}
		if len(l.Dimensions) == 0 || len(l.Bins) == 0 {
			t.Fatalf("accepted a lock without dimensions or bins: %+v", l)
		}
		for i, e := range l.Bins {
			if !(e >= 0 && e <= 1) || (i > 0 && e <= l.Bins[i-1]) {
				t.Fatalf("bad edges accepted: %v", l.Bins)
			}
		}
		if !(l.MinKappa >= -1 && l.MinKappa <= 1) {
			t.Fatalf("min_kappa accepted: %v", l.MinKappa)
		}
		switch l.KappaWeighting {
		case WeightingNone, WeightingLinear, WeightingQuadratic:
		default:
			t.Fatalf("weighting accepted: %q", l.KappaWeighting)
		}
		if l.Raters != RatersSingle && l.Raters != RatersPanel {
			t.Fatalf("raters accepted: %q", l.Raters)
		}
		if l.Owner != "" && l.Raters != RatersPanel {
			t.Fatalf("an owner without a panel accepted: %+v", l)
		}
		if a := l.Adoption; a != nil {
			if l.Owner == "" || a.Reason == "" {
				t.Fatalf("an adoption without an owner or a reason accepted: %+v", l)
			}
			for _, n := range a.CarriedOver {
				if !l.Dimensions[n].CarriedOver {
					t.Fatalf("an adoption carrying over %q, which the lock does not, accepted: %+v", n, l)
				}
			}
		}
		for n, d := range l.Dimensions {
			if n == "" || d.Construct == "" {
				t.Fatalf("empty dimension or construct accepted: %q %+v", n, d)
			}
		}
	})
}

// readLabelsRef is the reader before the scanner: every line through the tree
// parser, each (case_id, dimension) checked against a map as it comes. The
// reader must give the same labels and the same first error.
func readLabelsRef(data []byte, file string, side LabelSide, lock *Lock) ([]Label, error) {
	var p jsonpos.Parser
	var out []Label
	seen := map[[4]string]int{}
	for n, b := range bytes.Split(data, []byte("\n")) {
		line := n + 1
		if line == 1 {
			b = bytes.TrimPrefix(b, input.BOM)
		}
		if input.IsBlank(b) {
			continue
		}
		l, err := parseLabelLine(&p, b, file, line, side)
		if err != nil {
			return nil, err
		}
		if lock != nil {
			if err := lock.checkLabel(&l); err != nil {
				return nil, err
			}
		}
		k := [4]string{l.CaseID, l.Dimension, l.Rater, fmt.Sprint(l.Adjudication)}
		if first, dup := seen[k]; dup {
			switch {
			case l.Adjudication:
				return nil, input.Errorf(file, line, "duplicate adjudication by rater %q for case %q, dimension %q (first on line %d)", l.Rater, l.CaseID, l.Dimension, first)
			case l.Rater != "":
				return nil, input.Errorf(file, line, "duplicate label for case %q, dimension %q, rater %q (first on line %d)", l.CaseID, l.Dimension, l.Rater, first)
			}
			return nil, input.Errorf(file, line, "duplicate label for case %q, dimension %q (first on line %d)", l.CaseID, l.Dimension, first)
		}
		seen[k] = line
		out = append(out, l)
	}
	return out, nil
}

func sameAsReference(t *testing.T, data []byte, side LabelSide, lock *Lock, ls []Label, err error) {
	t.Helper()
	if bytes.Contains(data, []byte("\r")) || len(data) > 1<<20 {
		return // line splitting differs from bufio's (CR, long lines): not compared
	}
	want, wantErr := readLabelsRef(data, "f.jsonl", side, lock)
	require.Equal(t, fmt.Sprint(wantErr), fmt.Sprint(err), "%q", data)
	require.Len(t, ls, len(want))
	for i := range want {
		w, g := want[i], ls[i]
		require.True(t, w.At.Equal(g.At), "%q: %v vs %v", data, w.At, g.At)
		_, wo := w.At.Zone()
		_, gotOff := g.At.Zone()
		require.Equal(t, wo, gotOff)
		w.At, g.At = time.Time{}, time.Time{}
		require.Equal(t, w, g, "%q", data)
	}
}

// TestReadLabelsMatchesReference reads random label files (valid lines, near
// misses of every field, blank lines, duplicates) and compares labels and errors
// with the line-by-line reader.
func TestReadLabelsMatchesReference(t *testing.T) {
	lock := testLock(t)
	rng := rand.New(rand.NewPCG(9, 10))
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	for range 600 {
		var sb strings.Builder
		side := HumanSide
		if rng.IntN(2) == 0 {
			side = JudgeSide
		}
		for range 1 + rng.IntN(12) {
			fields := []string{
				`"case_id": ` + pick(`"c1"`, `"c2"`, `"c3"`, `"\u0063\u0034"`, `" "`, `""`, `7`, `"c\ud800"`, `"c10"`, `"c9"`, `"c22"`),
				`"dimension": ` + pick(`"groundedness"`, `"faithfulness"`, `"other"`, `null`),
				`"construct": ` + pick(`"support"`, `"x"`, `""`, `["support"]`),
				pick(`"labeled_at"`, `"judged_at"`) + `: ` + pick(`"2026-09-01T09:00:00Z"`, `"2026-09-01T11:00:00+02:00"`, `"2026-09-01"`, `"  "`, `5`),
				pick(`"score": `+pick(`0.5`, `1`, `0`, `1.5`, `-0.1`, `1e400`, `"0.5"`, `0.3333333333333333333`, `2e-1`), `"bin": `+pick(`0`, `2`, `3`, `1.5`, `-1`, `1e1`), ``),
				pick(``, `"labeler": {"a": [1, 2]}`, `"score": 0.25`, `"extra": "\n"`),
				pick(``, ``, `"rater": "ana"`, `"rater": "bo"`, `"rater": ""`, `"rater": " "`, `"rater": 3`, `"rater_id": "ana"`, `"Raters": []`),
				pick(``, ``, `"adjudication": true`, `"adjudication": false`, `"adjudication": 1`, `"adjudicated": true`),
			}
			rng.Shuffle(len(fields), func(i, j int) { fields[i], fields[j] = fields[j], fields[i] })
			var kept []string
			for _, f := range fields {
				if f != "" && rng.IntN(12) > 0 {
					kept = append(kept, f)
				}
			}
			sep := pick(", ", ",", " , ")
			sb.WriteString(pick("", " ") + "{" + strings.Join(kept, sep) + "}" + pick("", " ", "x") + "\n")
			if rng.IntN(8) == 0 {
				sb.WriteString("\n")
			}
		}
		data := []byte(sb.String())
		read, err := ReadLabels(context.Background(), bytes.NewReader(data), "f.jsonl", side, lock)
		sameAsReference(t, data, side, lock, read.All(), err)
	}
}

// A labels file is read into a slice sized from the file once (no growth by
// copies); a reader that is not a regular file starts small.
func TestReadLabelsFileCapacity(t *testing.T) {
	lock := testLock(t)
	var sb strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&sb, `{"case_id": "c%05d", "dimension": "groundedness", "score": 0.5, "construct": "support", "labeled_at": "2026-09-01T09:00:00Z"}`+"\n", i)
	}
	path := filepath.Join(t.TempDir(), "human.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(sb.String()), 0o644))
	ls, err := ReadLabelsFile(context.Background(), path, HumanSide, lock)
	require.NoError(t, err)
	require.Equal(t, 3000, ls.Len())
	assert.GreaterOrEqual(t, cap(ls.ids), 3000)
	assert.LessOrEqual(t, cap(ls.ids), 3000+3000/16+16)
	assert.Equal(t, 16, capacityHint(strings.NewReader(sb.String()), 120))
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	st, err := f.Stat()
	require.NoError(t, err)
	n := int(st.Size()) / 64
	assert.Equal(t, n+n/16+16, capacityHint(f, 10), "a short first line counts as 64 bytes")
}

// Rater ids in their normal form are read as they are (inner spaces, accents
// precomposed, scripts whose marks have no precomposed form); the others are
// refused with their normal form.
func TestRaterIDNormalForm(t *testing.T) {
	for _, id := range []string{"ana", "Ana María", "Jos\u00e9", "\u0926\u0947\u0935", "ana-2", "o'brien", "李"} {
		assert.True(t, raterIDNormal(id), "%q", id)
		assert.Equal(t, id, NormalRaterID(id))
	}
	for id, want := range map[string]string{" ana": "ana", "ana ": "ana", "ana\u200b": "ana", "\ufeffana": "ana", "a\u202ena": "ana", "Jose\u0301": "Jos\u00e9", "a\x01na": "ana"} {
		assert.False(t, raterIDNormal(id), "%q", id)
		assert.Equal(t, want, NormalRaterID(id), "%q", id)
	}
}
