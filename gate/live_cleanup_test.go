package gate_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/gate"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store/chroma/chromatest"
)

// Live deletes the temporary collection it created, and tells its caller when
// it cannot: a *gate.CleanupError, with the (complete) report when the run
// passed, joined to the run's error when it failed. It was silent: the
// collection stayed on the server and the caller never knew. The server is
// the Chroma stand-in (the v2 API, docs/retrieve.md "A Chroma server"), which
// refuses the delete as Chroma's token authentication refuses a token without
// that right (403 {"detail":"Forbidden"}).
func TestLiveReportsAFailedCleanup(t *testing.T) {
	standIn := chromatest.NewStandIn("", "")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			chromatest.WriteJSON(w, http.StatusForbidden, map[string]string{"detail": "Forbidden"})
			return
		}
		standIn.ServeHTTP(w, r)
	}))
	defer srv.Close()
	collections := func() int {
		standIn.Lock()
		defer standIn.Unlock()
		return len(standIn.Cols)
	}
	kb := filepath.Join(t.TempDir(), "kb.jsonl")
	require.NoError(t, os.WriteFile(kb, []byte(`{"id": "reset", "title": "Reset your password", "text": "Open settings and choose reset password."}`+"\n"+
		`{"id": "billing", "title": "Billing", "text": "Invoices are sent every month by email."}`+"\n"), 0o644))
	live := func(cases string) (*gate.Report, error) {
		return gate.Live(context.Background(), gate.LiveOptions{KB: kb, Cases: strings.NewReader(cases),
			Strategy: gate.StrategyDense, StoreURL: srv.URL})
	}

	rep, err := live(`{"id": "a", "query": "reset my password", "gold": ["reset"]}` + "\n")
	var ce *gate.CleanupError
	require.ErrorAs(t, err, &ce)
	assert.Contains(t, err.Error(), "failed to delete temporary chroma collection")
	assert.Contains(t, err.Error(), "Forbidden")
	require.NotNil(t, rep, "the run passed: its report is returned with the cleanup's error")
	assert.NotEmpty(t, rep.Verdict(), "a report of the run")
	assert.Equal(t, 1, collections(), "the collection is left on the server")

	// A run that fails: its error, and the cleanup's joined to it.
	dup := `{"id": "a", "query": "q", "gold": ["x"]}` + "\n"
	_, err = live(dup + dup)
	require.ErrorAs(t, err, &ce)
	assert.Contains(t, err.Error(), `duplicate case id "a"`)
	assert.Equal(t, 2, collections())
}
