package httpretry

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
)

// countingReader counts the bytes read from it, in reads of at most step
// bytes (a body that arrives in pieces).
type countingReader struct {
	r    io.Reader
	step int
	n    int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	if len(p) > c.step {
		p = p[:c.step]
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// FuzzLimitBody: the bounded reader every server answer goes through (issue
// 33 item 4) gives a body's bytes when it is no longer than its cap and does
// not declare a longer Content-Length, and otherwise a *TooLargeError after at
// most the cap's bytes, having read no more than one byte past the cap from
// the server (none when the declared length is over it); ReadAnswer and
// ReadSnippet agree with it.
func FuzzLimitBody(f *testing.F) {
	f.Add([]byte("abcd"), int64(-1), int64(4), uint8(1), uint8(0))
	f.Add([]byte("abcde"), int64(-1), int64(4), uint8(3), uint8(2))
	f.Add([]byte("abcde"), int64(5), int64(4), uint8(8), uint8(9))
	f.Add([]byte(""), int64(0), int64(1), uint8(1), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, declared, limit int64, step, snip uint8) {
		if limit <= 0 || limit > 1<<20 || declared < -1 {
			return
		}
		src := &countingReader{r: bytes.NewReader(data), step: int(step%16) + 1}
		got, err := io.ReadAll(LimitBody(io.NopCloser(src), declared, limit, "u"))
		over := int64(len(data)) > limit || declared > limit
		var tl *TooLargeError
		if errors.As(err, &tl) != over || (!over && err != nil) {
			t.Fatalf("%d bytes, declared %d, cap %d: err %v", len(data), declared, limit, err)
		}
		if over {
			if int64(len(got)) > limit || !bytes.Equal(got, data[:len(got)]) || tl.Cap != limit {
				t.Fatalf("refused after %d bytes (cap %d), cap named %d", len(got), limit, tl.Cap)
			}
			if declared > limit && src.n != 0 {
				t.Fatalf("a declared length over the cap: %d bytes read", src.n)
			}
		} else if !bytes.Equal(got, data) {
			t.Fatalf("got %q, want %q", got, data)
		}
		if src.n > limit+1 {
			t.Fatalf("%d bytes read from the server, the cap %d", src.n, limit)
		}

		ans, err := ReadAnswer(context.Background(), bytes.NewReader(data), declared, limit, "u")
		if errors.As(err, &tl) != over || (!over && (err != nil || !bytes.Equal(ans, data))) {
			t.Fatalf("ReadAnswer: %d bytes, err %v", len(ans), err)
		}
		s, err := ReadSnippet(LimitBody(io.NopCloser(bytes.NewReader(data)), -1, limit, "u"), int64(snip))
		want := data[:min(len(data), int(snip), int(limit))]
		if err != nil || !bytes.Equal(s, want) {
			t.Fatalf("ReadSnippet: %q, err %v, want %q", s, err, want)
		}
	})
}
