// Package ctxwrite gives up a write that its reader does not take once a
// context ends: standard output and standard error of a run, which a signal
// must stop within a second also when nobody reads them.
package ctxwrite

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// Grace is how long a write to standard output or standard error may
// still take once the run's context has ended (SIGINT, SIGTERM): a write that
// has not returned by then is given up, so that a command stops within a
// second of the signal also when its standard output or error is a pipe or a
// terminal that nobody reads. A write that can go through (the message or the
// Actions annotation of the interruption) does.
const Grace = 100 * time.Millisecond

// ErrInterrupted is the error of a write given up after its context ended
// (wrapped with the context's error): the error says why the command stopped,
// so the front end does not word it again.
var ErrInterrupted = errors.New("interrupted while the write waited for its reader")

// Chunk is the most of one Write that Writer hands to the writer at
// a time.
const Chunk = 64 << 10

// Until is standard output or standard error w for a run under ctx: a
// write blocked in w (a full pipe that is never read) is given up Grace
// after ctx ends, and every later write then fails at once. A ctx that never
// ends gives w itself.
//
// The write is made on a goroutine, which a given-up write leaves blocked in
// w: the process exits from under it. Making the file descriptor
// non-blocking, so that a deadline could stop the write, would change the
// pipe or terminal it shares with the shell and the other processes writing
// into it, also after the process has exited.
//
// What w is (an *os.File, a terminal) is no longer visible through the
// writer: ask it of w before (progress.TerminalOf).
func Until(ctx context.Context, w io.Writer) io.Writer {
	if ctx.Done() == nil {
		return w
	}
	return &Writer{ctx: ctx, w: w}
}

// Writer is Until's writer. It is safe for concurrent use (writes
// are made one at a time).
type Writer struct {
	ctx context.Context
	w   io.Writer

	mu sync.Mutex
	// buf holds the chunk being written, a copy of the caller's bytes: a
	// given-up write keeps reading it, and Write must not retain its p.
	buf  []byte
	done chan result
	// err is set once a write was given up: w still belongs to it.
	err error
}

type result struct {
	n   int
	err error
}

func (s *Writer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return 0, s.err
	}
	if s.buf == nil {
		s.buf, s.done = make([]byte, Chunk), make(chan result, 1)
	}
	ended := s.ctx.Done()
	var grace <-chan time.Time
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	n := 0
	for len(p) > 0 {
		chunk := s.buf[:min(len(p), Chunk)]
		c := copy(chunk, p)
		go func() {
			m, err := s.w.Write(chunk)
			s.done <- result{m, err}
		}()
		for waiting := true; waiting; {
			select {
			case r := <-s.done:
				n += r.n
				if r.err == nil && r.n < c {
					r.err = io.ErrShortWrite
				}
				if r.err != nil {
					return n, r.err
				}
				waiting = false
			case <-ended:
				ended, timer = nil, time.NewTimer(Grace)
				grace = timer.C
			case <-grace:
				s.err = fmt.Errorf("%w: %w", ErrInterrupted, s.ctx.Err())
				return n, s.err
			}
		}
		p = p[c:]
	}
	return n, nil
}
