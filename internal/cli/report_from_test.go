package cli

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
)

// FuzzReadDocument: any bytes read as a --from document either fail with an
// input error naming the file, or read into a document every renderer renders
// without panicking.
func FuzzReadDocument(f *testing.F) {
	for _, seed := range []string{
		`{"schema": "retrieval-gate/aggregates@1"}`,
		`{"schema": "retrieval-gate/compare@1"}`,
		`{"schema": "retrieval-gate/calibration@1"}`,
		`{"schema": "retrieval-gate/aggregates@1", "k": 5, "overall": {"n": 3, "metrics": {"retrieval_hit_at_k": {"mean": 0.5, "n": 3}}}, "by_locale": {"en": {}}}`,
		`{"schema": "retrieval-gate/compare@1", "primary": "dcg_at_k", "strategies": {"a": {"metrics": {"dcg_at_k": {"mean": 1, "ci95": [0, 2]}}}}, "paired": [{"baseline": "a", "strategy": "b"}]}`,
		`{"schema": "retrieval-gate/calibration@1", "bins": [0.5], "dimensions": {"d": {"confusion": [[1]]}}}`,
		`{"schema": 1}`, `[]`, `{`,
	} {
		f.Add([]byte(seed))
	}
	path := filepath.Join(f.TempDir(), "doc.json")
	f.Fuzz(func(t *testing.T, data []byte) {
		require.NoError(t, os.WriteFile(path, data, 0o644))
		doc, err := readDocument(context.Background(), path)
		if err != nil {
			var ie *input.Error
			require.ErrorAs(t, err, &ie)
			require.Equal(t, path, ie.File)
			return
		}
		require.NoError(t, doc.text(io.Discard))
		require.NoError(t, doc.markdown(io.Discard, "k"))
		if doc.html != nil {
			require.NoError(t, doc.html(io.Discard))
		}
	})
}
