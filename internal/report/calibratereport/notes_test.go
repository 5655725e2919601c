package calibratereport

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/calibrate"
	"github.com/retrieval-gate/retrieval-gate/internal/input/labelfile"
)

// Each note code reads as the sentence the reports printed before notes became
// data; a code without a row here, or that NoteText does not word, fails.
func TestNoteText(t *testing.T) {
	tests := []struct {
		name string
		note calibrate.Note
		want string
	}{
		{"no pairs", calibrate.Note{Code: calibrate.NoteNoPairs}, "no paired cases: kappa is undefined"},
		{"kappa undefined", calibrate.Note{Code: calibrate.NoteKappaUndefined},
			"kappa is undefined: both sides put every paired case in the same bin, so chance agreement is 1"},
		{"unpaired", calibrate.Note{Code: calibrate.NoteUnpaired, Human: 3, Judge: 2},
			"3 human label(s) without a judge score and 2 judge score(s) without a human label are not in n"},
		{"too many unpaired", calibrate.Note{Code: calibrate.NoteTooManyUnpaired, N: 3, Spec: "5%", Limit: 1, Of: 33},
			"3 unpaired label(s) exceed --max-unpaired 5% (at most 1 of the 33 labelled cases): a label without its partner could hide a disagreement, so the gate fails"},
		{"construct mismatch", calibrate.Note{Code: calibrate.NoteConstructMismatch, Construct: "support",
			HumanConstructs: []string{"support", "support-v2"}, JudgeConstructs: nil},
			`construct mismatch: the lock measures "support", the human labels declare "support", "support-v2" and the judge scores declare nothing (no labels); the two sides do not measure the same thing, so their agreement is not a valid measurement`},
		{"below min_n, gated, set by the lock", calibrate.Note{Code: calibrate.NoteBelowMinN, N: 40, Limit: 50, Gated: true},
			"n = 40 paired case(s) is below the lock's min_n 50: too few to gate on, so the gate fails"},
		{"below min_n, ungated, default", calibrate.Note{Code: calibrate.NoteBelowMinN, N: 10, Limit: 30, DefaultMinN: true},
			"n = 10 paired case(s) is below min_n 30 (the default: the lock does not set min_n): too few to gate on; the dimension is not gated, so this is reported only"},
		{"kappa below, gated", calibrate.Note{Code: calibrate.NoteKappaBelow, Value: 0.6999997, Threshold: 0.7, Gated: true},
			"weighted kappa 0.6999997 is below min_kappa 0.7000000"},
		{"kappa below, ungated", calibrate.Note{Code: calibrate.NoteKappaBelow, Value: 0.41, Threshold: 0.6},
			"weighted kappa 0.410 is below min_kappa 0.600; the dimension is not gated, so this is reported only"},
		{"undefined kappa fails", calibrate.Note{Code: calibrate.NoteUndefinedFails},
			"a gated dimension with undefined kappa fails: there is no evidence of agreement"},
		{"unknown code shows the code", calibrate.Note{Code: "new_note"}, "new_note"},
	}
	covered := map[calibrate.NoteCode]bool{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, NoteText(tt.note))
		})
		covered[tt.note.Code] = true
	}
	for _, c := range calibrate.NoteCodes {
		require.True(t, covered[c], "note code %q has no row in this table", c)
		assert.NotEqual(t, string(c), NoteText(calibrate.Note{Code: c, Value: math.NaN(), Threshold: 0.6}), "NoteText does not word %q", c)
	}
}

// The lines of the lock's changes, from real locks compared (calibrate.
// LockChanges), read as the reports wrote them before changes became data; the
// git-side codes and every code are covered below.
func TestLockChangeText(t *testing.T) {
	base, err := labelfile.ReadLock([]byte(lockChangesBase), "lock.json")
	require.NoError(t, err)
	tests := []struct {
		name string
		old  string
		new  string
		want []string
	}{
		{"identical", "", "", nil},
		{"threshold lowered", `"min_kappa": 0.6`, `"min_kappa": 0.4`, []string{"min_kappa: 0.6 -> 0.4"}},
		{"bins moved", `[0.34, 0.67]`, `[0.3, 0.67]`, []string{"bins: [0.34, 0.67] -> [0.3, 0.67]"}},
		{"bin added", `[0.34, 0.67]`, `[0.25, 0.5, 0.75]`, []string{"bins: [0.34, 0.67] -> [0.25, 0.5, 0.75]"}},
		{"weighting", `"quadratic"`, `"linear"`, []string{"kappa_weighting: quadratic -> linear"}},
		{"construct", `"support"`, `"relevance"`, []string{"dimensions.groundedness.construct: support -> relevance"}},
		{"ungated", `"support", "gated": true`, `"support", "gated": false`, []string{"dimensions.groundedness.gated: true -> false"}},
		{"dimension removed", `"faithfulness": {"construct": "contradiction-only", "gated": true}`, `"answer": {"construct": "x", "gated": false}`,
			[]string{"dimensions.answer: added (construct x, gated false)", "dimensions.faithfulness: removed"}},
		{"reformatted only", "{\n  \"dimensions\"", "{\"dimensions\"", nil},
		{"min_n lowered from its default", `"min_kappa": 0.6`, `"min_kappa": 0.6, "min_n": 5`, []string{"min_n: 30 (default) -> 5"}},
		{"min_n default written out", `"min_kappa": 0.6`, `"min_kappa": 0.6, "min_n": 30`, nil},
		// The rater framing is frozen like the others (ADR-0028).
		{"single rater framing made a panel", `"min_kappa": 0.6`, `"min_kappa": 0.6, "raters": "panel"`, []string{"raters: single (default) -> panel"}},
		{"single rater framing written out", `"min_kappa": 0.6`, `"min_kappa": 0.6, "raters": "single"`, nil},
		{"carried over declared", `"support", "gated": true`, `"support", "gated": true, "carried_over": true`, []string{"dimensions.groundedness.carried_over: false -> true"}},
		{"carried over written out false", `"support", "gated": true`, `"support", "gated": true, "carried_over": false`, nil},
		{"dimension added carried over", `"faithfulness": {"construct": "contradiction-only", "gated": true}`, `"faithfulness": {"construct": "contradiction-only", "gated": true}, "x": {"construct": "y", "gated": false, "carried_over": true}`,
			[]string{"dimensions.x: added (construct y, gated false, carried over)"}},
		// The construct's definition is frozen with its name (issue 34 item 14).
		{"definition declared", `"contradiction-only", "gated": true`, `"contradiction-only", "gated": true, "definition": "fails only on a contradiction"`,
			[]string{`dimensions.faithfulness.definition: (none) -> "fails only on a contradiction"`}},
		// The owner and the panel adoption (issue 34 items 11 and 13); LockChanges
		// lists every difference, CheckLock takes out what an adoption covers.
		{"panel adopted", `"min_kappa": 0.6`, `"min_kappa": 0.6, "raters": "panel", "owner": "pat", "panel_adoption": {"reason": "ADR-0028 \"panel\""}`,
			[]string{"raters: single (default) -> panel", `owner: (none) -> "pat"`, `panel_adoption: declared (reason "ADR-0028 \"panel\"")`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cur, err := labelfile.ReadLock([]byte(strings.Replace(lockChangesBase, tt.old, tt.new, 1)), "lock.json")
			require.NoError(t, err)
			var got []string
			for _, c := range calibrate.LockChanges(base, cur) {
				got = append(got, LockChangeText(c))
			}
			assert.Equal(t, tt.want, got)
		})
	}

	covered := map[calibrate.LockChangeCode]bool{calibrate.LockSetting: true, calibrate.LockDimensionAdded: true, calibrate.LockDimensionRemoved: true}
	for _, tt := range []struct {
		change calibrate.LockChange
		want   string
	}{
		{calibrate.LockChange{Code: calibrate.LockNewFile, Ref: "HEAD~2", Path: "eval/lock.json"}, "new file: eval/lock.json does not exist at HEAD~2"},
		{calibrate.LockChange{Code: calibrate.LockNotAFile, Ref: "main", Path: "eval/lock.json"}, "the copy at main is not a valid lock (eval/lock.json is not a file there)"},
		{calibrate.LockChange{Code: calibrate.LockInvalid, Ref: "HEAD", Path: "eval/lock.json", Detail: "HEAD:eval/lock.json:1: malformed JSON"},
			"the copy at HEAD is not a valid lock (HEAD:eval/lock.json:1: malformed JSON)"},
		{calibrate.LockChange{Code: calibrate.LockSetting, Key: "dimensions.f.definition", From: "contradicted", To: "", Text: true, ToDefault: true},
			`dimensions.f.definition: "contradicted" -> (none)`},
		{calibrate.LockChange{Code: calibrate.LockSetting, Key: "panel_adoption.reason", From: "a", To: "b", Text: true},
			`panel_adoption.reason: "a" -> "b"`},
		{calibrate.LockChange{Code: calibrate.LockAdoptionDeclared, Key: "panel_adoption", From: "panel", Reason: "r", Dimensions: []string{"g", "h"}},
			`panel_adoption: declared (reason "r", carrying over g, h), but the base's raters is already panel: the adoption is the one-time move from the single-rater framing`},
		{calibrate.LockChange{Code: calibrate.LockAdoptionRemoved, Key: "panel_adoption", Reason: "r", Dimensions: []string{"g"}},
			`panel_adoption: removed (reason "r", carrying over g); a recorded adoption is frozen with the lock`},
		{calibrate.LockChange{Code: "new_change"}, "new_change"},
	} {
		assert.Equal(t, tt.want, LockChangeText(tt.change))
		covered[tt.change.Code] = true
	}
	for _, c := range calibrate.LockChangeCodes {
		require.True(t, covered[c], "lock change %q has no row in this test", c)
		assert.NotEqual(t, string(c), LockChangeText(calibrate.LockChange{Code: c}), "LockChangeText does not word %q", c)
	}
}

const lockChangesBase = `{
  "dimensions": {
    "groundedness": {"construct": "support", "gated": true},
    "faithfulness": {"construct": "contradiction-only", "gated": true}
  },
  "bins": [0.34, 0.67],
  "kappa_weighting": "quadratic",
  "min_kappa": 0.6
}
`
