package baseline

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fastjson"

	"github.com/retrieval-gate/retrieval-gate/internal/input/jsonpos"
)

// FuzzRecordOf: the load's allocation-free reading of a case line (recordOf)
// accepts only lines ParseCaseLine accepts, and computes the same record and
// top-k hashes.
func FuzzRecordOf(f *testing.F) {
	for _, s := range []string{
		bline("a", "g", 1, 1), bline("b", "", 0, 0), oline("n", "", "abc"), oline("s", "g", "xyz"),
		`{"id":"a","must_cite_one_of":["g","g","","h"],"scores":{"retrieval_hit_at_k":0.5,"other":"x"},"top":null}`,
		`{"id":"a","gold":null,"must_cite_one_of":["x"],"line":3,"rank":0,"top":[]}`,
		`{"id":"a","rank":2147483648}`, `{"id":"","scores":{}}`, `{"id":1}`, `{"id":"a","top":["x",1]}`,
		`{"id":"a","scores":{"retrieval_ndcg_at_k":1.5}}`, `{"id":"a\u00e9\n","locale":null,"query":"q\"","line":-1}`,
		`[1,2]`, `{"id":"a","gold":"g"}`, `{"id":"a","rank":1.5}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		var check jsonpos.Scanner
		if check.Check(line) != nil {
			return // the load stops at the jsonpos check first
		}
		var p, q fastjson.Parser
		v, err := p.ParseBytes(append([]byte(nil), line...))
		if err != nil {
			return
		}
		var rec record
		var gold [][]byte
		hs, ok := recordOf(v, &rec, nil, &gold)
		var c CaseLine
		perr := ParseCaseLine(&q, line, "f", 1, &c)
		if !ok {
			return // the caller asks ParseCaseLine, whichever it answers
		}
		require.NoError(t, perr, "recordOf accepted a line ParseCaseLine refuses")
		require.LessOrEqual(t, c.Rank, 1<<31-1)
		want := caseRecord(&c)
		assert.Equal(t, want, rec)
		var wantHs []uint64
		if want.hasTop {
			for _, id := range c.Top[:min(len(c.Top), maxTopDepth)] {
				wantHs = append(wantHs, IDHash(id))
			}
		}
		assert.Equal(t, wantHs, hs)
	})
}
