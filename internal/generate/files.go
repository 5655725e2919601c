package generate

import (
	"context"
	"fmt"
	"io"

	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/kbfile"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/chunk"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/embed"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store/memory"
)

// Files are what the generate command reads and writes.
type Files struct {
	KB      string    // the knowledge base whose cards are sampled
	Prompt  string    // prompt template; "" is the built-in one
	Out     io.Writer // the cases JSONL
	OutName string    // Out's name in messages
}

// FileOptions are the options of RunFiles: the sample, the round-trip filter,
// a log, and the options of Run (its Prompt is that of Files).
type FileOptions struct {
	PerLocale int    // documents sampled per locale
	Seed      uint64 // seed of the sample
	// RoundTripK keeps a query only when dense, lexical or hybrid retrieval
	// (built-in hash embedder, memory store) ranks its source card in the top
	// RoundTripK; 0 is off.
	RoundTripK int
	// Logf, when set, receives the run's log lines, without a trailing newline.
	Logf func(format string, args ...any)
	// Batch, when set, asks through the Batch API (one batch) instead of one
	// request per card.
	Batch *BatchOptions
	Options
}

// FileResult is what RunFiles did: Run's result, and the cases written after
// the round-trip filter dropped RoundTripDropped.
type FileResult struct {
	*Result
	Written, RoundTripDropped int
}

// RunFiles is the generate command's pipeline: it samples the KB's cards, asks
// for queries about each (Run), filters them by round trip, and writes the
// cases to f.Out.
func RunFiles(ctx context.Context, f Files, o FileOptions) (*FileResult, error) {
	kb, err := kbfile.Load(ctx, f.KB)
	if err != nil {
		return nil, err
	}
	opt := o.Options
	opt.Prompt = DefaultPrompt()
	if f.Prompt != "" {
		if opt.Prompt, err = LoadPrompt(ctx, f.Prompt); err != nil {
			return nil, err
		}
	}
	cards := Sample(kb, o.PerLocale, o.Seed)
	if len(cards) == 0 {
		return nil, input.Errorf(f.KB, 0, "knowledge base has no card with text to generate queries from")
	}
	if o.Logf != nil {
		o.Logf("%d document(s) sampled (up to %d per locale, seed %d)", len(cards), o.PerLocale, o.Seed)
	}
	var res *Result
	if o.Batch != nil {
		res, err = runBatch(ctx, cards, opt, o.Batch, o.Logf)
	} else {
		res, err = Run(ctx, cards, opt)
	}
	if err != nil {
		return nil, err
	}
	out := &FileResult{Result: res}
	if res.RequestsOnly {
		return out, nil
	}
	cases := res.Cases
	if o.RoundTripK > 0 && len(cases) > 0 {
		searchers, err := roundTripSearchers(ctx, kb, o.RoundTripK)
		if err != nil {
			return nil, err
		}
		if cases, out.RoundTripDropped, err = RoundTrip(ctx, cases, searchers); err != nil {
			return nil, err
		}
	}
	for _, cs := range cases {
		b, err := WriteCase(cs, opt.Model, opt.Prompt)
		if err != nil {
			return nil, err
		}
		if _, err := f.Out.Write(b); err != nil {
			return nil, fmt.Errorf("failed to write %s: %w", f.OutName, err)
		}
	}
	out.Written = len(cases)
	return out, nil
}

// roundTripSearchers builds dense, lexical and hybrid indexes of the KB with the
// built-in hash embedder on the memory store, each returning the top k chunks.
func roundTripSearchers(ctx context.Context, kb *kbfile.KB, k int) ([]Searcher, error) {
	chunks := chunk.Split(kb.Cards, chunk.Params{})
	texts := make([]string, len(chunks))
	for i, c := range chunks {
		texts[i] = c.Text
	}
	emb := embed.NewHash(embed.DefaultHashDim, texts)
	st := memory.New(0)
	var out []Searcher
	ready := false
	for _, s := range retrieve.Strategies {
		ix, err := retrieve.Build(ctx, chunks, emb, st, ready, retrieve.Options{Strategy: s, K: k})
		if err != nil {
			return nil, err
		}
		ready = ready || s != retrieve.Lexical
		out = append(out, ix)
	}
	return out, nil
}
