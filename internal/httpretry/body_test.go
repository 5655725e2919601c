package httpretry

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// endless is a server whose 200 answer never ends (issue 20 item 5); it counts
// the bytes it managed to send.
func endless(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var sent atomic.Int64
	chunk := make([]byte, 32<<10)
	for i := range chunk {
		chunk[i] = 'a'
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(`{"choices":[{"message":{"content":"`))
		for r.Context().Err() == nil {
			n, err := w.Write(chunk)
			sent.Add(int64(n))
			if err != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &sent
}

// An endless answer is refused at the cap, not read to 256 MiB; an answer that
// declares a length over the cap is refused before its body is read.
func TestPostAnswerCap(t *testing.T) {
	srv, sent := endless(t)
	c := fast()
	c.MaxAnswer = 1 << 20
	_, err := c.Post(context.Background(), srv.URL, []byte(`{}`))
	var tl *TooLargeError
	require.ErrorAs(t, err, &tl)
	assert.Contains(t, err.Error(), "longer than 1 MiB")
	assert.Less(t, sent.Load(), int64(64<<20), "the client stopped reading near the cap")

	// The default cap (MaxAnswer) of a client that sets none.
	_, err = fast().Post(context.Background(), srv.URL, []byte(`{}`))
	require.ErrorAs(t, err, &tl)
	assert.Equal(t, int64(MaxAnswer), tl.Cap)

	// A declared Content-Length over the cap: refused without reading it.
	big, calls := statusServer(t, func(w http.ResponseWriter) {
		w.Header().Set("Content-Length", strconv.Itoa(2<<20))
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(make([]byte, 2<<20))
	})
	c.MaxAnswer = 1 << 20
	_, err = c.Post(context.Background(), big.URL, []byte(`{}`))
	require.ErrorAs(t, err, &tl)
	assert.Equal(t, int32(1), calls.Load(), "a too-large answer is not retried")

	// An answer of exactly the cap is read.
	exact, _ := statusServer(t, answer(200, nil, string(make([]byte, 1<<20))))
	data, err := c.Post(context.Background(), exact.URL, []byte(`{}`))
	require.NoError(t, err)
	assert.Len(t, data, 1<<20)
}

// A non-2xx answer's body is read only as far as its message needs.
func TestPostErrorBodyBounded(t *testing.T) {
	var sent atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		chunk := make([]byte, 32<<10)
		for r.Context().Err() == nil {
			n, err := w.Write(chunk)
			sent.Add(int64(n))
			if err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	_, err := fast().Post(context.Background(), srv.URL, []byte(`{}`))
	require.ErrorContains(t, err, "HTTP 400")
	assert.Less(t, sent.Load(), int64(64<<20))
}

// blockingReader blocks until released, counting how many are being read at once.
type blockingReader struct {
	release <-chan struct{}
	cur     *atomic.Int32
	peak    *atomic.Int32
	done    bool
}

func (b *blockingReader) Read(p []byte) (int, error) {
	if b.done {
		return 0, io.EOF
	}
	n := b.cur.Add(1)
	for {
		old := b.peak.Load()
		if n <= old || b.peak.CompareAndSwap(old, n) {
			break
		}
	}
	<-b.release
	b.cur.Add(-1)
	b.done = true
	return copy(p, "{}"), nil
}

// All the answers read at once share MaxInFlight: with room for three caps, a
// fourth unknown-length answer waits (for its context, too) instead of adding up.
func TestAnswersInFlightBounded(t *testing.T) {
	old := inFlight
	inFlight = newByteSem(3 * MaxAnswer)
	defer func() { inFlight = old }()
	release := make(chan struct{})
	var cur, peak atomic.Int32
	var wg sync.WaitGroup
	errs := make(chan error, 10)
	for range 10 {
		wg.Go(func() {
			_, err := ReadAnswer(context.Background(), &blockingReader{release: release, cur: &cur, peak: &peak}, -1, MaxAnswer, "u")
			errs <- err
		})
	}
	require.Eventually(t, func() bool { return cur.Load() == 3 }, 5*time.Second, time.Millisecond)
	time.Sleep(20 * time.Millisecond)
	assert.Equal(t, int32(3), cur.Load())

	// A waiting reader stops with its context.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := ReadAnswer(ctx, &blockingReader{release: release, cur: &cur, peak: &peak}, -1, MaxAnswer, "u")
	require.ErrorIs(t, err, context.DeadlineExceeded)

	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	assert.Equal(t, int32(3), peak.Load())
	assert.Equal(t, inFlight.total, inFlight.free, "every reservation is given back")

	// A reservation larger than the whole pool runs alone rather than never.
	_, err = ReadAnswer(context.Background(), &blockingReader{release: release, cur: &cur, peak: &peak, done: true}, -1, 10*MaxAnswer, "u")
	require.NoError(t, err)
	assert.NotErrorIs(t, err, context.Canceled)
}

// Issue 20 item 14: a model-server client whose policy sets no budget has the
// documented 3 minutes, not attempts × timeout + 2 minutes (7 minutes): a
// Retry-After of 200 s does not fit and is not waited; one of 170 s is.
func TestClientDefaultBudget(t *testing.T) {
	for _, tc := range []struct {
		retryAfter string
		wantWaits  []time.Duration
		wantErr    string
	}{
		{"200", nil, "within the 3m0s retry budget"},
		{"170", []time.Duration{170 * time.Second}, ""},
		// A fresh variant: the wait given as a date 4 minutes away.
		{testNow.Add(4 * time.Minute).Format(http.TimeFormat), nil, "within the 3m0s retry budget"},
	} {
		t.Run(tc.retryAfter, func(t *testing.T) {
			srv, _ := statusServer(t, answer(429, map[string]string{"Retry-After": tc.retryAfter}, ""), ok())
			w := &waits{}
			c := &Client{Policy: Policy{Now: func() time.Time { return testNow }}, Sleep: w.sleep}
			_, err := c.Post(context.Background(), srv.URL, []byte(`{}`))
			assert.Equal(t, tc.wantWaits, w.d)
			if tc.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.wantErr)
			assert.Contains(t, err.Error(), "not waiting")
		})
	}
}

// Issue 33 item 4: the Transport bounds every answer it returns, whoever
// reads it (a json.Decoder, go-github, io.Copy): at the request's cap
// (WithMaxBody), else its MaxBody, else DefaultMaxBody.
func TestTransportBoundsEveryAnswer(t *testing.T) {
	srv, _ := endless(t)
	read := func(tr *Transport, ctx context.Context) (int64, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
		require.NoError(t, err)
		resp, err := NewHTTPClient(tr).Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		return io.Copy(io.Discard, resp.Body)
	}
	for _, tc := range []struct {
		name string
		tr   *Transport
		ctx  context.Context
		cap  int64
	}{
		{"the default", &Transport{}, context.Background(), DefaultMaxBody},
		{"the transport's", &Transport{MaxBody: 1 << 20}, context.Background(), 1 << 20},
		{"the request's", &Transport{MaxBody: 1 << 20}, WithMaxBody(context.Background(), 3<<20), 3 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, err := read(tc.tr, tc.ctx)
			var tl *TooLargeError
			require.ErrorAs(t, err, &tl)
			assert.Equal(t, tc.cap, tl.Cap)
			assert.Equal(t, tc.cap, n, "bytes read: the cap, not one more")
		})
	}
}

func TestLimitBody(t *testing.T) {
	body := func(s string) io.ReadCloser { return io.NopCloser(strings.NewReader(s)) }
	for _, tc := range []struct {
		name     string
		data     string
		declared int64
		limit    int64
		want     string
		tooLarge bool
	}{
		{"under", "abc", -1, 4, "abc", false},
		{"exactly", "abcd", -1, 4, "abcd", false},
		{"one over", "abcde", -1, 4, "abcd", true},
		{"declared over: nothing read", "abcde", 5, 4, "", true},
		{"declared exactly", "abcd", 4, 4, "abcd", false},
		{"empty", "", 0, 4, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := io.ReadAll(LimitBody(body(tc.data), tc.declared, tc.limit, "u"))
			assert.Equal(t, tc.want, string(got))
			var tl *TooLargeError
			assert.Equal(t, tc.tooLarge, errors.As(err, &tl), "%v", err)
			if !tc.tooLarge {
				require.NoError(t, err)
			}
		})
	}
	// A snippet of a longer answer is its start, without an error.
	b, err := ReadSnippet(LimitBody(body("abcdef"), -1, 4, "u"), 2)
	require.NoError(t, err)
	assert.Equal(t, "ab", string(b))
	b, err = ReadSnippet(LimitBody(body("abcdef"), -1, 4, "u"), 10)
	require.NoError(t, err)
	assert.Equal(t, "abcd", string(b))
}
