package generate

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/kbfile"
	"github.com/retrieval-gate/retrieval-gate/internal/judge"
	"github.com/retrieval-gate/retrieval-gate/internal/llm"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/chunk"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/embed"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store/memory"
)

// In is what a generate run reads, where it writes and the services it uses,
// all opened or made by the front end: Run opens no file, writes nothing but
// into the writers it is given, and reads no environment.
type In struct {
	KB     *kbfile.KB // the knowledge base whose cards are sampled
	Prompt *Prompt    // the template (ParsePrompt); nil: the built-in one
	// Out receives the cases JSONL, named OutName in messages.
	Out     io.Writer
	OutName string
	// Client asks the chat server (online generation: no batch mode).
	Client judge.Completer
	// BatchAPI and BatchState run RunOptions.Batch: the server's Batch API and
	// where the submitted batch is kept between runs (judge.StateFile: OUT +
	// judge.BatchStateSuffix).
	BatchAPI   llm.BatchService
	BatchState judge.BatchStore
	// BatchRequests receives the requests of RunOptions.BatchOut; BatchResults
	// are the answers of RunOptions.BatchIn.
	BatchRequests io.Writer
	BatchResults  judge.Reader
	// Logf, when set, receives the run's log lines, without a trailing newline;
	// Progress, the documents done of the total (serialised).
	Logf     func(format string, args ...any)
	Progress func(done, total int)
	// Secrets are the process's keys and tokens (the environment's, the
	// credentials of the server URLs given): a generated query that holds
	// one is dropped (Options.Secrets).
	Secrets []string
}

// RunResult is what a generate run did: Generate's result, and the cases
// written after the round-trip filter dropped RoundTripDropped.
type RunResult struct {
	*Result
	Written, RoundTripDropped int
}

// Run is the generate command's pipeline on o's (validated) options: it
// samples the KB's cards, asks for queries about each (Generate, or one batch
// in o's batch mode), filters them by round trip, and writes the cases to
// in.Out (with BatchOut: only the requests, to in.BatchRequests).
func Run(ctx context.Context, in In, o RunOptions) (*RunResult, error) {
	opt := Options{Client: in.Client, Model: o.LLM.Model, Prompt: in.Prompt, Format: o.Format, Questions: o.Questions, Keywords: o.Keywords,
		Workers: o.LLM.Concurrency, Jaccard: o.Jaccard, Progress: in.Progress, Secrets: in.Secrets}
	if opt.Prompt == nil {
		opt.Prompt = DefaultPrompt()
	}
	if o.BatchOut == "" && o.BatchIn == "" && !o.Batch {
		opt.MaxRequests = o.LLM.MaxRequests // a batch keeps its budget itself (batchOptions)
	}
	var bo *batchOptions
	switch {
	case o.BatchOut != "":
		bo = &batchOptions{RequestsOut: in.BatchRequests, MaxRequests: o.LLM.MaxRequests}
	case o.BatchIn != "":
		bo = &batchOptions{ResultsIn: in.BatchResults, MaxRequests: o.LLM.MaxRequests}
	case o.Batch:
		bo = &batchOptions{API: in.BatchAPI, State: in.BatchState, MaxRequests: o.LLM.MaxRequests, Poll: llm.PollFrom(o.BatchPoll)}
	}
	switch {
	case bo == nil && in.Client == nil,
		bo != nil && bo.RequestsOut == nil && bo.ResultsIn.R == nil && (bo.API == nil || bo.State == nil),
		o.BatchOut == "" && in.Out == nil:
		return nil, errors.New("generate: no server, batch, file or output of the run's mode was given")
	}
	in.KB.WarnSkipped(in.Logf)
	cards := Sample(in.KB, o.PerLocale, o.Seed)
	if len(cards) == 0 {
		return nil, input.Errorf(in.KB.Path, 0, "knowledge base has no card with text to generate queries from")
	}
	if in.Logf != nil {
		in.Logf("%d document(s) sampled (up to %d per locale, seed %d)", len(cards), o.PerLocale, o.Seed)
	}
	var res *Result
	var err error
	if bo != nil {
		res, err = runBatch(ctx, cards, opt, bo, in.Logf)
	} else {
		res, err = Generate(ctx, cards, opt)
	}
	if err != nil {
		return nil, err
	}
	if res.SecretDropped > 0 && in.Logf != nil {
		what := "queries dropped: they"
		if res.SecretDropped == 1 {
			what = "query dropped: it"
		}
		in.Logf("warning: %d generated %s held a secret (the API key, a key or token of the environment, a URL's credentials or a credential by its shape)", res.SecretDropped, what)
	}
	out := &RunResult{Result: res}
	if res.RequestsOnly {
		return out, nil
	}
	cases := res.Cases
	if o.RoundTripK > 0 && len(cases) > 0 {
		searchers, release, err := roundTripSearchers(ctx, in.KB, o.RoundTripK)
		if err != nil {
			return nil, err
		}
		cases, out.RoundTripDropped, err = RoundTrip(ctx, cases, searchers)
		release()
		if err != nil {
			return nil, err
		}
	}
	for _, cs := range cases {
		b, err := WriteCase(cs, opt.Model, opt.Prompt)
		if err != nil {
			return nil, err
		}
		if _, err := in.Out.Write(b); err != nil {
			return nil, fmt.Errorf("failed to write %s: %w", in.OutName, err)
		}
	}
	out.Written = len(cases)
	return out, nil
}

// roundTripSearchers builds dense, lexical and hybrid indexes of the KB with the
// built-in hash embedder on the memory store, each returning the top k chunks,
// and release, which gives back at once what they hold outside the Go heap
// (the store's vectors, the lexical postings: a cleanup after a collection,
// which such memory does not prompt, would be their only other way back); the
// searchers are not used after it.
func roundTripSearchers(ctx context.Context, kb *kbfile.KB, k int) (searchers []Searcher, release func(), err error) {
	chunks := chunk.Split(kb.Cards, chunk.Params{})
	texts := make([]string, len(chunks))
	for i, c := range chunks {
		texts[i] = c.Text
	}
	emb := embed.NewHash(embed.DefaultHashDim, texts)
	st := memory.New(0)
	var built []*retrieve.Index
	release = func() {
		for _, ix := range built {
			ix.Close()
		}
		_ = st.Close(ctx) // the memory store's Close never fails
	}
	ready := false
	for _, s := range retrieve.Strategies {
		ix, err := retrieve.Build(ctx, chunks, emb, st, ready, retrieve.Options{Strategy: s, K: k})
		if err != nil {
			release()
			return nil, nil, err
		}
		ready = ready || s != retrieve.Lexical
		built = append(built, ix)
		searchers = append(searchers, ix)
	}
	return searchers, release, nil
}
