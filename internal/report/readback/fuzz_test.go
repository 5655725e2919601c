package readback_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
	"github.com/retrieval-gate/retrieval-gate/internal/report/calibratereport"
	"github.com/retrieval-gate/retrieval-gate/internal/report/checkreport"
	"github.com/retrieval-gate/retrieval-gate/internal/report/comparereport"
	"github.com/retrieval-gate/retrieval-gate/internal/report/readback"
)

// reread reads a document of one command: its k (0 where it has none), its
// verdict, and the document written again by WriteJSON.
type reread func(r io.Reader) (k int, verdict outcome.Status, rewritten []byte, err error)

func rewrite(w func(io.Writer) error) []byte {
	var b bytes.Buffer
	if err := w(&b); err != nil {
		return nil
	}
	return b.Bytes()
}

var readers = []reread{
	func(r io.Reader) (int, outcome.Status, []byte, error) {
		data, root, err := readback.Parse(r, "")
		if err != nil {
			return 0, "", nil, err
		}
		d, err := checkreport.ReadParsed(data, root)
		if err != nil {
			return 0, "", nil, err
		}
		return d.K, d.Verdict, rewrite(d.WriteJSON), nil
	},
	func(r io.Reader) (int, outcome.Status, []byte, error) {
		d, err := comparereport.Read(r)
		if err != nil {
			return 0, "", nil, err
		}
		return d.K, d.Verdict, rewrite(d.WriteJSON), nil
	},
	func(r io.Reader) (int, outcome.Status, []byte, error) {
		data, root, err := readback.Parse(r, "")
		if err != nil {
			return 0, "", nil, err
		}
		d, err := calibratereport.ReadParsed(data, root)
		if err != nil {
			return 0, "", nil, err
		}
		return 1, d.Verdict, rewrite(d.WriteJSON), nil
	},
}

// FuzzReadBack: any bytes given to the check, compare and calibrate document
// readers (report --from, issue 33 item 10) are either refused with an
// *input.Error at a line of the document (a single line of message, never
// past the document's last line), or accepted as a document with k ≥ 1 and a
// verdict of pass or fail that, written again by WriteJSON, is accepted again
// with the same k and verdict: what the readers accept is what the commands
// write. Seeded with whole documents of each command (the fuzzer mutates what
// the checks accept).
func FuzzReadBack(f *testing.F) {
	for _, p := range []string{
		"../checkreport/testdata/check.json.golden",
		"testdata/compare.json",
		"../calibratereport/testdata/golden/demo.json",
		"../calibratereport/testdata/golden/panel.json",
		"../calibratereport/testdata/golden/violations.json",
	} {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"schema":"retrieval-gate/aggregates@1","k":-1,"verdict":"pass"}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		lines := bytes.Count(data, []byte{'\n'}) + 1
		for i, read := range readers {
			k, verdict, again, err := read(bytes.NewReader(data))
			if err != nil {
				var ie *input.Error
				if !errors.As(err, &ie) {
					continue // not this command's schema, or not a document at all: no value was checked
				}
				if ie.Line < 0 || ie.Line > lines || strings.Contains(ie.Msg, "\n") {
					t.Fatalf("reader %d: line %d of %d: %q", i, ie.Line, lines, ie.Msg)
				}
				continue
			}
			if k < 1 || (verdict != outcome.Pass && verdict != outcome.Fail) {
				t.Fatalf("reader %d accepted k %d, verdict %q", i, k, verdict)
			}
			k2, verdict2, _, err := read(bytes.NewReader(again))
			if err != nil || k2 != k || verdict2 != verdict {
				t.Fatalf("reader %d: the document written again: k %d, verdict %q, %v (was k %d, %q)\n%s", i, k2, verdict2, err, k, verdict, again)
			}
		}
	})
}
