package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/retrieval-gate/retrieval-gate/internal/atomicfile"
	"github.com/retrieval-gate/retrieval-gate/internal/generate"
	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/kbfile"
	"github.com/retrieval-gate/retrieval-gate/internal/judge"
	"github.com/retrieval-gate/retrieval-gate/internal/publish"
	"github.com/retrieval-gate/retrieval-gate/internal/report/summary"
)

// NewCmdGenerate is `retrieval-gate generate`: write evaluation cases from
// KB documents with an LLM.
// runF, when set, replaces its run (a test of the parsing alone).
func NewCmdGenerate(f *Factory, runF func(context.Context, *generate.RunOptions) error) *Command {
	return newCommand(f, "generate", "write cases JSONL: LLM-generated questions and keyword queries for sampled KB documents", parseGenerate, func(ctx context.Context, o *generate.RunOptions) error { return execGenerate(ctx, f, o) }, runF)
}

// generateInputs are generate's Action inputs (the API key comes from the step's
// env, RETRIEVAL_GATE_LLM_API_KEY).
var generateInputs = actionInputs{
	"kb": "", "out": "", "per-locale": "", "seed": "", "questions": "", "keywords": "", "generator-url": "", "generator-model": "",
	"concurrency": "", "max-requests": "", "prompt": "", "answer-format": "", "dedup-jaccard": "", "round-trip-k": "",
	"batch": "", "batch-out": "", "batch-in": "", "batch-poll": "",
}

func parseGenerate(env *Env, args []string) (*generate.RunOptions, error) {
	fs := newFlagSet(env, "generate")
	o := generate.NewRunOptions()
	fs.StringVar(&o.KB, "kb", "", "knowledge base: JSONL file of cards or directory of Markdown cards (required)")
	fs.StringVar(&o.Out, "out", "", "write the cases JSONL to `FILE` (required)")
	fs.IntVar(&o.PerLocale, "per-locale", o.PerLocale, "documents sampled per locale")
	seed := fs.String("seed", strconv.FormatUint(o.Seed, 10), "seed of the sample (the same KB and seed give the same documents)")
	fs.IntVar(&o.Questions, "questions", o.Questions, "natural-language questions asked per document")
	fs.IntVar(&o.Keywords, "keywords", o.Keywords, "keyword queries asked per document")
	registerLLM(fs, &o.LLM, "generator", "the cards beyond it are skipped and counted")
	fs.StringVar(&o.Prompt, "prompt", "", "prompt template `FILE` with {{document}}, {{locale}}, {{questions}}, {{keywords}} and optionally {{answer_format}} (default: the built-in "+generate.DefaultPromptVersion+")")
	fs.StringVar(&o.Format, "answer-format", o.Format, "json: structured output, text when the server rejects it; text: \"question: ...\" and \"keyword: ...\" lines")
	fs.Float64Var(&o.Jaccard, "dedup-jaccard", o.Jaccard, "drop a query whose token-set Jaccard similarity with a kept query of its locale is at least this")
	fs.IntVar(&o.RoundTripK, "round-trip-k", 0, "keep a query only when dense, lexical or hybrid retrieval (built-in hash embedder, memory store) ranks its source card in the top k (0: off)")
	fs.BoolVar(&o.Batch, "batch", false, "ask through the server's Batch API in one batch (resumable: the batch id is kept in OUT"+judge.BatchStateSuffix+")")
	fs.StringVar(&o.BatchOut, "batch-out", "", "write the Batch API requests JSONL (one per sampled document) to `FILE` and exit (for any batch engine)")
	fs.StringVar(&o.BatchIn, "batch-in", "", "read a results `FILE` in the Batch API's output format (e.g. from vllm run-batch) instead of asking a server")
	fs.DurationVar(&o.BatchPoll, "batch-poll", o.BatchPoll, "first wait between two polls of a batch's status (then 1.5× longer each time, at most a minute)")
	src, err := parseFlags(fs, env, args, generateInputs)
	if err != nil {
		return nil, err
	}
	if o.Seed, err = strconv.ParseUint(*seed, 10, 64); err != nil {
		return nil, src.refuse("generate", "seed", "must be a non-negative integer")
	}
	if err := o.Validate(); err != nil {
		return nil, src.option("generate", err)
	}
	outputs := []file{{"out", o.Out}, {"batch-out", o.BatchOut}}
	if o.Batch { // the batch's state file, beside the cases
		outputs = append(outputs, file{"out", o.Out + judge.BatchStateSuffix})
	}
	return o, refuseOverwrite("generate", src, []file{{"kb", o.KB}, {"prompt", o.Prompt}, {"batch-in", o.BatchIn}}, outputs)
}

// execGenerate runs generate with o (runGenerate), says what it did and
// publishes its output.
func execGenerate(ctx context.Context, f *Factory, o *generate.RunOptions) error {
	prog := lazyProgress(f, "generate: asking")
	res, err := runGenerate(ctx, f, o, prog.Update)
	prog.Finish()
	if errors.Is(err, context.Canceled) {
		return interruptedf("generate: interrupted, nothing written: %w", err)
	}
	if err != nil {
		return err
	}
	sayGenerate(ctx, f, o, res)
	return nil
}

// sayGenerate says what a generate run did (its summary on stdout) and
// publishes its output's path.
func sayGenerate(ctx context.Context, f *Factory, o *generate.RunOptions, res *generate.RunResult) {
	summary.Generate(f.Env.Stdout, res, o.Jaccard, o.RoundTripK, o.Out, o.BatchOut, o.BatchIn)
	f.Publisher().Publish(ctx, publish.PathOutputs(map[string]string{"out": o.Out, "batch-out": o.BatchOut}))
}

// runGenerate is the generate command's run: the output is created (as a
// temporary file) first, so an unwritable one fails before any request; then
// the server's clients (the API key from the environment), the KB, the prompt
// and a results file, and generate.Run; the output is published only when all
// went well.
func runGenerate(ctx context.Context, f *Factory, o *generate.RunOptions, progress func(done, total int)) (*generate.RunResult, error) {
	outs := atomicfile.NewSet()
	defer outs.Abort()
	out, err := outs.Add(cmp.Or(o.Out, o.BatchOut))
	if err != nil {
		return nil, err
	}
	in, err := generateServices(f, o, progress)
	if err != nil {
		return nil, err
	}
	in.OutName = o.Out
	if o.BatchOut != "" {
		in.BatchRequests = out
	} else {
		in.Out = out
	}
	if in.KB, err = kbfile.Load(ctx, o.KB); err != nil {
		return nil, err
	}
	if o.Prompt != "" {
		b, err := input.ReadFile(ctx, o.Prompt, judge.MaxPromptBytes) // a FIFO's wait ends with ctx; an endless file stops at the cap
		if err != nil {
			return nil, fmt.Errorf("failed to read the prompt: %w", err)
		}
		if in.Prompt, err = generate.ParsePrompt(o.Prompt, b); err != nil {
			return nil, err
		}
	}
	var files opened
	defer files.close()
	if o.BatchIn != "" {
		r, err := files.open(ctx, o.BatchIn, "%w")
		if err != nil {
			return nil, err
		}
		in.BatchResults = judge.Reader{Name: o.BatchIn, R: r}
	}
	res, err := generate.Run(ctx, in, *o)
	if err != nil {
		return nil, err
	}
	return res, outs.Commit(ctx)
}

// generateServices are the services of a generate run: the chat server's
// client and, with --batch, its Batch API client and the state file beside the
// output (the API key read from the environment; the batch file modes ask no
// server), the log and the progress.
func generateServices(f *Factory, o *generate.RunOptions, progress func(done, total int)) (generate.In, error) {
	f.urlSecrets(o.LLM.URL)
	in := generate.In{Logf: f.logf("generate"), Progress: progress, Secrets: f.secrets()}
	if o.BatchOut != "" || o.BatchIn != "" {
		return in, nil
	}
	key := llmAPIKey(f.Env)
	var err error
	if in.Client, err = o.LLM.Client(key); err != nil {
		return in, fmt.Errorf("generate: %w", err)
	}
	if o.Batch {
		if in.BatchAPI, err = o.LLM.BatchClient(key); err != nil {
			return in, fmt.Errorf("generate: %w", err)
		}
		in.BatchState = judge.StateFile{Path: o.Out + judge.BatchStateSuffix, Scratch: atomicfile.CreateTemp}
	}
	return in, nil
}
