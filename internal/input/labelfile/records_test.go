package labelfile

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLabelsRoundTrip: every label kept in Labels comes back as it was: in the
// columns (scores, bins, none of either, timestamps in UTC, Local and fixed
// zones, long ids across slabs, a line over 2³²−1) or whole in spill (another
// file or side, a bin over 65,534, more than 64 zones, more than 65,534
// names), with rater ids and adjudications (a rater code and a bit).
func TestLabelsRoundTrip(t *testing.T) {
	plus2 := time.FixedZone("", 2*3600)
	long := string(make([]byte, idSlab+5))
	var ls []Label
	base := Label{File: "h.jsonl", Side: HumanSide, Dimension: "groundedness", Construct: "support"}
	add := func(f func(l *Label)) {
		l := base
		l.Line = len(ls) + 1
		l.CaseID = fmt.Sprintf("case-%d", len(ls))
		f(&l)
		ls = append(ls, l)
	}
	add(func(l *Label) { l.Score, l.HasScore, l.At = 0.25, true, time.Date(2026, 9, 1, 9, 0, 0, 5, time.UTC) })
	add(func(l *Label) { l.Bin, l.HasBin, l.At = 3, true, time.Date(2026, 9, 1, 11, 0, 0, 0, plus2) })
	add(func(l *Label) {
		l.Score, l.HasScore, l.Bin, l.HasBin = 1, true, 2, true
		l.At = time.Date(2026, 9, 1, 11, 0, 0, 0, time.FixedZone("", 2*3600))
	})
	add(func(l *Label) { l.At = time.Date(2026, 9, 1, 9, 0, 0, 0, time.Local) })
	add(func(l *Label) { l.CaseID = long })
	add(func(l *Label) { l.CaseID = "" })
	add(func(l *Label) { l.File = "other.jsonl" })
	add(func(l *Label) { l.Side = JudgeSide })
	add(func(l *Label) { l.Line = min(math.MaxUint32+1, math.MaxInt) })
	add(func(l *Label) { l.Bin, l.HasBin = min(math.MaxInt32+1, math.MaxInt), true })
	add(func(l *Label) { l.Rater = "ana" })
	add(func(l *Label) { l.Rater, l.Adjudication = "ana", true })
	add(func(l *Label) { l.Rater = "groundedness" }) // a rater named like a dimension shares its code
	add(func(l *Label) { l.Adjudication = true })    // refused by the reader, kept all the same
	add(func(l *Label) { l.Rater, l.Adjudication, l.At = "bo", true, time.Date(2026, 9, 1, 11, 0, 0, 0, plus2) })
	add(func(l *Label) { l.Construct = "" })
	for z := range 70 {
		add(func(l *Label) { l.At = time.Date(2026, 9, 1, 0, 0, 0, 0, time.FixedZone("", 60*z)) })
	}
	got := FromLabels(ls)
	require.Equal(t, len(ls), got.Len())
	all := got.All()
	for i, want := range ls {
		g := got.Label(i)
		require.Equal(t, want, g, "label %d", i)
		require.Equal(t, want, all[i], "label %d", i)
		require.Equal(t, want.CaseID, got.CaseID(i))
		require.Equal(t, want.Dimension, got.Dimension(i))
		require.Equal(t, want.Construct, got.Construct(i))
		require.Equal(t, want.Bin, got.Bin(i))
		require.Equal(t, want.Rater, got.Rater(i))
		require.Equal(t, want.Adjudication, got.Adjudication(i))
		require.True(t, want.At.Equal(got.At(i)))
		require.Equal(t, want.At.Format(time.RFC3339Nano), g.At.Format(time.RFC3339Nano))
	}
	assert.Len(t, got.spill, 3+9, "the other file and side, the big bin, and 9 zones past the 64 (UTC, +02:00, Local and 61 of the 70)")
	assert.Equal(t, 8+4+2+2+8+4+1+4, got.BytesPerLabel(), "every column differs somewhere")

	var many []Label
	for i := range spillCode + 3 {
		l := base
		l.Line, l.CaseID, l.Dimension = i+1, "c", fmt.Sprintf("d%d", i)
		many = append(many, l)
	}
	over := base // a rater when the codes are used up: kept whole
	over.Line, over.CaseID, over.Dimension, over.Rater, over.Adjudication = len(many)+1, "c", "d0", "new-rater", true
	many = append(many, over)
	mg := FromLabels(many)
	for _, i := range []int{0, spillCode - 3, spillCode - 2, spillCode, spillCode + 2, len(many) - 1} {
		require.Equal(t, many[i], mg.Label(i), "label %d", i)
	}
	assert.NotEmpty(t, mg.spill)
	assert.Equal(t, 0, (*Labels)(nil).Len())
	assert.Nil(t, (*Labels)(nil).All())
}

// TestLabelsColumns: a field the same for every label takes no memory per
// label (16 bytes a label in a file of one construct, timestamp, zone and no
// raters); a column is filled in from the first label that differs; scores
// past the 65,535 codes are kept as themselves; lines with gaps (blank lines)
// come back; a spilled label between them keeps every column aligned.
func TestLabelsColumns(t *testing.T) {
	at := time.Date(2026, 9, 1, 9, 0, 0, 0, time.UTC)
	base := Label{File: "j.jsonl", Side: JudgeSide, Dimension: "groundedness", Construct: "support", At: at, HasScore: true, HasBin: true}
	var ls []Label
	line := 0
	for i := range 70000 {
		l := base
		line++
		if i%1000 == 999 {
			line += 2 // blank lines
		}
		l.Line, l.CaseID, l.Score, l.Bin = line, fmt.Sprintf("c%06d", i), 0.5, i%3
		ls = append(ls, l)
	}
	got := FromLabels(ls)
	assert.Equal(t, 8+2, got.BytesPerLabel(), "the id and the bin: one dimension, construct, score, timestamp")
	for i := range ls {
		require.Equal(t, ls[i], got.Label(i), "label %d", i)
	}

	for i := range ls {
		ls[i].Score = float64(i) / float64(len(ls)) // past the codes at 65,535
		if i >= 40000 {
			ls[i].At = at.Add(time.Duration(i) * time.Second)
		}
		if i == 50000 {
			ls[i].Side = HumanSide // spilled
		}
		if i == 60000 {
			ls[i].Rater, ls[i].Adjudication = "ana", true
		}
	}
	got = FromLabels(ls)
	assert.Equal(t, 8+4+2+8+8+4, got.BytesPerLabel(), "id, names (the spilled label), bin, scores as themselves, seconds and the rater from the first that differs")
	for i := range ls {
		require.Equal(t, ls[i], got.Label(i), "label %d", i)
	}
	assert.Len(t, got.spill, 1)
}

// TestLabelsLinesOutOfOrder: lines in no order (FromLabels of shuffled
// labels) or a blank line after every label take a column of 4 bytes a
// label, not a run each; a line over 2³²−1 and a spilled label still come
// back.
func TestLabelsLinesOutOfOrder(t *testing.T) {
	base := Label{File: "h.jsonl", Side: HumanSide, Dimension: "groundedness", Construct: "support", HasBin: true}
	for _, step := range []int{-1, 2} {
		var ls []Label
		for i := range 5000 {
			l := base
			l.CaseID, l.Line = fmt.Sprintf("c%d", i), 10000+step*i
			switch i {
			case 3:
				l.Line = min(math.MaxUint32+7, math.MaxInt)
			case 4000:
				l.File = "other.jsonl" // spilled
			}
			ls = append(ls, l)
		}
		got := FromLabels(ls)
		assert.Equal(t, 8+4+4, got.BytesPerLabel(), "step %d: id, names (the spilled label), lines", step)
		assert.LessOrEqual(t, len(got.lines), 16+5000/8)
		for i := range ls {
			require.Equal(t, ls[i], got.Label(i), "step %d, label %d", step, i)
		}
	}
}
