package racetest

import "testing"

// Skip skips t when the binary was built with -race, saying why the test is not
// worth running there (a single-goroutine sweep the race detector slows 4–10×).
// .ci/run runs a package of its race run whose tests import this package a second
// time without -race, so the test still runs in CI.
func Skip(t testing.TB, why string) {
	t.Helper()
	if Enabled {
		t.Skip("not under -race: " + why)
	}
}
