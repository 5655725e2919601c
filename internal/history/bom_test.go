package history_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fastjson"

	"github.com/retrieval-gate/retrieval-gate/internal/history"
)

const bom = "\xef\xbb\xbf"

// scanned is what a scan of a history gives: each record's line and document,
// the torn lines it skipped, and its error.
type scanned struct {
	lines []int
	docs  []string
	torn  []int
	err   string
}

func scanText(text string) scanned {
	var s scanned
	err := history.ScanReader(context.Background(), "h.jsonl", strings.NewReader(text), func(rec history.Record, doc *fastjson.Value) error {
		s.lines = append(s.lines, rec.Line)
		s.docs = append(s.docs, string(doc.MarshalTo(nil)))
		return nil
	}, history.OnTorn(func(_ string, line int) { s.torn = append(s.torn, line) }))
	if err != nil {
		s.err = err.Error()
	}
	return s
}

func recordLine(t *testing.T, doc string) string {
	t.Helper()
	b, err := history.Line(record(doc))
	require.NoError(t, err)
	return string(b)
}

// A UTF-8 BOM at the start of a history is dropped, as every reader drops it
// (check, compare and report --history refused it as malformed JSON): the
// history reads as the same file without it, line numbers included. A BOM
// anywhere else is not the start of the file and is refused as before.
func TestHistoryBOMDropped(t *testing.T) {
	r1, r2 := recordLine(t, `{"a":1}`), recordLine(t, `{"a":2}`)
	for _, tc := range []struct{ name, text string }{
		{"one record", r1},
		{"two records, CRLF", strings.ReplaceAll(r1+r2, "\n", "\r\n")},
		{"blank first line", "\n" + r1},
		{"space before the record", " " + r1},
		{"last record without newline", r1 + strings.TrimSuffix(r2, "\n")},
		{"torn last line", r1 + r2[:30]},
		{"torn only line", r1[:30]},
		{"nothing after it", ""},
		{"a bad record", r1 + "{oops\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := scanText(tc.text)
			assert.Equal(t, want, scanText(bom+tc.text))
		})
	}
	got := scanText(r1 + bom + r2)
	assert.Contains(t, got.err, "h.jsonl:2: not a history record")
}

// Appending to a history that starts with a BOM appends after it: the file's
// first bytes stay as they were (a complete last record without newline is
// ended, a torn last line dropped, the BOM kept whatever follows it), the
// history reads back with the new record last, and undo puts the very bytes
// back.
func TestHistoryAppendAfterBOM(t *testing.T) {
	r1 := recordLine(t, `{"a":1}`)
	for _, tc := range []struct {
		name, text string
		kept       string // the file's first bytes after the append
		docs       []string
	}{
		{"record", bom + r1, bom + r1, []string{`{"a":1}`, `{"a":2}`}},
		{"record without newline", bom + strings.TrimSuffix(r1, "\n"), bom + r1, []string{`{"a":1}`, `{"a":2}`}},
		{"torn last line", bom + r1 + r1[:30], bom + r1, []string{`{"a":1}`, `{"a":2}`}},
		{"torn first line", bom + r1[:30], bom, []string{`{"a":2}`}},
		{"the BOM alone", bom, bom, []string{`{"a":2}`}},
		{"a blank line", bom + "\n", bom + "\n", []string{`{"a":2}`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "h.jsonl")
			require.NoError(t, os.WriteFile(file, []byte(tc.text), 0o644))
			_, undo, err := history.AppendUndo(context.Background(), file, record(`{"a":2}`))
			require.NoError(t, err)
			got, err := os.ReadFile(file)
			require.NoError(t, err)
			assert.True(t, strings.HasPrefix(string(got), tc.kept), "the first bytes changed: %q", got)
			assert.Equal(t, tc.kept+recordLine(t, `{"a":2}`), string(got))
			recs, err := readAll(file)
			require.NoError(t, err)
			var docs []string
			for _, r := range recs {
				docs = append(docs, string(r.Document))
			}
			assert.Equal(t, tc.docs, docs)
			require.NoError(t, undo())
			got, err = os.ReadFile(file)
			require.NoError(t, err)
			assert.Equal(t, tc.text, string(got), "undo")
		})
	}
}
