package judge_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/input/inputtest"
	"github.com/retrieval-gate/retrieval-gate/internal/judge"
)

// TestReadQueries: TSV and cases JSONL told apart by the first non-blank byte
// (after a BOM and blank lines), a duplicate TSV id named with its first line,
// and a file over the cap refused whatever it holds, read no further than
// one byte past the cap.
func TestReadQueries(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name, in string
		want     map[string]string // id → text
		err      string
	}{
		{name: "tsv", in: "\uFEFF\nq1\t what is rba \r\n\nq2\tsecond\n", want: map[string]string{"q1": "what is rba", "q2": "second"}},
		{name: "jsonl after blank lines", in: "\n \n{\"id\":\"c1\",\"query\":\"first\",\"locale\":\"de\"}\n{\"id\":\"c2\"}\n",
			want: map[string]string{"c1": "first"}},
		{name: "duplicate", in: "q1\ta\n\nq2\tb\nq1\tc\n", err: `queries.tsv:4: duplicate query id "q1" (first on line 1)`},
		{name: "not tsv", in: "q1 a\n", err: `queries.tsv:1: want "qid<TAB>query text"`},
		{name: "empty", in: "\n\n", err: "queries.tsv: no queries"},
	} {
		t.Run(c.name, func(t *testing.T) {
			qs, err := judge.ReadQueries(ctx, strings.NewReader(c.in), "queries.tsv")
			if c.err != "" {
				require.EqualError(t, err, c.err)
				return
			}
			require.NoError(t, err)
			got := map[string]string{}
			for id, q := range qs {
				assert.Equal(t, id, q.ID)
				got[id] = q.Text
			}
			assert.Equal(t, c.want, got)
		})
	}

	// The cap: a file of exactly max bytes is read; one byte more is refused
	// (TSV and JSONL alike), and an endless one is read one byte past the cap.
	tsv := "q1\tfirst\nq2\tsecond\n"
	qs, err := judge.ReadQueriesCapped(ctx, strings.NewReader(tsv), "queries.tsv", int64(len(tsv)))
	require.NoError(t, err)
	assert.Len(t, qs, 2)
	_, err = judge.ReadQueriesCapped(ctx, strings.NewReader(tsv+"\n"), "queries.tsv", int64(len(tsv)))
	require.EqualError(t, err, "queries.tsv: larger than 19 bytes, the cap of a queries file")
	jsonl := `{"id":"c1","query":"first"}` + "\n"
	_, err = judge.ReadQueriesCapped(ctx, strings.NewReader(jsonl+jsonl), "cases.jsonl", int64(len(jsonl)))
	require.EqualError(t, err, "cases.jsonl: larger than 28 bytes, the cap of a queries file")
	endless := &inputtest.CountingReader{R: zeros{}}
	_, err = judge.ReadQueriesCapped(ctx, endless, "zero", 1<<20)
	require.EqualError(t, err, "zero: larger than 1048576 bytes, the cap of a queries file")
	assert.Equal(t, int64(1<<20+1), endless.N)
}

// TestReadQueriesStreams: the file is read as a stream, not held whole
// beside the queries it holds: 8 MiB of long queries allocate less than twice
// their size (held whole first, about four times).
func TestReadQueriesStreams(t *testing.T) {
	var b strings.Builder
	text := strings.Repeat("x", 512<<10)
	for i := range 16 {
		fmt.Fprintf(&b, "q%d\t%s\n", i, text)
	}
	in := b.String()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	qs, err := judge.ReadQueries(context.Background(), strings.NewReader(in), "queries.tsv")
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	require.Len(t, qs, 16)
	allocated := after.TotalAlloc - before.TotalAlloc
	assert.Less(t, allocated, uint64(2*len(in)), "allocated %d bytes for a file of %d", allocated, len(in))
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
