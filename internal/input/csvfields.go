package input

import (
	"fmt"

	"github.com/retrieval-gate/retrieval-gate/internal/format"
)

// MaxCSVSeparators caps the commas of one CSV record, counted in its bytes
// (quoted ones too) while it is read (csvcap.Reader): the byte cap alone does
// not bound what a record costs, as each field takes 24 bytes of the reader's
// slices where its input can take one (a 40 MiB header of commas took 4 GB).
const MaxCSVSeparators = 1 << 20

// ErrTooManySeparators is the read error of a CSV record of more than
// MaxCSVSeparators commas.
var ErrTooManySeparators = fmt.Errorf("more than %s commas in one CSV record (the cap on what a record may take in memory)", format.Thousands(MaxCSVSeparators))
