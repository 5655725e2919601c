//go:build !race

package format

// raceEnabled: the tests run with -race.
const raceEnabled = false
