package compare_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

// TestRunReadsItsReaders: compare.Run reads the readers it is given and opens
// nothing: the inputs are named by paths that do not exist, the runs are an
// open file (parsed in parallel ranges), a *bytes.Reader and a plain reader,
// and the result is the one of the demo's files; the human sheet reaches the
// comparison without being set in the caller's options.
func TestRunReadsItsReaders(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "compare")
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		return b
	}
	opt := compare.Options{K: 10, Gain: metrics.GainExp, RelevantLevel: 2, Primary: compare.Primary, Resamples: 200, Seed: 1}
	open := func(name string) *os.File {
		f, err := os.Open(filepath.Join(dir, name))
		require.NoError(t, err)
		t.Cleanup(func() { f.Close() })
		return f
	}
	in := func(human string) compare.In {
		in := compare.In{Qrels: compare.Reader{Name: "missing/qrels.trec", R: bytes.NewReader(read("qrels.trec"))},
			Runs: []compare.RunReader{
				{Strategy: "bm25", Reader: compare.Reader{Name: "missing/bm25.trec", R: open("bm25.trec")}},
				{Strategy: "dense", Reader: compare.Reader{Name: "missing/dense.trec", R: bytes.NewReader(read("dense.trec"))}},
				{Strategy: "hybrid", Reader: compare.Reader{Name: "missing/hybrid.trec", R: strings.NewReader(string(read("hybrid.trec")))}},
			}}
		if human != "" {
			in.HumanQrels = compare.Reader{Name: "missing/sheet.csv", R: strings.NewReader(human)}
		}
		return in
	}
	res, err := compare.Run(context.Background(), in(""), opt)
	require.NoError(t, err)
	require.Len(t, res.Strategies, 3)
	assert.Equal(t, "missing/dense.trec", res.Strategies[1].File)
	assert.Nil(t, res.Human)

	// The same runs read from their files give the same numbers.
	var runs []compare.RunReader
	for _, n := range []string{"bm25", "dense", "hybrid"} {
		runs = append(runs, compare.RunReader{Strategy: n, Reader: compare.Reader{Name: "missing/" + n + ".trec", R: open(n + ".trec")}})
	}
	again, err := compare.Run(context.Background(), compare.In{Qrels: compare.Reader{Name: "missing/qrels.trec", R: open("qrels.trec")}, Runs: runs}, opt)
	require.NoError(t, err)
	for i := range res.Strategies {
		assert.Equal(t, res.Strategies[i].Values, again.Strategies[i].Values, res.Strategies[i].Name)
	}

	// A filled-in sheet (two rows of one query): Result.Human, and opt untouched.
	human, err := compare.Run(context.Background(), in("query_id,doc_id,grade\nq001,d001-01,1\nq001,d001-02,3\n"), opt)
	require.NoError(t, err)
	require.NotNil(t, human.Human)
	assert.Nil(t, opt.HumanSheet)

	// Errors name the reader's name and the strategy.
	bad := in("")
	bad.Runs[1].R = strings.NewReader("q1 Q0 d1 1 x t\n")
	_, err = compare.Run(context.Background(), bad, opt)
	require.ErrorContains(t, err, `failed to read run "dense": missing/dense.trec:1: `)
}
