//go:build unix

package signals

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store/chroma/chromatest"
)

// TestChromaCleanupSignals: retrieve on Chroma without --collection makes a
// temporary collection and deletes it when it ends, also after a signal. A
// server that has created the collection and then stops answering (the add
// and the delete both stall) must not hold the process past the second
// SIGINT or SIGTERM allows: the delete was given its own 10 s, so the
// command exited 10 s after the signal. It now exits in time, exit 2,
// nothing written, and names the collection that may remain with the command
// that deletes it.
func TestChromaCleanupSignals(t *testing.T) {
	demo := demoDir(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			for attempt := 1; ; attempt++ {
				if !signalLaunch(t, func(t *testing.T, dir, out string) launch {
					url, ready := stallingChroma(t)
					return launch{args: []string{"retrieve", "--kb", filepath.Join(demo, "kb"), "--cases", filepath.Join(demo, "cases.jsonl"),
						"--out", filepath.Join(out, "run.jsonl"), "--chroma-url", url}, ready: ready,
						wantStderr: regexp.MustCompile(`(?s)warning: failed to delete temporary chroma collection "retrieval-gate-tmp-[^"]+" \(it may remain on the server; delete it with: curl -X DELETE 'http://127\.0\.0\.1:\d+/api/v2/tenants/default_tenant/databases/default_database/collections/retrieval-gate-tmp-[^']+'\).*interrupted, nothing written`)}
				}, sig, 200*time.Millisecond, attempt == 4) {
					return
				}
				t.Logf("attempt %d: killed by %v before its handler was installed", attempt, sig)
			}
		})
	}
}

// stallingChroma is a Chroma stand-in (chromatest.StandIn) whose adds and
// collection deletes never answer: the command has made its temporary
// collection and is waiting on the server. ready is closed at the first add.
func stallingChroma(t *testing.T) (url string, ready <-chan struct{}) {
	t.Helper()
	standIn := chromatest.NewStandIn("", "")
	got, done := make(chan struct{}), make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/add") || (r.Method == http.MethodDelete && strings.Contains(r.URL.Path, "/collections/")) {
			if strings.HasSuffix(r.URL.Path, "/add") {
				once.Do(func() { close(got) })
			}
			select {
			case <-r.Context().Done():
			case <-done:
			}
			return
		}
		standIn.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { close(done); srv.Close() })
	return srv.URL, got
}
