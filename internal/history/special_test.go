package history

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/retrieval-gate/retrieval-gate/internal/unixtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fastjson"
)

// A history that is a named pipe is refused before it is opened: appending
// to it (check --history) waited for ever, past SIGINT; reading it (report
// --history) waited for a writer.
func TestHistoryNamedPipeRefused(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "history.jsonl")
	unixtest.Mkfifo(t, fifo, 0o644)
	done := make(chan [2]error, 1)
	go func() {
		_, aerr := appendWarn(context.Background(), dir, Record{Schema: Schema, Time: "2026-01-01T00:00:00Z", Command: "check", Commit: "c", Branch: "main", Document: []byte(`{"schema":"x"}`)})
		serr := Scan(context.Background(), dir, func(Record, *fastjson.Value) error { return nil })
		done <- [2]error{aerr, serr}
	}()
	select {
	case errs := <-done:
		for _, err := range errs {
			require.Error(t, err)
			assert.Contains(t, err.Error(), "is not a regular file (p---------): a history is a file that check and compare append to")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("blocked on the named pipe")
	}
}

// The fingerprint of a directory streams each file into the hash: the same
// value as hashing each file read whole.
func TestHashPathStreams(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{"a.md": "alpha", "sub/b.md": "", "sub/c.bin": string(make([]byte, 3<<20))}
	for name, content := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	h := sha256.New()
	for _, name := range []string{"a.md", "sub/b.md", "sub/c.bin"} {
		fmt.Fprintf(h, "%q %d\n", name, len(files[name]))
		h.Write([]byte(files[name]))
	}
	got, err := hashPath(t.Context(), dir)
	require.NoError(t, err)
	assert.Equal(t, "sha256:"+hex.EncodeToString(h.Sum(nil)), got)
}
