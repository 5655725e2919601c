package cli

import (
	"os"
	"testing"
)

// heavyTestsEnv turns on the tests that build a binary or a tool with the go
// command (minutes on a cold build and module cache, more under -race): .ci/run
// sets it, so CI always runs them; `go test ./...` alone skips them.
const heavyTestsEnv = "RETRIEVAL_GATE_HEAVY_TESTS"

// requireHeavy skips the test unless $RETRIEVAL_GATE_HEAVY_TESTS is 1 (and never
// runs it under -short).
func requireHeavy(t *testing.T, what string) {
	t.Helper()
	if testing.Short() || os.Getenv(heavyTestsEnv) != "1" {
		t.Skipf("%s: set %s=1 to run it (.ci/run does)", what, heavyTestsEnv)
	}
}
