package judge_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/judge"
	"github.com/retrieval-gate/retrieval-gate/internal/llm"
)

// reverseCompleter answers its n requests in the reverse of the order they
// arrive: a request waits until every request that arrived after it has been
// answered, so with n workers the last pair of the pool is answered first.
// fail, when set, is the query whose request fails (after the others are
// answered) instead of being answered.
type reverseCompleter struct {
	fail    string
	mu      sync.Mutex
	arrived []chan struct{}
	all     chan struct{}
	want    int
}

func newReverseCompleter(want int) *reverseCompleter {
	return &reverseCompleter{all: make(chan struct{}), want: want}
}

func (c *reverseCompleter) Complete(ctx context.Context, r llm.Request) (*llm.Response, error) {
	c.mu.Lock()
	i := len(c.arrived)
	mine := make(chan struct{})
	c.arrived = append(c.arrived, mine)
	if len(c.arrived) == c.want {
		close(c.all)
	}
	c.mu.Unlock()
	<-c.all // every request is in flight
	if i+1 < c.want {
		c.mu.Lock()
		next := c.arrived[i+1]
		c.mu.Unlock()
		<-next // the one that arrived after this one is answered
	}
	defer close(mine)
	user := r.Messages[len(r.Messages)-1].Content
	if c.fail != "" && strings.Contains(user, c.fail) {
		return nil, errors.New("server gone")
	}
	return &llm.Response{Content: `{"reason": "r", "score": 2}`}, nil
}

// TestCacheLinesInPoolOrder: the cache's new lines are written in the pool's
// order, whatever the order of the answers, so that the same inputs give the
// same cache file (docs/judge.md, "The cache"): with four workers answered
// last-first, the file is byte for byte the one of a single worker. A run
// stopped by an error keeps every judgment it was answered, in pool order.
func TestCacheLinesInPoolOrder(t *testing.T) {
	pairs, _ := table(1) // four pairs
	serial := func() string {
		path := filepath.Join(t.TempDir(), "judge-cache.jsonl")
		cache, err := judge.OpenCache(path)
		require.NoError(t, err)
		_, err = judge.Judge(context.Background(), pairs, judge.Options{Client: fixedCompleter{}, Model: "fake", Prompt: judge.DefaultPrompt(), Workers: 1, Cache: cache})
		require.NoError(t, err)
		require.NoError(t, cache.Close())
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		return string(data)
	}()
	require.Equal(t, 4, strings.Count(serial, "\n"))

	concurrent := func(fail string) (string, error) {
		path := filepath.Join(t.TempDir(), "judge-cache.jsonl")
		cache, err := judge.OpenCache(path)
		require.NoError(t, err)
		c := newReverseCompleter(4)
		c.fail = fail
		_, jerr := judge.Judge(context.Background(), pairs, judge.Options{Client: c, Model: "fake", Prompt: judge.DefaultPrompt(), Workers: 4, Cache: cache})
		require.NoError(t, cache.Close())
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		return string(data), jerr
	}
	got, err := concurrent("")
	require.NoError(t, err)
	assert.Equal(t, serial, got)

	// The first pair's request fails after the other three were answered:
	// their judgments are kept, in pool order.
	got, err = concurrent(pairs[0].Document)
	require.ErrorContains(t, err, "server gone")
	lines := strings.SplitAfter(serial, "\n")
	assert.Equal(t, strings.Join(lines[1:], ""), got)
}

// fixedCompleter answers every request with grade 2.
type fixedCompleter struct{}

func (fixedCompleter) Complete(context.Context, llm.Request) (*llm.Response, error) {
	return &llm.Response{Content: `{"reason": "r", "score": 2}`}, nil
}
