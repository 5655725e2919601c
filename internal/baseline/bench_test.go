package baseline

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"testing"
)

// BenchmarkLoad reads a gzip --cases-out baseline of 200,000 cases shaped like
// the check benchmark's (query, two gold ids, three scores, rank, five top ids):
// every line passes the jsonpos check, then fastjson decodes it. cpu-ns/op is
// the process's user + system CPU per load (the load runs on every core, so
// its wall time hides CPU that a loaded machine lacks).
//
//	go test ./internal/baseline -run '^$' -bench BenchmarkLoad -benchmem -count 6
func BenchmarkLoad(b *testing.B) {
	var raw bytes.Buffer
	zw := gzip.NewWriter(&raw)
	for i := range 200000 {
		fmt.Fprintf(zw, `{"id":"case-%d","line":%d,"locale":"en","type":"golden","query":"How do I do thing number %d in the product?","gold":["card-%d","card-%d"],"scores":{"retrieval_hit_at_k":1,"retrieval_ndcg_at_k":0.38685280723454163,"retrieval_recall_at_k":0.5},"rank":2,"top":["card-2633","card-%d","card-551","card-1155","card-1983"]}`+"\n",
			i, i+1, i, i%2000, i%2000+1, i%2000)
	}
	if err := zw.Close(); err != nil {
		b.Fatal(err)
	}
	benchLoad(b, raw.Bytes())
}

// BenchmarkLoadFile loads the baseline file named by RETRIEVAL_GATE_BENCH_BASELINE
// (skipped when unset), e.g. BENCHMARKS.md's 1M-case file, read into memory first.
//
//	RETRIEVAL_GATE_BENCH_BASELINE=/tmp/retrieval-gate-bench/check-baseline-1000000-v1.jsonl.gz \
//	  go test ./internal/baseline -run '^$' -bench BenchmarkLoadFile -benchtime 5x -count 6
func BenchmarkLoadFile(b *testing.B) {
	name := os.Getenv("RETRIEVAL_GATE_BENCH_BASELINE")
	if name == "" {
		b.Skip("RETRIEVAL_GATE_BENCH_BASELINE is not set")
	}
	raw, err := os.ReadFile(name)
	if err != nil {
		b.Fatal(err)
	}
	benchLoad(b, raw)
}

func benchLoad(b *testing.B, raw []byte) {
	tmp := b.TempDir()
	b.SetBytes(int64(len(raw)))
	cpu0 := processCPU()
	for b.Loop() {
		bl, err := Load(context.Background(), bytes.NewReader(raw), "base.jsonl.gz", tmp)
		if err != nil {
			b.Fatal(err)
		}
		if err := bl.Close(); err != nil {
			b.Fatal(err)
		}
	}
	if cpu := processCPU() - cpu0; cpu > 0 {
		b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
	}
}
