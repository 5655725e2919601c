// Package browsertest loads report pages in a real headless Chromium (Debian's
// `chromium`, installed by .ci/run) and measures what a reader would see: console
// errors, requests leaving the file, horizontal overflow, chart marks, and a
// screenshot. It drives the browser through the DevTools protocol over
// --remote-debugging-pipe (file descriptors 3 and 4, NUL-terminated JSON
// messages): no listening port to race for on a shared machine, and no WebSocket
// or generated-protocol dependency for the dozen commands the tests use.
package browsertest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"
)

// message is one DevTools protocol message, in either direction.
type message struct {
	ID        int64           `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    any             `json:"params,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

// incoming is a message read from the browser (params kept raw).
type incoming struct {
	ID        int64           `json:"id"`
	Method    string          `json:"method"`
	Params    json.RawMessage `json:"params"`
	SessionID string          `json:"sessionId"`
	Result    json.RawMessage `json:"result"`
	Error     *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// Event is a protocol event of one session.
type Event struct {
	Method string
	Params json.RawMessage
}

type reply struct {
	result json.RawMessage
	err    error
}

// conn is the protocol connection to one browser process.
type conn struct {
	w       io.WriteCloser
	writeMu sync.Mutex

	mu       sync.Mutex
	nextID   int64
	pending  map[int64]chan reply
	sessions map[string]func(Event)
	closed   error

	// trace, when set (by a test, before the first command), is told of each
	// command as it is written ("send Method") and of each reply as call
	// takes it ("reply Method"), in that order.
	trace func(string)
}

func (c *conn) readLoop(r io.Reader) {
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		raw, err := br.ReadBytes(0)
		if err != nil {
			c.fail(fmt.Errorf("browser pipe closed: %w", err))
			return
		}
		var m incoming
		if err := json.Unmarshal(raw[:len(raw)-1], &m); err != nil {
			c.fail(fmt.Errorf("bad protocol message: %w", err))
			return
		}
		c.mu.Lock()
		if m.ID != 0 {
			ch := c.pending[m.ID]
			delete(c.pending, m.ID)
			c.mu.Unlock()
			if ch != nil {
				var rep reply
				if m.Error != nil {
					rep.err = fmt.Errorf("%s (%d)", m.Error.Message, m.Error.Code)
				}
				rep.result = m.Result
				ch <- rep
			}
			continue
		}
		h := c.sessions[m.SessionID]
		c.mu.Unlock()
		if h != nil {
			h(Event{Method: m.Method, Params: m.Params})
		}
	}
}

func (c *conn) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed == nil {
		c.closed = err
	}
	for id, ch := range c.pending {
		ch <- reply{err: err}
		delete(c.pending, id)
	}
}

// send writes a command and returns the channel its reply arrives on.
func (c *conn) send(session, method string, params any) (<-chan reply, error) {
	ch := make(chan reply, 1)
	c.mu.Lock()
	if c.closed != nil {
		c.mu.Unlock()
		return nil, c.closed
	}
	c.nextID++
	id := c.nextID
	c.pending[id] = ch
	c.mu.Unlock()
	if params == nil {
		params = struct{}{}
	}
	b, err := json.Marshal(message{ID: id, Method: method, Params: params, SessionID: session})
	if err != nil {
		return nil, err
	}
	c.writeMu.Lock()
	_, err = c.w.Write(append(b, 0))
	if c.trace != nil {
		c.trace("send " + method)
	}
	c.writeMu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	return ch, nil
}

// call sends a command and decodes its result into out (when not nil).
func (c *conn) call(ctx context.Context, session, method string, params, out any) error {
	ch, err := c.send(session, method, params)
	if err != nil {
		return err
	}
	select {
	case rep := <-ch:
		if c.trace != nil {
			c.trace("reply " + method)
		}
		if rep.err != nil {
			return fmt.Errorf("%s: %w", method, rep.err)
		}
		if out != nil {
			return json.Unmarshal(rep.result, out)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// Browser is one headless Chromium process.
type Browser struct {
	cmd     *exec.Cmd
	c       *conn
	dataDir string
	stderr  *limitedWriter
	done    chan struct{}

	// idle are the tabs of finished loads, blank and ready for the next
	// (Load takes one or opens a new one): a page's renderer process and its
	// enabled domains are made once per tab instead of once per load, which
	// was about a third of a browser test's CPU.
	idleMu sync.Mutex
	idle   []*session

	// front is held (a one-slot semaphore) while a tab is opened or closed and
	// while a screenshot is taken: Chromium draws a screenshot only of the tab
	// in front, and opening or closing another tab meanwhile sends that tab to
	// the back, where Page.captureScreenshot waits for a frame that never comes
	// (puppeteer serialises the same three for the same reason: its PR 12724,
	// issue 12712). TestScreenshotWhileTabsOpenAndClose shows the hang.
	front chan struct{}
}

// lockFront takes the front semaphore, or gives up when ctx is done.
func (b *Browser) lockFront(ctx context.Context) error {
	select {
	case b.front <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (b *Browser) unlockFront() { <-b.front }

// Flags are the command-line flags of every browser the tests start: headless,
// as root (no sandbox), no GPU, nothing that reaches the network on its own
// (QUIC, background networking, component updates, sync), and a tab behind
// another (two tests load pages at once) neither throttled nor paused.
var Flags = []string{
	"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
	"--disable-background-networking", "--disable-component-update", "--disable-sync",
	"--disable-extensions", "--disable-default-apps", "--mute-audio", "--hide-scrollbars",
	"--disable-dev-shm-usage", "--no-default-browser-check",
	"--force-color-profile=srgb", "--font-render-hinting=none",
	"--disable-background-timer-throttling", "--disable-renderer-backgrounding",
	"--disable-backgrounding-occluded-windows",
}

// Launch starts the browser at path with a fresh profile directory.
func Launch(path string) (*Browser, error) {
	dir, err := os.MkdirTemp("", "browsertest-profile-")
	if err != nil {
		return nil, err
	}
	args := append([]string{}, Flags...)
	args = append(args, "--user-data-dir="+dir, "--remote-debugging-pipe", "about:blank")
	cmd := exec.Command(path, args...) //nolint:gosec // G204: the browser binary the caller found (RG_CHROMIUM or PATH), with an argument vector, no shell
	// Chromium reads commands from fd 3 and writes replies and events to fd 4.
	toBrowser, ourW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	ourR, fromBrowser, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.ExtraFiles = []*os.File{toBrowser, fromBrowser}
	stderr := &limitedWriter{n: 64 << 10}
	cmd.Stderr = stderr
	ownGroup(cmd) // its helpers are ended with it
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start %s: %w", path, err)
	}
	toBrowser.Close()
	fromBrowser.Close()
	b := &Browser{cmd: cmd, dataDir: dir, stderr: stderr, done: make(chan struct{}), front: make(chan struct{}, 1),
		c: &conn{w: ourW, pending: map[int64]chan reply{}, sessions: map[string]func(Event){}}}
	go func() {
		b.c.readLoop(ourR)
		ourR.Close()
	}()
	go func() {
		_ = cmd.Wait()
		close(b.done)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var v struct {
		Product string `json:"product"`
	}
	if err := b.c.call(ctx, "", "Browser.getVersion", nil, &v); err != nil {
		b.Close()
		return nil, fmt.Errorf("%s does not answer on its DevTools pipe: %w\n%s", path, err, b.Stderr())
	}
	return b, nil
}

// Stderr returns the start of the browser's standard error, for diagnostics.
func (b *Browser) Stderr() string {
	b.stderr.mu.Lock()
	defer b.stderr.mu.Unlock()
	return b.stderr.b.String()
}

// Close ends the browser (politely, then its whole process group) and removes
// its profile directory.
func (b *Browser) Close() {
	if ch, err := b.c.send("", "Browser.close", nil); err == nil {
		select {
		case <-ch:
		case <-time.After(5 * time.Second):
		}
	}
	select {
	case <-b.done:
	case <-time.After(10 * time.Second):
		killGroup(b.cmd)
		<-b.done
	}
	// Helper processes of the group that outlive the main one.
	killGroup(b.cmd)
	b.c.w.Close()
	for range 20 {
		if err := os.RemoveAll(b.dataDir); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// session is one attached page target.
type session struct {
	b        *Browser
	id       string
	targetID string
}

// newPage opens a blank page and attaches to it; events of the page go to h
// (called on the reader goroutine: it must not block on a command's reply).
func (b *Browser) newPage(ctx context.Context, h func(Event)) (*session, error) {
	if err := b.lockFront(ctx); err != nil {
		return nil, err
	}
	defer b.unlockFront()
	var t struct {
		TargetID string `json:"targetId"`
	}
	if err := b.c.call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"}, &t); err != nil {
		return nil, err
	}
	var a struct {
		SessionID string `json:"sessionId"`
	}
	if err := b.c.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": t.TargetID, "flatten": true}, &a); err != nil {
		return nil, err
	}
	b.c.mu.Lock()
	b.c.sessions[a.SessionID] = h
	b.c.mu.Unlock()
	return &session{b: b, id: a.SessionID, targetID: t.TargetID}, nil
}

// tab returns an idle tab with its events now going to h, or a new one with
// the domains Load reads enabled.
func (b *Browser) tab(ctx context.Context, h func(Event)) (*session, error) {
	b.idleMu.Lock()
	if n := len(b.idle); n > 0 {
		s := b.idle[n-1]
		b.idle = b.idle[:n-1]
		b.idleMu.Unlock()
		s.handle(h)
		return s, nil
	}
	b.idleMu.Unlock()
	s, err := b.newPage(ctx, h)
	if err != nil {
		return nil, err
	}
	for _, c := range []struct {
		method string
		params any
	}{
		{"Page.enable", nil},
		{"Runtime.enable", nil},
		{"Log.enable", nil},
		{"Network.enable", nil},
		{"Fetch.enable", map[string]any{"patterns": []map[string]any{{"urlPattern": "*"}}}},
	} {
		if err := s.call(ctx, c.method, c.params, nil); err != nil {
			_ = s.close(context.WithoutCancel(ctx))
			return nil, err
		}
	}
	return s, nil
}

// release ends a load's use of its tab: the tab goes back blank to the idle
// ones (the page it showed unloaded, so nothing of it reaches the next load's
// handler), or is closed when it cannot be made blank.
func (b *Browser) release(ctx context.Context, s *session) {
	// The blank page's load event is awaited here, not left to reach the
	// next load's handler as that page's.
	blank := make(chan struct{})
	var once sync.Once
	s.handle(func(e Event) {
		if e.Method == "Page.loadEventFired" {
			once.Do(func() { close(blank) })
		}
	})
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var nav struct {
		ErrorText string `json:"errorText"`
	}
	if err := s.call(ctx, "Page.navigate", map[string]any{"url": "about:blank"}, &nav); err != nil || nav.ErrorText != "" {
		_ = s.close(context.WithoutCancel(ctx))
		return
	}
	select {
	case <-blank:
	case <-ctx.Done():
		_ = s.close(context.WithoutCancel(ctx))
		return
	}
	s.handle(func(Event) {})
	b.idleMu.Lock()
	b.idle = append(b.idle, s)
	b.idleMu.Unlock()
}

// handle sends the tab's events to h from now on.
func (s *session) handle(h func(Event)) {
	s.b.c.mu.Lock()
	s.b.c.sessions[s.id] = h
	s.b.c.mu.Unlock()
}

func (s *session) call(ctx context.Context, method string, params, out any) error {
	return s.b.c.call(ctx, s.id, method, params, out)
}

// notify sends a command without waiting for its reply (from an event handler).
func (s *session) notify(method string, params any) { _, _ = s.b.c.send(s.id, method, params) }

func (s *session) close(ctx context.Context) error {
	err := s.b.lockFront(ctx)
	if err == nil {
		err = s.b.c.call(ctx, "", "Target.closeTarget", map[string]any{"targetId": s.targetID}, nil)
		s.b.unlockFront()
	}
	s.b.c.mu.Lock()
	delete(s.b.c.sessions, s.id)
	s.b.c.mu.Unlock()
	return err
}

type limitedWriter struct {
	mu sync.Mutex
	b  bytes.Buffer
	n  int
}

func (w *limitedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if room := w.n - w.b.Len(); room > 0 {
		w.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// errNoChromium is returned by Find when no browser is installed.
var errNoChromium = errors.New("no chromium on PATH (Debian: apt-get install chromium; or set $CHROMIUM)")
