package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/retrieval-gate/retrieval-gate/internal/atomicfile"
	"github.com/retrieval-gate/retrieval-gate/internal/evaluate"
	"github.com/retrieval-gate/retrieval-gate/internal/format"
	"github.com/retrieval-gate/retrieval-gate/internal/judge"
	"github.com/retrieval-gate/retrieval-gate/internal/llm"
	"github.com/retrieval-gate/retrieval-gate/internal/metrics"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/embed"
	"github.com/retrieval-gate/retrieval-gate/internal/retrieve/store"
)

// EvaluateCommand is `retrieval-gate evaluate`: the whole pipeline, KB (and
// optional cases, else generated ones) -> retrieve with every strategy -> judge
// the pool -> compare, every intermediate file kept in one directory. Each stage
// is the real command (generate, retrieve, judge, compare) run with the flags
// written to DIR/stages.txt, so any stage can be rerun alone.
type EvaluateCommand struct{}

func (c *EvaluateCommand) Name() string { return "evaluate" }
func (c *EvaluateCommand) Synopsis() string {
	return "the whole pipeline: (generate) -> retrieve with each strategy -> judge the pool -> compare"
}

type evaluateOptions struct {
	kb, cases, out       string
	judgeURL, judgeModel string
	genURL, genModel     string
	rerankURL            string
	// retrieval is the store (and its URL) and the embedder of every retrieve
	// stage, checked as retrieve checks them; each stage adds its strategy, k
	// and reranker.
	retrieval retrieve.RunOptions
	// chromaURL is --chroma-url as given, for the stages' command lines (a URL
	// read from $CHROMA_URL is left to the environment there).
	chromaURL                         string
	k, perLocale, repeat, concurrency int
	maxRequests                       int64
	price                             string
	bootstrap                         int
	comment                           commentFlags  // passed to the compare stage, under evaluate's own key
	history                           string        // --history: one record per run, command evaluate (evaluate_history.go)
	historyBranch                     string        // --history-branch (history_branch.go)
	htmlOut                           string        // --html: the dashboard, also written here
	batch                             bool          // --batch: generate and judge through the Batch API
	batchPoll                         time.Duration // --batch-poll
}

// evaluateInputs are evaluate's Action inputs. Its stages see none of them (each
// stage gets every flag it needs from evaluate): an input reaches only the
// command the step runs.
var evaluateInputs = commentInputs(actionInputs{
	"kb": "", "cases": "", "out": "", "judge-url": "", "judge-model": "", "generator-url": "", "generator-model": "",
	"rerank-url": "", "store": "", "chroma-url": "", "embedder": "", "embedder-url": "", "embedder-model": "", "k": "",
	"per-locale": "", "repeat": "", "concurrency": "", "max-requests": "", "price-per-1k": "", "bootstrap": "",
	"history": "", "history-branch": "", "html": "", "batch": "", "batch-poll": "",
	"chroma-tenant": "", "chroma-database": "", "chroma-api-key": "", "chroma-token-header": "", "chroma-create-database": "",
})

func (c *EvaluateCommand) parse(env *Env, args []string) (*evaluateOptions, error) {
	fs := newFlagSet(env, "evaluate")
	o := &evaluateOptions{batchPoll: llm.DefaultPoll.Initial}
	fs.StringVar(&o.kb, "kb", "", "knowledge base: JSONL file of cards or directory of Markdown cards (required)")
	fs.StringVar(&o.cases, "cases", "", "cases JSONL with the queries (default: generated from the KB with the generator)")
	fs.StringVar(&o.out, "out", "", "output `DIR`: every intermediate file and report (required)")
	fs.StringVar(&o.judgeURL, "judge-url", "", "OpenAI-compatible chat server of the judge (required)")
	fs.StringVar(&o.judgeModel, "judge-model", "", "judge model name")
	fs.StringVar(&o.genURL, "generator-url", "", "chat server of the query generator (default: --judge-url)")
	fs.StringVar(&o.genModel, "generator-model", "", "query generator model (default: --judge-model)")
	fs.StringVar(&o.rerankURL, "rerank-url", "", "TEI /rerank server: each strategy is also run reranked")
	r := &o.retrieval
	fs.StringVar(&r.Store, "store", "memory", "vector store of retrieve: "+store.Choices(store.Names()))
	fs.StringVar(&o.chromaURL, "chroma-url", "", "Chroma server URL (implies --store chroma; default $CHROMA_URL when --store chroma)")
	registerChromaFlags(fs, r)
	fs.StringVar(&r.Embedder, "embedder", "hash", "embedder of retrieve: "+store.Choices(embed.Names()))
	fs.StringVar(&r.EmbedderURL, "embedder-url", "", "embedding server URL")
	fs.StringVar(&r.EmbedderModel, "embedder-model", "", "embedding model name")
	fs.IntVar(&o.k, "k", 10, "retrieval depth, pool depth and compare cutoff")
	fs.IntVar(&o.perLocale, "per-locale", 20, "documents sampled per locale when generating")
	fs.IntVar(&o.repeat, "repeat", 1, "judgments per pair")
	fs.IntVar(&o.concurrency, "concurrency", 4, "chat requests in flight at once")
	fs.Int64Var(&o.maxRequests, "max-requests", 0, "request budget of the judge (0: no limit)")
	fs.StringVar(&o.price, "price-per-1k", "", "judge price per 1,000 tokens, PRICE or PROMPT,COMPLETION")
	fs.BoolVar(&o.batch, "batch", false, "generate and judge through the server's Batch API, one batch each (resumable: the state files are kept in DIR)")
	fs.DurationVar(&o.batchPoll, "batch-poll", o.batchPoll, "with --batch: first wait between two polls of a batch's status (then 1.5× longer each time, at most a minute)")
	fs.IntVar(&o.bootstrap, "bootstrap", metrics.DefaultResamples, fmt.Sprintf("compare's bootstrap resamples (at most %d)", metrics.MaxResamples))
	o.comment.register(fs, evaluateCommentKey)
	fs.StringVar(&o.history, "history", "", "append this run (compare's JSON report, the fingerprint of KB, cases or generator, strategies, judge prompt and model) to the history: a `DIR` (history.jsonl in it) or a FILE.jsonl")
	fs.StringVar(&o.historyBranch, "history-branch", "", historyBranchUsage)
	fs.StringVar(&o.htmlOut, "html", "", "also write the dashboard (DIR/compare.html) to this self-contained HTML `FILE`")
	src, err := parseFlags(fs, env, args, evaluateInputs)
	if err != nil {
		return nil, err
	}
	if err := o.comment.validate("evaluate", src); err != nil {
		return nil, err
	}
	switch {
	case o.kb == "":
		return nil, usagef("evaluate: --kb is required")
	// The stages' own checks, made here so that a bad value is named as evaluate
	// got it (its stages see no Action input) and refused before any stage runs.
	case o.k < 1 || o.k > 1000:
		return nil, src.refuse("evaluate", "k", "must be between 1 and 1000")
	case o.perLocale < 1:
		return nil, src.refuse("evaluate", "per-locale", "must be at least 1")
	case o.repeat < 1 || o.repeat > 10:
		return nil, src.refuse("evaluate", "repeat", "must be between 1 and 10")
	case o.concurrency < 1 || o.concurrency > 256:
		return nil, src.refuse("evaluate", "concurrency", "must be between 1 and 256")
	case o.maxRequests < 0:
		return nil, src.refuse("evaluate", "max-requests", "must be 0 (no limit) or more")
	case o.batchPoll <= 0 || o.batchPoll > time.Hour:
		return nil, src.refuse("evaluate", "batch-poll", "must be between 1ns and 1h")
	case o.bootstrap < 1 || o.bootstrap > metrics.MaxResamples:
		return nil, src.refuse("evaluate", "bootstrap", fmt.Sprintf("must be between 1 and %d", metrics.MaxResamples))
	case o.out == "":
		return nil, usagef("evaluate: --out DIR is required")
	case o.judgeURL == "":
		return nil, usagef("evaluate: --judge-url is required")
	}
	if _, err := parsePrice(o.price); err != nil {
		return nil, src.refuseErr("evaluate", "price-per-1k", err)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	r.StoreURL = o.chromaURL
	if err := checkStore(env, src, "evaluate", r, set["store"]); err != nil {
		return nil, err
	}
	if o.genURL == "" {
		o.genURL = o.judgeURL
	}
	if o.genModel == "" {
		o.genModel = o.judgeModel
	}
	if err := validateHistoryBranch(env, src, "evaluate", o.historyBranch); err != nil {
		return nil, err
	}
	if err := refuseOverwrite("evaluate", src, []file{{"kb", o.kb}, {"cases", o.cases}}, evaluateOutputs(o)); err != nil {
		return nil, err
	}
	return o, nil
}

// evaluatePlan is the options of each stage, from evaluate's: every option of
// evaluate reaches its stages here (and only here).
type evaluatePlan struct {
	generate  *generateOptions // nil when --cases is given
	retrieves []*retrieveOptions
	names     []string // the runs' strategy names, one per retrieve stage
	judge     *judgeOptions
	compare   *compareOptions
}

func planEvaluate(o *evaluateOptions) *evaluatePlan {
	in := func(name string) string { return filepath.Join(o.out, name) }
	p := &evaluatePlan{}
	cases := o.cases
	if cases == "" {
		cases = in("cases.jsonl")
		g := newGenerateOptions()
		g.kb, g.out, g.perLocale = o.kb, cases, o.perLocale
		g.llm.url, g.llm.model, g.llm.concurrency = o.genURL, o.genModel, o.concurrency
		g.batch, g.batchPoll = o.batch, o.batchPoll
		p.generate = g
	}
	j := newJudgeOptions()
	j.kb, j.k, j.repeat = o.kb, o.k, o.repeat
	j.llm = llmFlags{url: o.judgeURL, model: o.judgeModel, concurrency: o.concurrency, maxRequests: o.maxRequests}
	j.price, _ = parsePrice(o.price) // checked by parse
	j.batch, j.batchPoll = o.batch, o.batchPoll
	j.cache, j.qrelsOut, j.jsonlOut, j.jsonOut = in("judge-cache.jsonl"), in("qrels.txt"), in("judgments.jsonl"), in("judge.json")
	c := newCompareOptions()
	c.qrels, c.run.K, c.run.Resamples = in("qrels.txt"), o.k, o.bootstrap
	c.jsonOut, c.mdOut, c.perQuery, c.htmlOut = in("compare.json"), in("compare.md"), in("per-query.jsonl"), in("compare.html")
	c.comment = o.comment
	for _, run := range evaluate.Runs(o.rerankURL != "") {
		r := &retrieveOptions{kb: o.kb, cases: cases, out: in(evaluate.RunFile(run.Name)), run: o.retrieval}
		r.run.Strategy, r.run.K = run.Strategy, o.k
		if run.Rerank {
			r.run.RerankURL = o.rerankURL
		}
		p.retrieves, p.names = append(p.retrieves, r), append(p.names, run.Name)
		for _, rf := range []*runFlag{&j.runs, &c.runs} {
			rf.names, rf.files = append(rf.names, run.Name), append(rf.files, r.out)
		}
	}
	p.judge, p.compare = j, c
	return p
}

// commandLines are the stages' command lines, in order: each parses back to the
// options evaluate runs the stage with (evaluate_test.go).
func (p *evaluatePlan) commandLines(o *evaluateOptions) [][]string {
	var out [][]string
	if g := p.generate; g != nil {
		a := []string{"--kb", g.kb, "--out", g.out, "--per-locale", strconv.Itoa(g.perLocale),
			"--generator-url", g.llm.url, "--concurrency", strconv.Itoa(g.llm.concurrency)}
		if g.llm.model != "" {
			a = append(a, "--generator-model", g.llm.model)
		}
		if g.batch {
			a = append(a, "--batch", "--batch-poll", g.batchPoll.String())
		}
		out = append(out, a)
	}
	for _, r := range p.retrieves {
		a := []string{"--kb", r.kb, "--cases", r.cases, "--out", r.out, "--strategy", r.run.Strategy, "--k", strconv.Itoa(r.run.K),
			"--store", r.run.Store, "--embedder", r.run.Embedder}
		// The API key is never written: a rerun reads it from $CHROMA_API_KEY
		// (stages.txt says so).
		for _, f := range []struct{ name, v string }{{"chroma-url", o.chromaURL}, {"chroma-tenant", r.run.StoreTenant}, {"chroma-database", r.run.StoreDatabase},
			{"chroma-token-header", r.run.StoreTokenHeader}, {"embedder-url", r.run.EmbedderURL}, {"embedder-model", r.run.EmbedderModel}, {"rerank-url", r.run.RerankURL}} {
			if f.v != "" {
				a = append(a, "--"+f.name, f.v)
			}
		}
		if r.run.CreateDatabase {
			a = append(a, "--chroma-create-database")
		}
		out = append(out, a)
	}
	j, c := p.judge, p.compare
	ja := []string{"--kb", j.kb, "--k", strconv.Itoa(j.k), "--judge-url", j.llm.url, "--repeat", strconv.Itoa(j.repeat),
		"--concurrency", strconv.Itoa(j.llm.concurrency), "--max-requests", strconv.FormatInt(j.llm.maxRequests, 10),
		"--cache", j.cache, "--qrels", j.qrelsOut, "--judgments", j.jsonlOut, "--json", j.jsonOut}
	if j.llm.model != "" {
		ja = append(ja, "--judge-model", j.llm.model)
	}
	if o.price != "" {
		ja = append(ja, "--price-per-1k", o.price)
	}
	if j.batch {
		ja = append(ja, "--batch", "--batch-poll", j.batchPoll.String())
	}
	ca := []string{"--qrels", c.qrels, "--k", strconv.Itoa(c.run.K), "--bootstrap", strconv.Itoa(c.run.Resamples),
		"--json", c.jsonOut, "--markdown", c.mdOut, "--per-query", c.perQuery, "--html", c.htmlOut,
		"--comment", c.comment.mode, "--comment-mode", c.comment.when, "--comment-key", c.comment.key}
	if c.comment.pr > 0 {
		ca = append(ca, "--pr", strconv.Itoa(c.comment.pr))
	}
	for i, n := range j.runs.names {
		ja = append(ja, "--run", n+"="+j.runs.files[i])
		ca = append(ca, "--run", n+"="+c.runs.files[i])
	}
	return append(out, ja, ca)
}

func (c *EvaluateCommand) Run(ctx context.Context, f *Factory, args []string) error {
	env := f.Env
	o, err := c.parse(env, args)
	if err != nil {
		return err
	}
	f.secret(o.retrieval.StoreAPIKey)
	in := func(name string) string { return filepath.Join(o.out, name) }
	// evaluate's own file, stages.txt, is created first (and with it --out DIR):
	// an unwritable DIR fails before any stage. It is published before the stages
	// run so that a failed stage can be rerun from it; each stage's outputs are
	// that stage's own all-or-nothing set.
	outs := atomicfile.NewSet()
	defer outs.Abort()
	stagesOut, err := outs.Add(in("stages.txt"))
	if err != nil {
		return err
	}
	// evaluate's own outputs after the stages (--html), all or none with the
	// history record: created now, so an unwritable one fails before any stage.
	final := atomicfile.NewSet()
	defer final.Abort()
	ws, err := addOutputs(final, o.htmlOut)
	if err != nil {
		return err
	}
	// The stages run as typed calls with the Factory of a stage (no Action input
	// reaches them); each publishes what it did as the command would, but
	// retrieve, whose outputs and summary evaluate's own say.
	plan := planEvaluate(o)
	lines := plan.commandLines(o)
	sf := f.stage()
	var stages []evaluate.Stage
	if plan.generate != nil {
		stages = append(stages, evaluate.Stage{Name: "generate", Args: lines[0], Run: func(ctx context.Context) error {
			return (&GenerateCommand{}).exec(ctx, sf, plan.generate)
		}})
		lines = lines[1:]
	}
	for i, r := range plan.retrieves {
		stages = append(stages, evaluate.Stage{Name: "retrieve", Args: lines[i], Run: func(ctx context.Context) error {
			_, err := runRetrieve(ctx, sf, r)
			if errors.Is(err, context.Canceled) {
				return fmt.Errorf("retrieve: interrupted, nothing written: %w", err)
			}
			return err
		}})
	}
	lines = lines[len(plan.retrieves):]
	var used *judge.Result
	stages = append(stages,
		evaluate.Stage{Name: "judge", Args: lines[0], Run: func(ctx context.Context) (err error) {
			used, err = (&JudgeCommand{}).exec(ctx, sf, plan.judge)
			return err
		}},
		evaluate.Stage{Name: "compare", Args: lines[1], Run: func(ctx context.Context) error {
			// The dashboard charts evaluate's runs from evaluate's history, under
			// this evaluation's fingerprint (known once the judge has run).
			ev := &overRuns{src: trendSource{path: o.history, branch: o.historyBranch}, fingerprint: func() (fingerprint, error) {
				return evaluateFingerprint(o, plan.names, used), nil
			}}
			return (&CompareCommand{}).run(ctx, sf, plan.compare, ev)
		}})

	var notes []string
	if o.retrieval.StoreAPIKey != "" {
		notes = append(notes, "The Chroma API key is not written here: set CHROMA_API_KEY to rerun a retrieve stage.")
	}
	if err := evaluate.WriteStages(stagesOut, stages, notes...); err != nil {
		return err
	}
	if err := outs.Commit(); err != nil {
		return err
	}
	if err := evaluate.RunStages(ctx, stages, func(i, n int, s evaluate.Stage) {
		fmt.Fprintf(env.Stderr, "evaluate: stage %d/%d: %s\n", i, n, format.SanitizeText(s.String()))
	}); err != nil {
		return err
	}
	if ws[0] != nil {
		page, err := os.ReadFile(in("compare.html"))
		if err != nil {
			return fmt.Errorf("evaluate: --html: the compare stage's dashboard: %w", err)
		}
		if _, err := ws[0].Write(page); err != nil {
			return err
		}
	}
	// The history is appended before --html is published: its failure then
	// leaves no output of evaluate's own.
	hist, err := recordEvaluateHistory(ctx, env, o, evaluateFingerprint(o, plan.names, used), in)
	if err != nil {
		return err
	}
	if err := final.Commit(); err != nil {
		return err
	}
	fmt.Fprintf(env.Stderr, "evaluate: reports in %s (compare.html, compare.json, compare.md, judge.json); stages in %s\n", format.SanitizeText(o.out), format.SanitizeText(in("stages.txt")))
	// The stages set their outputs (judge: qrels, judgments; compare: json,
	// recommended) and compare's job summary and comment; evaluate adds its DIR,
	// and the history branch's notice or warning.
	pub := pathOutputs(map[string]string{"out": o.out})
	writeHistoryBranch(ctx, f, hist, in("compare.html"), &pub)
	f.Publisher().Publish(ctx, pub)
	return nil
}
