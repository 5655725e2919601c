package progress

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Outside a terminal, ingest progress is a plain stderr line at most every 5
// seconds (CI logs), never one per batch.
func TestProgressLinesInLogs(t *testing.T) {
	var stderr bytes.Buffer
	p := New(&stderr, nil, "retrieve: indexing chunks", 1000)
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
	p := Lazy(&stderr, nil, "judge: judging")
	p.Finish()
	p.Update(1, 4)
	assert.Empty(t, stderr.String())
	assert.Equal(t, 4, p.total)
	p.last = time.Now().Add(-6 * time.Second)
	p.Update(2, 4)
	assert.Equal(t, "judge: judging: 2/4 (50%)\n", stderr.String())
}

// The bar is drawn on the terminal New is given, through its writer whatever
// it is (the caller detected the terminal on its stream before wrapping it),
// and no plain line goes to w; a lazy progress starts its bar at its first
// update.
func TestBarOnTheTerminalGiven(t *testing.T) {
	var lines, terminal bytes.Buffer
	p := Lazy(&lines, &Terminal{Out: &terminal}, "retrieve: indexing chunks")
	assert.Empty(t, terminal.String(), "nothing before the first update")
	p.Update(1, 10)
	p.last = time.Now().Add(-6 * time.Second)
	p.Update(5, 10)
	p.Finish()
	assert.Empty(t, lines.String())
	assert.Contains(t, terminal.String(), "retrieve: indexing chunks")
	assert.Contains(t, terminal.String(), "\r", "a bar redraws its line")
}

// TerminalOf: neither a buffer nor a pipe is a terminal.
func TestTerminalOf(t *testing.T) {
	var b bytes.Buffer
	assert.Nil(t, TerminalOf(&b, &b))
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer w.Close()
	assert.Nil(t, TerminalOf(w, w))
	assert.Nil(t, TerminalOf(nil, &b))
}

// The bar's line fits the terminal's width (a longer one would wrap, and each
// redraw would leave a line behind): the bar itself is narrowed, down from
// its 40 columns, as progressbar does on its own only when it writes to the
// terminal's *os.File.
func TestFitWidth(t *testing.T) {
	const label = "retrieve: indexing chunks"
	assert.Equal(t, barWidth, fitWidth(200, label, 1000), "a wide terminal: the bar as it always was")
	for _, cols := range []int{60, 80, 100, 120} {
		for _, total := range []int{10, 1000, 1_000_000} {
			var b bytes.Buffer
			bar := newBar(&b, label, total, fitWidth(cols, label, total))
			require.NoError(t, bar.Set(total-1))
			longest := 0
			for _, line := range strings.Split(b.String(), "\r") {
				longest = max(longest, utf8.RuneCountInString(line))
			}
			assert.Less(t, longest, cols, "%d columns, %d items: %q", cols, total, b.String())
			assert.Positive(t, longest)
		}
	}
}
