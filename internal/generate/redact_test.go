package generate_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
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

// echoKB is a KB for llmtest's hostile generator ([[echo-key]]: the first
// question and the first keyword query of card a quote the key).
func echoKB() *kbfile.KB {
	return &kbfile.KB{Path: "kb.jsonl", Cards: []kbfile.Card{
		{ID: "a", Text: "alpine meadows bloom with gentian flowers [[echo-key]]"},
		{ID: "b", Text: "harbour cranes unload container ships overnight"},
	}}
}

// A library caller that gives its clients the key and Run no Secrets: the
// queries that quoted the key are dropped, counted and warned of, online and
// through the Batch API: each client's own redaction (its Redact) is the
// run's. The other queries are written.
func TestQueriesWithTheClientsKeyDropped(t *testing.T) {
	const key = "local-gen-key-Pw7Ns3Kd9Yb5" // of no shape: found because the client holds it
	srv := llmtest.New(llmtest.Options{APIKey: key})
	defer srv.Close()
	for _, batch := range []bool{false, true} {
		t.Run(map[bool]string{false: "online", true: "batch"}[batch], func(t *testing.T) {
			var out bytes.Buffer
			var logs []string
			o := generate.NewRunOptions()
			o.PerLocale, o.LLM.Model, o.Questions, o.Keywords = 2, "fake", 2, 1
			in := generate.In{KB: echoKB(), Out: &out, OutName: "out", Logf: func(f string, a ...any) { logs = append(logs, fmt.Sprintf(f, a...)) }}
			if batch {
				api, err := llm.NewBatchClient(llm.Config{URL: srv.URL, APIKey: key})
				require.NoError(t, err)
				o.Batch, o.BatchPoll = true, time.Millisecond
				in.BatchAPI, in.BatchState = api, judge.StateFile{Path: t.TempDir() + "/out.batch.json"}
			} else {
				c, err := llm.New(llm.Config{URL: srv.URL, Model: "fake", APIKey: key})
				require.NoError(t, err)
				in.Client = c
			}
			res, err := generate.Run(context.Background(), in, *o)
			require.NoError(t, err)
			assert.Equal(t, 2, res.SecretDropped)
			assert.Equal(t, 4, res.Written)
			assert.NotContains(t, strings.ToLower(out.String()), strings.ToLower(key[:8]))
			assert.NotContains(t, out.String(), "***")
			assert.Contains(t, logs, "warning: 2 generated queries dropped: they held a secret (the API key, a key or token of the environment, a URL's credentials or a credential by its shape)")
		})
	}
}

// scripted is a chat server standing in for a model that answers its
// answers in turn, and keeps the requests it was sent.
type scripted struct {
	mu      sync.Mutex
	answers []string
	reqs    []llm.Request
}

func (s *scripted) Complete(_ context.Context, r llm.Request) (*llm.Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, r)
	a := s.answers[0]
	s.answers = s.answers[1:]
	return &llm.Response{Content: a}, nil
}

// A credential of a known shape that the process never had is found too:
// the query that holds it is dropped, the one that holds a secret of
// Options.Secrets is, and the reason an unreadable answer is asked again,
// which quotes its line, says *** where the model wrote one.
func TestQueriesWithASecretDropped(t *testing.T) {
	const shaped = "sk-proj-Rg7eTq2Lm9Xv4Bn8Kd1Wz6Hy3Pc5Jf0Ua"
	const given = "given-secret-Vc3Nm8Qa"
	c := &scripted{answers: []string{
		"question: where is the key " + shaped + "\nnot a query line " + given + "\n",
		"question: where do gentian flowers bloom\nquestion: meadows " + shaped + "\nkeyword: alpine " + given + "\n",
	}}
	res, err := generate.Generate(context.Background(), echoKB().Cards[:1], generate.Options{Client: c, Model: "fake", Prompt: generate.DefaultPrompt(),
		Format: judge.FormatText, Questions: 2, Keywords: 1, Workers: 1, Jaccard: 0.8, Secrets: []string{given}})
	require.NoError(t, err)
	require.Len(t, c.reqs, 2)
	correction := c.reqs[1].Messages[len(c.reqs[1].Messages)-1].Content
	assert.Contains(t, correction, `line "not a query line ***" is neither`)
	assert.NotContains(t, correction, given[:8])
	assert.Equal(t, 2, res.SecretDropped)
	require.Len(t, res.Cases, 1)
	assert.Equal(t, "where do gentian flowers bloom", res.Cases[0].Query)
}
