package history

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fastjson"
)

func testRecord(doc string) Record {
	return Record{Command: "check", Commit: "c", Branch: "main", Time: "2026-01-01T00:00:00Z", Document: []byte(doc)}
}

// halfWriter writes half of each buffer to the file and fails, as a full disk
// (ENOSPC), a quota (EDQUOT) or a file size limit (EFBIG) does.
type halfWriter struct {
	f   *os.File
	err error
}

func (h halfWriter) Write(p []byte) (int, error) {
	n, _ := h.f.Write(p[:len(p)/2])
	return n, h.err
}

// shortWriter writes half and reports no error: a short write.
type shortWriter struct{ f *os.File }

func (s shortWriter) Write(p []byte) (int, error) { return s.f.Write(p[:len(p)/2]) }

func records(t *testing.T, file string, opts ...ScanOption) []string {
	t.Helper()
	var docs []string
	require.NoError(t, Scan(context.Background(), file, func(rec Record, doc *fastjson.Value) error {
		docs = append(docs, string(doc.MarshalTo(nil)))
		return nil
	}, opts...))
	return docs
}

// Issue 20 item 6: a failed or short append leaves the history as it was, and the
// next run appends normally.
func TestAppendRestoresOldSizeOnError(t *testing.T) {
	for _, w := range []func(*os.File) io.Writer{
		func(f *os.File) io.Writer { return halfWriter{f, syscall.ENOSPC} },
		func(f *os.File) io.Writer { return halfWriter{f, syscall.EDQUOT} },
		func(f *os.File) io.Writer { return halfWriter{f, syscall.EFBIG} },
		func(f *os.File) io.Writer { return shortWriter{f} },
	} {
		file := filepath.Join(t.TempDir(), "history.jsonl")
		require.NoError(t, appendRec(file, testRecord(`{"a":1}`)))
		before, err := os.ReadFile(file)
		require.NoError(t, err)
		appendWriter = w
		err = appendRec(file, testRecord(`{"a":2}`))
		appendWriter = func(f *os.File) io.Writer { return f }
		require.Error(t, err)
		after, rerr := os.ReadFile(file)
		require.NoError(t, rerr)
		assert.Equal(t, string(before), string(after), "the partial line was left: %v", err)
		require.NoError(t, appendRec(file, testRecord(`{"a":3}`)))
		assert.Equal(t, []string{`{"a":1}`, `{"a":3}`}, records(t, file))
	}
}

// Issue 20 item 6: a torn last line (left by an older version, a kill -9 or a
// full disk) no longer bricks every later run: readers skip it with a warning,
// the next append drops it with a warning; a torn line that is not last, or a
// complete last record without newline, are treated as before.
func TestTornLastLine(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "history.jsonl")
	require.NoError(t, appendRec(file, testRecord(`{"a":1}`)))
	good, err := os.ReadFile(file)
	require.NoError(t, err)
	torn := string(good) + strings.TrimSuffix(string(good), "\n")[:40]
	require.NoError(t, os.WriteFile(file, []byte(torn), 0o644))

	var warned []int
	assert.Equal(t, []string{`{"a":1}`}, records(t, file, OnTorn(func(_ string, line int) { warned = append(warned, line) })))
	assert.Equal(t, []int{2}, warned)
	assert.Contains(t, TornWarning(file, 2), "history.jsonl:2: skipped a torn last line")

	warning, err := appendWarn(context.Background(), file, testRecord(`{"a":2}`))
	require.NoError(t, err)
	assert.Contains(t, warning, "history.jsonl:2: dropped a torn last line (40 bytes")
	assert.Equal(t, []string{`{"a":1}`, `{"a":2}`}, records(t, file))

	// A complete record without its newline is kept and ended.
	b, _ := os.ReadFile(file)
	require.NoError(t, os.WriteFile(file, []byte(strings.TrimSuffix(string(b), "\n")), 0o644))
	warning, err = appendWarn(context.Background(), file, testRecord(`{"a":3}`))
	require.NoError(t, err)
	assert.Empty(t, warning)
	assert.Equal(t, []string{`{"a":1}`, `{"a":2}`, `{"a":3}`}, records(t, file))

	// A bad line that is not the last is still an input error.
	require.NoError(t, os.WriteFile(file, []byte(torn+"\n"+string(good)), 0o644))
	err = Scan(context.Background(), file, func(Record, *fastjson.Value) error { return nil })
	require.Error(t, err)
	assert.Contains(t, err.Error(), "history.jsonl:2:")
}

// appendRec is AppendUndo without its warning and undo.
func appendRec(path string, rec Record) error {
	_, err := appendWarn(context.Background(), path, rec)
	return err
}

// AppendUndo's undo puts the history back byte for byte: after a plain append,
// after one that dropped a torn last line (written back) and after one that
// ended a complete last record; a history it created is left empty. Once
// another run has appended, the record stays and undo says so.
func TestAppendUndo(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "history.jsonl")
	_, undo, err := AppendUndo(context.Background(), file, testRecord(`{"a":1}`))
	require.NoError(t, err)
	require.NoError(t, undo())
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Empty(t, b, "a history the append created is left empty")

	require.NoError(t, appendRec(file, testRecord(`{"a":1}`)))
	good, err := os.ReadFile(file)
	require.NoError(t, err)
	for name, before := range map[string]string{
		"plain":                  string(good),
		"torn last line":         string(good) + `{"schema":"retrieval-gate/hist`,
		"record without newline": strings.TrimSuffix(string(good), "\n"),
	} {
		t.Run(name, func(t *testing.T) {
			require.NoError(t, os.WriteFile(file, []byte(before), 0o644))
			_, undo, err := AppendUndo(context.Background(), file, testRecord(`{"a":2}`))
			require.NoError(t, err)
			require.NotEqual(t, before, string(must(os.ReadFile(file))))
			require.NoError(t, undo())
			assert.Equal(t, before, string(must(os.ReadFile(file))))
		})
	}

	require.NoError(t, os.WriteFile(file, good, 0o644))
	_, undo, err = AppendUndo(context.Background(), file, testRecord(`{"a":2}`))
	require.NoError(t, err)
	require.NoError(t, appendRec(file, testRecord(`{"a":3}`)))
	err = undo()
	require.ErrorContains(t, err, "keeps this run's record: another run appended to it since")
	assert.Equal(t, []string{`{"a":1}`, `{"a":2}`, `{"a":3}`}, records(t, file))
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// appendWarn is AppendUndo without its undo.
func appendWarn(ctx context.Context, path string, rec Record) (string, error) {
	w, _, err := AppendUndo(ctx, path, rec)
	return w, err
}
