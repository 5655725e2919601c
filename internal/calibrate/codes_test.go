package calibrate

import (
	"testing"

	"github.com/retrieval-gate/retrieval-gate/internal/codetest"
)

// NoteCodes and LockChangeCodes name every code, so calibratereport's tests
// word each one.
func TestCodesComplete(t *testing.T) {
	codetest.Complete(t, ".", "NoteCode", "NoteCodes")
	codetest.Complete(t, ".", "LockChangeCode", "LockChangeCodes")
}
