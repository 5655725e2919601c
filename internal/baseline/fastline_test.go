package baseline

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fastjson"

	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos"
)

// canonicalLine is a case line as check --write-baseline writes it.
const canonicalLine = `{"id":"case-7","line":8,"locale":"en","type":"golden","query":"How do I do thing number 7 in the product?","gold":["card-1007","card-1008"],"scores":{"retrieval_hit_at_k":1,"retrieval_ndcg_at_k":0.38685280723454163,"retrieval_recall_at_k":0.5},"rank":2,"top":["card-2633","card-1007","card-551","card-1155","card-1983"]}`

// FuzzFastRecord: the one-pass reading of a case line (fastRecord) accepts only
// lines the general path accepts (the jsonpos check, then fastjson and
// recordOf), and computes the same record and top-k hashes.
func FuzzFastRecord(f *testing.F) {
	for _, s := range []string{
		canonicalLine, bline("a", "g", 1, 1), bline("b", "", 0, 0), oline("n", "", "abc"), oline("s", "g", "xyz"),
		`{"id":"a","must_cite_one_of":["g","g","","h"],"scores":{"retrieval_hit_at_k":0.5},"top":[]}`,
		`{"id":"a","gold":["x"],"must_cite_one_of":["x"],"line":3,"rank":0,"top":[]}`,
		`{"id":"a","rank":2147483648}`, `{"id":"a","rank":2147483647}`, `{"id":"","scores":{}}`, `{"id":1}`,
		`{"id":"a","top":["x",1]}`, `{"id":"a","scores":{"retrieval_ndcg_at_k":1.5}}`,
		`{"id":"a","scores":{"retrieval_ndcg_at_k":1e-3,"retrieval_hit_at_k":-0}}`,
		`{"id":"a","scores":{"retrieval_hit_at_k":1,"retrieval_hit_at_k":1}}`, `{"id":"a","id":"b"}`,
		`{"id":"a\u00e9","query":"é","line":-1}`, ` { "id" : "a" , "line" : 01 } `, `{"id":"a","line":1.0}`,
		`[1,2]`, `{"id":"a","gold":"g"}`, `{"id":"a","rank":1.5}`, `{"id":"a"} x`, `{"id":"a","top":["\u0001"]}`,
		"{\"id\":\"a\xff\"}", "{\"id\":\"a\x01\"}", `{"id":"a","scores":{"retrieval_hit_at_k":1e400}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		var s jsonpos.Scanner
		var rec record
		var gold [][]byte
		var d detailSpans
		hs, caseLine, ok := fastRecord(&s, line, &rec, nil, &gold, &d)
		if !ok {
			return // the general path decides
		}
		var check jsonpos.Scanner
		require.NoError(t, check.Check(line), "fastRecord accepted a line the jsonpos check refuses")
		var p, q fastjson.Parser
		v, err := p.ParseBytes(append([]byte(nil), line...))
		require.NoError(t, err)
		var want record
		var wantGold [][]byte
		wantHs, wok := recordOf(v, &want, nil, &wantGold)
		require.True(t, wok, "fastRecord accepted a line recordOf refuses")
		assert.Equal(t, want, rec)
		assert.Equal(t, wantHs, hs)
		var c CaseLine
		require.NoError(t, ParseCaseLine(&q, line, "f", 1, &c))
		if v.Get("line") == nil {
			assert.Equal(t, -1, caseLine)
		} else {
			assert.Equal(t, c.Line, caseLine)
		}
		// The detail line gives the id, gold and top k of the whole line.
		var dc CaseLine
		det := appendDetail(nil, &d)
		require.NoError(t, ParseCaseLine(&q, det, "f", 1, &dc), string(det))
		assert.Equal(t, CaseLine{ID: c.ID, Gold: c.Gold, Top: c.Top, HasTop: c.HasTop}, dc, string(det))
	})
}

// TestFastRecordCanonical: the lines the writer writes take the one-pass path
// (the general path is the exception, not the rule).
func TestFastRecordCanonical(t *testing.T) {
	var s jsonpos.Scanner
	var rec record
	var gold [][]byte
	for _, line := range []string{canonicalLine, bline("a", "g", 1, 1), bline("b", "", 0, 0), oline("n", "", "abc")} {
		_, _, ok := fastRecord(&s, []byte(line[:len(line)-len("\n")*boolInt(line[len(line)-1] == '\n')]), &rec, nil, &gold, &detailSpans{})
		assert.True(t, ok, line)
	}
	hs, caseLine, ok := fastRecord(&s, []byte(canonicalLine), &rec, nil, &gold, &detailSpans{})
	require.True(t, ok)
	assert.Equal(t, 8, caseLine)
	assert.Len(t, hs, 5)
	assert.Equal(t, IDHash("case-7"), rec.id)
	assert.Equal(t, GoldHash([]string{"card-1008", "card-1007"}), rec.gold)
	assert.Equal(t, 2, rec.rank())
	assert.True(t, rec.ranked() && rec.hasTop)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
