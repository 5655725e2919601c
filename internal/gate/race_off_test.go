//go:build !race

package gate

// raceEnabled: the tests run with -race.
const raceEnabled = false
