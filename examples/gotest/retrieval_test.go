// Package gotest is a user's repository in miniature: its go test gates
// retrieval with the public API of retrieval-gate (docs/library.md).
package gotest

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/retrieval-gate/retrieval-gate/gate"
)

// The live gate: the KB in the embedded store (or Chroma, which a StoreURL implies, when CHROMA_URL is
// set), the cases' queries retrieved, then checked against a recall floor.
func TestRetrievalLive(t *testing.T) {
	cases, err := os.Open("../../testdata/demo/cases.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer cases.Close()
	rep, err := gate.Live(context.Background(), gate.LiveOptions{
		KB: "../../testdata/demo/kb", Cases: cases, Strategy: gate.StrategyDense, StoreURL: os.Getenv("CHROMA_URL"), // "": the embedded store
		Check: gate.Options{Floors: []string{"retrieval_recall_at_k=0.8"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range rep.Warnings() { // what check prints on standard error: skipped KB files, ...
		t.Log("warning:", w)
	}
	if !rep.Passed() {
		t.Fatalf("retrieval gate failed:\n%s", text(rep))
	}
}

// A committed run file, checked as `retrieval-gate check` would.
func TestRetrievalCommitted(t *testing.T) {
	ctx := context.Background()
	kb, err := gate.LoadKB(ctx, "../../testdata/demo/kb")
	if err != nil {
		t.Fatal(err)
	}
	cases, err := os.Open("../../testdata/demo/cases.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer cases.Close()
	rep, err := gate.Check(ctx, cases, kb, gate.Options{Floors: []string{"retrieval_hit_at_k=0.7"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range rep.Gates() {
		t.Logf("%-40s %-4s n=%d %s", g.Name, g.Status, g.N, g.Reason)
	}
	if !rep.Passed() {
		t.Fatalf("retrieval gate failed:\n%s", text(rep))
	}
}

// text is the report as `retrieval-gate check` prints it, for a failing
// test's message.
func text(rep *gate.Report) string {
	var b strings.Builder
	_ = rep.WriteText(&b)
	return b.String()
}
