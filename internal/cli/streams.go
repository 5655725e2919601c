package cli

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"
)

// writeGrace is how long a write to standard output or standard error may
// still take once the run's context has ended (SIGINT, SIGTERM): a write that
// has not returned by then is given up, so that a command stops within a
// second of the signal also when its standard output or error is a pipe or a
// terminal that nobody reads. A write that can go through (the message or the
// Actions annotation of the interruption) does.
const writeGrace = 100 * time.Millisecond

// writeChunk is the most of one Write that stopWriter hands to the writer at
// a time.
const writeChunk = 64 << 10

// writerUntil is standard output or standard error w for a run under ctx: a
// write blocked in w (a full pipe that is never read) is given up writeGrace
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
func writerUntil(ctx context.Context, w io.Writer) io.Writer {
	if ctx.Done() == nil {
		return w
	}
	return &stopWriter{ctx: ctx, w: w}
}

// stopWriter is writerUntil's writer. It is safe for concurrent use (writes
// are made one at a time).
type stopWriter struct {
	ctx context.Context
	w   io.Writer

	mu sync.Mutex
	// buf holds the chunk being written, a copy of the caller's bytes: a
	// given-up write keeps reading it, and Write must not retain its p.
	buf  []byte
	done chan stopResult
	// err is set once a write was given up: w still belongs to it.
	err error
}

type stopResult struct {
	n   int
	err error
}

func (s *stopWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return 0, s.err
	}
	if s.buf == nil {
		s.buf, s.done = make([]byte, writeChunk), make(chan stopResult, 1)
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
		chunk := s.buf[:min(len(p), writeChunk)]
		c := copy(chunk, p)
		go func() {
			m, err := s.w.Write(chunk)
			s.done <- stopResult{m, err}
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
				ended, timer = nil, time.NewTimer(writeGrace)
				grace = timer.C
			case <-grace:
				s.err = fmt.Errorf("interrupted while the write waited for its reader: %w", s.ctx.Err())
				return n, s.err
			}
		}
		p = p[c:]
	}
	return n, nil
}
