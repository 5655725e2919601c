package progress

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// Outside a terminal, ingest progress is a plain stderr line at most every 5
// seconds (CI logs), never one per batch.
func TestProgressLinesInLogs(t *testing.T) {
	var stderr bytes.Buffer
	p := New(&stderr, &stderr, "retrieve: indexing chunks", 1000)
	p.Update(256, 1000)
	assert.Empty(t, stderr.String(), "nothing within the first 5 seconds")
	p.last = time.Now().Add(-6 * time.Second)
	p.Update(512, 1000)
	p.Update(768, 1000)
	assert.Equal(t, "retrieve: indexing chunks: 512/1000 (51%)\n", stderr.String())
	p.last = time.Now().Add(-6 * time.Second)
	p.Update(1000, 1000)
	p.Finish()
	assert.Equal(t, "retrieve: indexing chunks: 512/1000 (51%)\n", stderr.String(), "no line for the end: the summary line follows")
}

// A lazy progress starts at its first update, with that update's total: its
// first line comes 5 seconds after that, not after Lazy.
func TestLazyStartsAtFirstUpdate(t *testing.T) {
	var stderr bytes.Buffer
	p := Lazy(&stderr, &stderr, "judge: judging")
	p.Finish()
	p.Update(1, 4)
	assert.Empty(t, stderr.String())
	assert.Equal(t, 4, p.total)
	p.last = time.Now().Add(-6 * time.Second)
	p.Update(2, 4)
	assert.Equal(t, "judge: judging: 2/4 (50%)\n", stderr.String())
}
