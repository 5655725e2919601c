package judge_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/judge"
	"github.com/retrieval-gate/retrieval-gate/internal/llm"
	"github.com/retrieval-gate/retrieval-gate/internal/llm/llmtest"
)

// judgeMode judges a pool one way and returns the result (its qrels are
// compared across modes).
type judgeMode struct {
	name string
	run  func(t *testing.T, srv *llmtest.Server, pairs []judge.Pair, repeat int) *judge.Result
}

func modeOpts(t *testing.T, repeat int) (judge.Options, string) {
	t.Helper()
	cachePath := filepath.Join(t.TempDir(), "cache.jsonl")
	opt := batchOpts(t, cachePath)
	opt.Repeat = repeat
	return opt, cachePath
}

// judgeModes are the ways a pool can be judged: online (chat completions),
// each Batch API, and the file mode (--batch-out, an engine, --batch-in).
var judgeModes = []judgeMode{
	{"online", func(t *testing.T, srv *llmtest.Server, pairs []judge.Pair, repeat int) *judge.Result {
		opt, _ := modeOpts(t, repeat)
		c, err := llm.New(llm.Config{URL: srv.URL, Model: "fake", Concurrency: 4})
		require.NoError(t, err)
		opt.Client, opt.Workers = c, 4
		res, err := judge.Judge(context.Background(), pairs, opt)
		require.NoError(t, err)
		return res
	}},
	{"batch openai", func(t *testing.T, srv *llmtest.Server, pairs []judge.Pair, repeat int) *judge.Result {
		opt, cachePath := modeOpts(t, repeat)
		res, err := runBatch(context.Background(), pairs, opt, cachePath, apiOpts(t, srv), nil)
		require.NoError(t, err)
		return res
	}},
	{"file", func(t *testing.T, srv *llmtest.Server, pairs []judge.Pair, repeat int) *judge.Result {
		opt, cachePath := modeOpts(t, repeat)
		var reqs bytes.Buffer
		_, err := runBatch(context.Background(), pairs, opt, cachePath, &judge.BatchOptions{RequestsOut: &reqs}, nil)
		require.NoError(t, err)
		results := filepath.Join(t.TempDir(), "results.jsonl")
		require.NoError(t, os.WriteFile(results, engine(t, srv, reqs.Bytes()), 0o644))
		opt, cachePath = modeOpts(t, repeat)
		res, err := runBatch(context.Background(), pairs, opt, cachePath, &judge.BatchOptions{ResultsIn: openResults(t, results)}, nil)
		require.NoError(t, err)
		return res
	}},
}

// providerService is a client of srv's stand-in of provider's batch API.
func providerService(t *testing.T, srv *llmtest.Server, provider string, inline bool) llm.BatchService {
	t.Helper()
	return providerServiceAt(t, srv.URL, provider, inline)
}

// providerServiceAt is providerService of the server at url.
func providerServiceAt(t *testing.T, url, provider string, inline bool) llm.BatchService {
	t.Helper()
	switch provider {
	case llm.ProviderAnthropic:
		c, err := llm.NewAnthropicBatchClient(url, "sk-ant-test-0123456789abcdef", nil)
		require.NoError(t, err)
		return c
	case llm.ProviderGemini:
		c, err := llm.NewGeminiBatchClient(url, "fake", "gm-test-0123456789abcdef", nil)
		require.NoError(t, err)
		if !inline {
			c.InlineLimit = 0 // every requests file uploaded
		}
		return c
	}
	c, err := llm.NewBatchClient(llm.Config{URL: url, APIKey: "sk-batch-key-0123456789abcdef"})
	require.NoError(t, err)
	return c
}

// providerEngine answers a requests file of provider's format as that
// provider does (through the stand-in: submitted, waited for, its results
// downloaded as they are) and returns the results file: what a user hands to
// --batch-in after running the requests with the provider's own tools.
func providerEngine(t *testing.T, svc llm.BatchService, requests []byte) string {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	in := filepath.Join(dir, "requests.jsonl")
	require.NoError(t, os.WriteFile(in, requests, 0o644))
	job, err := svc.Submit(ctx, in, int64(bytes.Count(requests, []byte("\n"))))
	require.NoError(t, err)
	job, err = llm.WaitJob(ctx, svc, job.ID, llm.PollPolicy{Initial: time.Millisecond, Max: time.Millisecond}, nil, nil)
	require.NoError(t, err)
	out := filepath.Join(dir, "results.jsonl")
	f, err := os.Create(out)
	require.NoError(t, err)
	defer f.Close()
	for _, src := range job.Results {
		require.NoError(t, svc.Download(ctx, job, src, 1<<30, func() (io.Writer, error) { return f, nil }))
	}
	return out
}

func apiMode(provider string, inline bool) func(t *testing.T, srv *llmtest.Server, pairs []judge.Pair, repeat int) *judge.Result {
	return func(t *testing.T, srv *llmtest.Server, pairs []judge.Pair, repeat int) *judge.Result {
		opt, cachePath := modeOpts(t, repeat)
		bo := &judge.BatchOptions{API: providerService(t, srv, provider, inline), Poll: llm.PollPolicy{Initial: time.Millisecond, Max: 5 * time.Millisecond}}
		res, err := runBatch(context.Background(), pairs, opt, cachePath, bo, nil)
		require.NoError(t, err)
		require.Equal(t, provider, res.Batch.Provider)
		return res
	}
}

func fileMode(provider string) func(t *testing.T, srv *llmtest.Server, pairs []judge.Pair, repeat int) *judge.Result {
	return func(t *testing.T, srv *llmtest.Server, pairs []judge.Pair, repeat int) *judge.Result {
		opt, cachePath := modeOpts(t, repeat)
		var reqs bytes.Buffer
		_, err := runBatch(context.Background(), pairs, opt, cachePath, &judge.BatchOptions{RequestsOut: &reqs, Provider: provider}, nil)
		require.NoError(t, err)
		results := providerEngine(t, providerService(t, srv, provider, true), reqs.Bytes())
		opt, cachePath = modeOpts(t, repeat)
		res, err := runBatch(context.Background(), pairs, opt, cachePath, &judge.BatchOptions{ResultsIn: openResults(t, results), Provider: provider}, nil)
		require.NoError(t, err)
		require.Equal(t, provider, res.Batch.Provider)
		return res
	}
}

func init() {
	judgeModes = append(judgeModes,
		judgeMode{"batch anthropic", apiMode(llm.ProviderAnthropic, true)},
		judgeMode{"batch gemini inline", apiMode(llm.ProviderGemini, true)},
		judgeMode{"batch gemini file", apiMode(llm.ProviderGemini, false)},
		judgeMode{"file anthropic", fileMode(llm.ProviderAnthropic)},
		judgeMode{"file gemini", fileMode(llm.ProviderGemini)})
}

func qrelsText(t *testing.T, res *judge.Result) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, judge.WriteTREC(&b, res))
	return b.String()
}

// Issue 33 item 11: four query ids asking the same question of the same three
// documents (12 pairs, 3 distinct prompts) made a batch of 12 lines with 3
// distinct custom_ids, which the Batch API refuses (the stand-in, as the
// real one, fails it at validation: duplicate_custom_id) and --batch-in
// refused as "answered twice". Each distinct prompt is now sent once and its
// grade given to every pair sharing it, in every mode, with the same qrels
// as online judging; the report counts the 9 as reused, not as cached (issue
// 37 item 5: with no cache, they were reported as cache hits).
func TestIdenticalPromptsAskedOnce(t *testing.T) {
	var pairs []judge.Pair
	grades := map[string]map[string]int{"how do I reset my password": {}}
	for q := range 4 {
		for d := range 3 {
			doc := fmt.Sprintf("document %d", d)
			grades["how do I reset my password"][doc] = d + 1
			pairs = append(pairs, judge.Pair{QueryID: fmt.Sprintf("q%d", q), Query: "how do I reset my password", DocID: fmt.Sprintf("d%d", d), Document: doc})
		}
	}
	pairs = append(pairs, judge.Pair{QueryID: "q9", Query: "another question", DocID: "d0", Document: "document 0"})
	want := ""
	for _, m := range judgeModes {
		t.Run(m.name, func(t *testing.T) {
			srv := llmtest.New(llmtest.Options{Grades: grades})
			defer srv.Close()
			res := m.run(t, srv, pairs, 1)
			got := qrelsText(t, res)
			if want == "" {
				want = got
			}
			assert.Equal(t, want, got)
			assert.Equal(t, "q0 0 d0 1\nq0 0 d1 2\nq0 0 d2 3\nq1 0 d0 1\n", got[:len("q0 0 d0 1\nq0 0 d1 2\nq0 0 d2 3\nq1 0 d0 1\n")])
			assert.Equal(t, int64(4), res.Requests, "one request per distinct prompt")
			assert.Equal(t, int64(9), res.Reused)
			assert.Equal(t, int64(0), res.Cached, "no cache hit: the cache was empty")
			if res.Batch != nil {
				assert.Equal(t, int64(4), res.Batch.Submitted)
				assert.Equal(t, int64(9), res.Batch.Reused)
				assert.Equal(t, int64(4), res.Batch.New)
			}
			h := res.Holes()
			assert.Equal(t, judge.HoleStats{Pool: 13, New: 13}, h)
		})
	}
}

// randomPool is a pool (in pool order, each (query, document) id once) whose
// query texts and documents are drawn from small sets, so that many pairs
// share their prompt: the same text under several query ids, the same
// document text under several card ids.
func randomPool(r *rand.Rand) ([]judge.Pair, map[string]map[string]int) {
	texts := []string{"reset password", "billing address", "two factor login", "delete account"}[:1+r.IntN(4)]
	docs := []string{"how to reset a password", "change the billing address", "login with two factor codes", "account deletion"}[:1+r.IntN(4)]
	grades := map[string]map[string]int{}
	for _, q := range texts {
		grades[q] = map[string]int{}
		for _, d := range docs {
			grades[q][d] = r.IntN(4)
		}
	}
	var pairs []judge.Pair
	for q := range 1 + r.IntN(6) {
		qt := texts[r.IntN(len(texts))]
		for d := range 1 + r.IntN(5) {
			if r.IntN(4) == 0 {
				continue
			}
			pairs = append(pairs, judge.Pair{QueryID: fmt.Sprintf("q%d", q), Query: qt, DocID: fmt.Sprintf("d%d", d), Document: docs[r.IntN(len(docs))]})
		}
	}
	return pairs, grades
}

// A property over random pools with duplicates: online judging, each Batch
// API and the file mode give identical qrels (and the same requests, reused
// and cached counts).
func TestPoolJudgedAnyWayGivesSameQrels(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 33))
	for it := range 12 {
		pairs, grades := randomPool(r)
		if len(pairs) == 0 {
			continue
		}
		repeat := 1 + r.IntN(2)
		var want string
		var wantCounts [3]int64
		for _, m := range judgeModes {
			srv := llmtest.New(llmtest.Options{Grades: grades})
			res := m.run(t, srv, pairs, repeat)
			srv.Close()
			got := qrelsText(t, res)
			counts := [3]int64{res.Requests, res.Reused, res.Cached}
			if m.name == judgeModes[0].name {
				want, wantCounts = got, counts
				for i, p := range pairs {
					rel, ok := res.Relevance(i)
					require.True(t, ok)
					require.Equal(t, grades[p.Query][p.Document], rel, "pool %d: %+v", it, p)
				}
				continue
			}
			require.Equal(t, want, got, "pool %d, %s: %d pairs, repeat %d", it, m.name, len(pairs), repeat)
			require.Equal(t, wantCounts, counts, "pool %d, %s: requests, reused, cached", it, m.name)
		}
	}
}
