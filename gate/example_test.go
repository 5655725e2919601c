package gate_test

import (
	"context"
	"fmt"
	"os"

	"github.com/retrieval-gate/retrieval-gate/gate"
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
