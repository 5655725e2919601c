package summary

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store"
)

func TestANNCheckWords(t *testing.T) {
	iv := metrics.Interval{Lo: 0.975, Hi: 0.988, Method: metrics.MethodHallT}
	sample := &retrieve.ANNCheck{Depth: 50, Sample: 1000, Queries: 100000, N: 998, NoNeighbour: 2, Perfect: 974, Recall: 0.982, CI95: iv,
		Export: store.ExportCost{Records: 100000, Requests: 100, Bytes: 1234567890}}
	assert.Equal(t, "exact check of a sample of 1000 of the 100000 queries by case id: the store's recall@50 against exact search 0.982 [0.975, 0.988] (hall-t, n = 998), 974 of them with recall 1; 2 without an exact neighbour (no record of their locale) not counted; its 100000 vectors read back in 100 request(s), 1234567890 bytes",
		ANNCheck(sample))
	all := &retrieve.ANNCheck{Depth: 10, Sample: retrieve.ExactAll, Queries: 156, N: 0, NoNeighbour: 156, Recall: math.NaN(), Export: store.ExportCost{Records: 38}}
	assert.Equal(t, "exact check of every one of the 156 queries: no query had an exact neighbour; 156 without an exact neighbour (no record of their locale) not counted; its 38 vectors read back in process",
		ANNCheck(all))
	g := outcome.New(retrieve.GateMinANNRecall, outcome.Fail)
	g.Threshold = 0.99
	g.Why = []outcome.Clause{{Code: outcome.ANNRecallBelow, Value: 0.982, Threshold: 0.99, N: 998, M: 50}}
	assert.Equal(t, "min_ann_recall 0.990: fail (the index's recall@50 against exact search, 0.982 over 998 queries, is below the floor 0.990)", ANNGate(g))

	res := &retrieve.RunResult{Cases: 100000, Chunks: 100000, Cards: 100000, Strategy: "hybrid", Store: "chroma", Embedder: "hash", K: 10, ANN: sample}
	sample.Gate = g
	assert.Equal(t, "**retrieval-gate retrieve**: 100000 cases retrieved from 100000 chunks of 100000 cards (strategy hybrid, store chroma, embedder hash, k = 10), written to run.jsonl.\n\n"+
		"Exact check of a sample of 1000 of the 100000 queries by case id: the store's recall@50 against exact search 0.982 [0.975, 0.988] (hall-t, n = 998), 974 of them with recall 1; 2 without an exact neighbour (no record of their locale) not counted; its 100000 vectors read back in 100 request(s), 1234567890 bytes.\n\n"+
		"❌ min_ann_recall 0.990: fail (the index's recall@50 against exact search, 0.982 over 998 queries, is below the floor 0.990).\n",
		Retrieve(res, "run.jsonl"))
}
