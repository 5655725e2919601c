package llm_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/httpretry"
	"github.com/retrieval-gate/retrieval-gate/internal/llm"
	"github.com/retrieval-gate/retrieval-gate/internal/llm/llmtest"
)

const batchKey = "sk-batch-0123456789abcdefghij"

func requestsFile(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	for i := range n {
		body, err := llm.RequestBody("m", llm.Request{Messages: []llm.Message{{Role: "user", Content: "<query>q</query><document>d" + strings.Repeat("x", i) + "</document>"}}})
		require.NoError(t, err)
		b.WriteString(`{"custom_id":"r` + strings.Repeat("1", i+1) + `","method":"POST","url":"/v1/chat/completions","body":` + string(body) + "}\n")
	}
	path := filepath.Join(t.TempDir(), "requests.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	return path
}

func download(t *testing.T, c *llm.BatchClient, id string) string {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, c.DownloadFile(context.Background(), id, 1<<20, func() (io.Writer, error) { buf.Reset(); return &buf, nil }))
	return buf.String()
}

func TestBatchClientLifecycle(t *testing.T) {
	srv := llmtest.New(llmtest.Options{APIKey: batchKey})
	defer srv.Close()
	c, err := llm.NewBatchClient(llm.Config{URL: srv.URL + "/v1", APIKey: batchKey})
	require.NoError(t, err)
	ctx := context.Background()
	path := requestsFile(t, 3)
	id, err := c.UploadFile(ctx, path)
	require.NoError(t, err)
	want, _ := os.ReadFile(path)
	assert.Equal(t, string(want), download(t, c, id), "the multipart upload carries the file as it is")
	b, err := c.CreateBatch(ctx, id, nil)
	require.NoError(t, err)
	assert.Equal(t, llm.BatchValidating, b.Status)
	var seen []string
	b, err = c.WaitBatch(ctx, b.ID, llm.PollPolicy{Initial: time.Millisecond, Max: time.Millisecond}, func(b *llm.Batch) { seen = append(seen, b.Status) })
	require.NoError(t, err)
	assert.Equal(t, []string{llm.BatchInProgress, llm.BatchFinalizing, llm.BatchCompleted}, seen)
	assert.Equal(t, llm.RequestCounts{Total: 3, Completed: 3}, b.RequestCounts)
	out := download(t, c, b.OutputFileID)
	assert.Equal(t, 3, strings.Count(out, `"status_code":200`))
	assert.Empty(t, b.ErrorFileID)
}

func TestBatchClientCancel(t *testing.T) {
	srv := llmtest.New(llmtest.Options{Batch: llmtest.BatchOptions{PollsPerStatus: 5, Answer: 1}})
	defer srv.Close()
	c, err := llm.NewBatchClient(llm.Config{URL: srv.URL})
	require.NoError(t, err)
	ctx := context.Background()
	id, err := c.UploadFile(ctx, requestsFile(t, 3))
	require.NoError(t, err)
	b, err := c.CreateBatch(ctx, id, nil)
	require.NoError(t, err)
	b, err = c.CancelBatch(ctx, b.ID)
	require.NoError(t, err)
	assert.Equal(t, llm.BatchCancelling, b.Status)
	b, err = c.WaitBatch(ctx, b.ID, llm.PollPolicy{Initial: time.Millisecond}, nil)
	require.NoError(t, err)
	assert.Equal(t, llm.BatchCancelled, b.Status)
	assert.Equal(t, 1, strings.Count(download(t, c, b.OutputFileID), "\n"), "the partial output of a cancelled batch")
}

func TestBatchClientErrors(t *testing.T) {
	srv := llmtest.New(llmtest.Options{APIKey: batchKey})
	defer srv.Close()
	c, err := llm.NewBatchClient(llm.Config{URL: srv.URL, APIKey: "sk-wrong-0123456789abcdefghij"})
	require.NoError(t, err)
	_, err = c.UploadFile(context.Background(), requestsFile(t, 1))
	var ae *llm.APIError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, 401, ae.Status)
	assert.NotContains(t, err.Error(), "sk-wrong-0123456789abcdefghij")
	assert.NotContains(t, err.Error(), "abcdefghij")

	// A failed validation: the batch's errors say why.
	c, err = llm.NewBatchClient(llm.Config{URL: srv.URL, APIKey: batchKey})
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "bad.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(`{"custom_id":"a","method":"POST","url":"/v1/embeddings","body":{}}`+"\n"), 0o644))
	id, err := c.UploadFile(context.Background(), path)
	require.NoError(t, err)
	b, err := c.CreateBatch(context.Background(), id, nil)
	require.NoError(t, err)
	b, err = c.WaitBatch(context.Background(), b.ID, llm.PollPolicy{Initial: time.Millisecond}, nil)
	require.NoError(t, err)
	assert.Equal(t, llm.BatchFailed, b.Status)
	assert.Equal(t, "line 1: invalid_url: The URL provided for this request does not match the batch endpoint.", b.ErrorText())

	// The wait stops at once when the context ends.
	ctx, cancel := context.WithCancel(context.Background())
	id, err = c.UploadFile(ctx, requestsFile(t, 1))
	require.NoError(t, err)
	b, err = c.CreateBatch(ctx, id, nil)
	require.NoError(t, err)
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	_, err = c.WaitBatch(ctx, b.ID, llm.PollPolicy{Initial: time.Hour}, nil)
	require.ErrorIs(t, err, context.Canceled)
	assert.Less(t, time.Since(start), time.Second)
}

// Issue 33 items 3 and 4: the Batch API's answers go through the bounded
// reader: an endless batch object is refused at httpretry.MaxAnswer, and an
// endless file download stops at the cap its caller gives (judge: the
// requests it answers; it wrote 7 GB to the disk in 20 s) with a
// *httpretry.TooLargeError; a file of exactly the cap is downloaded.
func TestBatchAnswersBounded(t *testing.T) {
	ctx := context.Background()
	t.Run("batch object", func(t *testing.T) {
		srv, sent := endlessServer(t, `{"id":"`)
		c, err := llm.NewBatchClient(llm.Config{URL: srv.URL + "/v1"})
		require.NoError(t, err)
		_, err = c.GetBatch(ctx, "b1")
		var tl *httpretry.TooLargeError
		require.ErrorAs(t, err, &tl)
		assert.Equal(t, int64(httpretry.MaxAnswer), tl.Cap)
		assert.Less(t, sent.Load(), int64(64<<20))
	})
	t.Run("file download", func(t *testing.T) {
		srv, sent := endlessServer(t, `{"custom_id":"`)
		c, err := llm.NewBatchClient(llm.Config{URL: srv.URL + "/v1"})
		require.NoError(t, err)
		var n countingWriter
		err = c.DownloadFile(ctx, "file-1", 3<<20, func() (io.Writer, error) { n = 0; return &n, nil })
		var tl *httpretry.TooLargeError
		require.ErrorAs(t, err, &tl)
		assert.Equal(t, int64(3<<20), tl.Cap)
		assert.LessOrEqual(t, int64(n), int64(3<<20), "bytes written")
		assert.Less(t, sent.Load(), int64(64<<20))
	})
	t.Run("a file of exactly the cap", func(t *testing.T) {
		srv := llmtest.New(llmtest.Options{})
		defer srv.Close()
		c, err := llm.NewBatchClient(llm.Config{URL: srv.URL + "/v1"})
		require.NoError(t, err)
		path := requestsFile(t, 2)
		id, err := c.UploadFile(ctx, path)
		require.NoError(t, err)
		st, err := os.Stat(path)
		require.NoError(t, err)
		var buf bytes.Buffer
		require.NoError(t, c.DownloadFile(ctx, id, st.Size(), func() (io.Writer, error) { buf.Reset(); return &buf, nil }))
		assert.Equal(t, st.Size(), int64(buf.Len()))
		err = c.DownloadFile(ctx, id, st.Size()-1, func() (io.Writer, error) { buf.Reset(); return &buf, nil })
		var tl *httpretry.TooLargeError
		require.ErrorAs(t, err, &tl)
	})
}

type countingWriter int64

func (w *countingWriter) Write(p []byte) (int, error) {
	*w += countingWriter(len(p))
	return len(p), nil
}

// A large batch (more than 10,000 requests; BatchOptions.Background sets the
// size here, to keep the test cheap) is answered by the OpenAI stand-in in
// the background, as the Anthropic and Gemini ones do: the retrievals stay
// quick while it is answered, so a client whose per-call timeout is shorter
// than the answering sees validating -> in_progress (its request_counts
// growing) -> finalizing -> completed, and output_file_id only once the batch
// has completed (the Batch object's documented fields). The old stand-in
// answered all 200 requests inside the retrieval that ended in_progress (at
// least 1 s at the 5 ms Delay here), which outlasted the 500 ms timeout, as it
// outlasted judge's 60 s on a 50,000-request batch.
func TestBatchLargeAnsweredInBackground(t *testing.T) {
	const n = 200
	srv := llmtest.New(llmtest.Options{Delay: 5 * time.Millisecond, Batch: llmtest.BatchOptions{Background: 10}})
	defer srv.Close()
	c, err := llm.NewBatchClient(llm.Config{URL: srv.URL, Policy: httpretry.Policy{Attempts: 1, Timeout: 500 * time.Millisecond}})
	require.NoError(t, err)
	ctx := context.Background()
	body, err := llm.RequestBody("m", llm.Request{Messages: []llm.Message{{Role: "user", Content: "<query>q</query><document>d</document>"}}})
	require.NoError(t, err)
	var sb strings.Builder
	for i := range n {
		fmt.Fprintf(&sb, `{"custom_id":"r%d","method":"POST","url":"/v1/chat/completions","body":%s}`+"\n", i, body)
	}
	path := filepath.Join(t.TempDir(), "requests.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(sb.String()), 0o644))
	id, err := c.UploadFile(ctx, path)
	require.NoError(t, err)
	b, err := c.CreateBatch(ctx, id, nil)
	require.NoError(t, err)
	var seen []string
	var counts []llm.RequestCounts
	b, err = c.WaitBatch(ctx, b.ID, llm.PollPolicy{Initial: 20 * time.Millisecond, Max: 20 * time.Millisecond}, func(b *llm.Batch) {
		if len(seen) == 0 || seen[len(seen)-1] != b.Status {
			seen = append(seen, b.Status)
		}
		if b.Status == llm.BatchInProgress {
			counts = append(counts, b.RequestCounts)
		}
		if b.Status != llm.BatchCompleted {
			assert.Empty(t, b.OutputFileID, "no output file before the batch has completed (%s)", b.Status)
		}
	})
	require.NoError(t, err, "every retrieval answers within the client's timeout")
	assert.Equal(t, []string{llm.BatchInProgress, llm.BatchFinalizing, llm.BatchCompleted}, seen)
	assert.Equal(t, llm.RequestCounts{Total: n, Completed: n}, b.RequestCounts)
	require.NotEmpty(t, counts)
	assert.Equal(t, int64(n), counts[0].Total)
	assert.Less(t, counts[0].Completed, int64(n), "the batch was in_progress while it was answered")
	for i := 1; i < len(counts); i++ {
		assert.GreaterOrEqual(t, counts[i].Completed, counts[i-1].Completed)
	}
	var buf bytes.Buffer
	require.NoError(t, c.DownloadFile(ctx, b.OutputFileID, 64<<20, func() (io.Writer, error) { buf.Reset(); return &buf, nil }))
	assert.Equal(t, n, strings.Count(buf.String(), `"status_code":200`))
	assert.Empty(t, b.ErrorFileID)
}
