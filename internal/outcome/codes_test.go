package outcome

import (
	"testing"

	"github.com/retrieval-gate/retrieval-gate/internal/codetest"
)

// Codes names every Code, so gatetable's test words each one.
func TestCodesComplete(t *testing.T) { codetest.Complete(t, ".", "Code", "Codes") }
