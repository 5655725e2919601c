package baseline

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"testing"
)

// BenchmarkLoad reads a gzip --cases-out baseline of 200,000 cases shaped like
// the check benchmark's (query, two gold ids, three scores, rank, five top ids):
// every line passes the jsonpos check, then fastjson decodes it.
//
//	go test ./internal/baseline -run '^$' -bench BenchmarkLoad -benchmem -count 3
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
	tmp := b.TempDir()
	b.SetBytes(int64(raw.Len()))
	for b.Loop() {
		bl, err := Load(context.Background(), bytes.NewReader(raw.Bytes()), "base.jsonl.gz", tmp)
		if err != nil {
			b.Fatal(err)
		}
		if err := bl.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
