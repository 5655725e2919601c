package e2etest

import (
	"os"
	"testing"
)

// Entries are the names in dir, in order (a test's check that a run wrote
// nothing, or something, there).
func Entries(t testing.TB, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}
