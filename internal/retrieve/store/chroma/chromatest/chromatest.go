// Package chromatest holds the helpers shared by the tests that run against a
// real Chroma server ($CHROMA_URL, started by scripts/chroma-local).
package chromatest

import (
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
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

// Collections lists the names of the server's collections (up to 1,000), with
// its own request, so that the store's client is checked against the server, not
// against itself.
func Collections(t testing.TB, url string) []string {
	t.Helper()
	u := strings.TrimRight(url, "/") + "/api/v2/tenants/default_tenant/databases/default_database/collections?limit=1000"
	resp, err := http.Get(u)
	if err != nil {
		t.Fatalf("list chroma collections at %s: %v", url, err)
	}
	defer resp.Body.Close()
	var cols []struct {
		Name string `json:"name"`
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("list chroma collections at %s: HTTP %d", url, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(&cols); err != nil {
		t.Fatalf("list chroma collections at %s: %v", url, err)
	}
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name
	}
	return names
}
