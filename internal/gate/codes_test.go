package gate

import (
	"testing"

	"github.com/retrieval-gate/retrieval-gate/internal/codetest"
)

// ProblemKinds names every ProblemKind, so checkreport's test words each one.
func TestProblemKindsComplete(t *testing.T) { codetest.Complete(t, ".", "ProblemKind", "ProblemKinds") }
