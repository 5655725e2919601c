package report_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/retrieval-gate/retrieval-gate/gate"
	"github.com/retrieval-gate/retrieval-gate/report"
)

// Render a saved --json report again: here the document gate.Check writes
// (the bytes of `check --json`), read back and its Markdown's heading printed
// with another comment key.
func ExampleRead() {
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
	rep, err := gate.Check(ctx, cases, kb, gate.Options{})
	if err != nil {
		panic(err)
	}
	var saved bytes.Buffer
	if err := rep.WriteJSON(&saved); err != nil {
		panic(err)
	}

	doc, err := report.Read(ctx, &saved, "retrieval-gate.json")
	if err != nil {
		panic(err)
	}
	doc.CommentKey = "nightly"
	var md strings.Builder
	if err := doc.WriteMarkdown(&md); err != nil {
		panic(err)
	}
	lines := strings.SplitN(md.String(), "\n", 3)
	fmt.Println(doc.Command())
	fmt.Println(lines[0])
	fmt.Println(lines[1])
	// Output:
	// check
	// <!-- retrieval-gate:nightly -->
	// ## ✅ retrieval-gate: pass
}
