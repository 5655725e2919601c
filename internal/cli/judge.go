package cli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/retrieval-gate/retrieval-gate/internal/atomicfile"
	"github.com/retrieval-gate/retrieval-gate/internal/input"
	"github.com/retrieval-gate/retrieval-gate/internal/input/casefile"
	"github.com/retrieval-gate/retrieval-gate/internal/input/kbfile"
	"github.com/retrieval-gate/retrieval-gate/internal/input/trecfile"
	"github.com/retrieval-gate/retrieval-gate/internal/judge"
	"github.com/retrieval-gate/retrieval-gate/internal/llm"
	"github.com/retrieval-gate/retrieval-gate/internal/publish"
	"github.com/retrieval-gate/retrieval-gate/internal/report/judgereport"
	"github.com/retrieval-gate/retrieval-gate/internal/report/summary"
)

// NewCmdJudge is `retrieval-gate judge`: grade the pooled results of one or
// more strategies with an LLM relevance judge and write graded qrels.
// runF, when set, replaces its run (a test of the parsing alone).
func NewCmdJudge(f *Factory, runF func(context.Context, *judge.RunOptions) error) *Command {
	return newCommand(f, "judge", "grade the pooled top k of each run with an LLM judge (0-3) and write qrels for compare", parseJudge, func(ctx context.Context, o *judge.RunOptions) error { return execJudge(ctx, f, o) }, runF)
}

// judgeInputs are judge's Action inputs (`run` holds one NAME=FILE per line);
// inside Actions --json defaults to retrieval-gate-judge.json, so the `json`
// output always names a file. The API key comes from the step's env
// (RETRIEVAL_GATE_LLM_API_KEY, or the batch provider's own variable: judgeAPIKey),
// never from an input.
var judgeInputs = actionInputs{
	"run": "", "queries": "", "kb": "", "k": "", "repeat": "", "judge-url": "", "judge-model": "", "concurrency": "",
	"max-requests": "", "prompt": "", "answer-format": "", "cache": "", "price-per-1k": "", "qrels": "", "judgments": "",
	"json": "retrieval-gate-judge.json", "known-qrels": "",
	"batch": "", "batch-out": "", "batch-in": "", "batch-poll": "", "batch-api": "",
}

func parseJudge(env *Env, args []string) (*judge.RunOptions, error) {
	fs := newFlagSet(env, "judge")
	o := judge.NewRunOptions()
	fs.Var(runFlag[judge.RunFile]{&o.Runs}, "run", "NAME=FILE: a cases JSONL from retrieve, or a TREC run (needs --queries); repeat for each strategy (required)")
	fs.StringVar(&o.Queries, "queries", "", "query texts for TREC runs: cases JSONL (id, query) or TSV \"qid<TAB>query\" (a file, a directory or glob of shards)")
	fs.StringVar(&o.KB, "kb", "", "knowledge base (the documents' text): JSONL file of cards or directory of Markdown cards (required)")
	fs.IntVar(&o.K, "k", o.K, "pool depth: the top k of each run per query")
	fs.IntVar(&o.Repeat, "repeat", o.Repeat, "judgments per pair; with 2 or more the report gives the judge's self-agreement")
	registerLLM(fs, &o.LLM, "judge", "pairs beyond it are reported unjudged")
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
	fs.StringVar(&o.BatchAPI, "batch-api", o.BatchAPI, "the batch API of --batch and the formats of --batch-out and --batch-in: openai (the OpenAI Batch API, also vLLM's run-batch), anthropic (Message Batches) or gemini (Gemini API batch mode); anthropic and gemini need --judge-model, and --judge-url defaults to the provider's API")
	fs.DurationVar(&o.BatchPoll, "batch-poll", o.BatchPoll, "first wait between two polls of a batch's status (then 1.5× longer each time, at most a minute)")
	fs.IntVar(&o.HumanSample, "human-sample", 0, "draw `N` of the pooled queries at random (stratified by locale) for human labelling: every pooled document of each goes on the --human-sheet")
	fs.StringVar(&o.HumanSheet, "human-sheet", "", "write the labelling sheet of --human-sample to `BASE`.csv and BASE.jsonl (query, document text, an empty grade), for compare --human-qrels and calibrate --human-sheet")
	humanSeed := fs.String("human-seed", strconv.FormatUint(o.HumanSeed, 10), "seed of the --human-sample draw (the same pool and seed draw the same queries)")
	src, err := parseFlags(fs, env, args, judgeInputs)
	if err != nil {
		return nil, err
	}
	// batch-out writes the requests alone: the Action's default report
	// (json) is not one of its files.
	if o.BatchOut != "" && src.unset("json") {
		o.JSONOut = ""
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
	outputs := []file{{"cache", o.Cache}, {"qrels", o.QrelsOut}, {"judgments", o.JudgmentsOut}, {"json", o.JSONOut}, {"batch-out", o.BatchOut},
		{"human-sheet", sheetCSV}, {"human-sheet", sheetJSONL}}
	if o.Batch { // the batch's state file, beside the cache
		outputs = append(outputs, file{"cache", o.Cache + judge.BatchStateSuffix})
	}
	return o, refuseOverwrite("judge", src, inputs, outputs)
}

// execJudge runs judge with o (runJudge), says what it did and publishes the
// outputs' paths.
func execJudge(ctx context.Context, f *Factory, o *judge.RunOptions) error {
	prog := lazyProgress(f, "judge: judging")
	out, err := runJudge(ctx, f, o, prog.Update)
	prog.Finish()
	if errors.Is(err, context.Canceled) {
		if o.Cache == "" { // --cache none
			return interruptedf("judge: interrupted, nothing written (no --cache: the judgments made are not kept): %w", err)
		}
		return interruptedf("judge: interrupted, nothing written (the judgments made are in the cache): %w", err)
	}
	if err != nil {
		return err
	}
	sayJudge(ctx, f, o, out)
	return nil
}

// runJudge is the judge command's run: it creates the outputs (all or none; an
// unwritable one fails before the inputs are read; the cache is not one of
// them, it keeps every judgment made), makes the server's clients (the API key
// from the environment), opens the inputs and the cache, judges (judge.Run)
// and writes the labels, the report and the human labelling sheet.
func runJudge(ctx context.Context, f *Factory, o *judge.RunOptions, progress func(done, total int)) (*judge.RunResult, error) {
	outs := atomicfile.NewSet()
	defer outs.Abort()
	sheetCSV, sheetJSONL := o.SheetPaths()
	ws, err := outs.AddAll(o.QrelsOut, o.JudgmentsOut, o.JSONOut, o.BatchOut, sheetCSV, sheetJSONL)
	if err != nil {
		return nil, err
	}
	in, err := judgeServices(f, o, progress)
	if err != nil {
		return nil, err
	}
	in.BatchRequests = ws[3]
	var files opened
	defer files.close()
	cache, err := openJudgeInputs(ctx, outs, &files, o, &in)
	if err != nil {
		return nil, err
	}
	out, err := judge.Run(ctx, in, *o)
	if cerr := cache.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return nil, files.remap(locatePoolError(ctx, err))
	}
	if out.Result != nil {
		if err := writeJudge(ws, o, out, nil); err != nil {
			return nil, err
		}
	}
	return out, outs.Commit(ctx)
}

// judgeServices are the services of a judge run: the chat server's client and,
// with --batch, its Batch API client and the state file beside the cache (the
// API key read from the environment; the batch file modes ask no server), the
// clock, the log and the progress.
func judgeServices(f *Factory, o *judge.RunOptions, progress func(done, total int)) (judge.In, error) {
	f.urlSecrets(o.LLM.URL) // before In.Secrets: the report's texts are redacted of them too
	in := judge.In{Now: time.Now, Logf: f.logf("judge"), Progress: progress, Secrets: f.secrets()}
	if o.BatchOut != "" || o.BatchIn != "" {
		return in, nil
	}
	key := judgeAPIKey(f.Env, o.BatchAPI)
	var err error
	switch {
	case o.Batch && o.BatchAPI == llm.ProviderAnthropic:
		in.BatchAPI, err = llm.NewAnthropicBatchClient(o.LLM.URL, key, nil)
	case o.Batch && o.BatchAPI == llm.ProviderGemini:
		in.BatchAPI, err = llm.NewGeminiBatchClient(o.LLM.URL, o.LLM.Model, key, nil)
	default:
		if in.Client, err = o.LLM.Client(key); err == nil && o.Batch {
			in.BatchAPI, err = o.LLM.BatchClient(key)
		}
	}
	if err != nil {
		return in, fmt.Errorf("judge: %w", err)
	}
	if o.Batch {
		in.BatchState = judge.StateFile{Path: o.Cache + judge.BatchStateSuffix, Scratch: atomicfile.CreateTemp}
	}
	return in, nil
}

// writeJudge renders a judge run's labels (qrels: as given, else
// judge.WriteTREC), judgments, report and human labelling sheet into the
// writers of runJudge's outputs.
func writeJudge(ws []io.Writer, o *judge.RunOptions, out *judge.RunResult, qrels []byte) error {
	res := out.Result
	meta := judgereport.Meta{K: o.K, Price: o.Price}
	for _, r := range o.Runs {
		meta.Runs = append(meta.Runs, r.Name)
	}
	writeQrels := func(w io.Writer) error { return judge.WriteTREC(w, res) }
	if qrels != nil {
		writeQrels = func(w io.Writer) error { _, err := w.Write(qrels); return err }
	}
	return atomicfile.Render(ws, writeQrels,
		func(w io.Writer) error { return judge.WriteJSONL(w, res) },
		judgereport.New(res, out.Summary, meta).WriteJSON, nil,
		func(w io.Writer) error { return judge.WriteSheetCSV(w, out.Sample) },
		func(w io.Writer) error { return judge.WriteSheetJSONL(w, out.Sample) })
}

// sayJudge says what a judge run did (its summary and the human sample on
// stdout) and publishes the outputs' paths.
func sayJudge(ctx context.Context, f *Factory, o *judge.RunOptions, out *judge.RunResult) {
	if out.Summary != nil {
		summary.Judge(f.Env.Stdout, out.Result, out.Summary)
	}
	if out.Sample != nil {
		csv, jsonl := o.SheetPaths()
		summary.HumanSample(f.Env.Stdout, out.Sample, csv, jsonl)
	}
	// Inside Actions: the paths of the labels and the report as step outputs.
	f.Publisher().Publish(ctx, publish.PathOutputs(map[string]string{"qrels": o.QrelsOut, "judgments": o.JudgmentsOut, "json": o.JSONOut, "batch-out": o.BatchOut}))
}

// openJudgeInputs loads the KB and the prompt, opens judge's input files into
// in (their errors worded as judge words them), and opens the cache, which it
// returns for the caller to close.
func openJudgeInputs(ctx context.Context, outs *atomicfile.Set, files *opened, o *judge.RunOptions, in *judge.In) (*judge.Cache, error) {
	kb, err := kbfile.Load(ctx, o.KB)
	if err != nil {
		return nil, err
	}
	in.KB = kb
	if o.Prompt != "" {
		b, err := input.ReadFile(ctx, o.Prompt, judge.MaxPromptBytes) // a FIFO's wait ends with ctx; an endless file stops at the cap
		if err != nil {
			return nil, fmt.Errorf("failed to read the prompt: %w", err)
		}
		if in.Prompt, err = judge.ParsePrompt(o.Prompt, b); err != nil {
			return nil, err
		}
	}
	if o.Queries != "" {
		q, err := files.shards(ctx, o.Queries, "failed to read queries: %w")
		if err != nil {
			return nil, err
		}
		in.Queries = judge.Reader{Name: o.Queries, R: q}
	}
	for _, r := range o.Runs {
		rf, err := files.shards(ctx, r.Path, "failed to read run %q: failed to read run: %w", r.Name)
		if err != nil {
			return nil, err
		}
		in.Runs = append(in.Runs, judge.RunReader{Name: r.Name, File: r.Path, R: rf})
	}
	if o.KnownQrels != "" {
		k, err := files.shards(ctx, o.KnownQrels, "failed to read qrels: %w")
		if err != nil {
			return nil, err
		}
		in.KnownQrels = judge.Reader{Name: o.KnownQrels, R: k}
	}
	if o.BatchIn != "" {
		b, err := files.open(ctx, o.BatchIn, "%w")
		if err != nil {
			return nil, err
		}
		in.BatchResults = judge.Reader{Name: o.BatchIn, R: b}
	}
	cache, err := openJudgeCache(ctx, outs, o)
	if err != nil {
		return nil, err
	}
	in.Cache = cache
	return cache, nil
}

// openJudgeCache opens the judge's cache (Cache "": an in-memory one). A cache
// file that does not exist yet is created by the first judgment: here its path
// is checked with the run's outputs (outs.AddAppended: its missing directories
// created, removed again when the run fails before any judgment), so that one
// that cannot be created fails before the work and a run that judges nothing
// writes nothing.
func openJudgeCache(ctx context.Context, outs *atomicfile.Set, o *judge.RunOptions) (*judge.Cache, error) {
	c, err := judge.OpenCacheContext(ctx, o.Cache)
	if err != nil {
		return nil, err
	}
	if c.Missing() {
		if err := outs.AddAppended(o.Cache); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// judgeAPIKey is the API key of judge's server from the environment:
// RETRIEVAL_GATE_LLM_API_KEY, else the batch provider's own variable
// (OPENAI_API_KEY; ANTHROPIC_API_KEY; GEMINI_API_KEY, else GOOGLE_API_KEY).
func judgeAPIKey(env *Env, provider string) string {
	if k := env.Getenv(llm.APIKeyEnv); k != "" {
		return k
	}
	for _, name := range llm.ProviderKeyEnv[provider] {
		if k := env.Getenv(name); k != "" {
			return k
		}
	}
	return ""
}

// llmAPIKey is the chat server's API key from the environment:
// RETRIEVAL_GATE_LLM_API_KEY, else OPENAI_API_KEY.
func llmAPIKey(env *Env) string {
	if k := env.Getenv(llm.APIKeyEnv); k != "" {
		return k
	}
	return env.Getenv(llm.OpenAIKeyEnv)
}

// locatePoolError is err with a run's query or document that the pool
// refused (judge.PoolError) given at its line, file:line: the run is read
// again to find it (the case's line in a cases run, the document's in a TREC
// run; runs keep no line numbers), a run of shards (a directory, a glob
// pattern, a Parquet file) as the one stream it was read as, named at the
// shard and its line (or row) there. A line not found, or a run that is not
// a regular file (a named pipe cannot be read again), keeps the message
// naming the file alone.
func locatePoolError(ctx context.Context, err error) error {
	var pe *judge.PoolError
	if !errors.As(err, &pe) {
		return err
	}
	if file, line := locateInRun(ctx, pe.File, pe.Format, pe.Query, pe.Doc); line > 0 {
		return input.Errorf(file, line, "run %q: %s", pe.Run, pe.Msg)
	}
	return err
}

// errFound stops locateInRun's scan of a cases file.
var errFound = errors.New("found")

// locateInRun is the file and line of query qid's document doc in a run
// (TREC: the first line of that query with that document, or of the query
// when doc is ""; cases: the query's case): for shards, the shard and its line
// there (input.Sharded.Locate). Line 0 when not found.
func locateInRun(ctx context.Context, file, format, qid, doc string) (string, int) {
	var r io.Reader
	locate := func(n int) (string, int) { return file, n }
	if input.IsSharded(file) {
		s, err := input.OpenSharded(ctx, file)
		if err != nil {
			return "", 0
		}
		defer s.Close()
		r, locate = s, s.Locate
	} else {
		if st, err := os.Stat(file); err != nil || !st.Mode().IsRegular() {
			return "", 0
		}
		f, err := os.Open(file)
		if err != nil {
			return "", 0
		}
		defer f.Close()
		r = f
	}
	if n := lineInRun(ctx, r, file, format, qid, doc); n > 0 {
		return locate(n)
	}
	return "", 0
}

// lineInRun is the line of query qid's document doc in the run r reads, as
// locateInRun finds it, 0 when not found.
func lineInRun(ctx context.Context, r io.Reader, file, format, qid, doc string) int {
	if format == "cases" {
		line := 0
		err := casefile.StreamCases(ctx, r, file, func(c *casefile.Case) error {
			if c.ID == qid {
				line = c.Line
				return errFound
			}
			return nil
		})
		if errors.Is(err, errFound) {
			return line
		}
		return 0
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), trecfile.MaxLineBytes+1)
	for n := 1; sc.Scan(); n++ {
		if n%4096 == 0 && ctx.Err() != nil {
			return 0 // interrupted: a long run stops within a second
		}
		fs := bytes.Fields(sc.Bytes())
		if len(fs) >= 3 && string(fs[0]) == qid && (doc == "" || string(fs[2]) == doc) {
			return n
		}
	}
	return 0
}
