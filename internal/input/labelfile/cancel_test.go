package labelfile

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/unixtest"
)

const cancelLabel = `{"case_id": "c1", "dimension": "groundedness", "score": 0.5, "construct": "support", "labeled_at": "2026-09-01T09:00:00Z"}` + "\n"

// silentPipes are readers that sent one label and whose writer stays open without
// sending more: a FIFO opened by name with input.Open (pollable), an os.Pipe
// (pollable) and a blocking pipe wrapped by os.NewFile, as standard input is.
func silentPipes(t *testing.T) map[string]io.Reader {
	t.Helper()
	out := map[string]io.Reader{}
	send := func(w *os.File) {
		_, err := w.WriteString(cancelLabel)
		require.NoError(t, err)
	}

	fifo := filepath.Join(t.TempDir(), "labels.jsonl")
	unixtest.Mkfifo(t, fifo, 0o644)
	w := make(chan *os.File, 1)
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err == nil {
			w <- f
		}
	}()
	r, err := input.Open(context.Background(), fifo)
	require.NoError(t, err)
	wf := <-w
	send(wf)
	t.Cleanup(func() { wf.Close(); r.Close() })
	out["fifo"] = r

	pr, pw, err := os.Pipe()
	require.NoError(t, err)
	send(pw)
	t.Cleanup(func() { pw.Close(); pr.Close() })
	out["os.Pipe"] = pr

	br, bw := unixtest.BlockingPipe(t)
	send(bw)
	t.Cleanup(func() { bw.Close() })
	out["blocking pipe"] = br
	return out
}

// TestReadLabelsStopsOnCancelWhileAPipeIsSilent: issue 10 item 11. Labels read
// from a pipe that stops sending end with the context, within a second.
func TestReadLabelsStopsOnCancelWhileAPipeIsSilent(t *testing.T) {
	lock := testLock(t)
	for name, r := range silentPipes(t) {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)
		start := time.Now()
		_, err := ReadLabels(ctx, r, "labels.jsonl", HumanSide, lock)
		require.ErrorIs(t, err, context.Canceled, name)
		assert.Less(t, time.Since(start), time.Second, name)
	}
}

// endless is a reader of label lines that never ends (a generator, not a pipe).
type endless struct {
	i   int
	buf []byte
}

func (e *endless) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(e.buf) == 0 {
			e.i++
			e.buf = []byte(strings.Replace(cancelLabel, `"c1"`, `"c`+strconv.Itoa(e.i)+`"`, 1))
		}
		c := copy(p[n:], e.buf)
		e.buf, n = e.buf[c:], n+c
	}
	return n, nil
}

// TestReadLabelsStopsOnCancelWhileBusy: a reader that always has data (the parse
// is the work) still stops within a second of cancellation.
func TestReadLabelsStopsOnCancelWhileBusy(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	_, err := ReadLabels(ctx, &endless{}, "labels.jsonl", HumanSide, nil)
	require.ErrorIs(t, err, context.Canceled)
	// Uncancelled it never ends; the bound leaves room for -race on a loaded machine
	// (the command's one-second rule is TestSignals', on the built binary).
	assert.Less(t, time.Since(start), 10*time.Second)
}

// TestReadFilesStopOnCancelOnAFIFO: opening a FIFO nobody writes blocks; a FIFO
// whose writer sent part of the lock and went silent blocks the read. Both end
// with the context.
func TestReadFilesStopOnCancelOnAFIFO(t *testing.T) {
	dir := t.TempDir()
	noWriter := filepath.Join(dir, "nobody.json")
	unixtest.Mkfifo(t, noWriter, 0o644)
	t.Cleanup(func() {
		// Unblock the abandoned opens so the test leaves nothing behind.
		for range 3 {
			if w, err := os.OpenFile(noWriter, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				w.Close()
			}
		}
	})
	silent := filepath.Join(dir, "silent.json")
	unixtest.Mkfifo(t, silent, 0o644)
	w, err := os.OpenFile(silent, os.O_RDWR, 0) // a writer that never closes
	require.NoError(t, err)
	t.Cleanup(func() { w.Close() })
	_, err = w.WriteString(testLockJSON[:20])
	require.NoError(t, err)

	for name, read := range map[string]func(ctx context.Context) error{
		"ReadLockFile/no writer": func(ctx context.Context) error { _, err := ReadLockFile(ctx, noWriter); return err },
		"ReadLockFile/silent":    func(ctx context.Context) error { _, err := ReadLockFile(ctx, silent); return err },
		"ReadLabelsFile/no writer": func(ctx context.Context) error {
			_, err := ReadLabelsFile(ctx, noWriter, JudgeSide, nil)
			return err
		},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		start := time.Now()
		err := read(ctx)
		cancel()
		require.ErrorIs(t, err, context.DeadlineExceeded, name)
		assert.Less(t, time.Since(start), time.Second, name)
	}
}

func TestReadLockFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "lock.json")
	require.NoError(t, os.WriteFile(p, []byte(testLockJSON), 0o644))
	l, err := ReadLockFile(context.Background(), p)
	require.NoError(t, err)
	want := testLock(t)
	want.File = p
	assert.Equal(t, want, l)

	big := filepath.Join(dir, "big.json")
	require.NoError(t, os.WriteFile(big, []byte(testLockJSON+strings.Repeat(" ", MaxLockBytes)), 0o644))
	_, err = ReadLockFile(context.Background(), big)
	var ie *input.Error
	require.ErrorAs(t, err, &ie)
	assert.Equal(t, big+": the lock is larger than 64 KiB", err.Error())
	// The same cap on a lock given as bytes (calibrate --lock-base reads it from
	// git); a YAML lock of 1 MiB of zeros took 240 MB.
	_, err = ReadLock([]byte("dimensions: ["+strings.Repeat("0,", MaxLockBytes/2)+"0]\n"), "main:lock.yaml")
	require.EqualError(t, err, "main:lock.yaml: the lock is larger than 64 KiB")
	padded := testLockJSON + strings.Repeat(" ", MaxLockBytes-len(testLockJSON))
	_, err = ReadLock([]byte(padded), "lock.json")
	require.NoError(t, err)
}
