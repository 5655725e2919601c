package importer

import (
	"bufio"
	"context"
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/csvcap"
)

func init() {
	register(&Format{Name: "csv", Shards: ShardHeader, Kind: KindCases,
		Description: "CSV with a header: query, retrieved (ranked ids), gold (ids); optional id, locale, type; a list cell is a JSON array or ids separated by | (--list-sep)",
		convert:     convertCSV})
}

// The header names each column may have (lower case, trimmed).
var (
	csvQuery     = []string{"query", "question", "user_input"}
	csvRetrieved = []string{"retrieved", "retrieved_ids", "retrieved_context_ids"}
	csvGold      = []string{"gold", "gold_ids", "must_cite_one_of", "reference_context_ids"}
	csvID        = []string{"id", "case_id"}
)

// csvColumn is the column of header that one of names gives (-1: none), or an
// error at line 1 when two columns give it (a name repeated, or two of its
// names): which one was read would be a silent choice, as a repeated JSON key
// is.
func csvColumn(file string, header []string, names []string) (int, error) {
	col := -1
	for i, h := range header {
		h = strings.ToLower(strings.TrimSpace(h))
		if !slices.Contains(names, h) {
			continue
		}
		if col >= 0 {
			return -1, Errorf(file, 1, "columns %d (%q) and %d (%q) both give the %s: keep one", col+1, truncate([]byte(header[col])), i+1, truncate([]byte(header[i])), names[0])
		}
		col = i
	}
	return col, nil
}

func convertCSV(ctx context.Context, br *bufio.Reader, file string, w *bufio.Writer, opt Options, st *Stats) error {
	if b, _ := br.Peek(3); len(b) == 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF {
		_, _ = br.Discard(3)
	}
	// Every record is read under the cap of one record (csvcap.Reader): a
	// quoted cell may span lines, and a longer record fails while it is read.
	r := csvcap.NewReader(br, maxRecord)
	read := func() ([]string, error) {
		endLine := r.EndLine()
		rec, err := r.Read()
		if errors.Is(err, csvcap.ErrTooLong) {
			return nil, Errorf(file, endLine+1, "a CSV record longer than %s (the cap of one record; a quoted cell may span lines)", sizeText(maxRecord))
		}
		if errors.Is(err, input.ErrTooManySeparators) {
			return nil, Errorf(file, endLine+1, "%v", input.ErrTooManySeparators)
		}
		return rec, err
	}
	header, err := read()
	if err != nil {
		return csvErr(file, err)
	}
	header = append([]string(nil), header...)
	var col struct{ query, retrieved, gold, id, locale, typ int }
	for _, c := range []struct {
		at    *int
		names []string
	}{{&col.query, csvQuery}, {&col.retrieved, csvRetrieved}, {&col.gold, csvGold}, {&col.id, csvID}, {&col.locale, []string{"locale"}}, {&col.typ, []string{"type"}}} {
		if *c.at, err = csvColumn(file, header, c.names); err != nil {
			return err
		}
	}
	switch {
	case col.query < 0:
		return Errorf(file, 1, "the header has no query column (%s)", strings.Join(csvQuery, ", "))
	case col.retrieved < 0:
		return Errorf(file, 1, "the header has no retrieved column (%s)", strings.Join(csvRetrieved, ", "))
	}
	cw := newCaseWriter(w, opt, st)
	for row := 1; ; row++ {
		if row%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		rec, err := read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return csvErr(file, err)
		}
		line := r.StartLine()
		get := func(i int) string {
			if i < 0 {
				return ""
			}
			return strings.TrimSpace(rec[i])
		}
		c := caseOut{ID: get(col.id), Query: get(col.query), Locale: get(col.locale), Type: get(col.typ)}
		if c.ID == "" {
			c.ID = "row-" + strconv.Itoa(row)
		}
		ids, err := splitList(get(col.retrieved), opt.ListSep)
		if err != nil {
			return Errorf(file, line, "column %q: %v", header[col.retrieved], err)
		}
		c.Retrieved = cw.entries(ids, nil)
		if c.Gold, err = splitList(get(col.gold), opt.ListSep); err != nil {
			return Errorf(file, line, "column %q: %v", header[col.gold], err)
		}
		if err := cw.write(file, line, c); err != nil {
			return err
		}
	}
}

func csvErr(file string, err error) error {
	var ie *Error
	if errors.As(err, &ie) {
		return err
	}
	var pe *csvcap.ParseError
	if errors.As(err, &pe) {
		return Errorf(file, pe.Line, "%v", pe.Err)
	}
	if errors.Is(err, io.EOF) {
		return Errorf(file, 0, "empty CSV: want a header line")
	}
	return err
}
