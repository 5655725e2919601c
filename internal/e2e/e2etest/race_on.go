//go:build race

package e2etest

// Race: the tests run with -race, and Binary builds the binary with it too.
const Race = true
