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

// stopReader yields its text, then fails as input.Reader does once the run's
// context ends (SIGINT, SIGTERM) while a pipe or FIFO sends nothing more.
type stopReader struct {
	text   string
	cancel context.CancelFunc
	ctx    context.Context
}

func (r *stopReader) Read(p []byte) (int, error) {
	if r.text != "" {
		n := copy(p, r.text)
		r.text = r.text[n:]
		return n, nil
	}
	r.cancel()
	return 0, r.ctx.Err()
}

// A run stopped by a signal in the middle of a JSON document (beir-results,
// promptfoo, a ragas array) is an interruption, as it is in every format of
// lines: its error is the context's, with no input line. The documents'
// decoder wrapped it as an input error at the line it had reached
// ("fifo:1: context canceled"), which the front end printed and annotated as a
// fault of the input instead of "import: interrupted" (docs/import.md: exit 2
// with file:line on bad input; README, exit codes: a run stopped by SIGINT or
// SIGTERM).
func TestRunStoppedMidDocumentIsInterrupted(t *testing.T) {
	for _, tt := range []struct{ format, text string }{
		{"beir-results", "{\"q1\": {\"d1\": 1},\n\"q2\": {\"d1\": "},
		{"beir-results", "{\"q1\": {\"d1\": 1},\n"},
		{"promptfoo", "{\"evalId\": \"e\",\n\"results\": {\"version\": 3, \"results\": [\n{\"vars\": "},
		{"promptfoo", "{\"config\": {\"a\": "},
		{"ragas", "[{\"user_input\": \"q\", \"retrieved_context_ids\": [\"a\"]},\n{\"user_input\": "},
		{"trec-qrels", "q1 0 d1 1\nq1 0 d"},
		{"csv", "query,retrieved,gold\n\"q1"},
	} {
		t.Run(tt.format, func(t *testing.T) {
			f, ok := Lookup(tt.format)
			require.True(t, ok)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var out strings.Builder
			_, err := Run(ctx, In{Name: "fifo", R: &stopReader{text: tt.text, cancel: cancel, ctx: ctx}, Out: &out, LineAt: func(int64) int { return 1 }}, RunOptions{Format: f})
			require.ErrorIs(t, err, context.Canceled)
			var ie *Error
			assert.NotErrorAs(t, err, &ie, "an input error")
		})
	}
}
