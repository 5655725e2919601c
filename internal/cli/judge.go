package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/retrieval-gate/retrieval-gate/internal/atomicfile"
	"github.com/retrieval-gate/retrieval-gate/internal/judge"
	"github.com/retrieval-gate/retrieval-gate/internal/llm"
	"github.com/retrieval-gate/retrieval-gate/internal/report/summary"
)

// JudgeCommand is `retrieval-gate judge`: grade the pooled results of one or
// more strategies with an LLM relevance judge and write graded qrels.
type JudgeCommand struct{}

func (c *JudgeCommand) Name() string { return "judge" }
func (c *JudgeCommand) Synopsis() string {
	return "grade the pooled top k of each run with an LLM judge (0-3) and write qrels for compare"
}

// DefaultJudgeCache is the default --cache: a directory actions/cache can keep.
const DefaultJudgeCache = ".retrieval-gate-cache/judge.jsonl"

// llmFlags are the flags of one chat server (the judge's or the generator's).
type llmFlags struct {
	url, model  string
	concurrency int
	maxRequests int64
}

// register adds the flags; their defaults are f's values.
func (f *llmFlags) register(fs *flag.FlagSet, role string) {
	fs.StringVar(&f.url, role+"-url", "", "OpenAI-compatible chat server `URL`: a base (http://host:8000), .../v1 or .../v1/chat/completions (required)")
	fs.StringVar(&f.model, role+"-model", "", "model name sent to the server (required for api.openai.com; llama-server ignores it)")
	fs.IntVar(&f.concurrency, "concurrency", f.concurrency, "requests in flight at once")
	fs.Int64Var(&f.maxRequests, "max-requests", 0, "total budget of chat requests (0: no limit); pairs beyond it are reported unjudged")
}

func (f *llmFlags) check(cmd, role string, src *sources) error {
	if f.url == "" {
		return usagef("%s: --%s-url is required", cmd, role)
	}
	if _, err := llm.EndpointURL(f.url); err != nil {
		return src.refuseErr(cmd, role+"-url", err)
	}
	if strings.Contains(f.url, "api.openai.com") && f.model == "" {
		return usagef("%s: %s api.openai.com needs %s (e.g. gpt-4o-mini)", cmd, src.name(role+"-url"), src.name(role+"-model"))
	}
	if f.concurrency < 1 || f.concurrency > 256 {
		return src.refuse(cmd, "concurrency", "must be between 1 and 256")
	}
	if f.maxRequests < 0 {
		return src.refuse(cmd, "max-requests", "must be 0 (no limit) or more")
	}
	return nil
}

func (f *llmFlags) client(env *Env) (*llm.Client, error) {
	return llm.New(llm.Config{URL: f.url, Model: f.model, APIKey: llm.APIKey(env.Getenv), Concurrency: f.concurrency, MaxRequests: f.maxRequests})
}

// judgeOptions are the parsed flags of judge.
type judgeOptions struct {
	runs               runFlag
	queries, kb        string
	k, repeat          int
	llm                llmFlags
	prompt, format     string
	cache              string
	price              *judge.Price
	qrelsOut, jsonlOut string
	jsonOut            string
	// Batch modes (at most one): the Batch API, write the requests, read results.
	batch             bool
	batchOut, batchIn string
	batchPoll         time.Duration
}

// newJudgeOptions are judge's defaults (its flags' and evaluate's stage's).
func newJudgeOptions() *judgeOptions {
	return &judgeOptions{k: 10, repeat: 1, llm: llmFlags{concurrency: 4}, format: judge.FormatJSON, cache: DefaultJudgeCache, batchPoll: llm.DefaultPoll.Initial}
}

func (c *JudgeCommand) parse(env *Env, args []string) (*judgeOptions, error) {
	fs := newFlagSet(env, "judge")
	o := newJudgeOptions()
	fs.Var(&o.runs, "run", "NAME=FILE: a cases JSONL from retrieve, or a TREC run (needs --queries); repeat for each strategy (required)")
	fs.StringVar(&o.queries, "queries", "", "query texts for TREC runs: cases JSONL (id, query) or TSV \"qid<TAB>query\"")
	fs.StringVar(&o.kb, "kb", "", "knowledge base (the documents' text): JSONL file of cards or directory of Markdown cards (required)")
	fs.IntVar(&o.k, "k", o.k, "pool depth: the top k of each run per query")
	fs.IntVar(&o.repeat, "repeat", o.repeat, "judgments per pair; with 2 or more the report gives the judge's self-agreement")
	o.llm.register(fs, "judge")
	fs.StringVar(&o.prompt, "prompt", "", "prompt template `FILE` with {{query}}, {{document}} and optionally {{answer_format}} (default: the built-in "+judge.DefaultPromptVersion+")")
	fs.StringVar(&o.format, "answer-format", o.format, "json: structured output (response_format json_schema), text when the server rejects it; text: a last line \"Final score: N\"")
	fs.StringVar(&o.cache, "cache", o.cache, "append-only judgment cache `FILE` (none: no cache)")
	price := fs.String("price-per-1k", "", "price per 1,000 tokens, PRICE or PROMPT,COMPLETION, for the estimated cost")
	fs.StringVar(&o.qrelsOut, "qrels", "", "write the labels as TREC qrels \"qid 0 docid rel\" to `FILE`")
	fs.StringVar(&o.jsonlOut, "judgments", "", "write the labels as JSONL (with reason, model, prompt version and hash) to `FILE`")
	fs.StringVar(&o.jsonOut, "json", "", "write the report (retrieval-gate/judge@1: counts, tokens, cost, self-agreement) to `FILE`")
	fs.BoolVar(&o.batch, "batch", false, "judge through the server's Batch API (upload, create, poll, download; resumable: the batch id is kept in CACHE"+judge.BatchStateSuffix+")")
	fs.StringVar(&o.batchOut, "batch-out", "", "write the Batch API requests JSONL of the judgments not cached to `FILE` and exit (for any batch engine)")
	fs.StringVar(&o.batchIn, "batch-in", "", "read a results `FILE` in the Batch API's output format (e.g. from vllm run-batch) instead of asking a server")
	fs.DurationVar(&o.batchPoll, "batch-poll", o.batchPoll, "first wait between two polls of a batch's status (then 1.5× longer each time, at most a minute)")
	src, err := parseFlags(fs, env, args, judgeInputs)
	if err != nil {
		return nil, err
	}
	if o.price, err = judge.ParsePrice(*price); err != nil {
		return nil, src.refuseErr("judge", "price-per-1k", err)
	}
	switch {
	case len(o.runs.names) == 0:
		return nil, usagef("judge: --run NAME=FILE is required (repeat it for each strategy)")
	case o.kb == "":
		return nil, usagef("judge: --kb is required")
	case o.batchOut != "" && (o.batch || o.batchIn != ""), o.batch && o.batchIn != "":
		return nil, usagef("judge: --batch, --batch-out and --batch-in are exclusive")
	case o.batchOut != "" && (o.qrelsOut != "" || o.jsonlOut != "" || o.jsonOut != ""):
		return nil, usagef("judge: --batch-out writes only the requests; judge --batch-in RESULTS writes the labels")
	case o.batchOut == "" && o.qrelsOut == "" && o.jsonlOut == "":
		return nil, usagef("judge: give --qrels FILE and/or --judgments FILE for the labels")
	case o.k < 1 || o.k > 1000:
		return nil, src.refuse("judge", "k", "must be between 1 and 1000")
	case o.repeat < 1 || o.repeat > 10:
		return nil, src.refuse("judge", "repeat", "must be between 1 and 10")
	case o.format != judge.FormatJSON && o.format != judge.FormatText:
		return nil, src.refuse("judge", "answer-format", "must be json or text")
	}
	if o.batchPoll <= 0 || o.batchPoll > time.Hour {
		return nil, src.refuse("judge", "batch-poll", "must be between 1ns and 1h")
	}
	if o.batchOut != "" || o.batchIn != "" {
		// No server: the model name is still part of the requests and the cache key.
		if o.llm.maxRequests < 0 {
			return nil, src.refuse("judge", "max-requests", "must be 0 (no limit) or more")
		}
	} else if err := o.llm.check("judge", "judge", src); err != nil {
		return nil, err
	}
	if o.cache == "none" {
		o.cache = ""
	}
	if o.batch && o.cache == "" {
		return nil, usagef("judge: --batch needs a --cache file: the batch id is kept beside it (CACHE%s) for a rerun to resume", judge.BatchStateSuffix)
	}
	inputs := []file{{"kb", o.kb}, {"queries", o.queries}, {"prompt", o.prompt}, {"batch-in", o.batchIn}}
	for _, r := range o.runs.files {
		inputs = append(inputs, file{"run", r})
	}
	// The cache is appended to: an output, checked against every input.
	return o, refuseOverwrite("judge", src, inputs, []file{{"cache", o.cache}, {"qrels", o.qrelsOut}, {"judgments", o.jsonlOut}, {"json", o.jsonOut}, {"batch-out", o.batchOut}})
}

// judgeInputs are judge's Action inputs (`run` holds one NAME=FILE per line);
// inside Actions --json defaults to retrieval-gate-judge.json, so the `json`
// output always names a file. The API key comes from the step's env
// (RETRIEVAL_GATE_LLM_API_KEY), never from an input.
var judgeInputs = actionInputs{
	"run": "", "queries": "", "kb": "", "k": "", "repeat": "", "judge-url": "", "judge-model": "", "concurrency": "",
	"max-requests": "", "prompt": "", "answer-format": "", "cache": "", "price-per-1k": "", "qrels": "", "judgments": "",
	"json": "retrieval-gate-judge.json",
}

func (c *JudgeCommand) Run(ctx context.Context, f *Factory, args []string) error {
	o, err := c.parse(f.Env, args)
	if err != nil {
		return err
	}
	_, err = c.exec(ctx, f, o)
	return err
}

// exec judges with o and publishes the outputs' paths (also evaluate's stage).
func (c *JudgeCommand) exec(ctx context.Context, f *Factory, o *judgeOptions) (*judge.Result, error) {
	res, err := runJudge(ctx, f, o)
	if errors.Is(err, context.Canceled) {
		return nil, fmt.Errorf("judge: interrupted, nothing written (the judgments made are in the cache): %w", err)
	}
	if err != nil {
		return nil, err
	}
	// Inside Actions: the paths of the labels and the report as step outputs.
	f.Publisher().Publish(ctx, pathOutputs(map[string]string{"qrels": o.qrelsOut, "judgments": o.jsonlOut, "json": o.jsonOut, "batch-out": o.batchOut}))
	return res, nil
}

// runJudge reads the inputs, judges the pool and writes the outputs.
func runJudge(ctx context.Context, f *Factory, o *judgeOptions) (*judge.Result, error) {
	env := f.Env
	// The outputs, all or none (an unwritable one fails before the inputs are
	// read). The cache is not one of them: it keeps every judgment made.
	outs := atomicfile.NewSet()
	defer outs.Abort()
	ws, err := addOutputs(outs, o.qrelsOut, o.jsonlOut, o.jsonOut, o.batchOut)
	if err != nil {
		return nil, err
	}
	var client *llm.Client
	var bo *judge.BatchOptions
	switch {
	case o.batchOut != "":
		bo = &judge.BatchOptions{RequestsOut: ws[3], MaxRequests: o.llm.maxRequests}
	case o.batchIn != "":
		bo = &judge.BatchOptions{ResultsIn: o.batchIn, MaxRequests: o.llm.maxRequests}
	default:
		if client, err = o.llm.client(env); err != nil {
			return nil, usagef("judge: %v", err)
		}
		if o.batch {
			api, err := llm.NewBatchClient(llm.Config{URL: o.llm.url, APIKey: llm.APIKey(env.Getenv)})
			if err != nil {
				return nil, usagef("judge: %v", err)
			}
			bo = &judge.BatchOptions{API: api, MaxRequests: o.llm.maxRequests, Poll: llm.PollPolicy{Initial: o.batchPoll, Max: max(o.batchPoll, time.Minute)}}
		}
	}
	files := judge.Files{KB: o.kb, Queries: o.queries, Prompt: o.prompt, Cache: o.cache}
	for i, name := range o.runs.names {
		files.Runs = append(files.Runs, judge.RunFile{Name: name, Path: o.runs.files[i]})
	}
	var prog *progress
	var opts judge.Options
	if client != nil {
		opts.Client = client
	}
	res, err := judge.RunFiles(ctx, files, judge.FileOptions{K: o.k, Batch: bo,
		Logf: func(format string, args ...any) { fmt.Fprintf(env.Stderr, "judge: "+format+"\n", args...) },
		Options: judge.Options{Client: opts.Client, Model: o.llm.model, Format: o.format, Repeat: o.repeat, Workers: o.llm.concurrency,
			Progress: func(done, total int) {
				if prog == nil {
					prog = newProgress(f, "judge: judging", total)
				}
				prog.Update(done, total)
			}},
	})
	if prog != nil {
		prog.Finish()
	}
	if err != nil {
		return nil, err
	}
	if o.batchOut != "" {
		if err := outs.Commit(); err != nil {
			return nil, err
		}
		return nil, nil
	}
	sum := judge.Summarize(res, o.price)
	meta := judge.ReportMeta{Runs: o.runs.names, K: o.k, Price: o.price}
	if err := render(ws,
		func(w io.Writer) error { return judge.WriteTREC(w, res) },
		func(w io.Writer) error { return judge.WriteJSONL(w, res) },
		func(w io.Writer) error { return judge.WriteReport(w, res, sum, meta) }, nil); err != nil {
		return nil, err
	}
	if err := outs.Commit(); err != nil {
		return nil, err
	}
	summary.Judge(env.Stdout, res, sum)
	return res, nil
}
