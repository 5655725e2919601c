//go:build !race

package main

// raceEnabled: the tests run with -race (docBinary builds the binary with it too).
const raceEnabled = false
