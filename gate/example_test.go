package gate_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/gate"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store/chroma/chromatest"
)

// Check the demo's retrieved cases against its knowledge base, with a floor
// on the overall hit rate.
func ExampleCheck() {
	ctx := context.Background()
	kb, err := gate.LoadKB(ctx, "../testdata/demo/kb")
	if err != nil {
		panic(err)
	}
	cases, err := os.Open("../testdata/demo/cases.jsonl")
	if err != nil {
		panic(err)
	}
	defer cases.Close()
	rep, err := gate.Check(ctx, cases, kb, gate.Options{K: 5, Floors: []string{"retrieval_hit_at_k=0.7"}})
	if err != nil {
		panic(err)
	}
	fmt.Println("verdict:", rep.Verdict())
	for _, g := range rep.Gates() {
		fmt.Printf("%s %s n=%d\n", g.Name, g.Status, g.N)
	}
	// Output:
	// verdict: pass
	// integrity pass n=156
	// min_hit off n=132
	// min_recall off n=132
	// non_empty pass n=132
	// floor:retrieval_hit_at_k@overall pass n=132
}

// The live gate: index the demo KB in the embedded store with the built-in
// hash embedder, retrieve each case's query (dense), then check.
func ExampleLive() {
	cases, err := os.Open("../testdata/demo/cases.jsonl")
	if err != nil {
		panic(err)
	}
	defer cases.Close()
	rep, err := gate.Live(context.Background(), gate.LiveOptions{
		KB: "../testdata/demo/kb", Cases: cases, Strategy: gate.StrategyDense,
		Check: gate.Options{Floors: []string{"retrieval_recall_at_k=0.8"}},
	})
	if err != nil {
		panic(err)
	}
	overall := rep.Groups()[0]
	fmt.Printf("%s: %d cases, passed: %v\n", overall.Name, overall.N, rep.Passed())
	// Output:
	// overall: 132 cases, passed: true
}

// The options Live runs with: the zero value resolved to `retrieve`'s
// defaults, and a setting refused before any work, named by its field.
func ExampleLiveOptions_Resolve() {
	o, err := gate.LiveOptions{}.Resolve()
	if err != nil {
		panic(err)
	}
	fmt.Println(o.Strategy, o.Retrieve, o.Store, o.Embedder)
	o, err = gate.LiveOptions{StoreURL: "http://localhost:8000"}.Resolve()
	if err != nil {
		panic(err)
	}
	fmt.Println(o.Store)
	_, err = gate.LiveOptions{Embedder: gate.EmbedderOllama}.Resolve()
	fmt.Println(err)
	// Output:
	// hybrid 10 memory hash
	// chroma
	// gate: the ollama embedder needs LiveOptions.EmbedderModel (e.g. nomic-embed-text)
}

// A knowledge base that cannot be read is an error naming the file and line
// (here a JSON Lines knowledge base whose second card repeats the first's id).
func ExampleLoadKB() {
	dir, err := os.MkdirTemp("", "kb")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "kb.jsonl")
	cards := `{"id": "reset-password", "locale": "en", "title": "Reset", "text": "Use the link."}` + "\n" +
		`{"id": "reset-password", "locale": "en", "title": "Again", "text": "The same id."}` + "\n"
	if err := os.WriteFile(path, []byte(cards), 0o600); err != nil {
		panic(err)
	}
	_, err = gate.LoadKB(context.Background(), path)
	fmt.Println(strings.ReplaceAll(err.Error(), dir, "DIR"))
	// Output:
	// DIR/kb.jsonl:2: duplicate card id "reset-password" (first defined at DIR/kb.jsonl:1)
}

// An entry of a knowledge-base directory that is not read (here a symbolic
// link to a card that is not there) is no error, as it is none for `check`
// and `retrieve`: Skipped names it, as the commands' warnings do, and a check
// against the knowledge base has it among its Warnings.
func ExampleKB_Skipped() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "kb")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	card := "---\nid: reset-password\nlocale: en\ntitle: Reset\n---\nUse the link.\n"
	if err := os.WriteFile(filepath.Join(dir, "reset.md"), []byte(card), 0o600); err != nil {
		panic(err)
	}
	if err := os.Symlink("drafts/billing.md", filepath.Join(dir, "billing.md")); err != nil {
		panic(err)
	}
	kb, err := gate.LoadKB(ctx, dir)
	if err != nil {
		panic(err)
	}
	for _, s := range kb.Skipped() {
		fmt.Println(strings.ReplaceAll(s, dir, "DIR"))
	}
	cases := strings.NewReader(`{"id": "1", "locale": "en", "must_cite_one_of": ["reset-password"], "retrieved": ["reset-password"]}` + "\n")
	rep, err := gate.Check(ctx, cases, kb, gate.Options{})
	if err != nil {
		panic(err)
	}
	fmt.Println("verdict:", rep.Verdict())
	for _, w := range rep.Warnings() {
		fmt.Println("warning:", strings.ReplaceAll(w, dir, "DIR"))
	}
	// Output:
	// DIR/billing.md: a symbolic link that cannot be resolved
	// verdict: pass
	// warning: knowledge base: skipped DIR/billing.md: a symbolic link that cannot be resolved
}

// A temporary collection Live could not delete: the run's report is complete
// and returned, and the error, a *gate.CleanupError, says that the collection
// is left on the server (its name in the message: delete it there). The
// server here is a Chroma stand-in that refuses every delete.
func ExampleCleanupError() {
	standIn := chromatest.NewStandIn("", "")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			chromatest.WriteJSON(w, http.StatusForbidden, map[string]string{"detail": "Forbidden"})
			return
		}
		standIn.ServeHTTP(w, r)
	}))
	defer srv.Close()
	cases := strings.NewReader(`{"id": "a", "query": "reset my password", "gold": ["en-reset"]}` + "\n")
	rep, err := gate.Live(context.Background(), gate.LiveOptions{
		KB: "../testdata/demo/kb", Cases: cases, Strategy: gate.StrategyDense, StoreURL: srv.URL,
	})
	var ce *gate.CleanupError
	if errors.As(err, &ce) {
		fmt.Println("cleanup failed:", strings.Contains(err.Error(), "failed to delete temporary chroma collection"))
		fmt.Println("report of the run:", rep.Verdict() != "")
	} else if err != nil {
		panic(err)
	}
	// Output:
	// cleanup failed: true
	// report of the run: true
}
