package httpretry

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
)

// Every answer of every server (Chroma, GitHub and its artifacts, the LLM's
// chat and Batch APIs, the embedders, the reranker) is read through this file:
// a Transport bounds the body of every answer it returns (LimitBody, at the
// request's cap: WithMaxBody, else Transport.MaxBody, else DefaultMaxBody), so
// that whatever reads it (encoding/json's decoder, go-github, io.Copy to a
// file) stops at the cap with a *TooLargeError; a whole answer is read by
// ReadAnswer, and the start of an error's body by ReadSnippet.
//
// The answers of the model servers are bounded twice: one answer by its
// client's cap (MaxAnswer for a chat completion or a rerank, EmbedAnswerCap for
// an embedding batch), and all the answers being read at once, by every client
// of the process together, by MaxInFlight. A reader first reserves its answer's
// Content-Length, or its whole cap when the length is unknown, and reads at most
// that: an endless or oversized body costs at most one cap and fails with
// *TooLargeError; many of them at once wait for each other instead of adding up.

const (
	// MaxAnswer bounds one chat-completion or rerank answer. A completion of
	// 32k tokens is about 130 KiB of text; JSON escaping at most sextuples it
	// (\u00XX), so 4 MiB is more than any real answer.
	MaxAnswer = 4 << 20
	// MaxInFlight bounds the answer bytes all clients of the process read at
	// once (16 answers of MaxAnswer).
	MaxInFlight = 64 << 20
	// maxEmbedAnswer bounds EmbedAnswerCap.
	maxEmbedAnswer = MaxInFlight
	// DefaultMaxBody bounds an answer read through a Transport whose MaxBody
	// is unset, to a request that names no cap of its own (WithMaxBody).
	DefaultMaxBody = MaxAnswer
)

// EmbedAnswerCap bounds the answer to an embedding request of n texts: 1 MiB
// plus 256 KiB a text (a 8192-dimension vector at 32 bytes a number), at most
// MaxInFlight.
func EmbedAnswerCap(n int) int64 {
	return min(int64(1<<20)+int64(max(n, 0))*(256<<10), maxEmbedAnswer)
}

// TooLargeError is an answer longer than its cap.
type TooLargeError struct {
	URL string
	Cap int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s: the answer is longer than %s, more than such a server sends: refused", e.URL, sizeText(e.Cap))
}

func sizeText(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	if n >= 1<<10 && n%(1<<10) == 0 {
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// inFlight is the process's reservation of answer bytes.
var inFlight = newByteSem(MaxInFlight)

// byteSem is a weighted semaphore whose waits end with ctx.
type byteSem struct {
	mu    sync.Mutex
	free  int64
	total int64
	wake  chan struct{} // closed and replaced on every release
}

func newByteSem(n int64) *byteSem { return &byteSem{free: n, total: n, wake: make(chan struct{})} }

// acquire reserves n bytes (at most the total, so one large reservation waits
// for all others to end rather than forever).
func (s *byteSem) acquire(ctx context.Context, n int64) (int64, error) {
	n = min(max(n, 1), s.total)
	for {
		s.mu.Lock()
		if s.free >= n {
			s.free -= n
			s.mu.Unlock()
			return n, nil
		}
		wake := s.wake
		s.mu.Unlock()
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-wake:
		}
	}
}

func (s *byteSem) release(n int64) {
	s.mu.Lock()
	s.free += n
	close(s.wake)
	s.wake = make(chan struct{})
	s.mu.Unlock()
}

// ReadAnswer reads a response body of at most limit bytes (<= 0: MaxAnswer)
// under the process's MaxInFlight reservation: contentLength is the response's
// (-1 when unknown). A longer body is a *TooLargeError, read no further than
// limit+1 bytes. url names the server in the error.
func ReadAnswer(ctx context.Context, body io.Reader, contentLength, limit int64, url string) ([]byte, error) {
	if limit <= 0 {
		limit = MaxAnswer
	}
	if contentLength > limit {
		return nil, &TooLargeError{URL: url, Cap: limit}
	}
	want := limit
	if contentLength >= 0 {
		want = contentLength
	}
	got, err := inFlight.acquire(ctx, want)
	if err != nil {
		return nil, err
	}
	defer inFlight.release(got)
	lb := LimitBody(io.NopCloser(body), contentLength, limit, url)
	if contentLength < 0 {
		// The buffer grows with what arrives, never past limit.
		data, err := io.ReadAll(lb)
		if err != nil {
			return nil, err
		}
		return data, nil
	}
	// A declared length is read into one buffer of that length and room for
	// the read that finds the end (io.ReadAll's growing buffers allocated
	// about twice the answer: 36 MB for 16 MiB); a body that is not the
	// length it declared is read as ReadAll reads it.
	var b bytes.Buffer
	b.Grow(int(contentLength) + bytes.MinRead)
	if _, err := b.ReadFrom(lb); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// maxBodyKey is the context key of a request's answer cap.
type maxBodyKey struct{}

// WithMaxBody is ctx for a request whose answer may be at most n bytes (n > 0):
// the Transport bounds the answer's body at n instead of its MaxBody.
func WithMaxBody(ctx context.Context, n int64) context.Context {
	return context.WithValue(ctx, maxBodyKey{}, n)
}

// maxBodyOf is the answer cap WithMaxBody put in ctx (0: none).
func maxBodyOf(ctx context.Context) int64 {
	n, _ := ctx.Value(maxBodyKey{}).(int64)
	return max(n, 0)
}

// LimitBody is body bounded at limit bytes: a Read that would go past them
// fails with a *TooLargeError naming url (after at most limit+1 bytes were
// read), as does the first Read when the answer declares a longer
// Content-Length (contentLength, -1 when unknown).
func LimitBody(body io.ReadCloser, contentLength, limit int64, url string) io.ReadCloser {
	return &limitedBody{rc: body, left: limit, limit: limit, declared: contentLength, url: url}
}

type limitedBody struct {
	rc       io.ReadCloser
	left     int64 // bytes that may still be read
	limit    int64
	declared int64
	url      string
	err      error
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if b.declared > b.limit {
		b.err = &TooLargeError{URL: b.url, Cap: b.limit}
		return 0, b.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	if b.left <= 0 {
		// At the cap: one more byte means the answer is longer.
		var one [1]byte
		n, err := b.rc.Read(one[:])
		if n > 0 {
			b.err = &TooLargeError{URL: b.url, Cap: b.limit}
			return 0, b.err
		}
		if err == nil {
			return 0, nil
		}
		b.err = err
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	if err != nil {
		b.err = err
	}
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }

// ReadSnippet reads at most n bytes of body: the start of an answer an error
// message quotes (a non-2xx answer's). The rest is left unread.
func ReadSnippet(body io.Reader, n int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(body, n))
	var tl *TooLargeError
	if errors.As(err, &tl) {
		err = nil // the snippet is the start of a longer answer
	}
	return data, err
}
