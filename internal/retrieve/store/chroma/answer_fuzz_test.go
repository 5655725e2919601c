package chroma

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos/jsontest"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store"
)

// answerStore is a Store of collection "c" whose server answers every request
// 200 with body, without a socket.
func answerStore(body []byte) *Store {
	hc := jsontest.AnswerClient(body)
	return &Store{client: newClient("http://chroma.test", DefaultTenant, DefaultDatabase, hc),
		col: &collection{ID: "c", Name: "c"}, name: "c", maxID: 64}
}

// refQuery reads Chroma's answer to a query of n vectors for k results apart
// from the client: {"ids": [[...], ...], "distances": [[...], ...]}, one list
// of each per query vector, a query's ids and distances of one length, at
// most k, no id or distance null, distances non-decreasing (nearest first).
// It returns the hits
// (score 1 - distance); ok is false when the answer breaks that.
func refQuery(data []byte, n, k int) ([][]store.Hit, bool) {
	v, ok := jsontest.Strict(data)
	obj, isObj := v.(map[string]any)
	if !ok || !isObj {
		return nil, false
	}
	ids, isArr1 := jsontest.Field(obj, "ids").([]any)
	dists, isArr2 := jsontest.Field(obj, "distances").([]any)
	if !isArr1 || !isArr2 || len(ids) != n || len(dists) != n {
		return nil, false
	}
	out := make([][]store.Hit, n)
	for q := range n {
		qi, isArr1 := ids[q].([]any)
		qd, isArr2 := dists[q].([]any)
		// A null list is an empty one (encoding/json's reading; no result).
		isArr1, isArr2 = isArr1 || ids[q] == nil, isArr2 || dists[q] == nil
		if !isArr1 || !isArr2 || len(qi) != len(qd) || len(qi) > k {
			return nil, false
		}
		out[q] = make([]store.Hit, len(qi))
		prev := 0.0
		for r := range qi {
			id, isStr := qi[r].(string)
			num, isNum := qd[r].(json.Number)
			if !isStr || !isNum {
				return nil, false
			}
			d, err := strconv.ParseFloat(string(num), 64)
			if err != nil || (r > 0 && d < prev) {
				return nil, false
			}
			prev = d
			out[q][r] = store.Hit{ID: id, Score: 1 - d}
		}
	}
	return out, true
}

// FuzzQueryAnswer holds Search to a reader of Chroma's query answer written
// apart from the client (refQuery): an accepted answer is one that reader
// accepts, giving the same hits for each query (the Store contract: up to k
// hits per query, best first); one it refuses (not the answer's shape, a
// query without its list, more than k results, ids and distances of other
// lengths, distances out of order, two keys that differ only in case) is
// refused.
func FuzzQueryAnswer(f *testing.F) {
	for _, s := range []struct {
		body string
		n, k uint8
	}{
		{`{"ids":[["a","b"]],"distances":[[0.1,0.25]],"documents":null,"include":["distances"]}`, 1, 2},
		{`{"ids":[["a"],[]],"distances":[[0],[]]}`, 2, 1},
		{`{"ids":[["a"]],"distances":[[0.5]]}`, 2, 1},
		{`{"ids":[],"distances":[]}`, 1, 1},
		{`{"ids":[["a","b"]],"distances":[[0.1,0.2]]}`, 1, 1},
		{`{"ids":[["a","b"]],"distances":[[0.3,0.2]]}`, 1, 2},
		{`{"ids":[["a"]],"distances":[[0.1,0.2]]}`, 1, 2},
		{`{"ids":[["a"]],"distances":[[0.1]],"IDS":[["b"]]}`, 1, 1},
		{`{"ids":[["a"]],"distances":[["x"]]}`, 1, 1},
		{`{"ids":[["a"]]}`, 1, 1},
		{`[]`, 1, 1},
	} {
		f.Add([]byte(s.body), s.n, s.k)
	}
	f.Fuzz(func(t *testing.T, body []byte, n, k uint8) {
		nq, nk := (int(n)+2)%3+1, (int(k)+2)%3+1 // 1..3 each
		qs := make([]store.Query, nq)
		for i := range qs {
			qs[i] = store.Query{Vector: []float32{1, float32(i)}}
		}
		got, err := answerStore(body).Search(context.Background(), qs, nk)
		want, ok := refQuery(body, nq, nk)
		jsontest.Agree(t, body, want, ok, got, err)
	})
}

// Search refuses an answer that breaks Chroma's query semantics, where it
// read a missing list as no hits, kept more than k, out of order, a null id
// as "", and two keys that differ only in case as the last.
func TestSearchRefusesMalformedAnswers(t *testing.T) {
	two := []store.Query{{Vector: []float32{1, 0}}, {Vector: []float32{0, 1}}}
	tests := []struct {
		name, body, wantErr string
		qs                  []store.Query
		k                   int
	}{
		{"a list short", `{"ids":[["a"]],"distances":[[0.5]]}`, "1 id lists and 1 distance lists for 2 query vectors", two, 1},
		{"no lists", `{"ids":[],"distances":[]}`, "0 id lists and 0 distance lists for 2 query vectors", two, 1},
		{"more than k", `{"ids":[["a","b"],[]],"distances":[[0.1,0.2],[]]}`, "vector 0: 2 ids and 2 distances (n_results 1)", two, 1},
		{"out of order", `{"ids":[["a","b"],[]],"distances":[[0.3,0.2],[]]}`, "vector 0: distances out of order", two, 2},
		{"null id", `{"ids":[[null],[]],"distances":[[0.1],[]]}`, "vector 0: result 0: a null id or distance", two, 1},
		{"null distance", `{"ids":[["a"],[]],"distances":[[null],[]]}`, "vector 0: result 0: a null id or distance", two, 1},
		{"folded keys", `{"ids":[["a"],[]],"distances":[[0.1],[]],"IDS":[["b"],[]]}`, "decoding the answer", two, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := answerStore([]byte(tt.body)).Search(context.Background(), tt.qs, tt.k)
			require.ErrorContains(t, err, tt.wantErr)
		})
	}
	hits, err := answerStore([]byte(`{"ids":[["a","b"],[]],"distances":[[0.25,0.25],[]]}`)).Search(context.Background(), two, 2)
	require.NoError(t, err)
	require.Equal(t, [][]store.Hit{{{ID: "a", Score: 0.75}, {ID: "b", Score: 0.75}}, {}}, hits)
}
