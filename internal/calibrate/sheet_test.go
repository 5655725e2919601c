package calibrate

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A judge grade below 0 in --judge-qrels is "in the pool, but unjudged", as
// trec_eval reads it and as compare reads it everywhere (docs/compare.md,
// "Relevance outside 0–3"): the sheet's row has no judge label and is an
// unpaired human label (docs/calibrate.md, "One sheet for both": "a row the
// judge did not grade is an unpaired human label"), never a judge grade 0.
func TestSheetLabelsNegativeGradeIsUnjudged(t *testing.T) {
	lock := lockOf(t, `{"dimensions": {"relevance": {"construct": "relevance-4-point", "gated": true}},
 "bins": [0.17, 0.5, 0.84], "kappa_weighting": "quadratic", "min_kappa": 0.6}`)
	sheet := `{"query_id":"q1","doc_id":"a","grade":2}
{"query_id":"q1","doc_id":"b","grade":1}
{"query_id":"q1","doc_id":"c","grade":0}
{"query_id":"q2","doc_id":"a","grade":3}
`
	tests := []struct {
		name   string
		qrels  string
		judged []string // the case ids with a judge label
		bins   []int    // their judge bins
	}{
		{"every row graded", "q1 0 a 2\nq1 0 b 1\nq1 0 c 0\nq2 0 a 3\n", []string{"q1/a", "q1/b", "q1/c", "q2/a"}, []int{2, 1, 0, 3}},
		{"a row the qrels do not hold", "q1 0 a 2\nq1 0 c 0\nq2 0 a 3\n", []string{"q1/a", "q1/c", "q2/a"}, []int{2, 0, 3}},
		{"negative grades: in the pool, unjudged", "q1 0 a 2\nq1 0 b -1\nq1 0 c -2\nq2 0 a 3\n", []string{"q1/a", "q2/a"}, []int{2, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			human, judge, err := SheetLabels(context.Background(), lock,
				Reader{Name: "sheet.jsonl", R: strings.NewReader(sheet)}, Reader{Name: "judged.qrels", R: strings.NewReader(tt.qrels)})
			require.NoError(t, err)
			assert.Len(t, human, 4, "every graded row is a human label")
			var ids []string
			var bins []int
			for _, l := range judge {
				ids, bins = append(ids, l.CaseID), append(bins, l.Bin)
			}
			assert.Equal(t, tt.judged, ids)
			assert.Equal(t, tt.bins, bins)
		})
	}
}

// A judge grade above 3 is a level of its own for compare (docs/compare.md,
// "--qrels": "above 3 with its own gain"); the sheet's grades are 0-3 and
// calibrate scores both sides grade / 3 (docs/calibrate.md, "One sheet for
// both"), so a 4 was read as 3 and a human 3 against a judge 4 counted as
// agreement. It is refused at the sheet row that pairs with it, naming the
// qrels file, whatever the qrels grade elsewhere.
func TestSheetLabelsRefusesJudgeGradeAboveThree(t *testing.T) {
	lock := lockOf(t, `{"dimensions": {"relevance": {"construct": "relevance-4-point", "gated": true}},
 "bins": [0.17, 0.5, 0.84], "kappa_weighting": "quadratic", "min_kappa": 0.6}`)
	sheet := `{"query_id":"q1","doc_id":"a","grade":2}
{"query_id":"q1","doc_id":"b","grade":3}
`
	tests := []struct {
		name  string
		qrels string
		err   string // "" when accepted
	}{
		{"grades 0-3", "q1 0 a 2\nq1 0 b 3\n", ""},
		{"a 4 on a sheet row", "q1 0 a 2\nq1 0 b 4\n", `sheet.jsonl:2: the judge's grade of q1/b in judged.qrels is 4, above the sheet's 0-3 scale`},
		{"a 7 on no sheet row", "q1 0 a 2\nq1 0 b 3\nq1 0 z 7\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, judge, err := SheetLabels(context.Background(), lock,
				Reader{Name: "sheet.jsonl", R: strings.NewReader(sheet)}, Reader{Name: "judged.qrels", R: strings.NewReader(tt.qrels)})
			if tt.err == "" {
				require.NoError(t, err)
				assert.Len(t, judge, 2)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.err)
		})
	}
}
