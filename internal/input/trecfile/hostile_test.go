package trecfile

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBOMStripped: a UTF-8 BOM is not part of the first query id (issue 10: it
// made nDCG 0.5 instead of 1.0).
func TestBOMStripped(t *testing.T) {
	q, err := ReadQrels(context.Background(), writeTemp(t, "q.qrels", "\xef\xbb\xbfq1 0 d1 1\n"))
	require.NoError(t, err)
	assert.Equal(t, "q1", q.QueryID(0))
	q, err = ReadQrels(context.Background(), writeTemp(t, "q.jsonl", "\xef\xbb\xbf"+`{"query_id":"q1","doc_id":"d1","relevance":1}`+"\n"))
	require.NoError(t, err)
	assert.Equal(t, "q1", q.QueryID(0))
	for _, opt := range []RunOptions{{}, {Workers: 2, ChunkSize: 7}} {
		r, err := readRunString(t, "\xef\xbb\xbfq1 Q0 d1 1 0.5 t\nq2 Q0 d1 1 0.5 t\n", 5, opt)
		require.NoError(t, err)
		assert.Equal(t, "q1", r.Queries[0].ID)
	}
	f, err := os.Open(writeTemp(t, "run.txt", "\xef\xbb\xbfq1 Q0 d1 1 0.5 t\n"))
	require.NoError(t, err)
	defer f.Close()
	r, err := ParseTRECRun(context.Background(), f, "run.txt", 5)
	require.NoError(t, err)
	assert.Equal(t, "q1", r.Queries[0].ID)
}

// TestLineCap: a line over MaxLineBytes is an input error at its line, in every
// TREC reader (a 100 MB line used to take 444 MB of memory).
func TestLineCap(t *testing.T) {
	long := "q Q0 " + strings.Repeat("d", MaxLineBytes+10) + " 1 0.5 t\n"
	content := "q Q0 a 1 0.5 t\n" + long + "q Q0 b 1 0.5 t\n"
	for _, opt := range []RunOptions{{}, {Workers: 2, ChunkSize: 1 << 16}} {
		_, err := readRunString(t, content, 5, opt)
		require.ErrorContains(t, err, "run.txt:2: line longer than 1 MiB")
	}
	f, err := os.Open(writeTemp(t, "run.txt", content))
	require.NoError(t, err)
	defer f.Close()
	_, err = ParseTRECRun(context.Background(), f, "seq", 5)
	require.ErrorContains(t, err, "seq:2: line longer than 1 MiB")
	_, err = ReadQrels(context.Background(), writeTemp(t, "q.qrels", "q 0 a 1\nq 0 "+strings.Repeat("d", MaxLineBytes+10)+" 1\n"))
	require.ErrorContains(t, err, "q.qrels:2: line longer than 1 MiB")
	// A line of exactly the cap is fine.
	ok := "q Q0 " + strings.Repeat("d", MaxLineBytes-len("q Q0  1 0.5 t")) + " 1 0.5 t\n"
	_, err = readRunString(t, ok, 5, RunOptions{Workers: 2, ChunkSize: 1 << 16})
	require.NoError(t, err)
}

// TestOneNumberRule: relevance and scores are finite decimals, in every format.
func TestOneNumberRule(t *testing.T) {
	for _, rel := range []string{"1e400", "-1e400", "1.5", `"1"`, "true"} {
		_, err := ReadQrels(context.Background(), writeTemp(t, "q.jsonl", `{"query_id":"q","doc_id":"d","relevance":`+rel+`}`+"\n"))
		require.Error(t, err, rel)
		assert.NotContains(t, err.Error(), "relevance -1", rel)
	}
	_, err := ReadQrels(context.Background(), writeTemp(t, "q.jsonl", `{"query_id":"q","doc_id":"d","relevance":1e400}`+"\n"))
	require.ErrorContains(t, err, `q.jsonl:1: "relevance" must be an integer -128..127, got 1e400`)
	for _, s := range []string{"inf", "-Inf", "NaN", "1e400", "0x1p3", "1_000"} {
		_, err := readRunString(t, "q Q0 d 1 "+s+" t\n", 5, RunOptions{})
		require.ErrorContains(t, err, "run.txt:1: score", s)
	}
}
