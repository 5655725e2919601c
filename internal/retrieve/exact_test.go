package retrieve_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/outcome"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store/chroma/chromatest"
)

// synthWords is the vocabulary of the synthetic knowledge bases: enough words
// that the hash embedder's vectors of two cards are far apart.
var synthWords = func() []string {
	r := rand.New(rand.NewPCG(7, 7))
	const letters = "abcdefghijklmnopqrstuvwxyz"
	out := make([]string, 4000)
	for i := range out {
		n := 4 + r.IntN(6)
		b := make([]byte, n)
		for j := range b {
			b[j] = letters[r.IntN(len(letters))]
		}
		out[i] = string(b)
	}
	return out
}()

// synthKB writes a knowledge base of n cards of 30 words over three locales
// and cases of 6-word queries, each drawn from one card's words, that card
// its gold; it returns the KB's path and the cases' bytes.
func synthKB(t testing.TB, n, cases int, seed uint64) (string, []byte) {
	t.Helper()
	var kb, cs bytes.Buffer
	writeSynth(&kb, &cs, n, cases, seed)
	path := filepath.Join(t.TempDir(), "kb.jsonl")
	require.NoError(t, os.WriteFile(path, kb.Bytes(), 0o600))
	return path, cs.Bytes()
}

// writeSynth writes the cards and cases of synthKB.
func writeSynth(kb, cs io.Writer, n, cases int, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 1))
	locales := []string{"en", "es-419", "pt-BR"}
	types := []string{"golden", "golden", "golden", "adversarial"}
	texts := make([][]string, n)
	for i := range n {
		w := make([]string, 30)
		for j := range w {
			w[j] = synthWords[r.IntN(len(synthWords))]
		}
		texts[i] = w
		fmt.Fprintf(kb, `{"id": "card-%d", "locale": %q, "title": "card %d", "text": %q}`+"\n", i, locales[i%3], i, strings.Join(w, " "))
	}
	for i := range cases {
		c := r.IntN(n)
		q := make([]string, 6)
		for j := range q {
			q[j] = texts[c][r.IntN(len(texts[c]))]
		}
		fmt.Fprintf(cs, `{"id": "q-%d", "locale": %q, "type": %q, "query": %q, "must_cite_one_of": ["card-%d"]}`+"\n",
			i, locales[c%3], types[i%len(types)], strings.Join(q, " "), c)
	}
}

// TestSyntheticFiles writes a generated knowledge base and its cases for the
// end-to-end runs of BENCHMARKS.md ("Churn gates and the exact check"):
// RG_SYNTH_DIR=DIR RG_SYNTH_CARDS=5000 RG_SYNTH_CASES=100000 go test
// ./internal/retrieve -run TestSyntheticFiles writes DIR/kb.jsonl and
// DIR/cases.jsonl (the same bytes on every machine). Skipped without
// RG_SYNTH_DIR.
func TestSyntheticFiles(t *testing.T) {
	dir := os.Getenv("RG_SYNTH_DIR")
	if dir == "" {
		t.Skip("RG_SYNTH_DIR not set: nothing to write")
	}
	cards, err := strconv.Atoi(os.Getenv("RG_SYNTH_CARDS"))
	require.NoError(t, err, "RG_SYNTH_CARDS")
	cases, err := strconv.Atoi(os.Getenv("RG_SYNTH_CASES"))
	require.NoError(t, err, "RG_SYNTH_CASES")
	var kb, cs bytes.Buffer
	writeSynth(&kb, &cs, cards, cases, 35)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "kb.jsonl"), kb.Bytes(), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cases.jsonl"), cs.Bytes(), 0o644))
}

func runExact(t *testing.T, kb string, cases []byte, o retrieve.RunOptions) (*retrieve.RunResult, string) {
	t.Helper()
	var out bytes.Buffer
	res, err := retrieve.Run(context.Background(), retrieve.In{KB: kb, Cases: bytes.NewReader(cases), CasesName: "cases.jsonl", Out: &out, OutName: "out.jsonl"}, o)
	require.NoError(t, err)
	return res, out.String()
}

// On the embedded store the index is exact: every query's recall is 1, at
// the depth the store is asked for, and the check changes no output byte.
func TestExactCheckMemoryIsExact(t *testing.T) {
	kb, cases := synthKB(t, 300, 120, 1)
	for _, strategy := range []string{retrieve.Dense, retrieve.Hybrid} {
		t.Run(strategy, func(t *testing.T) {
			o := retrieve.RunOptions{Strategy: strategy, K: 10, Store: "memory", Embedder: "hash"}
			plain, want := runExact(t, kb, cases, o)
			assert.Nil(t, plain.ANN)
			o.ExactCheck, o.MinANNRecall, o.MinANNRecallSet = retrieve.ExactAll, 1, true
			res, got := runExact(t, kb, cases, o)
			assert.Equal(t, want, got, "the check changes no output")
			c := res.ANN
			require.NotNil(t, c)
			depth := 10
			if strategy == retrieve.Hybrid {
				depth = retrieve.MinDepth
			}
			assert.Equal(t, depth, c.Depth)
			assert.Equal(t, int64(120), c.Queries)
			assert.Equal(t, int64(120), c.N)
			assert.Equal(t, int64(120), c.Perfect)
			assert.Equal(t, 1.0, c.Recall)
			assert.Equal(t, 1.0, c.CI95.Hi)
			assert.Less(t, c.CI95.Lo, 1.0, "never a point")
			assert.Equal(t, store.ExportCost{Records: 300}, c.Export)
			assert.Equal(t, outcome.Pass, c.Gate.Status)
			assert.Equal(t, retrieve.GateMinANNRecall, c.Gate.Name)
		})
	}
}

// A sample of N is the same whatever the order of the cases (the N
// smallest hashes of their ids: TestExactSampleKeys).
func TestExactCheckSampleOrderFree(t *testing.T) {
	kb, cases := synthKB(t, 200, 150, 2)
	lines := strings.Split(strings.TrimSpace(string(cases)), "\n")
	o := retrieve.RunOptions{Strategy: retrieve.Dense, K: 5, Store: "memory", Embedder: "hash", ExactCheck: 25}
	res, _ := runExact(t, kb, cases, o)
	assert.Equal(t, int64(150), res.ANN.Queries)
	assert.Equal(t, int64(25), res.ANN.N)
	assert.Equal(t, 25, res.ANN.Sample)
	slices.Reverse(lines)
	res2, _ := runExact(t, kb, []byte(strings.Join(lines, "\n")+"\n"), o)
	assert.Equal(t, res.ANN.N, res2.ANN.N)
	assert.Equal(t, res.ANN.Recall, res2.ANN.Recall)
}

// The options: N or all, a strategy with a store, the floor only with the check.
func TestExactCheckOptions(t *testing.T) {
	for _, tc := range []struct {
		o    retrieve.RunOptions
		want string
	}{
		{retrieve.RunOptions{Strategy: retrieve.Lexical, ExactCheck: 5}, "exact-check"},
		{retrieve.RunOptions{ExactCheck: -2}, "exact-check"},
		{retrieve.RunOptions{MinANNRecall: 0.9, MinANNRecallSet: true}, "min-ann-recall"},
		{retrieve.RunOptions{ExactCheck: retrieve.ExactAll, MinANNRecall: 1.5, MinANNRecallSet: true}, "min-ann-recall"},
	} {
		err := tc.o.Resolve(nil, false)
		require.Error(t, err)
		assert.Contains(t, err.Error(), tc.want)
	}
	ok := retrieve.RunOptions{ExactCheck: 10, MinANNRecall: 0.9, MinANNRecallSet: true}
	require.NoError(t, ok.Resolve(nil, false))
}

// Against the real Chroma server: a kept collection built with Chroma's
// default HNSW settings answers as exact search does; once it is rebuilt with
// a sparse graph searched narrowly (hnsw:M 4, hnsw:construction_ef 4,
// hnsw:search_ef 1: the index changed, the KB, the embedder and the gold not)
// the same run, reusing it, shows the index's recall fall and
// --min-ann-recall fails, though every case still gets an answer.
func TestExactCheckChromaDegraded(t *testing.T) {
	url := chromatest.URL(t)
	kb, cases := synthKB(t, 1500, 200, 3)
	name := fmt.Sprintf("retrieval-gate-test-exact-%d", time.Now().UnixNano())
	defer chromatest.DeleteCollection(t, url, name)
	o := retrieve.RunOptions{Strategy: retrieve.Dense, K: 10, Store: "chroma", StoreURL: url, Collection: name, Embedder: "hash",
		ExactCheck: retrieve.ExactAll, MinANNRecall: 0.95, MinANNRecallSet: true}
	res, _ := runExact(t, kb, cases, o)
	c := res.ANN
	require.NotNil(t, c)
	t.Logf("default HNSW: recall@10 %.4f [%.4f, %.4f] (%s) over %d queries; export %+v", c.Recall, c.CI95.Lo, c.CI95.Hi, c.CI95.Method, c.N, c.Export)
	assert.Equal(t, int64(200), c.N)
	assert.GreaterOrEqual(t, c.Recall, 0.95)
	assert.Equal(t, outcome.Pass, c.Gate.Status)
	assert.Equal(t, 1500, c.Export.Records)
	assert.Equal(t, 2, c.Export.Requests, "1,500 records in pages of 1,000")

	chromatest.RebuildWithHNSW(t, url, name, map[string]any{"hnsw:M": 4, "hnsw:construction_ef": 4, "hnsw:search_ef": 1})
	res, _ = runExact(t, kb, cases, o)
	d := res.ANN
	t.Logf("M 4, ef 4 and 1: recall@10 %.4f [%.4f, %.4f] (%s) over %d queries", d.Recall, d.CI95.Lo, d.CI95.Hi, d.CI95.Method, d.N)
	assert.Less(t, d.Recall, 0.9, "visibly approximate")
	assert.Less(t, d.CI95.Hi, c.CI95.Lo, "the intervals do not overlap")
	assert.Equal(t, outcome.Fail, d.Gate.Status)
	assert.Equal(t, outcome.ANNRecallBelow, d.Gate.Why[0].Code)
}
