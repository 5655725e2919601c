package labelfile

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
)

func TestReadSheet(t *testing.T) {
	csvSheet := "query_id,locale,query,doc_id,document,grade\n" +
		"q1,en,how to,d1,\"a text\nover two lines\",2\n" +
		"q1,en,how to,d2,other,0\n" +
		"q2,de,wie,d1,text, \n" +
		"q2,de,wie,d3,text,\n" +
		"q3,,x,'=cmd,doc,3\n"
	s, err := ReadSheet(context.Background(), strings.NewReader(csvSheet), "sheet.csv")
	require.NoError(t, err)
	assert.Equal(t, []SheetRow{
		{Line: 2, QueryID: "q1", DocID: "d1", Grade: 2, Labelled: true},
		{Line: 4, QueryID: "q1", DocID: "d2", Grade: 0, Labelled: true},
		{Line: 7, QueryID: "q3", DocID: "=cmd", Grade: 3, Labelled: true},
	}, s.Rows)
	assert.Equal(t, []string{"q2"}, s.Unlabelled)

	jsonl := "\ufeff{\"query_id\":\"q1\",\"doc_id\":\"d1\",\"document\":\"t\",\"grade\":1}\n\n" +
		"{\"query_id\":\"q2\",\"doc_id\":\"d1\",\"grade\":null}\n" +
		"{\"query_id\":\"q3\",\"doc_id\":\"d1\",\"grade\":\"3\",\"note\":\"x\"}\n"
	s, err = ReadSheet(context.Background(), strings.NewReader(jsonl), "sheet.jsonl")
	require.NoError(t, err)
	assert.Equal(t, []SheetRow{
		{Line: 1, QueryID: "q1", DocID: "d1", Grade: 1, Labelled: true},
		{Line: 4, QueryID: "q3", DocID: "d1", Grade: 3, Labelled: true},
	}, s.Rows)
	assert.Equal(t, []string{"q2"}, s.Unlabelled)
}

func TestReadSheetErrors(t *testing.T) {
	const head = "query_id,doc_id,grade\n"
	for _, tc := range []struct {
		name, in, want string
	}{
		{"grade above the scale", head + "q1,d1,4\n", "sheet:2: grade \"4\" is not an integer from 0 to 3"},
		{"negative grade", head + "q1,d1,-1\n", "sheet:2: grade \"-1\" is not an integer from 0 to 3"},
		{"fraction", head + "q1,d1,1.5\n", "sheet:2: grade \"1.5\" is not an integer from 0 to 3"},
		{"text grade", head + "q1,d1,high\n", "sheet:2: grade \"high\""},
		{"no grade column", "query_id,doc_id\nq1,d1\n", "sheet:1: the header has no \"grade\" column"},
		{"duplicate column", "query_id,doc_id,grade,grade\nq,d,1,1\n", "sheet:1: column \"grade\" is given twice"},
		{"empty id", head + ",d1,1\n", "sheet:2: empty query_id"},
		{"empty doc", head + "q1,,1\n", "sheet:2: empty doc_id"},
		{"duplicate pair", head + "q1,d1,1\nq1,d1,2\n", "sheet:3: query \"q1\", document \"d1\" is given twice (first on line 2)"},
		{"partly labelled", head + "q1,d1,1\nq1,d2,\n", "sheet:3: query \"q1\" has a grade on line 2 and none on line 3"},
		{"wrong field count", head + "q1,d1\n", "sheet:2: wrong number of fields"},
		{"bad quote", head + "q1,\"d1,1\n", "sheet:"},
		{"nothing graded", head + "q1,d1,\n", "sheet: no graded row"},
		{"empty file", "", "sheet: empty sheet"},
		{"jsonl grade out of range", `{"query_id":"q","doc_id":"d","grade":7}`, "sheet:1: grade 7 is not an integer from 0 to 3"},
		{"jsonl fraction", `{"query_id":"q","doc_id":"d","grade":2.5}`, "sheet:1: grade 2.5 is not"},
		{"jsonl bool", `{"query_id":"q","doc_id":"d","grade":true}`, "sheet:1: grade must be an integer from 0 to 3 or null, got true"},
		{"jsonl no grade", `{"query_id":"q","doc_id":"d"}`, "sheet:1: no \"grade\""},
		{"jsonl number id", `{"query_id":1,"doc_id":"d","grade":1}`, "sheet:1: field \"query_id\" must be a string"},
		{"jsonl not an object", "{\"query_id\":\"q\",\"doc_id\":\"d\",\"grade\":1}\n[1]\n", "sheet:2: a sheet row must be a JSON object"},
		{"jsonl syntax", "{\"query_id\":\"q\",\"doc_id\":\"d\",\"grade\":1}\n{\"query_id\":\n", "sheet:2:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadSheet(context.Background(), strings.NewReader(tc.in), "sheet")
			var ie *input.Error
			require.ErrorAs(t, err, &ie)
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

func TestReadSheetRecordCap(t *testing.T) {
	big := "query_id,doc_id,document,grade\nq1,d1,\"" + strings.Repeat("x", MaxSheetRecord+200<<10) + "\",1\n"
	_, err := ReadSheet(context.Background(), strings.NewReader(big), "sheet")
	require.ErrorContains(t, err, "sheet:2: a record from this line on is longer than 16 MiB")
	bigJ := `{"query_id":"q","doc_id":"d","grade":1,"document":"` + strings.Repeat("x", MaxSheetRecord) + "\"}\n"
	_, err = ReadSheet(context.Background(), strings.NewReader(bigJ), "sheet")
	require.ErrorContains(t, err, "sheet:1: line longer than 16 MiB")
}

// A sheet's CSV record of more commas than input.MaxCSVSeparators (and the
// read-ahead) is refused before encoding/csv splits it; one at the cap is read.
func TestReadSheetSeparatorCap(t *testing.T) {
	head := "query_id,doc_id,document,grade\n"
	_, err := ReadSheet(context.Background(), strings.NewReader(head+"q1,d1,\""+strings.Repeat(",", input.MaxCSVSeparators+4096)+"\",1\n"), "sheet")
	require.ErrorContains(t, err, "sheet:2: more than 1,048,576 commas in one CSV record")
	_, err = ReadSheet(context.Background(), strings.NewReader(strings.Repeat(",", input.MaxCSVSeparators+4097)+"\n"), "sheet")
	require.ErrorContains(t, err, "sheet:1: more than 1,048,576 commas in one CSV record")
	sheet, err := ReadSheet(context.Background(), strings.NewReader(head+"q1,d1,\""+strings.Repeat(",", input.MaxCSVSeparators-3)+"\",1\n"), "sheet")
	require.NoError(t, err)
	assert.Len(t, sheet.Rows, 1)
}

func TestSheetCell(t *testing.T) {
	for _, s := range []string{"=1+1", "+x", "-x", "@x", "'x", "'=x", "\tx", "plain", ""} {
		assert.Equal(t, s, sheetID(SheetCell(s)), "round trip of %q", s)
	}
	assert.Equal(t, "'=1+1", SheetCell("=1+1"))
	assert.Equal(t, "plain", SheetCell("plain"))
}

func TestReadSheetCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := ReadSheet(ctx, strings.NewReader("query_id,doc_id,grade\nq,d,1\n"), "sheet")
	require.ErrorIs(t, err, context.Canceled)
}

func FuzzReadSheet(f *testing.F) {
	f.Add([]byte("query_id,locale,query,doc_id,document,grade\nq1,en,how,d1,\"a\nb\",2\nq1,en,how,d2,x,0\n"))
	f.Add([]byte("{\"query_id\":\"q\",\"doc_id\":\"d\",\"grade\":1}\n{\"query_id\":\"q\",\"doc_id\":\"e\",\"grade\":null}\n"))
	f.Add([]byte("query_id,doc_id,grade\n'=x,d,3\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ReadSheet(context.Background(), strings.NewReader(string(data)), "sheet")
		lines := bytes.Count(data, []byte{'\n'}) + 1
		if err != nil {
			var ie *input.Error
			if !errors.As(err, &ie) {
				t.Fatalf("not an input error: %v", err)
			}
			if ie.File != "sheet" || ie.Line < 0 || ie.Line > lines {
				t.Fatalf("error %q at line %d of %d", err, ie.Line, lines)
			}
			return
		}
		// Rows in file order, each at a line of the input; a query is either
		// labelled (its rows) or unlabelled (listed once), never both.
		labelled := map[string]bool{}
		for i, r := range s.Rows {
			labelled[r.QueryID] = true
			if r.Line > lines || i > 0 && r.Line <= s.Rows[i-1].Line {
				t.Fatalf("row %+v at line %d of %d, after %+v", r, r.Line, lines, s.Rows[max(i-1, 0)])
			}
		}
		for i, q := range s.Unlabelled {
			if q == "" || labelled[q] || slices.Contains(s.Unlabelled[:i], q) {
				t.Fatalf("unlabelled %q: %+v", q, s)
			}
		}
		seen := map[[2]string]bool{}
		for _, r := range s.Rows {
			if !r.Labelled || r.Grade < 0 || r.Grade > MaxSheetGrade || r.QueryID == "" || r.DocID == "" || r.Line < 1 {
				t.Fatalf("bad row %+v", r)
			}
			k := [2]string{r.QueryID, r.DocID}
			if seen[k] {
				t.Fatalf("duplicate %v", k)
			}
			seen[k] = true
		}
	})
}

// A CSV record over MaxSheetRecord is refused having held the cap and a
// chunk; encoding/csv behind a cap's reader grew its buffers by append and
// allocated 120 to 136 MB for a 17 MiB record against the 16 MiB cap.
func TestLongSheetRecordHeldOnce(t *testing.T) {
	head := "query_id,doc_id,document,grade\nq1,d1,x,1\n"
	big := strings.Repeat("x", MaxSheetRecord+1<<20)
	for _, tc := range []struct{ name, in, want string }{
		{"quoted cell", head + "q2,d2,\"" + big + "\",1\n", "sheet:3: a record from this line on is longer than 16 MiB"},
		{"quoted cell over many lines", head + "q2,d2,\"" + strings.Repeat("x\n", (MaxSheetRecord+1<<20)/2) + "\",1\n", "sheet:3: a record from this line on is longer than 16 MiB"},
		{"cell", head + "q2,d2," + big + ",1\n", "sheet:3: a record from this line on is longer than 16 MiB"},
		{"after blank lines", head + "\n\nq2,d2," + big + ",1\n", "sheet:3: a record from this line on is longer than 16 MiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := ReadSheet(context.Background(), strings.NewReader(tc.in), "sheet")
			runtime.ReadMemStats(&after)
			require.EqualError(t, err, tc.want)
			assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(MaxSheetRecord+2<<20), "bytes allocated")
		})
	}
}

// The cap is the record's bytes of input, its newline included: a record of
// MaxSheetRecord bytes is read, one of a byte more refused (the cap's reader
// in front of encoding/csv let up to 68 KiB more through).
func TestSheetRecordCapExact(t *testing.T) {
	head := "query_id,doc_id,document,grade\n"
	row := func(n int) string { return "q1,d1," + strings.Repeat("x", n-len("q1,d1,,1\n")) + ",1\n" }
	sheet, err := ReadSheet(context.Background(), strings.NewReader(head+row(MaxSheetRecord)), "sheet")
	require.NoError(t, err)
	assert.Len(t, sheet.Rows, 1)
	_, err = ReadSheet(context.Background(), strings.NewReader(head+row(MaxSheetRecord+1)), "sheet")
	require.EqualError(t, err, "sheet:2: a record from this line on is longer than 16 MiB")
}
