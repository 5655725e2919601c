package metrics

import (
	"testing"

	"github.com/retrieval-gate/retrieval-gate/internal/racetest"
)

// skipSimulationUnderRace skips a seeded simulation (a coverage sweep, a brute-force
// check) when the tests run with -race: the race detector slows these numerical
// loops about fivefold and finds nothing in them that the small tests of the same
// functions (BootstrapMeans' parallel blocks included) do not already run under it.
// The README's test command (no -race) runs every simulation; CI's race run skips them
// to keep internal/metrics inside the 120 s per package (CONTRIBUTING.md, "The test budget").
func skipSimulationUnderRace(t *testing.T) {
	t.Helper()
	racetest.Skip(t, "a seeded simulation (the README's test command and CI's run without -race run it)")
}
