package judge_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/input/kbfile"
	"github.com/retrieval-gate/retrieval-gate/internal/judge"
	"github.com/retrieval-gate/retrieval-gate/internal/llm"
	"github.com/retrieval-gate/retrieval-gate/internal/llm/llmtest"
)

// A query id that TREC qrels cannot hold (whitespace, or a leading '{', which
// makes the qrels reader take the file for JSON lines: docs/formats.md,
// docs/import.md "Ids in TREC output") is refused before any request when the
// labels are written as qrels (--qrels; evaluate always writes DIR/qrels.txt):
// WriteTREC refused it only after every pair had been judged, and a leading
// '{' was written, so that compare refused the qrels the judge had paid for.
// Without --qrels (JSONL judgments alone) the same run is judged.
func TestRunRefusesIDsQrelsCannotHoldBeforeAsking(t *testing.T) {
	ctx := context.Background()
	kb, err := kbfile.Load(ctx, filepath.Join("..", "..", "testdata", "demo", "kb"))
	require.NoError(t, err)
	for _, tt := range []struct{ name, id, want string }{
		{"whitespace", "case one", `query "case one": an id that is empty or holds whitespace cannot be written as TREC qrels`},
		{"a leading brace", "{case", `query "{case": an id that starts with '{'`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			run := `{"id": "plain", "query": "reset my password", "retrieved": [{"id": "en-reset-password"}]}` + "\n" +
				`{"id": "` + tt.id + `", "query": "delete my account", "retrieved": [{"id": "en-account-deletion"}]}` + "\n"
			srv := llmtest.New(llmtest.Options{})
			defer srv.Close()
			client, err := (&llm.Server{URL: srv.URL, Model: "m", Concurrency: 1}).Client("")
			require.NoError(t, err)
			o := judge.NewRunOptions()
			o.K, o.LLM = 2, llm.Server{URL: srv.URL, Model: "m", Concurrency: 1}
			o.Runs = []judge.RunFile{{Name: "r", Path: "run.jsonl"}}
			o.KB, o.QrelsOut, o.Cache = "kb", "qrels.trec", "none"
			require.NoError(t, o.Validate())
			in := judge.In{KB: kb, Runs: []judge.RunReader{{Name: "r", File: "run.jsonl", R: strings.NewReader(run)}}, Client: client}
			_, err = judge.Run(ctx, in, *o)
			require.ErrorContains(t, err, tt.want)
			var pe *judge.PoolError
			require.ErrorAs(t, err, &pe, "a PoolError, which the front end places at its line")
			assert.Equal(t, tt.id, pe.Query)
			assert.Equal(t, "run.jsonl", pe.File)
			assert.Zero(t, srv.Requests(), "refused before any request")

			// JSONL judgments alone hold any id.
			o.QrelsOut, o.JudgmentsOut = "", "judgments.jsonl"
			require.NoError(t, o.Validate())
			in.Runs[0].R = strings.NewReader(run)
			out, err := judge.Run(ctx, in, *o)
			require.NoError(t, err)
			assert.Len(t, out.Result.Pairs, 2)
			// WriteTREC refuses the id too, whatever called it.
			require.ErrorContains(t, judge.WriteTREC(&strings.Builder{}, out.Result), tt.want)
		})
	}
}
