// Package chromatest holds the helpers shared by the tests that run against a
// real Chroma server ($CHROMA_URL, started by scripts/chroma-local).
package chromatest

import (
	"bytes"
	"encoding/json"
	"net/http"
	neturl "net/url"
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

// collectionsURL is the collections endpoint of the default tenant and database,
// with the path segments (escaped) appended.
func collectionsURL(url string, parts ...string) string {
	u := strings.TrimRight(url, "/") + "/api/v2/tenants/default_tenant/databases/default_database/collections"
	for _, p := range parts {
		u += "/" + neturl.PathEscape(p)
	}
	return u
}

// do sends one request without a body and fails t unless the answer is 2xx.
func do(t testing.TB, method, u, what string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, u, nil)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		_ = resp.Body.Close() // the status is the failure reported
		t.Fatalf("%s: HTTP %d", what, resp.StatusCode)
	}
	return resp
}

// Collections lists the names of the server's collections (up to 1,000), with
// its own request, so that the store's client is checked against the server, not
// against itself.
func Collections(t testing.TB, url string) []string {
	t.Helper()
	what := "list chroma collections at " + url
	resp := do(t, http.MethodGet, collectionsURL(url)+"?limit=1000", what)
	defer resp.Body.Close()
	var cols []struct {
		Name string `json:"name"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&cols); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name
	}
	return names
}

// DeleteCollection deletes the named collection (a test's kept collection), with
// its own request as Collections does.
func DeleteCollection(t testing.TB, url, name string) {
	t.Helper()
	resp := do(t, http.MethodDelete, collectionsURL(url, name), "delete chroma collection "+name+" at "+url)
	_ = resp.Body.Close() // nothing to read: the 2xx status is the answer
}

// RebuildWithHNSW rebuilds the named collection with the HNSW settings of
// hnsw added to its metadata (Chroma's hnsw:M, hnsw:construction_ef,
// hnsw:search_ef, which only a new collection takes): every record (id,
// embedding, document, metadata) is read back, the collection deleted and
// created again under the same name and metadata, and the records added in
// their order, all with its own requests: what an index rebuilt with other
// parameters looks like to the store, which finds its fingerprint unchanged.
func RebuildWithHNSW(t testing.TB, url, name string, hnsw map[string]any) {
	t.Helper()
	what := "rebuild chroma collection " + name + " at " + url
	var col struct {
		ID       string         `json:"id"`
		Metadata map[string]any `json:"metadata"`
	}
	resp := do(t, http.MethodGet, collectionsURL(url, name), what)
	err := json.NewDecoder(resp.Body).Decode(&col)
	_ = resp.Body.Close()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	type records struct {
		IDs        []string         `json:"ids"`
		Embeddings [][]float32      `json:"embeddings"`
		Documents  []string         `json:"documents"`
		Metadatas  []map[string]any `json:"metadatas"`
	}
	var all records
	for offset := 0; ; offset += 1000 {
		var page records
		post(t, collectionsURL(url, col.ID, "get"), map[string]any{"limit": 1000, "offset": offset, "include": []string{"embeddings", "documents", "metadatas"}}, &page, what)
		all.IDs = append(all.IDs, page.IDs...)
		all.Embeddings = append(all.Embeddings, page.Embeddings...)
		all.Documents = append(all.Documents, page.Documents...)
		all.Metadatas = append(all.Metadatas, page.Metadatas...)
		if len(page.IDs) < 1000 {
			break
		}
	}
	DeleteCollection(t, url, name)
	md := map[string]any{}
	for k, v := range col.Metadata {
		md[k] = v
	}
	for k, v := range hnsw {
		md[k] = v
	}
	var created struct {
		ID string `json:"id"`
	}
	post(t, collectionsURL(url), map[string]any{"name": name, "metadata": md}, &created, what)
	for start := 0; start < len(all.IDs); start += 500 {
		end := min(start+500, len(all.IDs))
		post(t, collectionsURL(url, created.ID, "add"), records{IDs: all.IDs[start:end], Embeddings: all.Embeddings[start:end],
			Documents: all.Documents[start:end], Metadatas: all.Metadatas[start:end]}, nil, what)
	}
}

// post sends body as JSON and decodes a 2xx answer into out (nil: none).
func post(t testing.TB, u string, body, out any, what string) {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, u, bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		t.Fatalf("%s: POST %s: HTTP %d", what, u, resp.StatusCode)
	}
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
}
