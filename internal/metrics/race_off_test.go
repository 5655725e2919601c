//go:build !race

package metrics

// raceEnabled: the tests run with -race.
const raceEnabled = false
