package browsertest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Screenshots are taken while other loads open and close tabs of the same
// browser, as the parallel tests of internal/report/html do. Chromium draws
// only the tab in front: a tab opened or closed during Page.captureScreenshot
// sent the drawn one to the back, and the capture waited (5 to 10 s here
// with no other load; in CI, beside other packages' tests, past the loads'
// 60 s). So no tab opens or closes between a capture's command and its reply,
// and each capture follows Page.bringToFront: the protocol's own record of
// the commands shows it, whatever the timing.
func TestScreenshotWhileTabsOpenAndClose(t *testing.T) {
	Start(t) // skips, or fails under CI, without Chromium
	path, err := Find()
	require.NoError(t, err)
	b, err := Launch(path) // its own browser: the trace is set before its first command
	require.NoError(t, err)
	defer b.Close()
	var mu sync.Mutex
	var log []string
	b.c.trace = func(e string) {
		mu.Lock()
		log = append(log, e)
		mu.Unlock()
	}

	page := filepath.Join(t.TempDir(), "long.html")
	require.NoError(t, os.WriteFile(page, []byte("<!doctype html><title>long</title><body>"+
		strings.Repeat("<p>a line of text long enough to be drawn in a few glyph runs</p>", 60)+"</body>"), 0o644))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				if s, err := b.newPage(ctx, func(Event) {}); err == nil {
					_ = s.close(ctx)
				}
				cancel()
			}
		})
	}
	for i := range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		m, err := b.Load(ctx, page, Options{Width: 1400, Screenshot: true, FastPNG: true})
		cancel()
		require.NoError(t, err, "screenshot %d", i)
		require.NotEmpty(t, m.PNG, "screenshot %d", i)
	}
	close(stop)
	wg.Wait()

	mu.Lock()
	defer mu.Unlock()
	captures, front, inCapture := 0, false, false
	for i, e := range log {
		switch e {
		case "reply Page.bringToFront":
			front = true
		case "send Page.captureScreenshot":
			assert.True(t, front, "command %d: a capture not preceded by Page.bringToFront", i)
			captures++
			inCapture = true
		case "reply Page.captureScreenshot":
			inCapture, front = false, false
		case "send Target.createTarget", "send Target.closeTarget":
			assert.False(t, inCapture, "command %d: %s during a capture", i, e)
			front = false
		}
	}
	assert.Equal(t, 3, captures)
	assert.Greater(t, strings.Count(strings.Join(log, "\n"), "send Target.createTarget"), 3, "the other loads opened tabs meanwhile")
}
