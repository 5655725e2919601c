package importer

import (
	"errors"
	"fmt"
	"io"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/casefile"
	"github.com/retrieval-gate/retrieval-gate/internal/input/kbfile"
	"github.com/retrieval-gate/retrieval-gate/internal/input/trecfile"
)

// maxRecord bounds one record of every input format, in bytes of input: a
// line, a CSV record (a quoted cell may span lines), a JSON array element, a
// skipped JSON member or a key; the case reader's cap (casefile.MaxLine).
// It is checked while the record is read, before it is held whole: a longer
// one is an error, never buffered. A variable so that tests can lower it.
var maxRecord int64 = casefile.MaxLine

// maxOutput bounds one line written, by kind: what check, compare and the KB
// reader accept, so that import never writes a line they refuse.
var maxOutput = map[Kind]int{
	KindCases: casefile.MaxLine,
	KindQrels: trecfile.MaxLineBytes,
	KindRun:   trecfile.MaxLineBytes,
	KindKB:    kbfile.MaxCardBytes,
}

// errRecordTooLong is the read error of a record over maxRecord.
var errRecordTooLong = errors.New("record too long")

// sizeText is a byte count for a message: "64 MiB", "1 KiB" or "300 bytes".
func sizeText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// recordLimit passes at most max bytes (plus slack for the reader's look-ahead)
// beyond the start of the current record, then fails with errRecordTooLong: a
// parser that holds a whole record (encoding/csv, encoding/json) reads through
// it and so never holds more than the cap. The parser's owner calls mark with
// the parser's input offset at the start of each record.
type recordLimit struct {
	r      io.Reader
	passed int64 // bytes passed to the parser
	start  int64 // input offset of the current record
	max    int64
	seps   *input.CSVSeparators // a CSV reader's: the commas of the record are capped too
	err    error                // the separators' error, once met
}

// slack is the look-ahead a parser may have read past a record's end.
const slack = 64 << 10

func newRecordLimit(r io.Reader) *recordLimit { return &recordLimit{r: r, max: maxRecord} }

func (l *recordLimit) mark(off int64) {
	l.start = off
	if l.seps != nil {
		l.seps.Mark(off)
	}
}

func (l *recordLimit) Read(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	left := l.start + l.max + slack - l.passed
	if left <= 0 {
		return 0, errRecordTooLong
	}
	if int64(len(p)) > left {
		p = p[:left]
	}
	n, err := l.r.Read(p)
	l.passed += int64(n)
	if l.seps != nil {
		if l.err = l.seps.Passed(p[:n]); l.err != nil {
			return 0, l.err
		}
	}
	return n, err
}

// tooLong reports whether the parser consumed more than max bytes since the
// record's start (off is its input offset now).
func (l *recordLimit) tooLong(off int64) bool { return off-l.start > l.max }
