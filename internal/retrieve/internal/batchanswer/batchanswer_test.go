package batchanswer

import (
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/httpretry"
)

// The limit TEI states in its 413, on its own routes ({"error", "error_type"})
// and on its OpenAI-compatible /v1/embeddings ({"message", "code", "type"});
// nothing for another status, another 413 or a limit that is not a count.
func TestStated(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		body   string
		want   int
	}{
		{"rerank", 413, `{"error":"batch size 32 \u003e maximum allowed batch size 8","error_type":"Validation"}`, 8},
		{"v1/embeddings", 413, `{"message":"batch size 32 > maximum allowed batch size 16","code":413,"type":"Validation"}`, 16},
		{"as text", 413, `batch size 32 > maximum allowed batch size 4`, 4},
		{"another 413", 413, `{"message":"Input validation error: inputs must have less than 512 tokens. Given: 600","code":413,"type":"Validation"}`, 0},
		{"another status", 400, `{"message":"batch size 32 > maximum allowed batch size 8"}`, 0},
		{"a limit of 0", 413, `{"message":"batch size 32 > maximum allowed batch size 0"}`, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Stated(&httpretry.StatusError{Status: tc.status, Body: tc.body}))
		})
	}
	assert.Zero(t, Stated(errors.New("batch size 32 > maximum allowed batch size 8")))
}

// Requests learning limits at once keep the lowest.
func TestLimitKeepsTheLowest(t *testing.T) {
	var l Limit
	var wg sync.WaitGroup
	for _, n := range []int64{16, 4, 8, 30} {
		wg.Go(func() { l.lower(n) })
	}
	wg.Wait()
	require.Equal(t, 4, l.size(32))
	assert.Equal(t, 2, l.size(2))
}
