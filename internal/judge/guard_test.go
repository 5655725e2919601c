package judge_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/judge"
	"github.com/retrieval-gate/retrieval-gate/internal/llm"
)

// Issue 33 item 12: the batch id, status and file ids a server sends are
// printed through the guard of data: a newline in them cannot start a log
// line of its own (it did: "submitted batch b\n::warning::..." was two lines).
func TestBatchLogGuardsServerStrings(t *testing.T) {
	const id = "batch_1\n::warning::forged\r\u2028x"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/v1/files":
			fmt.Fprint(w, `{"id": "file\n##[error]forged", "object": "file"}`)
		case r.URL.Path == "/v1/batches":
			fmt.Fprintf(w, `{"id": %q, "status": "validating"}`, id)
		default:
			fmt.Fprintf(w, `{"id": %q, "status": "completed", "request_counts": {"total": 4, "completed": 0, "failed": 0}}`, id)
		}
	}))
	defer srv.Close()
	pairs, _ := table(1)
	cachePath := filepath.Join(t.TempDir(), "cache.jsonl")
	api, err := llm.NewBatchClient(llm.Config{URL: srv.URL})
	require.NoError(t, err)
	var lines []string
	res, err := runBatch(context.Background(), pairs, batchOpts(t, cachePath), cachePath,
		&judge.BatchOptions{API: api, Poll: llm.PollPolicy{Initial: time.Millisecond, Max: time.Millisecond}},
		func(f string, a ...any) { lines = append(lines, fmt.Sprintf(f, a...)) })
	require.NoError(t, err)
	assert.Equal(t, int64(4), res.Batch.Missing)
	require.NotEmpty(t, lines)
	joined := strings.Join(lines, "|")
	assert.Contains(t, joined, "submitted batch batch_1 ::warning::forged")
	for _, l := range lines {
		assert.NotContains(t, l, "\n", "one log line")
		assert.NotContains(t, l, "\r")
		assert.NotContains(t, l, "\u2028")
	}
}
