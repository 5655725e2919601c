package cli

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/input/inputtest"
	"github.com/retrieval-gate/retrieval-gate/internal/judge"
	"github.com/retrieval-gate/retrieval-gate/internal/unixtest"
)

// A query or document the pool refuses is named at its line in the run: in
// one file at the line there, in a run of shards (a directory, a glob
// pattern) at the shard and its line there, in a Parquet run at its row. A
// sharded run was named as given, with no line.
func TestLocatePoolError(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
		return p
	}
	one := write("one.trec", "q1 Q0 a 1 0.9 t\nq2 Q0 a 1 0.9 t\nq2 Q0 zz 2 0.8 t\n")
	trec := filepath.Join(dir, "trec")
	write("trec/part-0", "q1 Q0 a 1 0.9 t\nq2 Q0 a 1 0.9 t\n")
	write("trec/part-1", "q3 Q0 b 1 0.9 t\nq3 Q0 zz 2 0.8 t\n")
	write("trec/_SUCCESS", "")
	cases := filepath.Join(dir, "cases")
	write("cases/part-0.jsonl", `{"id": "q1", "retrieved": ["a"]}`+"\n")
	write("cases/part-1.jsonl", `{"id": "q2", "retrieved": ["a"]}`+"\n\n"+`{"id": "q3", "retrieved": ["zz"]}`+"\n")
	parquet := filepath.Join("..", "..", "testdata", "parquet", "runs", "bm25.parquet") // a TREC table: bm25.trec's rows
	fifo := filepath.Join(dir, "fifo")
	unixtest.Mkfifo(t, fifo, 0o600)

	for _, tc := range []struct {
		name, file, format, query, doc string
		want                           string // "": the error as it was
	}{
		{"one file", one, "trec", "q2", "zz", one + ":3: run \"r\": msg"},
		{"one file, the query", one, "trec", "q2", "", one + ":2: run \"r\": msg"},
		{"a directory of TREC shards", trec, "trec", "q3", "zz", filepath.Join(trec, "part-1") + ":2: run \"r\": msg"},
		{"a glob of TREC shards", filepath.Join(trec, "part-*"), "trec", "q3", "", filepath.Join(trec, "part-1") + ":1: run \"r\": msg"},
		{"a directory of cases shards", cases, "cases", "q3", "zz", filepath.Join(cases, "part-1.jsonl") + ":3: run \"r\": msg"},
		{"a Parquet run, at its row", parquet, "trec", "q001", "d001-15", parquet + ":2: run \"r\": msg"},
		{"not found", trec, "trec", "q9", "", ""},
		{"a named pipe is not read again", fifo, "trec", "q1", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pe := &judge.PoolError{Run: "r", File: tc.file, Format: tc.format, Query: tc.query, Doc: tc.doc, Msg: "msg"}
			got := locatePoolError(context.Background(), pe)
			if tc.want == "" {
				assert.Same(t, error(pe), got)
				return
			}
			require.EqualError(t, got, tc.want)
			assert.NotErrorAs(t, got, new(*judge.PoolError))
		})
	}
}

// The run is read again after the pool refused it: an interrupt stops that
// reading too, a TREC run's as a cases run's (which the cases reader stops),
// instead of reading a long run to its end.
func TestLocateInRunStopsWhenInterrupted(t *testing.T) {
	const lines = 1 << 20
	line := []byte("q1 Q0 doc 1 0.9 t\n")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	r := &inputtest.CountingReader{R: io.LimitReader(&repeatReader{line: line}, int64(lines*len(line)))}
	assert.Equal(t, 0, lineInRun(ctx, r, "run.trec", "trec", "q2", ""))
	assert.Less(t, r.N, int64(lines*len(line)/8), "read %d of %d bytes after the interrupt", r.N, lines*len(line))
}

// repeatReader reads line again and again.
type repeatReader struct {
	line []byte
	off  int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		k := copy(p[n:], r.line[r.off:])
		n += k
		r.off = (r.off + k) % len(r.line)
	}
	return n, nil
}
