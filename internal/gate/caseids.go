package gate

import (
	"math"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
)

// CaseIDs finds duplicate case ids in a stream of cases read by another
// command than check (retrieve, and the library's live gate), with check's
// duplicate-id log: 12 bytes a case in memory up to a bound, then a temporary
// file, and the same message, "duplicate case id %q (first at line N)" at the
// later case's line. The zero value is ready; Close gives its memory back.
type CaseIDs struct{ log idLog }

// Add logs the case id at line of file. Its error is an input error (a line
// beyond 32 bits) or a failed write of the log's temporary file.
func (c *CaseIDs) Add(id string, line int, file string) error {
	l, err := caseLine(file, line)
	if err != nil {
		return err
	}
	return c.log.add(idHash(id), l, id, file)
}

// caseLine is line as the duplicate-id log keeps it: 32 bits (12 bytes a
// case); a line beyond is an input error, never a wrong "first at line" in a
// later message.
func caseLine(file string, line int) (uint32, error) {
	if line < 0 || int64(line) > math.MaxUint32 {
		return 0, input.Errorf(file, line, "more than %d lines: split the cases file", uint32(math.MaxUint32))
	}
	return uint32(line), nil
}

// Duplicate returns the input error of the earliest case, in stream order,
// whose id an earlier case had, or nil (Accumulator.Duplicate).
func (c *CaseIDs) Duplicate() error { return c.log.duplicate() }

// Close frees the log's memory and temporary file.
func (c *CaseIDs) Close() { c.log.release() }
