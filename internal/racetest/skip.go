package racetest

import "testing"

// Skip skips t when the binary was built with -race, saying why the test is not
// worth running there (a single-goroutine sweep the race detector slows 4–10×).
// A package whose tests call it runs in CI both ways (.ci/run), so the test still
// runs in CI, without -race.
func Skip(t testing.TB, why string) {
	t.Helper()
	if Enabled {
		t.Skip("not under -race: " + why)
	}
}
