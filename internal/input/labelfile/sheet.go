package labelfile

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/csvcap"
	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos"
)

// MaxSheetGrade is the highest grade of a human labelling sheet: the judge's
// 4-point scale, 0 (not relevant) to 3 (highly relevant).
const MaxSheetGrade = 3

// MaxSheetRecord caps one record (a CSV record, which may span lines, or a
// JSONL line) of a labelling sheet.
const MaxSheetRecord = 16 << 20

// The columns (CSV) and keys (JSONL) of a labelling sheet, in the order judge
// --human-sample writes them; query_id, doc_id and grade are read, the others are
// for the labeller (query and document text, locale) and ignored, as is any
// column a team adds (a note, a labeller's name).
const (
	SheetQueryID  = "query_id"
	SheetLocale   = "locale"
	SheetQuery    = "query"
	SheetDocID    = "doc_id"
	SheetDocument = "document"
	SheetGrade    = "grade"
)

// SheetColumns are the columns judge --human-sample writes, in order.
var SheetColumns = []string{SheetQueryID, SheetLocale, SheetQuery, SheetDocID, SheetDocument, SheetGrade}

// SheetRow is one (query, document) row of a human labelling sheet.
type SheetRow struct {
	Line           int // the record's first line, 1-based
	QueryID, DocID string
	Grade          int  // 0..MaxSheetGrade when Labelled
	Labelled       bool // false: the grade is empty (null or "")
}

// Sheet is a human labelling sheet (judge --human-sample) as filled in: every
// pooled document of a random sample of queries with a human grade. Rows are in
// file order. A query is labelled when every one of its rows has a grade;
// Unlabelled lists, sorted as in the file, the queries none of whose rows has one.
type Sheet struct {
	File       string
	Rows       []SheetRow // the rows of the labelled queries
	Unlabelled []string
}

// FormulaPrefixed reports whether a CSV cell that starts with s is escaped by a
// leading apostrophe, so that a spreadsheet shows it as text instead of running
// it as a formula: s starts with = + - @, a tab, a carriage return or an
// apostrophe (escaped too, so that reading strips exactly the one added).
func FormulaPrefixed(s string) bool {
	return s != "" && strings.ContainsRune("=+-@\t\r'", rune(s[0]))
}

// SheetCell is s as a CSV cell of a sheet: with a leading apostrophe when
// FormulaPrefixed(s).
func SheetCell(s string) string {
	if FormulaPrefixed(s) {
		return "'" + s
	}
	return s
}

// sheetID undoes SheetCell on an id read from CSV.
func sheetID(s string) string {
	if strings.HasPrefix(s, "'") && FormulaPrefixed(s[1:]) {
		return s[1:]
	}
	return s
}

// ReadSheet reads a human labelling sheet: JSONL (first non-blank byte `{`) or
// CSV with a header line. Errors are *input.Error with file and line: a missing
// query_id, doc_id or grade column or key, an empty id, a grade that is not an
// integer 0..MaxSheetGrade (an empty grade, null or "", means not labelled yet),
// a (query, document) given twice, a query labelled on some rows and not on
// others (label every document of a sampled query, or none), a record over
// MaxSheetRecord. A cancelled ctx ends the read with ctx.Err().
func ReadSheet(ctx context.Context, r io.Reader, file string) (*Sheet, error) {
	br := bufio.NewReaderSize(input.Reader(ctx, r), 64<<10)
	head, _ := br.Peek(4096)
	head = bytes.TrimLeft(bytes.TrimPrefix(head, input.BOM), " \t\r\n")
	var rows []SheetRow
	var err error
	if len(head) > 0 && head[0] == '{' {
		rows, err = readSheetJSONL(ctx, br, file)
	} else {
		rows, err = readSheetCSV(ctx, br, file)
	}
	if cerr := ctx.Err(); cerr != nil {
		return nil, cerr
	}
	if err != nil {
		return nil, err
	}
	return collectSheet(rows, file)
}

// collectSheet checks the rows as a whole: duplicates and partly labelled queries.
func collectSheet(rows []SheetRow, file string) (*Sheet, error) {
	type pairKey struct{ q, d string }
	first := make(map[pairKey]int, len(rows))
	type qstate struct {
		labelled, unlabelled int // the first line of each kind, 0 none
	}
	qs := map[string]*qstate{}
	var order []string
	for _, row := range rows {
		k := pairKey{row.QueryID, row.DocID}
		if l, dup := first[k]; dup {
			return nil, input.Errorf(file, row.Line, "query %q, document %q is given twice (first on line %d)", row.QueryID, row.DocID, l)
		}
		first[k] = row.Line
		st := qs[row.QueryID]
		if st == nil {
			st = &qstate{}
			qs[row.QueryID] = st
			order = append(order, row.QueryID)
		}
		if row.Labelled && st.labelled == 0 {
			st.labelled = row.Line
		} else if !row.Labelled && st.unlabelled == 0 {
			st.unlabelled = row.Line
		}
		if st.labelled > 0 && st.unlabelled > 0 {
			l := max(st.labelled, st.unlabelled)
			return nil, input.Errorf(file, l, "query %q has a grade on line %d and none on line %d: label every document of a sampled query (or none, to leave the query out)",
				row.QueryID, st.labelled, st.unlabelled)
		}
	}
	s := &Sheet{File: file, Rows: make([]SheetRow, 0, len(rows))}
	for _, row := range rows {
		if row.Labelled {
			s.Rows = append(s.Rows, row)
		}
	}
	for _, q := range order {
		if qs[q].labelled == 0 {
			s.Unlabelled = append(s.Unlabelled, q)
		}
	}
	if len(s.Rows) == 0 {
		return nil, input.Errorf(file, 0, "no graded row: fill in the grade column (0-%d) for the sampled queries", MaxSheetGrade)
	}
	return s, nil
}

// parseGrade reads a grade cell: "" (after trimming) is not labelled.
func parseGrade(s, file string, line int) (int, bool, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, false, nil
	}
	g, err := strconv.Atoi(s)
	if err != nil || g < 0 || g > MaxSheetGrade {
		return 0, false, input.Errorf(file, line, "grade %q is not an integer from 0 to %d", clip(s), MaxSheetGrade)
	}
	return g, true, nil
}

// clip shortens a quoted value for a message.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// readSheetCSV reads the CSV rows. Each record is read under MaxSheetRecord
// bytes of input and input.MaxCSVSeparators commas (csvcap.Reader), refused
// while it is read having held the cap and a chunk of 64 KiB; encoding/csv
// behind a cap's reader held about five times the cap (97 MB for an 80 MiB
// cell against the 16 MiB cap, the process's floor 17 MB).
func readSheetCSV(ctx context.Context, br *bufio.Reader, file string) ([]SheetRow, error) {
	rd := csvcap.NewReader(br, MaxSheetRecord)
	csvErr := func(err error) error {
		var pe *csvcap.ParseError
		switch {
		case errors.As(err, &pe):
			return input.Errorf(file, pe.Line, "%v", pe.Err)
		case errors.Is(err, csvcap.ErrTooLong):
			// The record starts on the line after the last one read, or on a
			// blank line below it.
			return input.Errorf(file, rd.EndLine()+1, "a record from this line on is longer than %d MiB", MaxSheetRecord>>20)
		case errors.Is(err, input.ErrTooManySeparators):
			return input.Errorf(file, rd.EndLine()+1, "%v", err)
		}
		return fmt.Errorf("failed to read %s: %w", file, err)
	}
	header, err := rd.Read()
	if errors.Is(err, io.EOF) {
		return nil, input.Errorf(file, 0, "empty sheet: want a header line %s", strings.Join(SheetColumns, ","))
	}
	if err != nil {
		return nil, csvErr(err)
	}
	col := map[string]int{}
	for i, h := range header {
		h = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
		if _, dup := col[h]; dup && h != "" {
			return nil, input.Errorf(file, 1, "column %q is given twice", clip(h))
		}
		col[h] = i
	}
	for _, need := range []string{SheetQueryID, SheetDocID, SheetGrade} {
		if _, ok := col[need]; !ok {
			return nil, input.Errorf(file, 1, "the header has no %q column (want %s)", need, strings.Join(SheetColumns, ","))
		}
	}
	qc, dc, gc := col[SheetQueryID], col[SheetDocID], col[SheetGrade]
	var rows []SheetRow
	for n := 0; ; n++ {
		if n&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		rec, err := rd.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, csvErr(err)
		}
		line := rd.StartLine()
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue // a blank line
		}
		row := SheetRow{Line: line, QueryID: sheetID(strings.TrimSpace(rec[qc])), DocID: sheetID(strings.TrimSpace(rec[dc]))}
		switch {
		case row.QueryID == "":
			return nil, input.Errorf(file, line, "empty query_id")
		case row.DocID == "":
			return nil, input.Errorf(file, line, "empty doc_id")
		}
		if row.Grade, row.Labelled, err = parseGrade(rec[gc], file, line); err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	return rows, nil
}

func readSheetJSONL(ctx context.Context, r io.Reader, file string) ([]SheetRow, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxSheetRecord)
	var p jsonpos.Parser
	var rows []SheetRow
	line := 0
	for sc.Scan() {
		line++
		if line&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		b := sc.Bytes()
		if line == 1 {
			b = input.TrimBOM(b)
		}
		if input.IsBlank(b) {
			continue
		}
		row, err := parseSheetLine(&p, b, file, line)
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, input.Errorf(file, line+1, "line longer than %d MiB", MaxSheetRecord>>20)
		}
		return nil, fmt.Errorf("failed to read %s: %w", file, err)
	}
	return rows, nil
}

func parseSheetLine(p *jsonpos.Parser, b []byte, file string, line int) (SheetRow, error) {
	row := SheetRow{Line: line}
	v, err := p.Parse(b, line, 0)
	if err != nil {
		var se *jsonpos.SyntaxError
		if errors.As(err, &se) {
			return row, input.Errorf(file, line, "%s", se.Describe())
		}
		return row, input.Errorf(file, line, "%s", err)
	}
	if v.Kind != jsonpos.Object {
		return row, input.Errorf(file, line, "a sheet row must be a JSON object, got %s", v.TypeName())
	}
	id := func(key string) (string, error) {
		x := v.Get(key)
		switch {
		case x == nil:
			return "", input.Errorf(file, line, "no %q", key)
		case x.Kind != jsonpos.String:
			return "", input.Errorf(file, line, "field %q must be a string, got %s", key, x.TypeName())
		case strings.TrimSpace(x.Str) == "":
			return "", input.Errorf(file, line, "field %q is empty", key)
		}
		return strings.Clone(strings.TrimSpace(x.Str)), nil
	}
	if row.QueryID, err = id(SheetQueryID); err != nil {
		return row, err
	}
	if row.DocID, err = id(SheetDocID); err != nil {
		return row, err
	}
	g := v.Get(SheetGrade)
	switch {
	case g == nil:
		return row, input.Errorf(file, line, "no %q (null: not labelled yet)", SheetGrade)
	case g.Kind == jsonpos.Null:
	case g.Kind == jsonpos.String:
		row.Grade, row.Labelled, err = parseGrade(g.Str, file, line)
	case g.Kind == jsonpos.Number:
		f, ok := g.Float64(b)
		if !ok || f != math.Trunc(f) || f < 0 || f > MaxSheetGrade {
			return row, input.Errorf(file, line, "grade %s is not an integer from 0 to %d", clip(string(g.Raw(b))), MaxSheetGrade)
		}
		row.Grade, row.Labelled = int(f), true
	default:
		return row, input.Errorf(file, line, "grade must be an integer from 0 to %d or null, got %s", MaxSheetGrade, g.TypeName())
	}
	return row, err
}
