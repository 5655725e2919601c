package comparereport

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/input/trecfile"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
)

func TestHolesInEveryFormat(t *testing.T) {
	// ann's top 2 is x (unjudged), g: judged@2 0.5. full is fully judged.
	q, err := trecfile.ParseQrels(context.Background(), strings.NewReader("q1 0 g 3\nq1 0 x 0\nq2 0 g 2\nq2 0 x 0\nq3 0 g 3\nq3 0 h 1\n"), "qrels.txt")
	require.NoError(t, err)
	runs := func() []compare.Input {
		return []compare.Input{
			{Name: "ann", Run: &trecfile.Run{File: "ann.run", K: 10, Queries: []trecfile.RunQuery{{ID: "q1", Docs: []string{"u", "g"}}, {ID: "q2", Docs: []string{"u", "g"}}, {ID: "q3", Docs: []string{"u", "g"}}}}},
			{Name: "full", Run: &trecfile.Run{File: "full.run", K: 10, Queries: []trecfile.RunQuery{{ID: "q1", Docs: []string{"x", "g"}}, {ID: "q2", Docs: []string{"g", "x"}}, {ID: "q3", Docs: []string{"g", "h"}}}}},
		}
	}
	for _, judgedOnly := range []bool{false, true} {
		res, err := compare.Compare(q, runs(), compare.Options{K: 2, Gain: metrics.GainExp, RelevantLevel: 2, Resamples: 200, Seed: 1, JudgedOnly: judgedOnly})
		require.NoError(t, err)
		d := New(res)
		var js bytes.Buffer
		require.NoError(t, d.WriteJSON(&js))
		assert.Contains(t, js.String(), `"judged_at_k": {
        "low": true,
        "mean": 0.5,
        "n": 3
      },`)
		assert.Contains(t, js.String(), `"judged_at_k": {
        "low": false,
        "mean": 1,
        "n": 3
      },`)
		assert.Contains(t, js.String(), `"judged_at_k_threshold": 0.9,`)
		back, err := Read(bytes.NewReader(js.Bytes()))
		require.NoError(t, err)
		for _, doc := range []*Document{d, back} { // the warning is data: it survives the JSON
			var text, md strings.Builder
			require.NoError(t, doc.Text(&text))
			require.NoError(t, doc.Markdown(&md))
			assert.Contains(t, text.String(), "warning: judged@2 is below 0.900 for ann (0.500, n = 3): part of the top 2 has no label.")
			assert.NotContains(t, text.String(), "full (1")
			assert.Contains(t, text.String(), "0.500 (n 3)")
			assert.Contains(t, text.String(), "1.000 (n 3)")
			assert.Contains(t, md.String(), "> ⚠️ **Holes:** judged&#64;&#8203;2 is below 0.900 for ann (0.500, n = 3)")
			assert.Contains(t, md.String(), "| failed queries | judged@2 |")
			if judgedOnly {
				assert.Contains(t, text.String(), "--judged-only: every measure is computed on condensed lists")
				assert.Contains(t, text.String(), "With --judged-only those documents are skipped")
				assert.Contains(t, md.String(), "condensed lists")
			} else {
				assert.NotContains(t, text.String(), "condensed lists, each ranking")
				assert.Contains(t, text.String(), "Those documents count as relevance 0")
			}
		}
		if judgedOnly {
			// Condensed, ann's top 2 is g alone: DCG equals full's where full ranks g first.
			assert.True(t, d.JudgedOnly)
		}
	}
}

func TestHolesReadBackWithoutJudgedAtK(t *testing.T) {
	// A report written before judged@k: the cell is the missing glyph, no warning.
	res := compareFixture(t, "ann", "hybrid")
	var js bytes.Buffer
	require.NoError(t, New(res).WriteJSON(&js))
	old := strings.ReplaceAll(js.String(), `"judged_at_k": {`, `"old_judged": {`)
	back, err := Read(strings.NewReader(old))
	require.NoError(t, err)
	var text strings.Builder
	require.NoError(t, back.Text(&text))
	assert.NotContains(t, text.String(), "warning: judged@")
	assert.Empty(t, back.HolesWarning(func(s string) string { return s }))
}
