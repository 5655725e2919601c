package generate_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/generate"
	"github.com/retrieval-gate/retrieval-gate/internal/judge"
	"github.com/retrieval-gate/retrieval-gate/internal/llm"
	"github.com/retrieval-gate/retrieval-gate/internal/llm/llmtest"
)

func genRun(t *testing.T, srv *llmtest.Server, batch bool, state string) (*generate.FileResult, []byte) {
	t.Helper()
	kb, err := filepath.Abs("../../testdata/demo/kb")
	require.NoError(t, err)
	var out bytes.Buffer
	o := generate.FileOptions{PerLocale: 3, Seed: 1, Options: generate.Options{Model: "fake", Questions: 2, Keywords: 1, Jaccard: 0.8, Workers: 2}}
	if batch {
		api, err := llm.NewBatchClient(llm.Config{URL: srv.URL})
		require.NoError(t, err)
		o.Batch = &generate.BatchOptions{API: api, State: judge.StateFile{Path: state}, Poll: llm.PollPolicy{Initial: time.Millisecond, Max: time.Millisecond}}
	} else {
		c, err := llm.New(llm.Config{URL: srv.URL, Model: "fake"})
		require.NoError(t, err)
		o.Client = c
	}
	res, err := generate.RunFiles(context.Background(), generate.Files{KB: kb, Out: &out, OutName: "out"}, o)
	require.NoError(t, err)
	return res, out.Bytes()
}

// generate --batch writes the very cases online generation writes.
func TestGenerateBatchMatchesOnline(t *testing.T) {
	srv := llmtest.New(llmtest.Options{})
	defer srv.Close()
	online, want := genRun(t, srv, false, "")
	state := filepath.Join(t.TempDir(), "out.jsonl.batch.json")
	res, got := genRun(t, srv, true, state)
	assert.Equal(t, string(want), string(got))
	assert.Equal(t, online.Documents, res.Documents)
	assert.Equal(t, online.Requests, res.Requests)
	assert.Equal(t, "batch_fake1", res.BatchID)
	assert.Equal(t, llm.BatchCompleted, res.BatchStatus)
	_, err := os.Stat(state)
	assert.True(t, os.IsNotExist(err), "the state file is removed")
}

// An expired batch: the documents without an answer have no queries and are
// counted as failed.
func TestGenerateBatchExpired(t *testing.T) {
	srv := llmtest.New(llmtest.Options{Batch: llmtest.BatchOptions{End: "expired", Answer: 2}})
	defer srv.Close()
	res, _ := genRun(t, srv, true, filepath.Join(t.TempDir(), "s.json"))
	assert.Equal(t, llm.BatchExpired, res.BatchStatus)
	assert.Equal(t, int64(2), res.Requests)
	assert.Equal(t, res.Documents-2, res.Failed)
}
