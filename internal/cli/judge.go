package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/retrieval-gate/retrieval-gate/internal/judge"
	"github.com/retrieval-gate/retrieval-gate/internal/publish"
	"github.com/retrieval-gate/retrieval-gate/internal/report/summary"
)

// NewCmdJudge is `retrieval-gate judge`: grade the pooled results of one or
// more strategies with an LLM relevance judge and write graded qrels.
// runF, when set, replaces its run (a test of the parsing alone).
func NewCmdJudge(f *Factory, runF func(context.Context, *judge.RunOptions) error) *Command {
	return newCommand(f, "judge", "grade the pooled top k of each run with an LLM judge (0-3) and write qrels for compare", parseJudge, func(ctx context.Context, o *judge.RunOptions) error {
		_, err := execJudge(ctx, f, o)
		return err
	}, runF)
}

// judgeInputs are judge's Action inputs (`run` holds one NAME=FILE per line);
// inside Actions --json defaults to retrieval-gate-judge.json, so the `json`
// output always names a file. The API key comes from the step's env
// (RETRIEVAL_GATE_LLM_API_KEY), never from an input.
var judgeInputs = actionInputs{
	"run": "", "queries": "", "kb": "", "k": "", "repeat": "", "judge-url": "", "judge-model": "", "concurrency": "",
	"max-requests": "", "prompt": "", "answer-format": "", "cache": "", "price-per-1k": "", "qrels": "", "judgments": "",
	"json": "retrieval-gate-judge.json", "known-qrels": "",
	"batch": "", "batch-out": "", "batch-in": "", "batch-poll": "",
}

func parseJudge(env *Env, args []string) (*judge.RunOptions, error) {
	fs := newFlagSet(env, "judge")
	o := judge.NewRunOptions()
	fs.Var(runFlag[judge.RunFile]{&o.Runs}, "run", "NAME=FILE: a cases JSONL from retrieve, or a TREC run (needs --queries); repeat for each strategy (required)")
	fs.StringVar(&o.Queries, "queries", "", "query texts for TREC runs: cases JSONL (id, query) or TSV \"qid<TAB>query\"")
	fs.StringVar(&o.KB, "kb", "", "knowledge base (the documents' text): JSONL file of cards or directory of Markdown cards (required)")
	fs.IntVar(&o.K, "k", o.K, "pool depth: the top k of each run per query")
	fs.IntVar(&o.Repeat, "repeat", o.Repeat, "judgments per pair; with 2 or more the report gives the judge's self-agreement")
	registerLLM(fs, &o.LLM, "judge")
	fs.StringVar(&o.Prompt, "prompt", "", "prompt template `FILE` with {{query}}, {{document}} and optionally {{answer_format}} (default: the built-in "+judge.DefaultPromptVersion+")")
	fs.StringVar(&o.Format, "answer-format", o.Format, "json: structured output (response_format json_schema), text when the server rejects it; text: a last line \"Final score: N\"")
	fs.StringVar(&o.Cache, "cache", o.Cache, "append-only judgment cache `FILE` (none: no cache)")
	fs.StringVar(&o.KnownQrels, "known-qrels", "", "qrels `FILE` already labelled (TREC or JSONL, human or an earlier judge): its pairs are not judged, only the holes are, and --qrels writes both")
	price := fs.String("price-per-1k", "", "price per 1,000 tokens, PRICE or PROMPT,COMPLETION, for the estimated cost")
	fs.StringVar(&o.QrelsOut, "qrels", "", "write the labels as TREC qrels \"qid 0 docid rel\" to `FILE`")
	fs.StringVar(&o.JudgmentsOut, "judgments", "", "write the labels as JSONL (with reason, model, prompt version and hash) to `FILE`")
	fs.StringVar(&o.JSONOut, "json", "", "write the report (retrieval-gate/judge@1: counts, tokens, cost, self-agreement) to `FILE`")
	fs.BoolVar(&o.Batch, "batch", false, "judge through the server's Batch API (upload, create, poll, download; resumable: the batch id is kept in CACHE"+judge.BatchStateSuffix+")")
	fs.StringVar(&o.BatchOut, "batch-out", "", "write the Batch API requests JSONL of the judgments not cached to `FILE` and exit (for any batch engine)")
	fs.StringVar(&o.BatchIn, "batch-in", "", "read a results `FILE` in the Batch API's output format (e.g. from vllm run-batch) instead of asking a server")
	fs.DurationVar(&o.BatchPoll, "batch-poll", o.BatchPoll, "first wait between two polls of a batch's status (then 1.5× longer each time, at most a minute)")
	fs.IntVar(&o.HumanSample, "human-sample", 0, "draw `N` of the pooled queries at random (stratified by locale) for human labelling: every pooled document of each goes on the --human-sheet")
	fs.StringVar(&o.HumanSheet, "human-sheet", "", "write the labelling sheet of --human-sample to `BASE`.csv and BASE.jsonl (query, document text, an empty grade), for compare --human-qrels and calibrate --human-sheet")
	humanSeed := fs.String("human-seed", strconv.FormatUint(o.HumanSeed, 10), "seed of the --human-sample draw (the same pool and seed draw the same queries)")
	src, err := parseFlags(fs, env, args, judgeInputs)
	if err != nil {
		return nil, err
	}
	if o.Price, err = judge.ParsePrice(*price); err != nil {
		return nil, src.refuseErr("judge", "price-per-1k", err)
	}
	if o.HumanSeed, err = strconv.ParseUint(*humanSeed, 10, 64); err != nil {
		return nil, src.refuse("judge", "human-seed", "must be a non-negative integer")
	}
	if err := o.Validate(); err != nil {
		return nil, src.option("judge", err)
	}
	inputs := []file{{"kb", o.KB}, {"queries", o.Queries}, {"prompt", o.Prompt}, {"batch-in", o.BatchIn}, {"known-qrels", o.KnownQrels}}
	for _, r := range o.Runs {
		inputs = append(inputs, file{"run", r.Path})
	}
	// The cache is appended to: an output, checked against every input.
	sheetCSV, sheetJSONL := o.SheetPaths()
	return o, refuseOverwrite("judge", src, inputs, []file{{"cache", o.Cache}, {"qrels", o.QrelsOut}, {"judgments", o.JudgmentsOut}, {"json", o.JSONOut}, {"batch-out", o.BatchOut},
		{"human-sheet", sheetCSV}, {"human-sheet", sheetJSONL}})
}

// exec judges with o (judge.RunOptions.Execute), says what it did and
// publishes the outputs' paths (also evaluate's stage).
func execJudge(ctx context.Context, f *Factory, o *judge.RunOptions) (*judge.Result, error) {
	prog := lazyProgress(f, "judge: judging")
	out, err := o.Execute(ctx, f.Env.Getenv, f.logf("judge"), prog.Update)
	prog.Finish()
	if errors.Is(err, context.Canceled) {
		return nil, fmt.Errorf("judge: interrupted, nothing written (the judgments made are in the cache): %w", err)
	}
	if err != nil {
		return nil, err
	}
	if out.Summary != nil {
		summary.Judge(f.Env.Stdout, out.Result, out.Summary)
	}
	if out.Sample != nil {
		csv, jsonl := o.SheetPaths()
		summary.HumanSample(f.Env.Stdout, out.Sample, csv, jsonl)
	}
	// Inside Actions: the paths of the labels and the report as step outputs.
	f.Publisher().Publish(ctx, publish.PathOutputs(map[string]string{"qrels": o.QrelsOut, "judgments": o.JudgmentsOut, "json": o.JSONOut, "batch-out": o.BatchOut}))
	if o.BatchOut != "" {
		return nil, nil
	}
	return out.Result, nil
}
