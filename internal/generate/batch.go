package generate

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/kbfile"
	"github.com/retrieval-gate/retrieval-gate/internal/judge"
	"github.com/retrieval-gate/retrieval-gate/internal/llm"
)

// batchOptions run generate through a batch: one request per sampled card (the
// first answer only: a batch has no correction turn). With API (generate
// --batch) it is submitted as one batch of the Batch API, resumable from
// State; with RequestsOut (--batch-out) the request lines are written there
// and nothing is asked; with ResultsIn (--batch-in) the answers are read from
// a results file in the Batch API's output format (what vllm run-batch
// writes). At most one of the three.
type batchOptions struct {
	RequestsOut io.Writer
	ResultsIn   judge.Reader // R nil: none
	API         llm.BatchService
	State       judge.BatchStore // the submitted batch (judge.StateFile: OUT + judge.BatchStateSuffix)
	Poll        llm.PollPolicy
	// MaxRequests caps the requests of the batch (0: no limit); the cards
	// beyond it are skipped over the budget, as online.
	MaxRequests int64
}

// errNotAnswered is a request the batch did not answer (a failed or missing
// line, or a correction turn the batch never had): the card has no queries.
var errNotAnswered = errors.New("not answered by the batch")

// batchAnswers serves Generate's requests from a finished batch, by the hash of
// the request body (the custom_id).
type batchAnswers struct {
	model   string
	sent    map[string]bool
	answers map[string]*llm.Response
	api     llm.BatchService // the batch's client (--batch), nil in the file modes
}

// Redact is the batch client's redaction (its API key, its URL's
// credentials, every credential of a known shape or in a URL), for
// Generate's llm.Redactor as online; s itself in the file modes, where no
// client holds a key (the run's Secrets and the shapes still apply).
func (b *batchAnswers) Redact(s string) string {
	if b.api == nil {
		return s
	}
	return b.api.Redact(s)
}

func customID(body []byte) string {
	h := sha256.Sum256(body)
	return "gen-" + hex.EncodeToString(h[:16])
}

func (b *batchAnswers) Complete(_ context.Context, r llm.Request) (*llm.Response, error) {
	body, err := llm.RequestBody(b.model, r)
	if err != nil {
		return nil, err
	}
	id := customID(body)
	if !b.sent[id] {
		if len(r.Messages) == 2 {
			return nil, llm.ErrBudget
		}
		return nil, errNotAnswered
	}
	if resp := b.answers[id]; resp != nil {
		return resp, nil
	}
	return nil, errNotAnswered
}

// runBatch asks for every card's queries in one batch, then runs Generate on the
// answers.
func runBatch(ctx context.Context, cards []kbfile.Card, opt Options, bo *batchOptions, logf func(string, ...any)) (*Result, error) {
	logf = judge.GuardLogf(logf) // the server's batch id and status are printed
	if opt.Format != judge.FormatText {
		opt.Format = judge.FormatJSON
	}
	ba := &batchAnswers{model: opt.Model, sent: map[string]bool{}, answers: map[string]*llm.Response{}, api: bo.API}
	// each calls f once per distinct request, in card order: two cards with
	// the same text make the same request (one custom_id, which a batch must
	// not repeat), and its answer serves both.
	each := func(f func(id string, body []byte) error) error {
		var n int64
		emitted := map[string]bool{}
		for _, c := range cards {
			if bo.MaxRequests > 0 && n >= bo.MaxRequests {
				break
			}
			req := llm.Request{Messages: opt.Prompt.messages(c, opt.Questions, opt.Keywords, opt.Format)}
			if opt.Format == judge.FormatJSON {
				req.Schema = &llm.Schema{Name: "generated_queries", Schema: schema(opt.Questions, opt.Keywords)}
			}
			body, err := llm.RequestBody(opt.Model, req)
			if err != nil {
				return err
			}
			id := customID(body)
			if emitted[id] {
				continue
			}
			emitted[id] = true
			if err := f(id, body); err != nil {
				return err
			}
			n++
		}
		return nil
	}
	if err := each(func(id string, _ []byte) error { ba.sent[id] = true; return nil }); err != nil {
		return nil, err
	}
	write := func(w io.Writer) (int64, error) {
		bw := bufio.NewWriter(w)
		var n int64
		err := each(func(id string, body []byte) error {
			line := []byte(`{"custom_id":"` + id + `","method":"POST","url":"` + judge.BatchEndpoint + `","body":`)
			line = append(append(line, body...), "}\n"...)
			_, err := bw.Write(line)
			n++
			return err
		})
		if err != nil {
			return n, err
		}
		return n, bw.Flush()
	}
	read := func(ctx context.Context, r io.Reader, name string) error {
		got := map[string]*llm.Response{}
		seen := map[string]bool{}
		sc := bufio.NewScanner(input.Reader(ctx, r))
		sc.Buffer(make([]byte, 0, 64<<10), judge.MaxResultLine)
		n := 0
		for sc.Scan() {
			n++
			if n&1023 == 0 {
				if err := ctx.Err(); err != nil {
					return err // a regular file is read as it is: only this check stops it
				}
			}
			t := sc.Bytes()
			if n == 1 {
				t = input.TrimBOM(t) // as every reader drops it
			}
			t = bytes.TrimSpace(t)
			if len(t) == 0 {
				continue
			}
			res, perr := judge.ParseBatchResult(t)
			if perr != nil {
				return input.Errorf(name, n, "%v", perr)
			}
			if !ba.sent[res.CustomID] {
				return input.Errorf(name, n, "unknown custom_id %q: no request of this batch has it", res.CustomID)
			}
			if seen[res.CustomID] || ba.answers[res.CustomID] != nil {
				return input.Errorf(name, n, "custom_id %q answered twice", res.CustomID)
			}
			seen[res.CustomID] = true
			got[res.CustomID] = res.Completion
		}
		if err := sc.Err(); err != nil {
			if errors.Is(err, bufio.ErrTooLong) {
				return input.Errorf(name, n+1, "line longer than %d bytes: not a batch output line", judge.MaxResultLine)
			}
			return err
		}
		for id, r := range got {
			if r != nil {
				ba.answers[id] = r
			}
		}
		return nil
	}
	switch {
	case bo.RequestsOut != nil:
		n, err := write(bo.RequestsOut)
		if err != nil {
			return nil, err
		}
		logf("%d request(s) written", n)
		return &Result{Documents: len(cards), BatchMode: "file", BatchRequests: n, RequestsOnly: true}, nil
	case bo.ResultsIn.R != nil:
		if err := read(ctx, bo.ResultsIn.R, bo.ResultsIn.Name); err != nil {
			return nil, err
		}
		logf("%d answer(s) read from %s for %d request(s)", len(ba.answers), bo.ResultsIn.Name, len(ba.sent))
		opt.Client = ba
		opt.Workers = 1
		res, err := Generate(ctx, cards, opt)
		if err != nil {
			return nil, err
		}
		res.BatchMode, res.BatchRequests = "file", int64(len(ba.sent))
		return res, nil
	}
	if bo.API == nil || bo.State == nil {
		return nil, errors.New("generate: no batch mode")
	}
	sub := &judge.BatchSubmission{API: bo.API, State: bo.State, Poll: bo.Poll, Logf: logf}
	b, _, err := sub.Run(ctx, judge.BatchState{Model: opt.Model, PromptHash: opt.Prompt.Hash, Format: opt.Format}, write, read)
	if err != nil {
		return nil, err
	}
	logf("batch %s %s: %d answer(s) of %d request(s)", b.ID, b.Status, len(ba.answers), len(ba.sent))
	opt.Client = ba
	opt.Workers = 1
	res, err := Generate(ctx, cards, opt)
	if err != nil {
		return nil, err
	}
	res.BatchID, res.BatchStatus, res.BatchResumed = b.ID, b.Status, sub.Resumed
	res.BatchMode, res.BatchRequests = "api", int64(len(ba.sent))
	if err := sub.Done(); err != nil {
		return nil, err
	}
	return res, nil
}
