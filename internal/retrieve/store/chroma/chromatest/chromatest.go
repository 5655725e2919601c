// Package chromatest holds the helpers shared by the tests that run against a
// real Chroma server ($CHROMA_URL, started by scripts/chroma-local).
package chromatest

import (
	"context"
	"os"
	"testing"

	v2 "github.com/amikos-tech/chroma-go/pkg/api/v2"
)

// URL returns $CHROMA_URL. Without it the test is skipped with a message, except
// when $CI is set (as CI services set it): there a missing server is a failure,
// so CI can never skip the Chroma tests silently.
func URL(t testing.TB) string {
	t.Helper()
	u := os.Getenv("CHROMA_URL")
	if u == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("CHROMA_URL is empty in CI (CI is set): start a server with `export CHROMA_URL=$(scripts/chroma-local start | tail -n 1)`")
		}
		t.Skip("CHROMA_URL not set: run `export CHROMA_URL=$(scripts/chroma-local start | tail -n 1)` to run the Chroma integration tests")
	}
	return u
}

// Collections lists the names of the server's collections (up to 1,000).
func Collections(t testing.TB, url string) []string {
	t.Helper()
	c, err := v2.NewHTTPClient(v2.WithBaseURL(url))
	if err != nil {
		t.Fatalf("chroma client for %s: %v", url, err)
	}
	defer c.Close()
	cols, err := c.ListCollections(context.Background(), v2.ListWithLimit(1000))
	if err != nil {
		t.Fatalf("list chroma collections at %s: %v", url, err)
	}
	var names []string
	for _, col := range cols {
		names = append(names, col.Name())
	}
	return names
}
