package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/retrieval-gate/retrieval-gate/internal/atomicfile"
	"github.com/retrieval-gate/retrieval-gate/internal/generate"
	"github.com/retrieval-gate/retrieval-gate/internal/judge"
	"github.com/retrieval-gate/retrieval-gate/internal/llm"
	"github.com/retrieval-gate/retrieval-gate/internal/report/summary"
)

// GenerateCommand is `retrieval-gate generate`: write evaluation cases from
// KB documents with an LLM.
type GenerateCommand struct{}

func (c *GenerateCommand) Name() string { return "generate" }
func (c *GenerateCommand) Synopsis() string {
	return "write cases JSONL: LLM-generated questions and keyword queries for sampled KB documents"
}

type generateOptions struct {
	kb, out             string
	perLocale           int
	seed                uint64
	questions, keywords int
	llm                 llmFlags
	batch               bool
	batchPoll           time.Duration
	prompt, format      string
	jaccard             float64
	roundTripK          int
}

// newGenerateOptions are generate's defaults (its flags' and evaluate's stage's).
func newGenerateOptions() *generateOptions {
	return &generateOptions{perLocale: 20, seed: 1, questions: 2, keywords: 1, llm: llmFlags{concurrency: 4}, format: judge.FormatJSON, jaccard: 0.8, batchPoll: llm.DefaultPoll.Initial}
}

func (c *GenerateCommand) parse(env *Env, args []string) (*generateOptions, error) {
	fs := newFlagSet(env, "generate")
	o := newGenerateOptions()
	fs.StringVar(&o.kb, "kb", "", "knowledge base: JSONL file of cards or directory of Markdown cards (required)")
	fs.StringVar(&o.out, "out", "", "write the cases JSONL to `FILE` (required)")
	fs.IntVar(&o.perLocale, "per-locale", o.perLocale, "documents sampled per locale")
	seed := fs.String("seed", strconv.FormatUint(o.seed, 10), "seed of the sample (the same KB and seed give the same documents)")
	fs.IntVar(&o.questions, "questions", o.questions, "natural-language questions asked per document")
	fs.IntVar(&o.keywords, "keywords", o.keywords, "keyword queries asked per document")
	o.llm.register(fs, "generator")
	fs.StringVar(&o.prompt, "prompt", "", "prompt template `FILE` with {{document}}, {{locale}}, {{questions}}, {{keywords}} and optionally {{answer_format}} (default: the built-in "+generate.DefaultPromptVersion+")")
	fs.StringVar(&o.format, "answer-format", o.format, "json: structured output, text when the server rejects it; text: \"question: ...\" and \"keyword: ...\" lines")
	fs.Float64Var(&o.jaccard, "dedup-jaccard", o.jaccard, "drop a query whose token-set Jaccard similarity with a kept query of its locale is at least this")
	fs.IntVar(&o.roundTripK, "round-trip-k", 0, "keep a query only when dense, lexical or hybrid retrieval (built-in hash embedder, memory store) ranks its source card in the top k (0: off)")
	fs.BoolVar(&o.batch, "batch", false, "ask through the server's Batch API in one batch (resumable: the batch id is kept in OUT"+judge.BatchStateSuffix+")")
	fs.DurationVar(&o.batchPoll, "batch-poll", o.batchPoll, "first wait between two polls of a batch's status (then 1.5× longer each time, at most a minute)")
	src, err := parseFlags(fs, env, args, generateInputs)
	if err != nil {
		return nil, err
	}
	if o.seed, err = strconv.ParseUint(*seed, 10, 64); err != nil {
		return nil, src.refuse("generate", "seed", "must be a non-negative integer")
	}
	switch {
	case o.kb == "":
		return nil, usagef("generate: --kb is required")
	case o.out == "":
		return nil, usagef("generate: --out is required")
	case o.perLocale < 1:
		return nil, src.refuse("generate", "per-locale", "must be at least 1")
	case o.questions < 0:
		return nil, src.refuse("generate", "questions", "must be ≥ 0")
	case o.keywords < 0:
		return nil, src.refuse("generate", "keywords", "must be ≥ 0")
	case o.questions+o.keywords < 1 || o.questions+o.keywords > 20:
		return nil, usagef("generate: %s and %s must sum to 1-20, got %d and %d", src.name("questions"), src.name("keywords"), o.questions, o.keywords)
	case o.jaccard <= 0 || o.jaccard > 1:
		return nil, src.refuse("generate", "dedup-jaccard", "must be in (0, 1]")
	case o.roundTripK < 0:
		return nil, src.refuse("generate", "round-trip-k", "must be ≥ 0")
	case o.format != judge.FormatJSON && o.format != judge.FormatText:
		return nil, src.refuse("generate", "answer-format", "must be json or text")
	}
	if err := o.llm.check("generate", "generator", src); err != nil {
		return nil, err
	}
	if o.batchPoll <= 0 || o.batchPoll > time.Hour {
		return nil, src.refuse("generate", "batch-poll", "must be between 1ns and 1h")
	}
	return o, refuseOverwrite("generate", src, []file{{"kb", o.kb}, {"prompt", o.prompt}}, []file{{"out", o.out}})
}

// generateInputs are generate's Action inputs (the API key comes from the step's
// env, RETRIEVAL_GATE_LLM_API_KEY).
var generateInputs = actionInputs{
	"kb": "", "out": "", "per-locale": "", "seed": "", "questions": "", "keywords": "", "generator-url": "", "generator-model": "",
	"concurrency": "", "max-requests": "", "prompt": "", "answer-format": "", "dedup-jaccard": "", "round-trip-k": "",
}

func (c *GenerateCommand) Run(ctx context.Context, f *Factory, args []string) error {
	o, err := c.parse(f.Env, args)
	if err != nil {
		return err
	}
	return c.exec(ctx, f, o)
}

// exec runs generate with o and publishes its output (also evaluate's stage).
func (c *GenerateCommand) exec(ctx context.Context, f *Factory, o *generateOptions) error {
	err := runGenerate(ctx, f, o)
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("generate: interrupted, nothing written: %w", err)
	}
	if err != nil {
		return err
	}
	f.Publisher().Publish(ctx, pathOutputs(map[string]string{"out": o.out}))
	return nil
}

func runGenerate(ctx context.Context, f *Factory, o *generateOptions) error {
	env := f.Env
	// The output is created (as a temporary file) first: an unwritable --out
	// fails before any request is made.
	outs := atomicfile.NewSet()
	defer outs.Abort()
	out, err := outs.Add(o.out)
	if err != nil {
		return err
	}
	client, err := o.llm.client(env)
	if err != nil {
		return usagef("generate: %v", err)
	}
	var bo *generate.BatchOptions
	if o.batch {
		api, err := llm.NewBatchClient(llm.Config{URL: o.llm.url, APIKey: llm.APIKey(env.Getenv)})
		if err != nil {
			return usagef("generate: %v", err)
		}
		bo = &generate.BatchOptions{API: api, StatePath: o.out + judge.BatchStateSuffix, MaxRequests: o.llm.maxRequests,
			Poll: llm.PollPolicy{Initial: o.batchPoll, Max: max(o.batchPoll, time.Minute)}}
	}
	var prog *progress
	res, err := generate.RunFiles(ctx, generate.Files{KB: o.kb, Prompt: o.prompt, Out: out, OutName: o.out}, generate.FileOptions{
		PerLocale: o.perLocale, Seed: o.seed, RoundTripK: o.roundTripK, Batch: bo,
		Logf: func(format string, args ...any) { fmt.Fprintf(env.Stderr, "generate: "+format+"\n", args...) },
		Options: generate.Options{Client: client, Model: o.llm.model, Format: o.format, Questions: o.questions, Keywords: o.keywords,
			Workers: o.llm.concurrency, Jaccard: o.jaccard, Progress: func(done, total int) {
				if prog == nil {
					prog = newProgress(f, "generate: asking", total)
				}
				prog.Update(done, total)
			}},
	})
	if prog != nil {
		prog.Finish()
	}
	if err != nil {
		return err
	}
	if err := outs.Commit(); err != nil {
		return err
	}
	summary.Generate(env.Stdout, res, o.jaccard, o.roundTripK, o.out)
	return nil
}
