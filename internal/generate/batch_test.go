package generate_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/generate"
	"github.com/retrieval-gate/retrieval-gate/internal/input/kbfile"
	"github.com/retrieval-gate/retrieval-gate/internal/judge"
	"github.com/retrieval-gate/retrieval-gate/internal/llm"
	"github.com/retrieval-gate/retrieval-gate/internal/llm/llmtest"
)

func genRun(t *testing.T, srv *llmtest.Server, batch bool, state string) (*generate.RunResult, []byte) {
	t.Helper()
	var out bytes.Buffer
	o, in := genOptions(t, &out)
	if batch {
		api, err := llm.NewBatchClient(llm.Config{URL: srv.URL})
		require.NoError(t, err)
		o.Batch, o.BatchPoll = true, time.Millisecond
		in.BatchAPI, in.BatchState = api, judge.StateFile{Path: state}
	} else {
		c, err := llm.New(llm.Config{URL: srv.URL, Model: "fake"})
		require.NoError(t, err)
		in.Client = c
	}
	res, err := generate.Run(context.Background(), in, *o)
	require.NoError(t, err)
	return res, out.Bytes()
}

// genOptions are the options of the tests' runs on the demo KB, and their
// input: the KB, and out for the cases.
func genOptions(t *testing.T, out io.Writer) (*generate.RunOptions, generate.In) {
	t.Helper()
	kb, err := kbfile.Load(context.Background(), filepath.Join("..", "..", "testdata", "demo", "kb"))
	require.NoError(t, err)
	o := generate.NewRunOptions()
	o.PerLocale, o.Seed, o.LLM.Model, o.LLM.Concurrency = 3, 1, "fake", 2
	return o, generate.In{KB: kb, Out: out, OutName: "out"}
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
