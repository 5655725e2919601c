package generate_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/generate"
	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/judge"
	"github.com/retrieval-gate/retrieval-gate/internal/llm"
	"github.com/retrieval-gate/retrieval-gate/internal/llm/llmtest"
)

var customIDRe = regexp.MustCompile(`"custom_id":\s*"[^"]*"`)

// batchMode is one batch file mode of a test run: requests written to
// requests (--batch-out), or answers read from results (--batch-in).
type batchMode struct {
	requests    io.Writer
	results     judge.Reader
	maxRequests int64
}

func genFile(t *testing.T, m batchMode) (*generate.RunResult, []byte, error) {
	t.Helper()
	var out bytes.Buffer
	o, in := genOptions(t, &out)
	o.LLM.MaxRequests = m.maxRequests
	if m.requests != nil {
		o.BatchOut, in.BatchRequests = "requests.jsonl", m.requests
	} else {
		o.BatchIn, in.BatchResults = m.results.Name, m.results
	}
	res, err := generate.Run(context.Background(), in, *o)
	return res, out.Bytes(), err
}

// openResults opens a results file as the front end does for --batch-in.
func openResults(t *testing.T, path string) judge.Reader {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return judge.Reader{Name: path, R: f}
}

// runEngine runs a requests file through the stand-in's Batch API, as any
// batch engine would, and returns the path of its output file.
func runEngine(t *testing.T, srv *llmtest.Server, requests string) string {
	t.Helper()
	ctx := context.Background()
	api, err := llm.NewBatchClient(llm.Config{URL: srv.URL})
	require.NoError(t, err)
	id, err := api.UploadFile(ctx, requests)
	require.NoError(t, err)
	b, err := api.CreateBatch(ctx, id, nil)
	require.NoError(t, err)
	b, err = api.WaitBatch(ctx, b.ID, llm.PollPolicy{Initial: time.Millisecond, Max: time.Millisecond}, nil)
	require.NoError(t, err)
	require.Equal(t, llm.BatchCompleted, b.Status)
	results := filepath.Join(t.TempDir(), "results.jsonl")
	f, err := os.Create(results)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, api.DownloadFile(ctx, b.OutputFileID, 1<<20, func() (io.Writer, error) { return f, nil }))
	return results
}

// generate --batch-out, an engine, generate --batch-in: the very cases online
// generation writes.
func TestGenerateBatchFiles(t *testing.T) {
	srv := llmtest.New(llmtest.Options{})
	defer srv.Close()
	online, want := genRun(t, srv, false, "")

	var reqs bytes.Buffer
	res, out, err := genFile(t, batchMode{requests: &reqs})
	require.NoError(t, err)
	assert.True(t, res.RequestsOnly)
	assert.Empty(t, out, "--batch-out writes no case")
	lines := strings.Count(reqs.String(), "\n")
	assert.Equal(t, int64(lines), res.BatchRequests)
	assert.Equal(t, online.Documents, lines, "one request per sampled card")
	assert.Equal(t, lines, strings.Count(reqs.String(), `"url":"/v1/chat/completions"`))
	path := filepath.Join(t.TempDir(), "requests.jsonl")
	require.NoError(t, os.WriteFile(path, reqs.Bytes(), 0o600))

	results := runEngine(t, srv, path)
	res, got, err := genFile(t, batchMode{results: openResults(t, results)})
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got))
	assert.Equal(t, "file", res.BatchMode)
	assert.Equal(t, online.Documents, res.Documents)

	// The budget caps the request lines, as online.
	reqs.Reset()
	res, _, err = genFile(t, batchMode{requests: &reqs, maxRequests: 2})
	require.NoError(t, err)
	assert.Equal(t, int64(2), res.BatchRequests)
	assert.Equal(t, 2, strings.Count(reqs.String(), "\n"))
}

// A UTF-8 BOM at the start of a --batch-in file is dropped, as every reader
// drops it (it was refused, ":1: not a JSON object"): the cases are those of
// the same file without it. A BOM that is not at the start is refused.
func TestGenerateBatchInBOM(t *testing.T) {
	plain, good := engineResults(t)
	_, want, err := genFile(t, batchMode{results: openResults(t, plain)})
	require.NoError(t, err)
	require.NotEmpty(t, want)
	for _, tc := range []struct{ name, content, err string }{
		{"BOM", "\ufeff" + string(good), ""},
		{"BOM, blank first line", "\ufeff\r\n" + string(good), ""},
		{"BOM on line 2", "\n\ufeff" + string(good), ":2: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "results.jsonl")
			require.NoError(t, os.WriteFile(p, []byte(tc.content), 0o600))
			_, got, err := genFile(t, batchMode{results: openResults(t, p)})
			if tc.err != "" {
				require.ErrorContains(t, err, p+tc.err)
				assert.Empty(t, got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, string(want), string(got))
		})
	}
}

// engineResults writes generate's batch requests, runs them through the
// engine against a stand-in chat server, and returns the results file and its
// bytes.
func engineResults(t *testing.T) (path string, data []byte) {
	t.Helper()
	srv := llmtest.New(llmtest.Options{})
	defer srv.Close()
	var reqs bytes.Buffer
	_, _, err := genFile(t, batchMode{requests: &reqs})
	require.NoError(t, err)
	in := filepath.Join(t.TempDir(), "requests.jsonl")
	require.NoError(t, os.WriteFile(in, reqs.Bytes(), 0o600))
	path = runEngine(t, srv, in)
	data, err = os.ReadFile(path)
	require.NoError(t, err)
	return path, data
}

func TestGenerateBatchInBadResults(t *testing.T) {
	_, good := engineResults(t)
	first, _, _ := strings.Cut(string(good), "\n")
	for _, tc := range []struct {
		name, content, want string
		line                int
	}{
		{"unknown custom_id", first + "\n" + customIDRe.ReplaceAllString(first, `"custom_id":"gen-nope"`) + "\n", `unknown custom_id "gen-nope"`, 2},
		{"answered twice", first + "\n\n" + first + "\n", "answered twice", 3},
		{"not JSON", "{\n", "", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "results.jsonl")
			require.NoError(t, os.WriteFile(p, []byte(tc.content), 0o600))
			_, out, err := genFile(t, batchMode{results: openResults(t, p)})
			require.Error(t, err)
			var ie *input.Error
			require.ErrorAs(t, err, &ie)
			assert.Equal(t, p, ie.File)
			assert.Equal(t, tc.line, ie.Line)
			assert.Contains(t, err.Error(), tc.want)
			assert.Empty(t, out)
		})
	}
}
