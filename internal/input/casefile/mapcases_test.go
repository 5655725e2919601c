package casefile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
)

// withBlockSize runs the test body with a smaller read block, to exercise lines
// that straddle blocks and the buffer growth for long lines.
func withBlockSize(t *testing.T, n int) {
	t.Helper()
	old := caseBlockSize
	caseBlockSize = n
	t.Cleanup(func() { caseBlockSize = old })
}

// checkNoLeak fails if goroutines started during the test are still running.
func checkNoLeak(t *testing.T) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(2 * time.Second)
		for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		assert.LessOrEqual(t, runtime.NumGoroutine(), before, "goroutines leaked")
	})
}

type seen struct {
	Line     int
	ID       string
	Gold     string
	Identity string
}

// genCases builds a cases file of n cases with blank lines, CRLF line ends, a
// BOM, various entry shapes and no final newline; want lists what each case
// should decode to.
func genCases(n int) (data []byte, want []seen) {
	var b bytes.Buffer
	b.WriteString("\xEF\xBB\xBF")
	line := 1
	for i := range n {
		switch i % 5 {
		case 1:
			b.WriteString("\n") // blank line
			line++
		case 2:
			b.WriteString("  \t\r\n")
			line++
		}
		id := fmt.Sprintf("en-golden-%07d", i)
		gold := fmt.Sprintf("card-%d", i%13)
		var ident string
		switch i % 3 {
		case 0:
			ident = gold
			fmt.Fprintf(&b, `{"id":%q,"must_cite_one_of":[%q],"retrieved":[{"id":"%s#c1","parent_id":%q,"score":0.5,"text":%q}]}`,
				id, gold, gold, gold, strings.Repeat("t", i%300))
		case 1:
			ident = "bare-" + gold
			fmt.Fprintf(&b, `{"id":%q,"type":"adversarial","must_cite_one_of":[%q],"retrieved":[%q]}`, id, gold, ident)
		default:
			fmt.Fprintf(&b, `{"id":%q,"must_cite_one_of":[%q],"scores":{"retrieval_hit_at_k":1}}`, id, gold)
		}
		want = append(want, seen{Line: line, ID: id, Gold: gold, Identity: ident})
		if i < n-1 {
			if i%4 == 0 {
				b.WriteString("\r\n")
			} else {
				b.WriteString("\n")
			}
			line++
		}
	}
	return b.Bytes(), want
}

func see(c *Case) (seen, error) {
	s := seen{Line: c.Line, ID: c.ID}
	if len(c.Gold) > 0 {
		s.Gold = c.Gold[0]
	}
	if len(c.Retrieved) > 0 {
		s.Identity = c.Retrieved[0].Identity()
	}
	return s, nil
}

func TestMapCasesOrderAndLines(t *testing.T) {
	data, want := genCases(3000)
	for _, bs := range []int{16, 200, 4096, 1 << 20} {
		for _, workers := range []int{0, 1, 2, 3, 8} {
			t.Run(fmt.Sprintf("block=%d/workers=%d", bs, workers), func(t *testing.T) {
				checkNoLeak(t)
				withBlockSize(t, bs)
				var got []seen
				err := MapCases(context.Background(), bytes.NewReader(data), "cases.jsonl", workers, see,
					func(s seen) error { got = append(got, s); return nil })
				require.NoError(t, err)
				assert.Equal(t, want, got)
			})
		}
	}
}

func TestStreamCasesMatches(t *testing.T) {
	data, want := genCases(2000)
	for _, bs := range []int{16, 333, 1 << 20} {
		t.Run(fmt.Sprintf("block=%d", bs), func(t *testing.T) {
			withBlockSize(t, bs)
			var got []seen
			err := StreamCases(context.Background(), bytes.NewReader(data), "cases.jsonl", func(c *Case) error {
				s, _ := see(c)
				got = append(got, s)
				return nil
			})
			require.NoError(t, err)
			assert.Equal(t, want, got)
		})
	}
}

func TestReadersEmptyInput(t *testing.T) {
	for _, in := range []string{"", "\n\n", "\xEF\xBB\xBF", " \r\n\t\n"} {
		n := 0
		require.NoError(t, MapCases(context.Background(), strings.NewReader(in), "f", 2,
			func(c *Case) (int, error) { return 1, nil }, func(int) error { n++; return nil }))
		require.NoError(t, StreamCases(context.Background(), strings.NewReader(in), "f", func(c *Case) error { n++; return nil }))
		assert.Zero(t, n)
	}
}

// lines builds a file from lines joined with "\n".
func lines(ls ...string) []byte { return []byte(strings.Join(ls, "\n")) }

func TestMapCasesEarliestError(t *testing.T) {
	good := func(i int) string { return fmt.Sprintf(`{"id":"c%d","retrieved":["x"]}`, i) }
	var ls []string
	for i := range 2000 {
		switch i {
		case 700:
			ls = append(ls, `{"id":"c700","retrieved":[1]}`) // type error
		case 1500:
			ls = append(ls, `{"id":`) // malformed
		default:
			ls = append(ls, good(i))
		}
	}
	data := lines(ls...)
	for _, bs := range []int{64, 1000, 1 << 20} {
		for _, workers := range []int{1, 2, 7} {
			t.Run(fmt.Sprintf("block=%d/workers=%d", bs, workers), func(t *testing.T) {
				checkNoLeak(t)
				withBlockSize(t, bs)
				for range 5 {
					var got []int
					err := MapCases(context.Background(), bytes.NewReader(data), "cases.jsonl", workers,
						func(c *Case) (int, error) { return c.Line, nil },
						func(l int) error { got = append(got, l); return nil })
					require.Error(t, err)
					assert.Equal(t, "cases.jsonl:701: retrieved[0] must be a card id string or an object, got number", err.Error())
					require.Len(t, got, 700, "every case before the error is emitted, none after")
					assert.Equal(t, 700, got[699])
				}
			})
		}
	}
}

func TestMapCasesWorkAndEmitErrors(t *testing.T) {
	var ls []string
	for i := range 500 {
		ls = append(ls, fmt.Sprintf(`{"id":"c%d"}`, i))
	}
	data := lines(ls...)
	withBlockSize(t, 128)
	boom := errors.New("boom")

	t.Run("work error: the earliest wins", func(t *testing.T) {
		checkNoLeak(t)
		for range 5 {
			var emitted int
			err := MapCases(context.Background(), bytes.NewReader(data), "f", 4,
				func(c *Case) (int, error) {
					if c.Line == 300 || c.Line == 420 {
						return 0, fmt.Errorf("line %d: %w", c.Line, boom)
					}
					return c.Line, nil
				},
				func(int) error { emitted++; return nil })
			require.ErrorIs(t, err, boom)
			assert.Equal(t, "line 300: boom", err.Error())
			assert.Equal(t, 299, emitted)
		}
	})
	t.Run("emit error stops emitting", func(t *testing.T) {
		checkNoLeak(t)
		var emitted int
		err := MapCases(context.Background(), bytes.NewReader(data), "f", 3,
			func(c *Case) (int, error) { return c.Line, nil },
			func(l int) error {
				emitted++
				if l == 123 {
					return boom
				}
				return nil
			})
		require.ErrorIs(t, err, boom)
		assert.Equal(t, 123, emitted)
	})
	t.Run("stream fn error", func(t *testing.T) {
		var calls int
		err := StreamCases(context.Background(), bytes.NewReader(data), "f", func(c *Case) error {
			calls++
			if c.Line == 50 {
				return boom
			}
			return nil
		})
		require.ErrorIs(t, err, boom)
		assert.Equal(t, 50, calls)
	})
	t.Run("stream parse error", func(t *testing.T) {
		err := StreamCases(context.Background(), bytes.NewReader(lines(`{"id":"a"}`, ``, `{"id":"b","scores":5}`)), "s.jsonl",
			func(c *Case) error { return nil })
		require.EqualError(t, err, `s.jsonl:3: field "scores" must be an object, got number`)
	})
}

// endless serves valid case lines forever and counts the bytes served.
type endless struct {
	n    atomic.Int64
	line []byte
	off  int
}

func (e *endless) Read(p []byte) (int, error) {
	k := 0
	for k < len(p) {
		c := copy(p[k:], e.line[e.off:])
		k += c
		e.off = (e.off + c) % len(e.line)
	}
	e.n.Add(int64(k))
	return k, nil
}

func TestMapCasesCancelAndBoundedMemory(t *testing.T) {
	checkNoLeak(t)
	withBlockSize(t, 4096)
	src := &endless{line: []byte(`{"id":"x","must_cite_one_of":["a"],"retrieved":["a","b"]}` + "\n")}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stall := make(chan struct{})
	emitted := 0
	done := make(chan error, 1)
	go func() {
		done <- MapCases(ctx, src, "f", 2, func(c *Case) (int, error) { return 1, nil }, func(int) error {
			emitted++
			if emitted == 1000 {
				<-stall // a slow consumer: the reader must not run ahead unboundedly
			}
			return nil
		})
	}()
	time.Sleep(300 * time.Millisecond)
	read := src.n.Load()
	// Bound: what was emitted, plus 2*workers+2 batches in flight, plus the
	// reader's current block (and one more for a partial line).
	assert.LessOrEqual(t, read, int64(1000*len(src.line)+(2*2+2+2)*4096), "reader ran ahead of a stalled consumer")
	time.Sleep(100 * time.Millisecond)
	assert.Equal(t, read, src.n.Load(), "reader still reading while the consumer is stalled")
	cancel()
	close(stall)
	select {
	case err := <-done:
		require.ErrorIs(t, err, context.Canceled)
	case <-time.After(5 * time.Second):
		t.Fatal("MapCases did not stop after cancel")
	}
}

func TestMapCasesCancelDuringWork(t *testing.T) {
	checkNoLeak(t)
	withBlockSize(t, 1024)
	src := &endless{line: []byte(`{"id":"x"}` + "\n")}
	ctx, cancel := context.WithCancel(context.Background())
	var worked atomic.Int64
	start := time.Now()
	err := MapCases(ctx, src, "f", 2, func(c *Case) (int, error) {
		if worked.Add(1) == 5000 {
			cancel()
		}
		return 0, nil
	}, func(int) error { return nil })
	require.ErrorIs(t, err, context.Canceled)
	assert.Less(t, time.Since(start), 5*time.Second)
	// Pre-cancelled context.
	err = MapCases(ctx, strings.NewReader(`{"id":"a"}`), "f", 2, func(c *Case) (int, error) { return 0, nil }, func(int) error { return nil })
	require.ErrorIs(t, err, context.Canceled)
	err = StreamCases(ctx, strings.NewReader(`{"id":"a"}`), "f", func(*Case) error { return nil })
	require.ErrorIs(t, err, context.Canceled)
}

type failingReader struct {
	data []byte
	err  error
}

func (f *failingReader) Read(p []byte) (int, error) {
	if len(f.data) == 0 {
		return 0, f.err
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

func TestReadError(t *testing.T) {
	checkNoLeak(t)
	withBlockSize(t, 64)
	disk := errors.New("input/output error")
	var ls []string
	for i := range 100 {
		ls = append(ls, fmt.Sprintf(`{"id":"c%d"}`, i))
	}
	data := lines(ls...)
	n := 0
	err := MapCases(context.Background(), &failingReader{data: data, err: disk}, "cases.jsonl", 2,
		func(c *Case) (int, error) { return 0, nil }, func(int) error { n++; return nil })
	require.ErrorIs(t, err, disk)
	assert.Contains(t, err.Error(), "failed to read cases.jsonl")
	assert.Less(t, n, 100)
	err = StreamCases(context.Background(), &failingReader{data: data, err: disk}, "cases.jsonl", func(*Case) error { return nil })
	require.ErrorIs(t, err, disk)
}

// repeatReader yields n copies of b, without holding them in memory.
type repeatReader struct {
	b   byte
	n   int
	off int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.off >= r.n {
		return 0, io.EOF
	}
	k := min(len(p), r.n-r.off)
	// Doubling copies, not a byte loop: the race detector instruments every byte
	// a loop writes, and this reader serves 64 MiB.
	if k > 0 {
		p[0] = r.b
		for filled := 1; filled < k; filled *= 2 {
			copy(p[filled:k], p[:filled])
		}
	}
	r.off += k
	return k, nil
}

func TestVeryLongLines(t *testing.T) {
	withBlockSize(t, 1<<16)
	t.Run("a 5 MiB line among short ones", func(t *testing.T) {
		checkNoLeak(t)
		text := strings.Repeat("é", 5<<19)
		data := lines(`{"id":"a"}`, `{"id":"big","query":"`+text+`","retrieved":[{"id":"x","text":"`+text+`"}]}`, `{"id":"c"}`)
		for _, workers := range []int{1, 2} {
			var got []string
			err := MapCases(context.Background(), bytes.NewReader(data), "f", workers, func(c *Case) (string, error) {
				if c.ID == "big" {
					assert.Equal(t, text, c.Query)
				}
				return fmt.Sprintf("%d:%s", c.Line, c.ID), nil
			}, func(s string) error { got = append(got, s); return nil })
			require.NoError(t, err)
			assert.Equal(t, []string{"1:a", "2:big", "3:c"}, got)
		}
	})
	t.Run("a line over 64 MiB is an error naming its line", func(t *testing.T) {
		checkNoLeak(t)
		mk := func() io.Reader {
			return io.MultiReader(strings.NewReader("{\"id\":\"a\"}\n\n"), &repeatReader{b: ' ', n: MaxLine + 10})
		}
		err := MapCases(context.Background(), mk(), "f.jsonl", 2, func(c *Case) (int, error) { return 0, nil }, func(int) error { return nil })
		require.EqualError(t, err, "f.jsonl:3: line longer than 64 MiB")
		err = StreamCases(context.Background(), mk(), "f.jsonl", func(*Case) error { return nil })
		require.EqualError(t, err, "f.jsonl:3: line longer than 64 MiB")
	})
}

func TestMapCasesRealFile(t *testing.T) {
	// A real file, read with the default block size: mixed shapes, CRLF, no
	// final newline, errors named with the file's path.
	dir := t.TempDir()
	path := filepath.Join(dir, "cases.jsonl")
	data, want := genCases(20000)
	require.NoError(t, os.WriteFile(path, data, 0o644))
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var got []seen
	require.NoError(t, MapCases(context.Background(), f, path, 2, see, func(s seen) error { got = append(got, s); return nil }))
	assert.Equal(t, want, got)

	bad := append(append([]byte{}, data...), []byte("\n{\"id\":\"z\",\"retrieved\":[true]}\n")...)
	require.NoError(t, os.WriteFile(path, bad, 0o644))
	f2, err := os.Open(path)
	require.NoError(t, err)
	defer f2.Close()
	err = MapCases(context.Background(), f2, path, 2, see, func(seen) error { return nil })
	var de *input.Error
	require.ErrorAs(t, err, &de)
	assert.Equal(t, path, de.File)
	assert.Equal(t, want[len(want)-1].Line+1, de.Line)
}

// With StringsInLine the retrieved ids decode as without it, across block
// boundaries and reused blocks, read during work and during emit.
func TestMapCasesStringsInLine(t *testing.T) {
	var data bytes.Buffer
	const n = 3000
	for i := range n {
		fmt.Fprintf(&data, `{"id": "c%d", "query": "q", "retrieved": [{"id": "card-%d#c0", "parent_id": "card-%d", "score": 0.5}, {"id": "x%d", "parent_id": "", "score": 1}]}`+"\n", i, i, i, i)
	}
	for _, bs := range []int{200, 4096} {
		t.Run(fmt.Sprintf("block=%d", bs), func(t *testing.T) {
			withBlockSize(t, bs)
			type item struct {
				i   int
				ret []Retrieved
			}
			check := func(it item) {
				require.Equal(t, []Retrieved{
					{ID: fmt.Sprintf("card-%d#c0", it.i), ParentID: fmt.Sprintf("card-%d", it.i), Score: 0.5, HasScore: true},
					{ID: fmt.Sprintf("x%d", it.i), Score: 1, HasScore: true},
				}, it.ret)
			}
			next := 0
			err := MapCasesWith(context.Background(), bytes.NewReader(data.Bytes()), "cases.jsonl", MapOptions{Workers: 2, StringsInLine: true},
				func(c *Case, it *item) error {
					require.Zero(t, *it, "work's slot is zero")
					*it = item{i: c.Line - 1, ret: append([]Retrieved(nil), c.Retrieved...)}
					check(*it)
					return nil
				},
				func(it *item) error {
					require.Equal(t, next, it.i)
					check(*it) // during emit the viewed strings are still intact
					next++
					return nil
				})
			require.NoError(t, err)
			require.Equal(t, n, next)
		})
	}
}
