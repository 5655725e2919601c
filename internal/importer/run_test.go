package importer

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Run converts the reader it is given into the writer it is given, detects or
// takes the format, names the detected format when the input is bad, and
// words an error at the line LineAt gives.
func TestRun(t *testing.T) {
	const qrels = "q1 0 d1 1\nq1 0 d2 2\n"
	trec, ok := Lookup("trec-qrels")
	require.True(t, ok)
	for _, tt := range []struct {
		name    string
		content string
		format  *Format
		given   bool
		wantErr string
		records int
	}{
		{name: "detected", content: qrels, records: 2},
		{name: "given", content: qrels, format: trec, given: true, records: 2},
		{name: "bad line names the detected format", content: "q1 0 d1 1\nq1 0 d2\n",
			wantErr: `in.txt:2: want 4 fields "qid iter docid rel", got 3 (detected format trec-qrels; pass --format to choose another)`},
		{name: "given format: no hint", content: "q1 0 d1 1\nq1 0 d2\n", format: trec, wantErr: `got 3`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			res, err := Run(context.Background(), In{Name: "in.txt", R: strings.NewReader(tt.content), Out: &out}, RunOptions{Format: tt.format})
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				if tt.format != nil {
					assert.NotContains(t, err.Error(), "detected format")
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, "trec-qrels", res.Format.Name)
			assert.Equal(t, tt.given, res.Given)
			assert.Equal(t, tt.records, res.Stats.Records)
			assert.Equal(t, "in.txt", res.Name)
			assert.Equal(t, qrels, out.String())
		})
	}
	// A bad record of a JSON document: its line with the input's LineAt.
	const results = "{\"q1\": {\"a\": 1},\n\"q2\": {\"b c\": 1}}\n"
	beir, ok := Lookup("beir-results")
	require.True(t, ok)
	for _, tc := range []struct {
		lineAt func(int64) int
		want   string
	}{{LineAt(strings.NewReader(results)), `r.json:2: query "q2": document id "b c"`}, {nil, `r.json: at byte 24: query "q2": document id "b c"`}} {
		var out strings.Builder
		_, err := Run(context.Background(), In{Name: "r.json", R: strings.NewReader(results), Out: &out, LineAt: tc.lineAt}, RunOptions{Format: beir})
		require.ErrorContains(t, err, tc.want)
	}
}
