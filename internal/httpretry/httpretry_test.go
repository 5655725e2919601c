package httpretry

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func fast() *Client {
	return &Client{Policy: Policy{Attempts: 3, BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond, Timeout: 5 * time.Second}}
}

func TestPostRetries(t *testing.T) {
	tests := []struct {
		name      string
		statuses  []int
		wantCalls int32
		wantErr   string
	}{
		{"ok first", []int{200}, 1, ""},
		{"429 then ok", []int{429, 200}, 2, ""},
		{"503 twice then ok", []int{503, 503, 200}, 3, ""},
		{"500s exhausted", []int{500, 500, 500, 500}, 3, "HTTP 500 after 3 attempt(s)"},
		{"400 not retried", []int{400, 200}, 1, "HTTP 400 after 1 attempt(s)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n := calls.Add(1)
				assert.Equal(t, "Bearer s3cret", r.Header.Get("Authorization"))
				st := tt.statuses[n-1]
				if st == 429 {
					w.Header().Set("Retry-After", "0")
				}
				w.WriteHeader(st)
				_, _ = w.Write([]byte(`{"ok":true}`))
			}))
			defer srv.Close()
			c := fast()
			c.Header = http.Header{"Authorization": {"Bearer s3cret"}}
			body, err := c.Post(context.Background(), srv.URL, []byte(`{}`))
			assert.Equal(t, tt.wantCalls, calls.Load())
			if tt.wantErr == "" {
				require.NoError(t, err)
				assert.JSONEq(t, `{"ok":true}`, string(body))
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantErr)
			assert.NotContains(t, err.Error(), "s3cret")
		})
	}
}

func TestPostUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	url := "http://" + ln.Addr().String() + "/v1/embeddings"
	require.NoError(t, ln.Close())
	start := time.Now()
	_, err = fast().Post(context.Background(), url, []byte(`{}`))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "unreachable after 3 attempt(s)")
	assert.Contains(t, err.Error(), "connection refused")
	assert.Less(t, time.Since(start), 5*time.Second)
}

func TestPostCancelled(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) }))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	c := fast()
	c.Policy.BaseDelay, c.Policy.MaxDelay, c.Policy.Budget = time.Hour, time.Hour, 3*time.Hour
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	_, err := c.Post(ctx, srv.URL, nil)
	assert.ErrorIs(t, err, context.Canceled)
}
