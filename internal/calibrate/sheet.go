package calibrate

import (
	"context"
	"fmt"
	"time"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/labelfile"
	"github.com/retrieval-gate/retrieval-gate/internal/input/trecfile"
)

// SheetDimension is the lock dimension of the labels read from a human
// labelling sheet (calibrate --human-sheet): the judge's relevance grades.
const SheetDimension = "relevance"

// sheetTimes are the timestamps a sheet's labels get: a sheet never shows the
// judge's grade (judge --human-sample writes none), so its labels are blind by
// construction and every human label is dated before every judge label.
var sheetTimes = [2]time.Time{time.Unix(0, 0).UTC(), time.Unix(1, 0).UTC()}

// SheetLabels turns a filled-in labelling sheet and the judge's qrels (TREC or
// JSONL, as judge writes them) into calibrate's labels: one human label per
// graded row and one judge label per row the qrels grade, case id
// "QUERY/DOC", dimension SheetDimension with the lock's construct, score =
// grade / 3 on both sides (binned by the lock's edges: [0.17, 0.5, 0.84] keep
// the four grades apart). A row of a query the qrels do not have is an
// *input.Error at its line; a row the qrels do not grade, or grade below 0
// (unjudged, as compare reads it), has no judge label (unpaired, human only).
func SheetLabels(ctx context.Context, lock *labelfile.Lock, sheet, qrels Reader) (human, judge []labelfile.Label, err error) {
	dim, ok := lock.Dimensions[SheetDimension]
	if !ok {
		return nil, nil, input.Errorf(lock.File, 0, "a human sheet is calibrated as the dimension %q, which the lock does not have", SheetDimension)
	}
	sh, err := labelfile.ReadSheet(ctx, sheet.R, sheet.Name)
	if err != nil {
		return nil, nil, fmt.Errorf("failed to read the human sheet: %w", err)
	}
	q, err := trecfile.ParseQrels(ctx, qrels.R, qrels.Name)
	if err != nil {
		return nil, nil, fmt.Errorf("failed to read the judge's qrels: %w", err)
	}
	const top = float64(labelfile.MaxSheetGrade)
	for _, row := range sh.Rows {
		qi, ok := q.QueryIndex(row.QueryID)
		if !ok {
			return nil, nil, input.Errorf(sh.File, row.Line, "query %q is not in the judge's qrels %s", row.QueryID, q.File)
		}
		id := row.QueryID + "/" + row.DocID
		h := labelfile.Label{File: sh.File, Line: row.Line, Side: labelfile.HumanSide, CaseID: id, Dimension: SheetDimension,
			Score: float64(row.Grade) / top, HasScore: true, Construct: dim.Construct, At: sheetTimes[0]}
		h.Bin, h.HasBin = lock.BinOf(h.Score), true
		human = append(human, h)
		rel, judged := q.Relevance(qi, row.DocID)
		if !judged || rel < 0 {
			// A grade below 0 is "in the pool, but unjudged", as trec_eval
			// and compare read it: no judge label, the row is unpaired.
			continue
		}
		if rel > labelfile.MaxSheetGrade {
			// compare reads a level above 3 as a level of its own (its own
			// gain); the sheet's scale stops at 3, so no bin of the lock
			// holds it apart from 3, and reading it as 3 would count a
			// disagreement as agreement.
			return nil, nil, input.Errorf(sh.File, row.Line, "the judge's grade of %s in %s is %d, above the sheet's 0-%d scale: calibrate cannot pair it with a human grade",
				id, q.File, rel, labelfile.MaxSheetGrade)
		}
		s := float64(rel) / top
		j := labelfile.Label{File: q.File, Line: 0, Side: labelfile.JudgeSide, CaseID: id, Dimension: SheetDimension,
			Score: s, HasScore: true, Construct: dim.Construct, At: sheetTimes[1]}
		j.Bin, j.HasBin = lock.BinOf(s), true
		judge = append(judge, j)
	}
	return human, judge, nil
}
