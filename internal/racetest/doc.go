// Package racetest tells a test whether its binary was built with -race, for
// the tests that skip or shrink work there: allocation counts (sync.Pool drops
// a quarter of its Puts under the race detector on purpose), seeded simulations
// and multi-hundred-megabyte streams on one goroutine, which the race detector
// slows 4–10× and where it can find nothing. CI runs the packages whose code
// runs goroutines under -race (.ci/run), and those whose tests import this
// package without it as well.
package racetest
