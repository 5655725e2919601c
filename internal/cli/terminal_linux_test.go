package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/retrieval-gate/retrieval-gate/internal/ctxwrite"
	"github.com/retrieval-gate/retrieval-gate/internal/e2e/e2etest"
)

// TestProgressBarOnTerminalStderr: Run binds standard error to the run's
// context as it does standard output (ctxwrite.Until, no *os.File), and still
// draws the progress bar when the standard error it was given is a terminal:
// it is detected before the stream is wrapped, and the bar is drawn through
// the wrapped stream, so that a terminal that takes nothing (a stopped one)
// cannot keep the process after a signal either. The bar still fits the
// terminal's width, read from the terminal itself.
func TestProgressBarOnTerminalStderr(t *testing.T) {
	master, slave := openPTY(t)
	require.NoError(t, unix.IoctlSetWinsize(int(master.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 24, Col: 80}))
	var term e2etest.LockedBuffer
	read := make(chan struct{})
	go func() {
		defer close(read)
		_, _ = io.Copy(&term, master) // EIO once the slave is closed
	}()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel() // a context that can end: Run wraps both streams
	f := runFactory(ctx, &Env{Stdin: strings.NewReader(""), Stdout: new(strings.Builder), Stderr: slave, Getenv: func(string) string { return "" }})
	require.NotNil(t, f.terminal, "standard error is a terminal")
	assert.IsType(t, &ctxwrite.Writer{}, f.terminal.Out, "the bar is drawn through the stream bound to the run's context")
	assert.Same(t, slave, f.terminal.File, "its width read from the terminal")
	p := lazyProgress(f, "retrieve: indexing chunks")
	p.Update(1, 1000)
	p.Update(500, 1000)
	p.Finish()
	fmt.Fprintln(f.Env.Stderr, "retrieve: done")
	require.NoError(t, slave.Close())
	<-read
	assert.Contains(t, term.String(), "retrieve: indexing chunks", "the bar, drawn on the terminal")
	assert.Contains(t, term.String(), "retrieve: done")
	for _, line := range strings.FieldsFunc(term.String(), func(r rune) bool { return r == '\r' || r == '\n' }) {
		assert.Less(t, utf8.RuneCountInString(line), 80, "within the terminal's 80 columns: %q", line)
	}

	// Not a terminal: no bar, plain lines only.
	env, _, stderr := checkEnv("")
	f = runFactory(ctx, env)
	assert.Nil(t, f.terminal)
	p = lazyProgress(f, "judge: judging")
	p.Update(1, 10)
	p.Finish()
	assert.Empty(t, stderr.String())
}

// openPTY opens a pseudo-terminal: its master, which the test reads, and its
// slave, a terminal for the command (the test skips where there is none).
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { _ = m.Close() })
	fd := int(m.Fd())
	require.NoError(t, unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0))
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	require.NoError(t, err)
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if errors.Is(err, os.ErrPermission) {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return m, s
}
