package check

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// Lines carved from chunks on several goroutines stay intact until released,
// whatever the order of the releases, and chunks are reused once all their
// lines are released.
func TestLineChunksRecycle(t *testing.T) {
	type line struct {
		b    []byte
		want string
		ch   *lineChunk
	}
	carve := func(s string) line {
		ch := getChunk()
		start := len(ch.buf)
		ch.buf = append(ch.buf, s...)
		return line{ch.cut(start), s, ch}
	}
	var mu sync.Mutex
	var lines []line
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 3000 {
				// Up to 5 KiB a line: some outgrow a chunk's tail.
				l := carve(fmt.Sprintf("g%d line %d %0*d\n", g, i, (i*37)%5000, i))
				mu.Lock()
				lines = append(lines, l)
				// Release the older half now and then, out of order.
				if len(lines) > 200 {
					for j := 0; j < 100; j++ {
						k := (j * 7) % len(lines)
						require.Equal(t, lines[k].want, string(lines[k].b))
						lines[k].ch.release()
						lines[k] = lines[len(lines)-1]
						lines = lines[:len(lines)-1]
					}
				}
				if i%50 == 0 {
					for _, l := range lines {
						require.Equal(t, l.want, string(l.b))
					}
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for _, l := range lines {
		require.Equal(t, l.want, string(l.b))
		l.ch.release()
	}
}
