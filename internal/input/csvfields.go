package input

import (
	"bytes"
	"fmt"

	"github.com/retrieval-gate/retrieval-gate/internal/format"
)

// MaxCSVSeparators caps the commas of one CSV record, counted in its bytes
// (quoted ones too) before encoding/csv splits it: the reader's byte cap alone
// does not bound what a record costs, as each field takes 24 bytes of the
// reader's slices where its input can take one (a 40 MiB header of commas
// took 4 GB).
const MaxCSVSeparators = 1 << 20

// ErrTooManySeparators is the read error of a CSV record of more than
// MaxCSVSeparators commas.
var ErrTooManySeparators = fmt.Errorf("more than %s commas in one CSV record (the cap on what a record may take in memory)", format.Thousands(MaxCSVSeparators))

// CSVSeparators counts the commas a CSV reader has been given since the start
// of its current record, for the record cap reader that feeds it: Passed sees
// each chunk as it is handed on, Mark moves to the next record (at the reader's
// input offset, behind what it has read ahead). It keeps the offsets of the
// commas at or after the mark, a few more than MaxCSVSeparators at most.
type CSVSeparators struct {
	offs   []int64 // offsets of the commas passed at or after the mark, from head
	head   int
	passed int64 // bytes passed
	// Max is the cap (0: MaxCSVSeparators) and ReadAhead the most bytes the
	// reader holds beyond the record it reads (0: encoding/csv's buffer, 4 KiB);
	// tests lower them.
	Max, ReadAhead int
}

// csvReadAhead is the size of encoding/csv's read buffer (bufio's default):
// the most bytes it has been given beyond the record it is reading.
const csvReadAhead = 4096

// Passed records the chunk p handed on after the bytes passed so far, and
// returns ErrTooManySeparators when the current record has more commas than
// the cap: when more than the cap and the read-ahead's worth were given since
// the mark (the read-ahead may hold the next record's commas).
func (c *CSVSeparators) Passed(p []byte) error {
	limit := c.Max
	if limit <= 0 {
		limit = MaxCSVSeparators
	}
	if c.ReadAhead > 0 {
		limit += c.ReadAhead
	} else {
		limit += csvReadAhead
	}
	for i := 0; ; {
		j := bytes.IndexByte(p[i:], ',')
		if j < 0 {
			break
		}
		c.offs = append(c.offs, c.passed+int64(i+j))
		i += j + 1
		if len(c.offs)-c.head > limit {
			c.passed += int64(len(p))
			return ErrTooManySeparators
		}
	}
	c.passed += int64(len(p))
	return nil
}

// Mark starts a record at input offset off (its commas are those at or after it).
func (c *CSVSeparators) Mark(off int64) {
	for c.head < len(c.offs) && c.offs[c.head] < off {
		c.head++
	}
	if c.head > 4096 && 2*c.head > len(c.offs) { // drop the offsets behind the head
		c.offs = c.offs[:copy(c.offs, c.offs[c.head:])]
		c.head = 0
	}
}
