package check

import (
	"io"
	"sync/atomic"
)

// asyncWriter hands full 1 MiB buffers to a goroutine that writes them, so the
// single goroutine that emits results in file order never waits on write
// system calls. Close flushes, waits and returns the first write error.
type asyncWriter struct {
	buf  []byte
	full chan []byte
	free chan []byte
	done chan error
	// failed holds the writer's first error, so Write stops the stream early.
	failed atomic.Pointer[error]
}

const asyncBufSize = 1 << 20

func newAsyncWriter(w io.Writer) *asyncWriter {
	a := &asyncWriter{
		buf:  make([]byte, 0, asyncBufSize),
		full: make(chan []byte, 4),
		free: make(chan []byte, 5),
		done: make(chan error, 1),
	}
	go func() {
		var err error
		for b := range a.full {
			if err == nil {
				if _, err = w.Write(b); err != nil {
					a.failed.Store(&err)
				}
			}
			select { // recycle; never block (a spare buffer is simply dropped)
			case a.free <- b[:0]:
			default:
			}
		}
		a.done <- err
	}()
	return a
}

func (a *asyncWriter) Write(p []byte) (int, error) {
	if e := a.failed.Load(); e != nil {
		return 0, *e // stop the stream early (e.g. disk full); Close reports it too
	}
	if len(a.buf)+len(p) > cap(a.buf) && len(a.buf) > 0 {
		a.full <- a.buf
		select {
		case a.buf = <-a.free:
		default:
			a.buf = make([]byte, 0, max(asyncBufSize, len(p)))
		}
	}
	a.buf = append(a.buf, p...)
	return len(p), nil
}

// Close writes what is buffered, stops the goroutine and returns its first error.
func (a *asyncWriter) Close() error {
	if len(a.buf) > 0 {
		a.full <- a.buf
		a.buf = nil
	}
	close(a.full)
	return <-a.done
}
