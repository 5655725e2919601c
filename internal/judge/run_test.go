package judge_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/input/kbfile"
	"github.com/retrieval-gate/retrieval-gate/internal/judge"
	"github.com/retrieval-gate/retrieval-gate/internal/llm"
	"github.com/retrieval-gate/retrieval-gate/internal/llm/llmtest"
)

// memCache is a CacheStore in memory that records what a run puts.
type memCache struct {
	mu      sync.Mutex
	entries map[string]judge.Entry
	puts    int
	syncs   int
}

func (c *memCache) Get(k string) (judge.Entry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[k]
	return e, ok
}

func (c *memCache) Put(e judge.Entry) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries[e.Key] = e
	c.puts++
	return nil
}

func (c *memCache) Sync() error { c.syncs++; return nil }
func (c *memCache) Loaded() int { return 0 }

// TestRunReadsItsReaders: judge.Run reads the readers and uses the services it
// is given and opens nothing: the inputs are named by paths that do not
// exist, a cases run is read twice from one reader (its rankings, then its
// queries' texts), the cache is the caller's, and a second run takes every
// judgment from it. --batch-out writes into the writer given.
func TestRunReadsItsReaders(t *testing.T) {
	ctx := context.Background()
	kb, err := kbfile.Load(ctx, filepath.Join("..", "..", "testdata", "demo", "kb"))
	require.NoError(t, err)
	cases, err := os.ReadFile(filepath.Join("..", "..", "testdata", "demo", "cases.jsonl"))
	require.NoError(t, err)
	srv := llmtest.New(llmtest.Options{})
	defer srv.Close()
	o := judge.NewRunOptions()
	o.K, o.LLM = 2, llm.Server{URL: srv.URL, Model: "m", Concurrency: 2}
	o.Runs = []judge.RunFile{{Name: "demo", Path: "missing/run.jsonl"}}
	o.KB, o.QrelsOut, o.Cache = "missing/kb", "missing/qrels", "missing/cache.jsonl"
	require.NoError(t, o.Validate())
	client, err := o.LLM.Client("")
	require.NoError(t, err)
	cache := &memCache{entries: map[string]judge.Entry{}}
	var logged []string
	in := func() judge.In {
		return judge.In{KB: kb, Runs: []judge.RunReader{{Name: "demo", File: "missing/run.jsonl", R: bytes.NewReader(cases)}},
			KnownQrels: judge.Reader{Name: "missing/known.trec", R: strings.NewReader("en-golden-001 0 en-account-deletion 3\n")},
			Cache:      cache, Client: client, Logf: func(f string, a ...any) { logged = append(logged, f) }}
	}
	out, err := judge.Run(ctx, in(), *o)
	require.NoError(t, err)
	res := out.Result
	require.NotNil(t, res)
	require.NotEmpty(t, res.Pairs)
	assert.Equal(t, []judge.KnownLabel{{QueryID: "en-golden-001", DocID: "en-account-deletion", Relevance: 3}}, res.Known)
	assert.NotEmpty(t, res.Pairs[0].Query, "the query text came from the second read of the run")
	assert.Equal(t, len(res.Pairs), cache.puts, "every judgment put in the caller's cache")
	assert.Equal(t, len(res.Pairs), out.Summary.Judged)
	assert.Contains(t, strings.Join(logged, "\n"), "pair(s) labelled in %s are not judged")

	requests := srv.Requests()
	again, err := judge.Run(ctx, in(), *o)
	require.NoError(t, err)
	assert.Equal(t, int64(len(res.Pairs)), again.Result.Cached)
	assert.Equal(t, requests, srv.Requests(), "no request: every judgment is in the cache")

	// --batch-out: the requests of the judgments not cached, none here.
	b := judge.NewRunOptions()
	b.KB, b.K, b.LLM.Model, b.Runs, b.BatchOut, b.Cache = o.KB, 2, "other", o.Runs, "missing/requests.jsonl", "none"
	require.NoError(t, b.Validate())
	var reqs bytes.Buffer
	bi := in()
	bi.Client, bi.BatchRequests = nil, &reqs
	out, err = judge.Run(ctx, bi, *b)
	require.NoError(t, err)
	assert.Nil(t, out.Result)
	assert.Equal(t, len(res.Pairs), bytes.Count(reqs.Bytes(), []byte("\n")), "model other: nothing cached")

	// A mode without its service is refused, not a nil dereference.
	bi.BatchRequests = nil
	_, err = judge.Run(ctx, bi, *b)
	require.ErrorContains(t, err, "no server, batch or file")
}
