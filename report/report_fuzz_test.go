package report

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/publish/runnertest"
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
	// check's document with workflow commands in a locale and a reason, which
	// the renderers print.
	check, err := os.ReadFile("../internal/report/checkreport/testdata/check.json.golden")
	require.NoError(f, err)
	hostile := strings.Replace(string(check), `"es-419": {`, `"es-419\n::error::forged\r\u2028::warning::x ##[add-mask]y": {`, 1)
	hostile = strings.Replace(hostile, `"reason": "`, `"reason": "\n  ::error::reason \u0085::notice::z`, 1)
	require.NotEqual(f, string(check), hostile)
	f.Add([]byte(hostile))
	const path = "doc.json"
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := Read(context.Background(), bytes.NewReader(data), path)
		if err != nil {
			var ie *input.Error
			require.ErrorAs(t, err, &ie)
			require.Equal(t, path, ie.File)
			return
		}
		// The text goes to a terminal or a CI log: whatever the document's
		// strings, the runner (as runnertest reads it) finds no workflow command
		// in it. The Markdown goes into a pull request comment or a job summary,
		// which the runner does not read; its renderers still keep every string
		// on its line and escape '#', so no command is in it either.
		var text, md bytes.Buffer
		require.NoError(t, doc.WriteText(&text))
		require.NoError(t, doc.WriteJSON(io.Discard))
		require.NoError(t, doc.WriteMarkdown(&md))
		doc.CommentKey = "k"
		require.NoError(t, doc.WriteMarkdown(io.Discard))
		if cmds := runnertest.Commands(text.String(), nil); len(cmds) > 0 {
			t.Fatalf("the runner reads %+v in\n%s", cmds[0], &text)
		}
		if cmds := runnertest.Commands(md.String(), nil); len(cmds) > 0 {
			t.Fatalf("the runner would read %+v in\n%s", cmds[0], &md)
		}
		if doc.Command() != "calibrate" {
			require.NoError(t, doc.WriteHTML(io.Discard))
		} else {
			require.ErrorIs(t, doc.WriteHTML(io.Discard), ErrNoHTML)
		}
	})
}
