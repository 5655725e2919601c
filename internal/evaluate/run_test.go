package evaluate_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/retrieval-gate/retrieval-gate/internal/compare"
	"github.com/retrieval-gate/retrieval-gate/internal/evaluate"
	"github.com/retrieval-gate/retrieval-gate/internal/generate"
	"github.com/retrieval-gate/retrieval-gate/internal/input/kbfile"
	"github.com/retrieval-gate/retrieval-gate/internal/judge"
	"github.com/retrieval-gate/retrieval-gate/internal/llm"
	"github.com/retrieval-gate/retrieval-gate/internal/llm/llmtest"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve"
)

// memFront is an evaluate.Front that writes nothing: it keeps what each stage
// hands it in memory and records the calls.
type memFront struct {
	kb     string
	client *llm.Client
	cases  []byte // given cases (nil: generated)
	calls  []string
	kept   map[string][]byte // what each stage handed over, by the path it names
	failAt string            // a stage whose start fails
}

func (m *memFront) Start(_, _ int, s evaluate.Stage) {
	m.calls = append(m.calls, s.Name)
}

func (m *memFront) KB(ctx context.Context) (*kbfile.KB, error) {
	m.calls = append(m.calls, "kb")
	return kbfile.Load(ctx, m.kb)
}

func (m *memFront) Generate(context.Context, *evaluate.GenerateStage) (generate.In, error) {
	return generate.In{Client: m.client}, m.fail("generate")
}

func (m *memFront) Generated(_ context.Context, s *evaluate.GenerateStage, res *generate.RunResult, cases []byte) error {
	m.kept[s.Out] = cases
	return nil
}

func (m *memFront) Retrieve(_ context.Context, s evaluate.RetrieveStage, given bool) (io.ReadSeeker, error) {
	if !given {
		return nil, m.fail("retrieve")
	}
	return bytes.NewReader(m.cases), m.fail("retrieve")
}

func (m *memFront) Retrieved(_ context.Context, s evaluate.RetrieveStage, res *retrieve.RunResult, run []byte) error {
	m.kept[s.Out] = run
	return nil
}

func (m *memFront) Judge(context.Context, *evaluate.JudgeStage) (judge.In, error) {
	return judge.In{Client: m.client}, m.fail("judge")
}

func (m *memFront) Judged(_ context.Context, s *evaluate.JudgeStage, res *judge.RunResult, qrels []byte) error {
	m.kept[s.QrelsOut] = qrels
	return nil
}

func (m *memFront) Compare(context.Context, evaluate.CompareStage) error { return m.fail("compare") }

func (m *memFront) Compared(_ context.Context, s evaluate.CompareStage, res *compare.Result) error {
	m.calls = append(m.calls, "compared "+res.Recommended)
	return nil
}

func (m *memFront) fail(stage string) error {
	if m.failAt == stage {
		return errors.New("no " + stage)
	}
	return nil
}

// TestRunComposesInMemory: evaluate.Run chains generate, retrieve, judge and
// compare in memory. Its directory is never created and its front end writes
// nothing, so no stage can have read an earlier one's file: the cases, the runs
// and the qrels reach the next stages as the front end was handed them; the KB
// is loaded once for every stage; and the comparison is the one compare
// makes of those files. A stage's start that fails stops the run with its
// StageError.
func TestRunComposesInMemory(t *testing.T) {
	dir := t.TempDir()
	kb := filepath.Join(dir, "kb.jsonl")
	require.NoError(t, os.WriteFile(kb, []byte(`{"id": "en-reset", "locale": "en", "title": "Reset your password", "text": "Open settings and choose reset password. A link arrives by email."}
{"id": "en-2fa", "locale": "en", "title": "Two-factor authentication", "text": "Turn on two-factor authentication in the security settings."}
{"id": "en-billing", "locale": "en", "title": "Billing", "text": "Invoices are sent every month by email."}
{"id": "es-reset", "locale": "es", "title": "Restablecer la contraseña", "text": "Abre la configuración y elige restablecer la contraseña."}
`), 0o644))
	srv := llmtest.New(llmtest.Options{})
	defer srv.Close()
	client, err := llm.New(llm.Config{URL: srv.URL, Model: "fake"})
	require.NoError(t, err)
	out := filepath.Join(dir, "never-created")
	o := &evaluate.Options{KB: kb, Out: out, JudgeURL: srv.URL, JudgeModel: "fake", K: 3, PerLocale: 2, Repeat: 1, Concurrency: 2, Bootstrap: 200,
		Retrieval: retrieve.RunOptions{Store: "memory", Embedder: "hash"}}
	require.NoError(t, o.Validate())
	front := &memFront{kb: kb, client: client, kept: map[string][]byte{}}
	res, err := evaluate.Run(context.Background(), evaluate.In{Front: front, CompareFlags: []string{"--comment", "never"}}, o)
	require.NoError(t, err)
	assert.NoDirExists(t, out)
	assert.Equal(t, []string{"generate", "kb", "retrieve", "retrieve", "retrieve", "judge", "compare", "compared " + res.Compare.Recommended}, front.calls)

	require.NotNil(t, res.Generated)
	cases := front.kept[o.In("cases.jsonl")]
	assert.Equal(t, res.Generated.Written, bytes.Count(cases, []byte("\n")))
	require.Len(t, res.Retrieved, 3)
	for _, r := range res.Retrieved {
		assert.Equal(t, res.Generated.Written, r.Cases, "every generated case retrieved")
	}
	require.NotNil(t, res.Judge.Result)
	qrels := front.kept[o.In("qrels.txt")]
	var want bytes.Buffer
	require.NoError(t, judge.WriteTREC(&want, res.Judge.Result))
	assert.Equal(t, want.String(), string(qrels))

	// The comparison is compare's of the files the front end was handed, the
	// generated cases its queries (their text in the result).
	ci := compare.In{Qrels: compare.Reader{Name: o.In("qrels.txt"), R: bytes.NewReader(qrels)},
		Queries: compare.Reader{Name: o.In("cases.jsonl"), R: bytes.NewReader(cases)}}
	for _, n := range res.Plan.Names() {
		p := o.In(evaluate.RunFile(n))
		ci.Runs = append(ci.Runs, compare.RunReader{Strategy: n, Reader: compare.Reader{Name: p, R: bytes.NewReader(front.kept[p])}})
	}
	again, err := compare.Run(context.Background(), ci, res.Plan.Compare.Run)
	require.NoError(t, err)
	assert.Equal(t, again.Recommended, res.Compare.Recommended)
	assert.Equal(t, again.Queries, res.Compare.Queries)
	require.Len(t, res.Compare.Queries, res.Generated.Written, "every generated case is a query of the comparison")
	for id, q := range res.Compare.Queries {
		assert.Contains(t, string(cases), fmt.Sprintf(`{"id":%q,"locale":%q,"type":"generated","query":%q`, id, q.Locale, q.Text))
		assert.NotEmpty(t, q.Text, id)
		assert.NotEmpty(t, q.Locale, id)
	}
	require.NotNil(t, res.Compare.Clusters, "generate's cluster keys: the statistics over the cards")
	assert.Equal(t, 3, res.Compare.Clusters.Clusters)
	for i := range again.Strategies {
		assert.Equal(t, fmt.Sprint(again.Strategies[i].Values), fmt.Sprint(res.Compare.Strategies[i].Values)) // NaN: undefined for a query
		assert.Equal(t, again.Strategies[i].File, res.Compare.Strategies[i].File)
	}

	// With the cases given: no generation, the KB loaded once by the first
	// retrieve stage (every stage reads the same one), and a judge stage that
	// cannot start stops the run there.
	o.Cases = filepath.Join(dir, "given.jsonl")
	front = &memFront{kb: kb, client: client, kept: map[string][]byte{}, cases: cases, failAt: "judge"}
	_, err = evaluate.Run(context.Background(), evaluate.In{Front: front}, o)
	var se *evaluate.StageError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, evaluate.StageError{I: 4, Name: "judge", Err: se.Err}, *se)
	require.EqualError(t, err, "evaluate: stage 4 (judge) failed: no judge")
	assert.Equal(t, []string{"retrieve", "kb", "retrieve", "retrieve", "judge"}, front.calls)
	assert.Equal(t, bytes.Count(cases, []byte("\n")), bytes.Count(front.kept[o.In(evaluate.RunFile("dense"))], []byte("\n")), "the given cases retrieved")
}

// A KB card whose id holds white space stops the evaluation at its line when
// the KB is loaded, before the generator is asked anything: the judge stage
// writes TREC qrels (DIR/qrels.txt), which can hold neither the card's id as
// a document nor a query id generated from it ("gen-my card-1"), so the run
// stopped at the judge stage after the generator's requests were spent
// (docs/judge.md: no LLM request is spent on a run that cannot finish).
func TestRunRefusesCardIDsQrelsCannotHold(t *testing.T) {
	dir := t.TempDir()
	kb := filepath.Join(dir, "kb.jsonl")
	require.NoError(t, os.WriteFile(kb, []byte(`{"id": "en-reset", "locale": "en", "title": "Reset your password", "text": "Open settings and choose reset password."}
{"id": "en billing", "locale": "en", "title": "Billing", "text": "Invoices are sent every month by email."}
`), 0o644))
	srv := llmtest.New(llmtest.Options{})
	defer srv.Close()
	client, err := llm.New(llm.Config{URL: srv.URL, Model: "fake"})
	require.NoError(t, err)
	o := &evaluate.Options{KB: kb, Out: filepath.Join(dir, "out"), JudgeURL: srv.URL, JudgeModel: "fake", K: 3, PerLocale: 2, Repeat: 1, Concurrency: 2, Bootstrap: 200,
		Retrieval: retrieve.RunOptions{Store: "memory", Embedder: "hash"}}
	require.NoError(t, o.Validate())
	front := &memFront{kb: kb, client: client, kept: map[string][]byte{}}
	_, err = evaluate.Run(context.Background(), evaluate.In{Front: front}, o)
	var se *evaluate.StageError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "generate", se.Name)
	require.ErrorContains(t, err, kb+`:2: card id "en billing" holds white space`)
	assert.Zero(t, srv.Requests(), "the generator was asked nothing")
	assert.Equal(t, []string{"generate", "kb"}, front.calls)
}
