package calibratereport

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/calibrate"
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
