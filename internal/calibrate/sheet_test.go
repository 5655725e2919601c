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
