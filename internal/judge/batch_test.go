package judge_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/atomicfile"
	"github.com/retrieval-gate/retrieval-gate/internal/judge"
	"github.com/retrieval-gate/retrieval-gate/internal/llm"
	"github.com/retrieval-gate/retrieval-gate/internal/llm/llmtest"
	"github.com/retrieval-gate/retrieval-gate/internal/racetest"
)

func batchOpts(t *testing.T, cachePath string) judge.Options {
	t.Helper()
	c, err := judge.OpenCache(cachePath)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return judge.Options{Model: "fake", Prompt: judge.DefaultPrompt(), Repeat: 1, Cache: c, Format: judge.FormatJSON}
}

// runBatch is judge.RunBatch with the submitted batch kept beside the cache,
// as the front end keeps it (judge.StateFile).
func runBatch(ctx context.Context, pairs []judge.Pair, opt judge.Options, cachePath string, bo *judge.BatchOptions, logf func(string, ...any)) (*judge.Result, error) {
	if bo.API != nil {
		bo.State = judge.StateFile{Path: cachePath + judge.BatchStateSuffix, Scratch: atomicfile.CreateTemp}
	}
	return judge.RunBatch(ctx, pairs, opt, bo, logf)
}

// openResults opens a results file as the front end does for --batch-in.
func openResults(t *testing.T, path string) judge.Reader {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return judge.Reader{Name: path, R: f}
}

// engine answers a requests JSONL as a batch engine does (vllm run-batch):
// each body posted to the chat server, one output line per request.
func engine(t *testing.T, srv *llmtest.Server, requests []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(requests))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var l struct {
			CustomID string          `json:"custom_id"`
			Method   string          `json:"method"`
			URL      string          `json:"url"`
			Body     json.RawMessage `json:"body"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &l))
		require.Equal(t, "POST", l.Method)
		require.Equal(t, "/v1/chat/completions", l.URL)
		resp, err := http.Post(srv.URL+l.URL, "application/json", bytes.NewReader(l.Body))
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		line, _ := json.Marshal(map[string]any{"id": "vllm-1", "custom_id": l.CustomID,
			"response": map[string]any{"status_code": resp.StatusCode, "request_id": "r", "body": json.RawMessage(bytes.TrimSpace(body))}, "error": nil})
		out.Write(append(line, '\n'))
	}
	return out.Bytes()
}

func TestBatchFileModeMatchesOnlineJudging(t *testing.T) {
	pairs, grades := table(5)
	srv := llmtest.New(llmtest.Options{Grades: grades})
	defer srv.Close()
	dir := t.TempDir()
	cachePath := filepath.Join(dir, "cache.jsonl")

	var reqs bytes.Buffer
	res, err := runBatch(context.Background(), pairs, batchOpts(t, cachePath), cachePath, &judge.BatchOptions{RequestsOut: &reqs, MaxRequests: 15}, nil)
	require.NoError(t, err)
	require.Nil(t, res)
	assert.Equal(t, 15, bytes.Count(reqs.Bytes(), []byte("\n")), "--max-requests caps the lines")
	assert.Equal(t, int64(0), srv.Requests(), "writing the requests asks no server")

	results := filepath.Join(dir, "results.jsonl")
	require.NoError(t, os.WriteFile(results, engine(t, srv, reqs.Bytes()), 0o644))
	res, err = runBatch(context.Background(), pairs, batchOpts(t, cachePath), cachePath, &judge.BatchOptions{ResultsIn: openResults(t, results), MaxRequests: 15}, nil)
	require.NoError(t, err)
	require.NotNil(t, res.Batch)
	assert.Equal(t, judge.BatchStats{Mode: "file", Provider: "openai", Submitted: 15, Answered: 15, New: 15}, *res.Batch)
	for i, p := range pairs[:15] {
		rel, ok := res.Relevance(i)
		require.True(t, ok)
		assert.Equal(t, grades[p.Query][p.Document], rel, p)
	}
	for i := 15; i < len(pairs); i++ {
		assert.Equal(t, judge.CauseBudget, res.Grades[i][0].Cause)
	}
	assert.Positive(t, res.PromptTokens)

	// The cache now has the 15: the next requests file holds the other 5 only.
	reqs.Reset()
	_, err = runBatch(context.Background(), pairs, batchOpts(t, cachePath), cachePath, &judge.BatchOptions{RequestsOut: &reqs}, nil)
	require.NoError(t, err)
	assert.Equal(t, 5, bytes.Count(reqs.Bytes(), []byte("\n")))
}

func TestBatchInRefusesBadResults(t *testing.T) {
	pairs, grades := table(2)
	srv := llmtest.New(llmtest.Options{Grades: grades})
	defer srv.Close()
	dir := t.TempDir()
	cachePath := filepath.Join(dir, "cache.jsonl")
	var reqs bytes.Buffer
	_, err := runBatch(context.Background(), pairs, batchOpts(t, cachePath), cachePath, &judge.BatchOptions{RequestsOut: &reqs}, nil)
	require.NoError(t, err)
	good := engine(t, srv, reqs.Bytes())
	lines := strings.SplitAfter(string(good), "\n")
	okLine := lines[0]
	for _, tc := range []struct{ name, body, want string }{
		{"unknown custom_id", okLine + strings.Replace(lines[1], `"custom_id":"`, `"custom_id":"x`, 1), ":2: unknown custom_id"},
		{"not json", okLine + "{not json\n", ":2: not a JSON object"},
		{"duplicate key", okLine + `{"custom_id":"a","custom_id":"b","response":null,"error":{"code":"x","message":"y"}}` + "\n", `:2: duplicate key "custom_id"`},
		{"answered twice", okLine + okLine, ":2: custom_id"},
		{"no response no error", `{"id":"x","custom_id":"` + customID(t, okLine) + `","response":null,"error":null}` + "\n", ":1: neither a response nor an error"},
		{"200 without a completion", `{"id":"x","custom_id":"` + customID(t, okLine) + `","response":{"status_code":200,"request_id":"r","body":{"object":"x"}},"error":null}` + "\n", ":1: response.body: chat-completions response has no choices"},
		{"no status", `{"id":"x","custom_id":"` + customID(t, okLine) + `","response":{"body":{}},"error":null}` + "\n", ":1: response has no status_code"},
		{"a BOM not at the start", okLine + "\ufeff" + lines[1], ":2: not a JSON object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, "bad.jsonl")
			require.NoError(t, os.WriteFile(path, []byte(tc.body), 0o644))
			before, _ := os.ReadFile(cachePath)
			_, err := runBatch(context.Background(), pairs, batchOpts(t, cachePath), cachePath, &judge.BatchOptions{ResultsIn: openResults(t, path)}, nil)
			require.Error(t, err)
			assert.Contains(t, err.Error(), path+tc.want)
			after, _ := os.ReadFile(cachePath)
			assert.Equal(t, before, after, "nothing written to the cache")
		})
	}
}

// A UTF-8 BOM at the start of a --batch-in file is dropped, as every reader
// drops it (it was refused, ":1: not a JSON object"): the file reads as the
// same file without it, every answer taken.
func TestBatchInDropsBOM(t *testing.T) {
	pairs, grades := table(2)
	srv := llmtest.New(llmtest.Options{Grades: grades})
	defer srv.Close()
	dir := t.TempDir()
	var reqs bytes.Buffer
	_, err := runBatch(context.Background(), pairs, batchOpts(t, ""), "", &judge.BatchOptions{RequestsOut: &reqs}, nil)
	require.NoError(t, err)
	good := engine(t, srv, reqs.Bytes())
	for _, tc := range []struct{ name, body string }{
		{"plain", string(good)},
		{"BOM", "\ufeff" + string(good)},
		{"BOM, CRLF", "\ufeff" + strings.ReplaceAll(string(good), "\n", "\r\n")},
		{"BOM, blank first line", "\ufeff\n" + string(good)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, "results.jsonl")
			require.NoError(t, os.WriteFile(path, []byte(tc.body), 0o644))
			res, err := runBatch(context.Background(), pairs, batchOpts(t, ""), "", &judge.BatchOptions{ResultsIn: openResults(t, path)}, nil)
			require.NoError(t, err)
			assert.Equal(t, judge.BatchStats{Mode: "file", Provider: "openai", Submitted: 8, Answered: 8, New: 8}, *res.Batch)
			for i, p := range pairs {
				rel, ok := res.Relevance(i)
				require.True(t, ok)
				assert.Equal(t, grades[p.Query][p.Document], rel, p)
			}
		})
	}
}

func customID(t *testing.T, line string) string {
	var l struct {
		CustomID string `json:"custom_id"`
	}
	require.NoError(t, json.Unmarshal([]byte(line), &l))
	return l.CustomID
}

func apiOpts(t *testing.T, srv *llmtest.Server) *judge.BatchOptions {
	t.Helper()
	api, err := llm.NewBatchClient(llm.Config{URL: srv.URL, APIKey: "sk-batch-key-0123456789abcdef"})
	require.NoError(t, err)
	return &judge.BatchOptions{API: api, Poll: llm.PollPolicy{Initial: time.Millisecond, Max: 5 * time.Millisecond}}
}

func TestBatchAPIScenarios(t *testing.T) {
	pairs, grades := table(4) // 16 pairs
	pairs[5].Query += " [[batch-error]]"
	grades[pairs[5].Query] = grades["query 1"]
	for _, tc := range []struct {
		name                      string
		opt                       llmtest.BatchOptions
		status                    string
		answered, failed, missing int64
		wantErr                   string
		stateKept                 bool
	}{
		{"completed with an error file", llmtest.BatchOptions{PollsPerStatus: 2}, llm.BatchCompleted, 15, 1, 0, "", false},
		{"expired: partial output used", llmtest.BatchOptions{End: "expired", Answer: 10}, llm.BatchExpired, 9, 1, 6, "", false},
		{"cancelled: partial output used", llmtest.BatchOptions{End: "cancelled", Answer: 4}, llm.BatchCancelled, 4, 0, 12, "", false},
		{"failed validation", llmtest.BatchOptions{End: "failed"}, "", 0, 0, 0, "failed: invalid_request: The batch failed validation.", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.New(llmtest.Options{Grades: grades, APIKey: "sk-batch-key-0123456789abcdef", Batch: tc.opt})
			defer srv.Close()
			cachePath := filepath.Join(t.TempDir(), "cache.jsonl")
			res, err := runBatch(context.Background(), pairs, batchOpts(t, cachePath), cachePath, apiOpts(t, srv), nil)
			_, serr := os.Stat(cachePath + judge.BatchStateSuffix)
			assert.True(t, os.IsNotExist(serr), "the state file is removed")
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			b := res.Batch
			assert.Equal(t, tc.status, b.Status)
			assert.Equal(t, "batch_fake1", b.BatchID)
			assert.Equal(t, int64(16), b.Submitted)
			assert.Equal(t, tc.answered, b.Answered)
			assert.Equal(t, tc.failed, b.Failed)
			assert.Equal(t, tc.missing, b.Missing)
			assert.Equal(t, tc.answered, b.New)
			assert.Equal(t, &llm.RequestCounts{Total: 16, Completed: tc.answered, Failed: tc.failed}, b.RequestCounts)
			for i, p := range pairs {
				j := res.Grades[i][0]
				if j.Valid {
					assert.Equal(t, grades[p.Query][p.Document], j.Grade)
				}
			}
			if tc.failed > 0 {
				assert.Equal(t, judge.CauseBatchFailed, res.Grades[5][0].Cause)
				assert.Contains(t, res.Grades[5][0].Detail, "server_error")
			}
			sum := judge.Summarize(res, nil)
			assert.Equal(t, int(tc.missing), sum.UnjudgedByCause[judge.CauseBatchMissing])
			// The cache has the answers: a rerun submits only the rest.
			var reqs bytes.Buffer
			_, err = runBatch(context.Background(), pairs, batchOpts(t, cachePath), cachePath, &judge.BatchOptions{RequestsOut: &reqs}, nil)
			require.NoError(t, err)
			assert.Equal(t, int(16-tc.answered), bytes.Count(reqs.Bytes(), []byte("\n")))
		})
	}
}

// An interrupted run (here: cancelled right after the submission) keeps the
// batch id in the state file; the rerun polls that batch instead of uploading
// and creating another.
func TestBatchAPIResumes(t *testing.T) {
	pairs, grades := table(3)
	srv := llmtest.New(llmtest.Options{Grades: grades, APIKey: "sk-batch-key-0123456789abcdef", Batch: llmtest.BatchOptions{PollsPerStatus: 3}})
	defer srv.Close()
	cachePath := filepath.Join(t.TempDir(), "cache.jsonl")
	ctx, cancel := context.WithCancel(context.Background())
	bo := apiOpts(t, srv)
	bo.Poll = llm.PollPolicy{Initial: time.Hour, Max: time.Hour} // the run would wait an hour
	start := time.Now()
	_, err := runBatch(ctx, pairs, batchOpts(t, cachePath), cachePath, bo, func(f string, a ...any) {
		if strings.HasPrefix(f, "batch %s: %s") {
			cancel() // interrupted while waiting, after the submission
		}
	})
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorContains(t, err, "batch batch_fake1 is still running at the server; rerun to pick it up")
	assert.Less(t, time.Since(start), time.Second, "the wait stops at once")
	st, err := judge.ReadBatchState(cachePath + judge.BatchStateSuffix)
	require.NoError(t, err)
	require.NotNil(t, st)
	assert.Equal(t, "batch_fake1", st.BatchID)
	assert.Equal(t, "file-fake1", st.InputFileID)
	assert.Equal(t, int64(12), st.Requests)

	res, err := runBatch(context.Background(), pairs, batchOpts(t, cachePath), cachePath, apiOpts(t, srv), nil)
	require.NoError(t, err)
	assert.True(t, res.Batch.Resumed)
	assert.Equal(t, 1, srv.Batches(), "no second batch")
	assert.Equal(t, int64(12), res.Batch.New)
	for i, p := range pairs {
		rel, ok := res.Relevance(i)
		require.True(t, ok)
		assert.Equal(t, grades[p.Query][p.Document], rel)
	}
	_, serr := os.Stat(cachePath + judge.BatchStateSuffix)
	assert.True(t, os.IsNotExist(serr))

	// A state file of another model is refused, not mixed in.
	require.NoError(t, os.WriteFile(cachePath+judge.BatchStateSuffix, []byte(`{"schema":"retrieval-gate/judge-batch@1","batch_id":"batch_x","model":"other","prompt_hash":"h","answer_format":"json"}`), 0o644))
	_, err = runBatch(context.Background(), pairs, batchOpts(t, cachePath), cachePath, apiOpts(t, srv), nil)
	require.ErrorContains(t, err, `holds batch batch_x of model "other"`)
}

// Every judgment cached: no batch at all.
func TestBatchAPINothingToSubmit(t *testing.T) {
	pairs, grades := table(1)
	srv := llmtest.New(llmtest.Options{Grades: grades})
	defer srv.Close()
	cachePath := filepath.Join(t.TempDir(), "cache.jsonl")
	_, err := runBatch(context.Background(), pairs, batchOpts(t, cachePath), cachePath, apiOpts(t, srv), nil)
	require.NoError(t, err)
	res, err := runBatch(context.Background(), pairs, batchOpts(t, cachePath), cachePath, apiOpts(t, srv), nil)
	require.NoError(t, err)
	assert.Equal(t, 1, srv.Batches())
	assert.Equal(t, int64(4), res.Batch.Cached)
	assert.Equal(t, int64(0), res.Batch.Submitted)
}

// The requests writer holds one request at a time: writing 200k requests
// (RETRIEVAL_GATE_HEAVY_TESTS=1, about 520 MB, eight times the heap bound
// below; 20k otherwise) grows the heap by far less than the file's size. The
// 1M-request figure is a benchmark's (BENCHMARKS.md). Under -race the heavy
// size is left out: one goroutine writes the stream, so the race detector has
// nothing to find and slowed it to 63 s of CPU; CI runs this package both ways
// (.ci/run: its tests import racetest), the heavy size in the run without it.
func TestBatchRequestsStream(t *testing.T) {
	n := 20_000
	if os.Getenv("RETRIEVAL_GATE_HEAVY_TESTS") == "1" && !racetest.Enabled {
		n = 200_000
	}
	opt := judge.Options{Model: "m", Prompt: judge.DefaultPrompt(), Format: judge.FormatJSON}
	doc := strings.Repeat("word ", 100)
	var peak uint64
	var written countingWriter
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	err := judge.WriteBatchRequests(&written, n, func(i int) judge.Pair {
		if i%10000 == 0 {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
		}
		return judge.Pair{QueryID: "q", Query: "query " + strings.Repeat("x", i%7), DocID: "d", Document: doc}
	}, opt)
	require.NoError(t, err)
	growth := int64(peak) - int64(base)
	t.Logf("%d requests, %d bytes written, heap growth at most %d bytes", n, written.n, growth)
	assert.Less(t, growth, int64(64<<20), "heap must not grow with the file (%d bytes)", written.n)
	assert.Greater(t, written.n, int64(n)*1000)
}

type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// BenchmarkWriteBatchRequests: bytes allocated per request line written
// (B/op of one request), constant whatever the number of lines.
func BenchmarkWriteBatchRequests(b *testing.B) {
	opt := judge.Options{Model: "m", Prompt: judge.DefaultPrompt(), Format: judge.FormatJSON}
	doc := strings.Repeat("word ", 100)
	var w countingWriter
	b.ReportAllocs()
	b.ResetTimer()
	err := judge.WriteBatchRequests(&w, b.N, func(int) judge.Pair {
		return judge.Pair{QueryID: "q", Query: "query", DocID: "d", Document: doc}
	}, opt)
	require.NoError(b, err)
	b.ReportMetric(float64(w.n)/float64(b.N), "file-bytes/request")
}

func FuzzParseBatchResult(f *testing.F) {
	f.Add([]byte(`{"id":"b","custom_id":"c","response":{"status_code":200,"request_id":"r","body":{"choices":[{"message":{"content":"{\"reason\":\"x\",\"score\":2}"}}]}},"error":null}`))
	f.Add([]byte(`{"id":"b","custom_id":"c","response":null,"error":{"code":"x","message":"y"}}`))
	f.Add([]byte(`{"id":"b","custom_id":"c","response":{"status_code":400,"body":{"error":{"message":"bad"}}},"error":null}`))
	f.Add([]byte(`{"custom_id":"c","custom_id":"d"}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		r, err := judge.ParseBatchResult(line)
		if err != nil {
			return
		}
		if r.CustomID == "" {
			t.Fatal("accepted a line without custom_id")
		}
		checkResultID(t, line, "custom_id", r)
		if r.Status != 0 {
			// Read into maps: the keys as written, one per field (foldGet).
			var m map[string]any
			d := json.NewDecoder(bytes.NewReader(line))
			d.UseNumber()
			err := d.Decode(&m)
			resp, _ := foldGet(m, "response").(map[string]any)
			if code, _ := foldGet(resp, "status_code").(json.Number); err != nil || code.String() != strconv.Itoa(r.Status) {
				t.Fatalf("status %d of %q: %v", r.Status, line, err)
			}
		}
		// Every accepted line, whatever its status, is exactly one of a
		// completion and an error (OpenAI's files have no "missing" kind).
		if (r.Completion == nil) == (r.Err == "") || r.Missing {
			t.Fatalf("a line must carry a completion or an error, not both or neither: %+v", r)
		}
	})
}

// A line's error reads "code: message", or whichever of the two it has; an
// error with neither still says it is one (OpenAI's read ":" before, and a
// code without a message "x:"; Gemini's and Anthropic's "13: ").
func TestParseBatchResultErrorText(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{`{"custom_id":"c","response":null,"error":{"code":"x","message":"y"}}`, "x: y"},
		{`{"custom_id":"c","response":null,"error":{"code":"x"}}`, "x"},
		{`{"custom_id":"c","response":null,"error":{"code":null,"message":"y"}}`, "y"},
		{`{"custom_id":"c","response":null,"error":{"code":429,"message":" "}}`, "429"},
		{`{"custom_id":"c","response":null,"error":{}}`, "error with no code or message"},
		{`{"custom_id":"c","response":{"status_code":200,"body":{}},"error":{"code":"","message":""}}`, "error with no code or message"},
		{`{"custom_id":"c","response":{"status_code":500,"body":{"error":{"message":"down"}}},"error":null}`, "HTTP 500: down"},
	} {
		r, err := judge.ParseBatchResult([]byte(tc.line))
		require.NoError(t, err, tc.line)
		assert.Equal(t, tc.want, r.Err, tc.line)
		assert.Nil(t, r.Completion, tc.line)
	}
	// Gemini's and Anthropic's errors follow the same rule.
	for _, tc := range []struct {
		parse      func([]byte) (judge.BatchResult, error)
		line, want string
	}{
		{judge.ParseGeminiResult, `{"key":"k","error":{"code":13,"message":"Internal","status":"INTERNAL"}}`, "13 INTERNAL: Internal"},
		{judge.ParseGeminiResult, `{"key":"k","error":{"code":13}}`, "13"},
		{judge.ParseGeminiResult, `{"key":"k","error":{"status":"INTERNAL","message":" "}}`, "INTERNAL"},
		{judge.ParseGeminiResult, `{"key":"k","error":{}}`, "error with no code, status or message"},
		{judge.ParseAnthropicResult, `{"custom_id":"c","result":{"type":"errored","error":{"type":"error","error":{"type":"api_error","message":"x"}}}}`, "api_error: x"},
		{judge.ParseAnthropicResult, `{"custom_id":"c","result":{"type":"errored","error":{"type":"error","error":{"type":"api_error"}}}}`, "api_error"},
		{judge.ParseAnthropicResult, `{"custom_id":"c","result":{"type":"errored","error":{"type":"error","error":{}}}}`, "errored"},
	} {
		r, err := tc.parse([]byte(tc.line))
		require.NoError(t, err, tc.line)
		assert.Equal(t, tc.want, r.Err, tc.line)
	}
}
