package report

import (
	"bytes"
	"context"
	"io"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
)

// FuzzRead: any bytes read as a --from document either fail with an
// input error naming the file, or read into a document every renderer renders
// without panicking.
func FuzzRead(f *testing.F) {
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
	// Whole documents as the commands write them (the golden files): the
	// fuzzer mutates what the checks accept.
	for _, golden := range []string{
		"../internal/report/checkreport/testdata/check.json.golden",
		"../internal/report/calibratereport/testdata/golden/demo.json",
		"../internal/report/calibratereport/testdata/golden/panel.json",
	} {
		data, err := os.ReadFile(golden)
		require.NoError(f, err)
		f.Add(data)
	}
	const path = "doc.json"
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := Read(context.Background(), bytes.NewReader(data), path)
		if err != nil {
			var ie *input.Error
			require.ErrorAs(t, err, &ie)
			require.Equal(t, path, ie.File)
			return
		}
		require.NoError(t, doc.WriteText(io.Discard))
		require.NoError(t, doc.WriteJSON(io.Discard))
		require.NoError(t, doc.WriteMarkdown(io.Discard))
		doc.CommentKey = "k"
		require.NoError(t, doc.WriteMarkdown(io.Discard))
		if doc.Command() != "calibrate" {
			require.NoError(t, doc.WriteHTML(io.Discard))
		} else {
			require.ErrorIs(t, doc.WriteHTML(io.Discard), ErrNoHTML)
		}
	})
}
