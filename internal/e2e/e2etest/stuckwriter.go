package e2etest

import (
	"errors"
	"sync"
	"testing"
)

// StuckWriter blocks every write until the test ends, as a full pipe that
// nobody reads does; Started is closed at the first write.
type StuckWriter struct {
	Started chan struct{}
	release chan struct{}
	once    sync.Once
	mu      sync.Mutex
	writes  int
}

// NewStuckWriter returns a StuckWriter whose writes return (with an error)
// once t ends.
func NewStuckWriter(t testing.TB) *StuckWriter {
	w := &StuckWriter{Started: make(chan struct{}), release: make(chan struct{})}
	t.Cleanup(func() { close(w.release) })
	return w
}

func (w *StuckWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.writes++
	w.mu.Unlock()
	w.once.Do(func() { close(w.Started) })
	<-w.release
	return 0, errors.New("released")
}

// Count is the number of writes begun.
func (w *StuckWriter) Count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.writes
}

// FailingWriter fails every write, as standard output on a full disk or a
// closed descriptor does.
type FailingWriter struct{}

func (FailingWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }
