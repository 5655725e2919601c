package importer

import (
	"errors"
	"fmt"

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
