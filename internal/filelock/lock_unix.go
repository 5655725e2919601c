//go:build unix

// Package filelock takes an exclusive advisory lock on an open file: the
// history's and the judge cache's appends and the end-to-end tests' shared
// binary wait on it.
package filelock

import (
	"context"
	"errors"
	"os"
	"syscall"
	"time"
)

// maxPoll is the longest pause between two tries for a held lock: a wait
// stops within it of ctx's end.
const maxPoll = 50 * time.Millisecond

// Lock takes an exclusive advisory lock on f (flock), waiting for it until
// ctx ends (then ctx's error), and returns the func that releases it. A
// blocking flock is not interrupted by a signal (the runtime's handlers
// restart it), so the wait tries without blocking, pausing 1 ms, then twice
// as long up to maxPoll, between tries.
func Lock(ctx context.Context, f *os.File) (unlock func(), err error) {
	fd := int(f.Fd())
	pause := time.Millisecond
	for {
		err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return func() { _ = syscall.Flock(fd, syscall.LOCK_UN) }, nil
		case errors.Is(err, syscall.EINTR):
			continue
		case !errors.Is(err, syscall.EWOULDBLOCK):
			return nil, err
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
		pause = min(2*pause, maxPoll)
	}
}
