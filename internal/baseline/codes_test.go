package baseline

import (
	"testing"

	"github.com/retrieval-gate/retrieval-gate/internal/codetest"
)

// Settings names every Setting, so checkreport's test words each one.
func TestSettingsComplete(t *testing.T) { codetest.Complete(t, ".", "Setting", "Settings") }
