package judge

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/llm"
)

// Issue 33 item 3: a results file is downloaded to at most MaxResultLine for
// each request it answers (an endless output file wrote 7 GB to the runner's
// disk in 20 s); the download stops at the cap with an error that says so,
// and leaves no temporary file.
func TestBatchFileCapped(t *testing.T) {
	var sent atomic.Int64
	chunk := []byte(strings.Repeat("a", 64<<10))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		for r.Context().Err() == nil {
			n, err := w.Write(chunk)
			sent.Add(int64(n))
			if err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	api, err := llm.NewBatchClient(llm.Config{URL: srv.URL + "/v1"})
	require.NoError(t, err)
	dir := t.TempDir()
	read := func(context.Context, io.Reader, string) error { t.Fatal("an oversized file is not read"); return nil }
	err = readBatchFile(context.Background(), api, &llm.BatchJob{ID: "b"}, llm.ResultSource{What: "output", Ref: "file-out"}, "batch b output file file-out", 2, StateFile{Path: filepath.Join(dir, "cache.jsonl.batch.json")}, read)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "batch b output file file-out is longer than 8519680 bytes, 4259840 (a chat completion of at most 4194304 and its envelope) for each of the 2 request(s) it answers: refused")
	assert.Less(t, sent.Load(), int64(64<<20), "the download stopped near the cap")
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, ents, "no temporary file left")
	assert.Equal(t, int64(2*MaxResultLine), batchFileCap(2))
	assert.Equal(t, int64(MaxResultLine), batchFileCap(0))
}
